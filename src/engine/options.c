/*
 * options.c - parsing of the "key=value,..." option string.
 *
 * Used by the library at start-up (never in signal context) and by the CLI to
 * validate flags before it launches anything, so a typo fails fast.
 */
#include "options.h"
#include "num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = { "dead-store", "silent-store", "silent-load" };
static const char *const sampler_names[] = { "auto", "pmu", "software", "ctimer" };
static const char *const stack_names[] = { "auto", "include", "exclude" };

void options_defaults(wasp_options *o)
{
    memset(o, 0, sizeof(*o));
    o->mode = MODE_SILENT_STORE;
    o->interval_ns = OPTIONS_DEFAULT_INTERVAL_NS;
    o->sampler = SAMPLER_AUTO;
    o->period = OPTIONS_DEFAULT_PERIOD;
    o->slots = OPTIONS_MAX_SLOTS;
    o->fp_tolerance = OPTIONS_DEFAULT_FP_TOLERANCE;
    o->watch_check = 1;
    o->budget_ppm = OPTIONS_DEFAULT_BUDGET_PPM;
    o->signal_cost_ns = OPTIONS_DEFAULT_SIGNAL_COST_NS;
    o->switch_cost_ns = OPTIONS_DEFAULT_SWITCH_COST_NS;
    o->switch_armed_ns = OPTIONS_DEFAULT_SWITCH_ARMED_NS;
    o->switch_floor_ns = OPTIONS_DEFAULT_SWITCH_FLOOR_NS;
    o->tick_ns = OPTIONS_DEFAULT_TICK_NS;
    o->flush_ns = OPTIONS_DEFAULT_FLUSH_NS;
    snprintf(o->dir, sizeof(o->dir), "wasp-out");
}

const char *options_mode_name(enum wasp_mode m)
{
    return (unsigned)m < 3 ? mode_names[m] : "unknown";
}

const char *options_sampler_name(enum wasp_sampler s)
{
    return (unsigned)s < 4 ? sampler_names[s] : "unknown";
}

const char *options_stack_name(enum wasp_stack s)
{
    return (unsigned)s < 3 ? stack_names[s] : "unknown";
}

int options_mode_from_name(const char *name, enum wasp_mode *m)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, mode_names[i]) == 0) {
            *m = (enum wasp_mode)i;
            return 0;
        }
    }
    return -1;
}

int options_parse_duration(const char *text, uint64_t *ns)
{
    static const num_unit units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "", 1 },
    };
    uint64_t v;
    if (num_parse_scaled(text, units, sizeof units / sizeof units[0], &v) != NUM_OK ||
        v < 1 || v > OPTIONS_MAX_INTERVAL_NS)
        return -1;
    *ns = v;
    return 0;
}

int options_parse_run_length(const char *text, uint64_t *ns)
{
    static const num_unit units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
        { "m", 60000000000ULL }, { "h", 3600000000000ULL }, { "d", 86400000000000ULL },
    };
    uint64_t v;
    if (num_parse_scaled(text, units, sizeof units / sizeof units[0], &v) != NUM_OK ||
        v < 1000000 || v > OPTIONS_MAX_DURATION_NS)
        return -1;
    *ns = v;
    return 0;
}

int options_parse_count(const char *text, uint64_t *n)
{
    static const num_unit units[] = {
        { "", 1 }, { "k", 1000 }, { "K", 1000 }, { "m", 1000000 }, { "M", 1000000 },
    };
    uint64_t v;
    if (num_parse_scaled(text, units, sizeof units / sizeof units[0], &v) != NUM_OK ||
        v < 1 || v > 1000000000000ULL)
        return -1;
    *n = v;
    return 0;
}

int options_parse_budget(const char *text, uint32_t *ppm)
{
    char *end;
    if (strcmp(text, "off") == 0) {
        *ppm = 0;
        return 0;
    }
    /* strtod alone would take "nan", "inf", hex and leading blanks: digits first. */
    if (!((*text >= '0' && *text <= '9') || *text == '.'))
        return -1;
    double pct = strtod(text, &end);
    if (*end == '%')
        end++;
    if (*end || !isfinite(pct) || pct <= 0 || pct > 100)
        return -1;
    double v = pct * 1e4;
    /* Below one part per million a budget is not a budget but a typo. */
    if (v < 1)
        return -1;
    *ppm = (uint32_t)(v + 0.5);
    return 0;
}

/* A checkpoint period: a duration with a unit (a bare number would be ns,
 * never what anyone means here), 1 s to 1 h. */
static int parse_flush(const char *text, uint64_t *ns)
{
    static const num_unit units[] = { { "ms", 1000000 }, { "s", 1000000000 } };
    uint64_t v;
    if (num_parse_scaled(text, units, sizeof units / sizeof units[0], &v) != NUM_OK ||
        v < OPTIONS_MIN_FLUSH_NS || v > OPTIONS_MAX_FLUSH_NS)
        return -1;
    *ns = v;
    return 0;
}

/* A measured cost `wasp run` hands down (its probes: signal_cost.h,
 * switch_cost.h): a duration up to a second. */
static int parse_cost(const char *key, const char *val, uint64_t *ns, const char *what, char *err,
                      size_t errlen)
{
    uint64_t v;
    if (options_parse_duration(val, &v) == 0 && v <= 1000000000ULL) {
        *ns = v;
        return 0;
    }
    snprintf(err, errlen, "bad %s '%s' — give %s", key, val, what);
    return -1;
}

static int parse_one(const char *key, const char *val, wasp_options *o, char *err, size_t errlen)
{
    char *end;
    if (strcmp(key, "mode") == 0) {
        if (options_mode_from_name(val, &o->mode) == 0)
            return 0;
        snprintf(err, errlen, "unknown mode '%s' — use dead-store, silent-store or silent-load", val);
        return -1;
    }
    if (strcmp(key, "interval") == 0) {
        uint64_t ns;
        if (options_parse_duration(val, &ns) == 0 && ns >= OPTIONS_MIN_INTERVAL_NS) {
            o->interval_ns = ns;
            return 0;
        }
        snprintf(err, errlen, "bad interval '%s' — give a CPU-time period from 100us to 60s, e.g. 5ms or 500us", val);
        return -1;
    }
    if (strcmp(key, "budget") == 0) {
        if (options_parse_budget(val, &o->budget_ppm) == 0)
            return 0;
        snprintf(err, errlen, "bad budget '%s' — give the share of each thread's CPU time wasp may "
                 "take, above 0%% and at most 100%%, e.g. 2%% or 0.5%%, or off", val);
        return -1;
    }
    if (strcmp(key, "signal-cost") == 0)
        return parse_cost(key, val, &o->signal_cost_ns, "the CPU time of one signal, e.g. 20us", err, errlen);
    if (strcmp(key, "switch-cost") == 0)
        return parse_cost(key, val, &o->switch_cost_ns, "what wasp adds to a context switch, e.g. 2.5us",
                          err, errlen);
    if (strcmp(key, "switch-armed-cost") == 0)
        return parse_cost(key, val, &o->switch_armed_ns,
                          "what an armed watch adds to a context switch, e.g. 500ns", err, errlen);
    if (strcmp(key, "switch-floor-cost") == 0)
        return parse_cost(key, val, &o->switch_floor_ns,
                          "what a context switch costs at long intervals, e.g. 1.5us", err, errlen);
    if (strcmp(key, "tick") == 0)
        return parse_cost(key, val, &o->tick_ns, "the kernel's tick, e.g. 4ms", err, errlen);
    if (strcmp(key, "sampler") == 0) {
        for (int i = 0; i < 4; i++) {
            if (strcmp(val, sampler_names[i]) == 0) {
                o->sampler = (enum wasp_sampler)i;
                return 0;
            }
        }
        snprintf(err, errlen, "unknown sampler '%s' — use auto, pmu, software or ctimer", val);
        return -1;
    }
    if (strcmp(key, "stack") == 0) {
        for (int i = 0; i < 3; i++) {
            if (strcmp(val, stack_names[i]) == 0) {
                o->stack = (enum wasp_stack)i;
                return 0;
            }
        }
        snprintf(err, errlen, "unknown stack '%s' — use include, exclude or auto", val);
        return -1;
    }
    if (strcmp(key, "period") == 0) {
        uint64_t n;
        /* Below ~1000 the signals alone (12-40 us each) would swamp the program. */
        if (options_parse_count(val, &n) == 0 && n >= 1000 && n <= 4000000000ULL) {
            o->period = n;
            return 0;
        }
        snprintf(err, errlen, "bad period '%s' — give accesses per PMU sample, 1000 to 4000m, e.g. 1m or 200k", val);
        return -1;
    }
    if (strcmp(key, "slots") == 0) {
        uint64_t n;
        if (num_parse_u64(val, &n) == NUM_OK && n >= 1 && n <= OPTIONS_MAX_SLOTS) {
            o->slots = (int)n;
            return 0;
        }
        snprintf(err, errlen, "bad slots '%s' — give 1 to 4 watchpoints per thread", val);
        return -1;
    }
    if (strcmp(key, "fp-tolerance") == 0 || strcmp(key, "fp") == 0) {
        /* strtod alone would take "nan", "inf" and hex: digits first. */
        double f = strtod(val, &end);
        if (((*val >= '0' && *val <= '9') || *val == '.') && !*end && isfinite(f) &&
            f >= 0 && f < 1) {
            o->fp_tolerance = f;
            return 0;
        }
        snprintf(err, errlen, "bad fp-tolerance '%s' — give a relative tolerance in [0, 1), e.g. 0.01", val);
        return -1;
    }
    if (strcmp(key, "dir") == 0) {
        if (*val && strlen(val) < sizeof(o->dir)) {
            snprintf(o->dir, sizeof(o->dir), "%s", val);
            return 0;
        }
        snprintf(err, errlen, "bad dir '%s' — give a writable directory path", val);
        return -1;
    }
    if (strcmp(key, "watch-check") == 0) {
        if (strcmp(val, "on") == 0 || strcmp(val, "off") == 0) {
            o->watch_check = strcmp(val, "on") == 0;
            return 0;
        }
        snprintf(err, errlen, "bad watch-check '%s' — use on or off", val);
        return -1;
    }
    if (strcmp(key, "duration") == 0) {
        uint64_t ns;
        if (options_parse_run_length(val, &ns) == 0) {
            o->duration_ns = ns;
            return 0;
        }
        snprintf(err, errlen, "bad duration '%s' — give how long an attached run lasts, 1ms to 7d, e.g. 30s", val);
        return -1;
    }
    if (strcmp(key, "flush") == 0) {
        uint64_t ns;
        if (strcmp(val, "off") == 0) {
            o->flush_ns = 0;
            return 0;
        }
        if (parse_flush(val, &ns) == 0) {
            o->flush_ns = ns;
            return 0;
        }
        snprintf(err, errlen, "bad flush '%s' — give a wall-clock period from 1s to 3600s, e.g. 10s, or off", val);
        return -1;
    }
    if (strcmp(key, "empty-handler") == 0) {
        /* Lets bench/ measure signal delivery alone: handler cost = full - empty. */
        o->empty_handler = strcmp(val, "1") == 0 || strcmp(val, "yes") == 0;
        return 0;
    }
    snprintf(err, errlen, "unknown option '%s' — known: mode, interval, budget, sampler, period, slots, fp-tolerance, stack, dir, watch-check, duration, flush", key);
    return -1;
}

/* Copies the item of text that ends at the first unescaped ',' into buf,
 * undoing the escapes; *eq gets the offset in buf of the first unescaped
 * '=' (or -1). Returns the length of text consumed (comma included), or -1
 * when buf is too small or the text ends in a lone backslash. */
static long options_item(const char *text, char *buf, size_t len, long *eq)
{
    size_t i = 0, o = 0;
    *eq = -1;
    for (; text[i] && text[i] != ','; i++) {
        char c = text[i];
        if (c == '\\') {
            if (!text[++i]) return -1;
            c = text[i];
        } else if (c == '=' && *eq < 0) {
            *eq = (long)o;
        }
        if (o + 1 >= len) return -1;
        buf[o++] = c;
    }
    buf[o] = '\0';
    return (long)(i + (text[i] == ','));
}

int options_parse(const char *text, wasp_options *o, char *err, size_t errlen)
{
    char buf[OPTIONS_MAX_TEXT];
    if (!text)
        return 0;
    while (*text) {
        long eq, n = options_item(text, buf, sizeof buf, &eq);
        if (n < 0) {
            snprintf(err, errlen, "option string too long or ends in a lone backslash — "
                     "escape ',' '=' and '\\' in values with a backslash");
            return -1;
        }
        text += n;
        if (!buf[0])
            continue;
        if (eq < 0) {
            snprintf(err, errlen, "option '%s' has no value — write key=value", buf);
            return -1;
        }
        buf[eq] = '\0';
        if (parse_one(buf, buf + eq + 1, o, err, errlen) < 0)
            return -1;
    }
    return 0;
}

int options_escape(const char *value, char *out, size_t len)
{
    size_t o = 0;
    for (; *value; value++) {
        int esc = *value == ',' || *value == '=' || *value == '\\';
        if (o + (size_t)esc + 1 >= len)
            return -1;
        if (esc)
            out[o++] = '\\';
        out[o++] = *value;
    }
    if (len == 0)
        return -1;
    out[o] = '\0';
    return 0;
}
