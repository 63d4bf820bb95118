/*
 * run_check.c - what `wasp run` can tell about a command that wasp may not
 * reach: a statically linked program has no dynamic loader, so LD_PRELOAD
 * never brings libwasp.so into it; a program built with a sanitizer that
 * maps shadow memory cannot run under Valgrind (the exact mode); and a run that left no profile at all
 * must say so rather than point the user at an empty directory.
 */
#include "run_check.h"

#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "completeness.h"
#include "profile.h"
#include "report_walk.h"

/* The file execvp would run for cmd, into path; 0 or -1. */
static int resolve_command(const char *cmd, char *path, size_t len)
{
    if (strchr(cmd, '/'))
        return snprintf(path, len, "%s", cmd) < (int)len ? 0 : -1;
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    while (*dirs) {
        size_t n = strcspn(dirs, ":");
        if (n > 0 && (size_t)snprintf(path, len, "%.*s/%s", (int)n, dirs, cmd) < len &&
            access(path, X_OK) == 0)
            return 0;
        dirs += n + (dirs[n] == ':');
    }
    return -1;
}

/* A 64-bit ELF executable with no PT_INTERP: the kernel starts it without
 * ld.so, so nothing reads LD_PRELOAD. */
static int elf_is_static(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096)
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
            return 0;
        if (ph.p_type == PT_INTERP)
            return 0;
    }
    return 1;
}

int run_check_static(const char *cmd, char *path, size_t len)
{
    if (resolve_command(cmd, path, len) < 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int is_static = elf_is_static(fd);
    close(fd);
    return is_static;
}

/* Sanitizers that cannot run under Valgrind, found by their entry point in
 * a program's dynamic symbols, whether the runtime is a shared library (gcc:
 * an undefined __asan_init) or linked in (clang: a defined, exported one).
 * ThreadSanitizer and MemorySanitizer programs ran under it (tried). */
static const run_sanitizer sanitizers[] = {
    { "__asan_init", "AddressSanitizer", "its shadow memory cannot be mapped beside Valgrind's" },
    { "__lsan_init", "LeakSanitizer", "its leak check at exit stops the program with ptrace, "
      "which hangs under Valgrind" },
};

#define ELF_TABLE_MAX (64u << 20)

static void *read_section(int fd, const Elf64_Shdr *sh)
{
    if (sh->sh_size == 0 || sh->sh_size > ELF_TABLE_MAX)
        return NULL;
    void *p = malloc(sh->sh_size + 1);
    if (p && pread(fd, p, sh->sh_size, (off_t)sh->sh_offset) != (ssize_t)sh->sh_size) {
        free(p);
        return NULL;
    }
    if (p)
        ((char *)p)[sh->sh_size] = 0;
    return p;
}

static const run_sanitizer *sanitizer_in_symbols(const Elf64_Sym *syms, size_t n, const char *names, size_t names_len)
{
    for (size_t i = 0; i < n; i++) {
        if (syms[i].st_name >= names_len)
            continue;
        for (size_t k = 0; k < sizeof(sanitizers) / sizeof(*sanitizers); k++)
            if (strcmp(names + syms[i].st_name, sanitizers[k].symbol) == 0)
                return &sanitizers[k];
    }
    return NULL;
}

static const run_sanitizer *elf_sanitizer(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 65280)
        return NULL;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, strs;
        if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + i * sizeof(sh))) != (ssize_t)sizeof(sh) ||
            sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh.e_shnum ||
            pread(fd, &strs, sizeof(strs), (off_t)(eh.e_shoff + sh.sh_link * sizeof(strs))) != (ssize_t)sizeof(strs))
            continue;
        Elf64_Sym *syms = read_section(fd, &sh);
        char *names = read_section(fd, &strs);
        const run_sanitizer *found = syms && names ?
            sanitizer_in_symbols(syms, sh.sh_size / sizeof(Elf64_Sym), names, strs.sh_size) : NULL;
        free(syms);
        free(names);
        return found;
    }
    return NULL;
}

const run_sanitizer *run_check_sanitizer(const char *cmd)
{
    char path[PATH_MAX];
    if (resolve_command(cmd, path, sizeof(path)) < 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    const run_sanitizer *found = elf_sanitizer(fd);
    close(fd);
    return found;
}

/* What a run's directory holds, as the report will read it. */
typedef struct run_found {
    size_t profiles, ckpts;   /* profiles, of which checkpoints */
    uint64_t missing, procs, ended, sandboxed;   /* completeness.h */
    char msg[512];            /* what the manifests find missing */
} run_found;

/* The threads a profile stands for: 1, or what an ended-threads profile
 * (named 0-N) says; 0 when it cannot be read (the report will say why). */
static uint64_t run_threads_in(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "0-", 2) != 0)
        return 1;
    profile p;
    char err[256];
    if (profile_read(path, &p, err, sizeof err) != 0)
        return 0;
    uint64_t n = profile_threads(&p);
    profile_free(&p);
    return n;
}

/* Walks dir as the report will (no links followed). */
static void run_check_walk(const char *dir, run_found *f)
{
    report_paths ps = { 0 };
    completeness c = { 0 };
    memset(f, 0, sizeof *f);
    if (report_walk_find(&ps, &c, dir) == 0) {
        f->profiles = ps.n;
        for (size_t i = 0; i < ps.n; i++) {
            completeness_found(&c, completeness_pid_of(ps.v[i]), run_threads_in(ps.v[i]));
            f->ckpts += (size_t)report_walk_is_checkpoint(ps.v[i]);
        }
        f->missing = completeness_missing(&c, -1, f->msg, sizeof f->msg);
        f->procs = completeness_processes(&c);
        f->ended = completeness_ended(&c);
        f->sandboxed = completeness_sandboxed(&c);
    }
    report_walk_free(&ps);
    completeness_free(&c);
}

void run_check_outcome(const char *dir, int rc, int is_static, const char *cmd)
{
    run_found f;
    run_check_walk(dir, &f);
    if (f.sandboxed)
        fprintf(stderr, "[wasp] INFO %" PRIu64 " process%s limited %s own system calls (a seccomp "
                "filter): wasp wrote %s profiles then and did not profile the rest of %s run\n",
                f.sandboxed, f.sandboxed == 1 ? "" : "es", f.sandboxed == 1 ? "its" : "their",
                f.sandboxed == 1 ? "its" : "their", f.sandboxed == 1 ? "its" : "their");
    if (f.ended)
        fprintf(stderr, "[wasp] INFO %" PRIu64 " process%s ended without running exit handlers "
                "(SIGKILL, a crash, or a raw exit as Go programs make): wasp's guardian wrote "
                "the profiles after %s\n", f.ended, f.ended == 1 ? "" : "es", f.ended == 1 ? "it" : "them");
    if (f.ckpts)
        fprintf(stderr, "[wasp] WARN %zu thread%s left only a checkpoint: the program did not end "
                "normally (killed or crashed?); wasp report shows the data up to the last one (--flush)\n",
                f.ckpts, f.ckpts == 1 ? "" : "s");
    if (f.missing)
        fprintf(stderr, "[wasp] %s %s: %s\n", f.profiles ? "WARN incomplete run in" :
                "ERROR no profile was written to", dir, f.msg);
    if (f.profiles)
        fprintf(stderr, "[wasp] profile in %s — view it with: wasp report %s\n", dir, dir);
    else if (f.procs && !f.missing)
        fprintf(stderr, "[wasp] ERROR no profile was written to %s: libwasp.so loaded in %" PRIu64
                " process%s, which started no thread it could profile — see the messages above\n",
                dir, f.procs, f.procs == 1 ? "" : "es");
    else if (f.procs)
        return;
    else if (rc > 128 && !is_static)
        fprintf(stderr, "[wasp] ERROR no profile was written to %s: %s was killed by signal %d "
                "before libwasp.so started (only SIGINT, SIGTERM and SIGHUP let wasp write first)\n",
                dir, cmd, rc - 128);
    else if (rc != 127)
        fprintf(stderr, "[wasp] ERROR no profile was written to %s: %s never loaded libwasp.so "
                "(statically linked, or it clears LD_PRELOAD/JAVA_TOOL_OPTIONS) — run a "
                "dynamically linked program, or use wasp run --exact\n", dir, cmd);
}
