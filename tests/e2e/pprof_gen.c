/*
 * pprof_gen.c - writes the profiles of two runs, a native one and a Java
 * one, as wasp's engine would (profile_write), for tests/e2e/pprof.sh.
 *
 * Where watchpoints never fire a real run has no pairs, so the runs are
 * planted here, shaped like what the front ends write: native frames with
 * modules and a libc frame without a line table, Java frames with dotted
 * method names, .java files and a JIT instruction. The right answers
 * (pprof.sh checks them in `go tool pprof -top` and `-raw`):
 *
 *   native, silent-store, 2 threads: trap leaves (pprof's flat column)
 *     reset_row 600 B (400 + 200 from the two threads, one merged pair),
 *     copy_tile 300 B, checksum 100 B; monitored 2000 B in all.
 *   java, dead-store, 1 thread: trap leaves
 *     DeadFill.clear 700 B, java.util.Arrays.fill 200 B; monitored 1000 B.
 *
 * usage: pprof_gen DIR   (writes DIR/native/<pid>/<tid>.wasp, DIR/java/...)
 */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GEN_MAX 32

typedef struct gen {
    prof_frame frames[GEN_MAX];
    prof_context ctxs[GEN_MAX];
    uint32_t ids[GEN_MAX][GEN_MAX];
    prof_pair pairs[GEN_MAX];
    size_t nframes, nctxs, npairs;
} gen;

static uint32_t gen_frame(gen *g, const char *fn, const char *file, uint32_t line,
                          const char *module, const char *insn)
{
    g->frames[g->nframes] = (prof_frame){ (char *)fn, (char *)file, line, (char *)module,
                                          0x401000 + 16 * g->nframes, (char *)insn };
    return (uint32_t)g->nframes++;
}

/* A context from frame indices, leaf first, ending at (uint32_t)-1. */
static uint32_t gen_ctx(gen *g, const uint32_t *frames)
{
    uint32_t n = 0;
    while (frames[n] != (uint32_t)-1) { g->ids[g->nctxs][n] = frames[n]; n++; }
    g->ctxs[g->nctxs] = (prof_context){ n, g->ids[g->nctxs] };
    return (uint32_t)g->nctxs++;
}

static void gen_pair(gen *g, uint32_t watch, uint32_t trap, uint64_t count, uint64_t bytes,
                     uint64_t wasteful, uint64_t approx)
{
    g->pairs[g->npairs++] = (prof_pair){ watch, trap, count, bytes, wasteful, approx };
}

static void gen_write(const gen *g, const char *dir, const char *mode, int64_t pid, int64_t tid)
{
    char path[4096], err[512];
    prof_stat stats[] = { { "samples", 400 }, { "armed", 300 }, { "traps", 120 } };
    profile p = { 0 };
    snprintf(p.mode, sizeof p.mode, "%s", mode);
    strcpy(p.sampler, "software");
    strcpy(p.watch_check, "fires 4/4");
    p.pid = pid;
    p.tid = tid;
    p.thread_name = "";
    p.command = "planted";
    p.interval = 1000000;
    p.fp_tolerance = 0.01;
    p.stats = stats;
    p.nstats = 3;
    p.frames = (prof_frame *)g->frames;
    p.nframes = g->nframes;
    p.contexts = (prof_context *)g->ctxs;
    p.ncontexts = g->nctxs;
    p.pairs = (prof_pair *)g->pairs;
    p.npairs = g->npairs;
    snprintf(path, sizeof path, "%s/%lld", dir, (long long)pid);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%lld/%lld.wasp", dir, (long long)pid, (long long)tid);
    if (profile_write(&p, path, err, sizeof err) != 0) {
        fprintf(stderr, "pprof_gen: %s\n", err);
        exit(1);
    }
}

#define END ((uint32_t)-1)

/* One native thread: grid.c's planted pairs. scale splits reset_row's
 * bytes between the two threads. */
static void gen_native_thread(const char *dir, int64_t tid, uint64_t reset_bytes, int others)
{
    gen g = { 0 };
    const char *bin = "/opt/planted/grid", *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    uint32_t start = gen_frame(&g, "__libc_start_call_main", "", 0, libc, "");
    uint32_t main_ = gen_frame(&g, "main", "grid.c", 60, bin, "");
    uint32_t render = gen_frame(&g, "render", "grid.c", 40, bin, "");
    uint32_t fill = gen_frame(&g, "fill_row", "grid.c", 21, bin, "movl %eax, (%rdx)");
    uint32_t reset = gen_frame(&g, "reset_row", "grid.c", 30, bin, "movl $0x0, (%rdx)");
    uint32_t copy = gen_frame(&g, "copy_tile", "tile.c", 12, bin, "movq %rax, (%rdi)");
    uint32_t sum = gen_frame(&g, "checksum", "tile.c", 50, bin, "movq %rcx, 0x8(%rsp)");
    uint32_t c_fill = gen_ctx(&g, (uint32_t[]){ fill, render, main_, start, END });
    uint32_t c_reset = gen_ctx(&g, (uint32_t[]){ reset, render, main_, start, END });
    gen_pair(&g, c_fill, c_reset, 10, 2 * reset_bytes, reset_bytes, 0);
    if (others) {
        uint32_t c_copy = gen_ctx(&g, (uint32_t[]){ copy, main_, start, END });
        uint32_t c_sum = gen_ctx(&g, (uint32_t[]){ sum, main_, start, END });
        gen_pair(&g, c_copy, c_copy, 6, 600, 300, 40);
        gen_pair(&g, c_sum, c_sum, 2, 200, 100, 0);
    }
    gen_write(&g, dir, "silent-store", 4242, tid);
}

static void gen_java(const char *dir)
{
    gen g = { 0 };
    const char *jit = "[jit]";
    uint32_t main_ = gen_frame(&g, "DeadFill.main", "DeadFill.java", 30, jit, "");
    uint32_t fill = gen_frame(&g, "DeadFill.fill", "DeadFill.java", 12, jit,
                              "mov %r10d, 0x10(%rsi,%rbx,4)");
    uint32_t clear = gen_frame(&g, "DeadFill.clear", "DeadFill.java", 20, jit,
                               "mov %r11d, 0x10(%rsi,%rbx,4)");
    uint32_t afill = gen_frame(&g, "java.util.Arrays.fill", "Arrays.java", 3287, jit,
                               "mov %edx, 0x10(%rdi,%rax,4)");
    uint32_t reset = gen_frame(&g, "DeadFill.reset", "DeadFill.java", 25, jit, "");
    uint32_t c_fill = gen_ctx(&g, (uint32_t[]){ fill, main_, END });
    uint32_t c_clear = gen_ctx(&g, (uint32_t[]){ clear, main_, END });
    uint32_t c_afill = gen_ctx(&g, (uint32_t[]){ afill, reset, main_, END });
    gen_pair(&g, c_fill, c_clear, 14, 700, 700, 0);
    gen_pair(&g, c_fill, c_afill, 4, 300, 200, 0);
    gen_write(&g, dir, "dead-store", 5151, 5152);
}

int main(int argc, char **argv)
{
    char path[4096];
    if (argc != 2) {
        fprintf(stderr, "usage: pprof_gen DIR\n");
        return 2;
    }
    mkdir(argv[1], 0755);
    snprintf(path, sizeof path, "%s/native", argv[1]);
    gen_native_thread(path, 4242, 400, 1);
    gen_native_thread(path, 4243, 200, 0);
    snprintf(path, sizeof path, "%s/java", argv[1]);
    gen_java(path);
    return 0;
}
