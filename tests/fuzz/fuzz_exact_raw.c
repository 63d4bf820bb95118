/*
 * fuzz_exact_raw.c - libFuzzer target: the exact tool's raw file
 * (src/cli/exact_raw.c) and its conversion into profiles
 * (exact_convert.c: contexts, folds, the JIT code each profile keeps),
 * then the profiles written read back. The raw file comes from wasp's own
 * tool, but a full disk or a killed run can leave anything: a bad file must
 * be refused, never crash or write a profile the reader refuses.
 *
 * Profiles go to one temporary directory, emptied after every input.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exact_convert.h"
#include "profile.h"

static char dir[] = "/tmp/wasp-fuzz-exact.XXXXXX";

/* Every profile written must read back. */
static int check_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st; (void)ftw;
    profile p;
    char err[512];
    if (type == FTW_F && strstr(path, ".wasp")) {
        if (profile_read(path, &p, err, sizeof err) != 0) {
            fprintf(stderr, "a converted profile does not read back: %s\n", err);
            abort();
        }
        profile_free(&p);
    }
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st; (void)type;
    if (ftw->level > 0) remove(path);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (!mkdtemp(dir)) abort();
        ready = 1;
    }
    if (size > (1u << 20)) return 0;
    char *buf = malloc(size + 1), err[512];
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    exact_summary s = { 0 };
    exact_convert_text(buf, dir, 0, &s, err, sizeof err);
    free(buf);
    nftw(dir, check_one, 8, FTW_PHYS);
    nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}
