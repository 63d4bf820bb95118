/*
 * options.h - the profiler's settings and their one parser.
 *
 * Both front ends and the CLI speak the same language, async-profiler style:
 * comma-separated key=value with units ("mode=silent-load,interval=2ms,dir=out").
 * A backslash takes the next character literally, so a value may hold ','
 * '=' or '\\' ("dir=out\\,b" is the directory "out,b"). `wasp run` hands its
 * flags, escaped, to the preloaded library in WASP_OPTIONS.
 */
#ifndef WASP_OPTIONS_H
#define WASP_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum wasp_mode { MODE_DEAD_STORE, MODE_SILENT_STORE, MODE_SILENT_LOAD };
enum wasp_sampler { SAMPLER_AUTO, SAMPLER_PMU, SAMPLER_SOFTWARE, SAMPLER_CTIMER };
/* Accesses to the thread's own stack: spill slots, frames, a C program's
 * local arrays. AUTO lets the front end decide (docs/how-it-works.md). */
enum wasp_stack { STACK_AUTO, STACK_INCLUDE, STACK_EXCLUDE };

#define OPTIONS_MAX_SLOTS 4
#define OPTIONS_MAX_INTERVAL_NS 60000000000ULL   /* 60 s */
#define OPTIONS_MAX_DURATION_NS (7ULL * 24 * 3600 * 1000000000ULL)   /* an attached run: 7 days */
/* Longest option string (after escapes are undone) an item may have. */
#define OPTIONS_MAX_TEXT 4096
#define OPTIONS_DEFAULT_INTERVAL_NS 10000000ULL  /* 10 ms of CPU time: see docs/how-it-works.md */
/* Below this a sample's own cost (delivery 12-40 us, handler 10-40 us, all
 * counted as the thread's CPU time) leaves the program too little time to
 * run: 10 us never finished /bin/true, 12 us took 2.5 s. `wasp run` also
 * measures the machine (signal_cost.h) and may ask for more. */
#define OPTIONS_MIN_INTERVAL_NS 100000ULL
#define OPTIONS_DEFAULT_FP_TOLERANCE 0.01
/* Accesses per PMU sample: a store-heavy thread (~2e8 stores/s) gets about
 * the software default's 200 samples/s; JXPerf used 0.5M-10M (docs/pmu.md). */
#define OPTIONS_DEFAULT_PERIOD 1000000ULL
/* The share of each thread's CPU time wasp may take, in parts per million
 * (20000: 2%); 0 is `budget=off` (budget.h). */
#define OPTIONS_DEFAULT_BUDGET_PPM 20000u
#define OPTIONS_MAX_BUDGET_PPM 1000000u
/* What one sampler signal costs when nobody measured it (an -agentpath
 * launch; `wasp run` measures, signal_cost.h): the middle of the 12-40 us
 * our VMs show. */
#define OPTIONS_DEFAULT_SIGNAL_COST_NS 20000ULL
/* What a context switch of a sampled thread costs when nobody measured it
 * (switch_cost.h): this VM's figures at the default 10 ms interval, 2.2-4.3
 * us for the sampler and idle breakpoints, 0.25-0.6 us per armed one, 1.4-1.5
 * us with the sampler far from due. */
#define OPTIONS_DEFAULT_SWITCH_COST_NS 2500ULL
#define OPTIONS_DEFAULT_SWITCH_ARMED_NS 500ULL
#define OPTIONS_DEFAULT_SWITCH_FLOOR_NS 1500ULL
/* The kernel's tick, which the ctimer sampler's timers fire on, when
 * nobody measured it (`wasp run` does): HZ=250, Debian's. */
#define OPTIONS_DEFAULT_TICK_NS 4000000ULL
/* From this interval up, auto's software sampler is the CPU-time timer
 * (sampler_ctimer.c): two ticks and more, so ticks do not decide the rate. */
#define CTIMER_MIN_INTERVAL_NS 10000000ULL
/* Checkpoints (checkpoint.c): every live thread's profile so far, written
 * this often, so a killed or crashed program loses at most this much. */
#define OPTIONS_DEFAULT_FLUSH_NS 10000000000ULL   /* 10 s */
#define OPTIONS_MIN_FLUSH_NS 1000000000ULL        /* 1 s: each one costs a write per thread */
#define OPTIONS_MAX_FLUSH_NS 3600000000000ULL     /* 1 h */

typedef struct wasp_options {
    enum wasp_mode mode;
    uint64_t interval_ns;   /* software sampler period in thread CPU time */
    enum wasp_sampler sampler;
    uint64_t period;        /* PMU sampler period in events (stores or loads) */
    int slots;              /* debug registers used per thread, 1..4 */
    double fp_tolerance;    /* relative tolerance for approximate FP equality */
    enum wasp_stack stack;  /* whether accesses to the thread's stack are sampled */
    char dir[512];          /* run directory; the process writes into dir/<pid>/ */
    int empty_handler;      /* benchmarks only: signals are taken and ignored */
    int watch_check;        /* refuse to start where the watch self-test sees no trap */
    int attached;           /* set by the JVM agent for a run `wasp attach` started */
    uint64_t duration_ns;   /* an attached run ends after this (0: when stopped or at exit) */
    uint32_t budget_ppm;    /* overhead budget per thread, parts per million; 0: off */
    uint64_t signal_cost_ns;   /* measured CPU cost of one signal (set by `wasp run`) */
    uint64_t switch_cost_ns;   /* measured cost of a sampled thread's context switch ... */
    uint64_t switch_armed_ns;  /* ... what each armed watch adds to it ... */
    uint64_t switch_floor_ns;  /* ... and what it comes down to at long intervals (`wasp run`) */
    uint64_t tick_ns;       /* how often the kernel checks CPU-time timers (`wasp run`) */
    uint64_t flush_ns;      /* checkpoint period in wall-clock time; 0: off */
} wasp_options;

void options_defaults(wasp_options *o);

/* Parses "key=value,..." over the current values of *o. Returns 0, or -1 with
 * a message that names the bad key or value and what is accepted. */
int options_parse(const char *text, wasp_options *o, char *err, size_t errlen);

/* Writes value into out with ',', '=' and '\\' escaped; 0, or -1 when out
 * is too small. */
int options_escape(const char *value, char *out, size_t len);

/* Parses a duration like "5ms", "200us", "1000000" (ns), "1s". Returns 0/-1. */
int options_parse_duration(const char *text, uint64_t *ns);

/* Parses how long an attached run lasts: "30s", "2m", "1h", "500ms", "7d"
 * (a unit is required), 1 ms to 7 days. Returns 0/-1. */
int options_parse_run_length(const char *text, uint64_t *ns);
/* Parses a budget: "off" (0), or a percentage like "2%", "0.5%" or "2"
 * above 0 and at most 100, into parts per million. Returns 0/-1. */
int options_parse_budget(const char *text, uint32_t *ppm);

/* Parses a count like "20000", "20k", "1m" (million). Returns 0/-1. */
int options_parse_count(const char *text, uint64_t *n);

const char *options_mode_name(enum wasp_mode m);
const char *options_sampler_name(enum wasp_sampler s);
const char *options_stack_name(enum wasp_stack s);
int options_mode_from_name(const char *name, enum wasp_mode *m);

#endif
