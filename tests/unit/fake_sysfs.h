/*
 * fake_sysfs.h - fake /sys/bus/event_source/devices trees for the PMU tests,
 * built in a temporary directory from the layouts real kernels show.
 *
 * Fake PMUs get the type FAKE_TYPE, which no kernel hands out, so opening
 * their events fails (ENOENT) on every machine, with or without a PMU: the
 * tests that need the fallback path get it everywhere.
 */
#ifndef WASP_FAKE_SYSFS_H
#define WASP_FAKE_SYSFS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAKE_TYPE "2147483632"   /* 0x7ffffff0 */

static char fake_root[128];

/* root/rel gets content; parent directories are made as needed. */
static inline void fake_file(const char *rel, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
    for (char *p = path + strlen(fake_root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", content);
        fclose(f);
    }
}

static inline int fake_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A fresh empty root: a machine with no PMU at all. */
static inline const char *fake_begin(void)
{
    snprintf(fake_root, sizeof(fake_root), "/tmp/wasp-sysfs-XXXXXX");
    if (!mkdtemp(fake_root))
        abort();
    return fake_root;
}

static inline void fake_end(void)
{
    nftw(fake_root, fake_remove, 16, FTW_DEPTH | FTW_PHYS);
}

/* What every Linux has, PMU or not (our Firecracker VM shows just these). */
static inline void fake_software_pmus(void)
{
    fake_file("breakpoint/type", "5");
    fake_file("software/type", "1");
    fake_file("tracepoint/type", "2");
}

/* An Intel core PMU as Skylake through Ice Lake show it. */
static inline void fake_intel_core(const char *pmu, const char *pmu_name)
{
    static const char *const formats[][2] = {
        { "event", "config:0-7" }, { "umask", "config:8-15" }, { "edge", "config:18" },
        { "pc", "config:19" }, { "any", "config:21" }, { "inv", "config:23" },
        { "cmask", "config:24-31" }, { "ldlat", "config1:0-15" }, { "offcore_rsp", "config1:0-63" },
        { "frontend", "config1:0-23" }, { "in_tx", "config:32" },
    };
    char rel[128];
    snprintf(rel, sizeof(rel), "%s/type", pmu);
    fake_file(rel, FAKE_TYPE);
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        snprintf(rel, sizeof(rel), "%s/format/%s", pmu, formats[i][0]);
        fake_file(rel, formats[i][1]);
    }
    snprintf(rel, sizeof(rel), "%s/events/mem-stores", pmu);
    fake_file(rel, "event=0xd0,umask=0x82");
    snprintf(rel, sizeof(rel), "%s/events/mem-loads", pmu);
    fake_file(rel, "event=0xcd,umask=0x1,ldlat=3");
    snprintf(rel, sizeof(rel), "%s/events/cycles", pmu);
    fake_file(rel, "event=0x3c");
    snprintf(rel, sizeof(rel), "%s/caps/pmu_name", pmu);
    fake_file(rel, pmu_name);
    snprintf(rel, sizeof(rel), "%s/caps/max_precise", pmu);
    fake_file(rel, "3");
}

/* AMD Zen 4 on a recent kernel: a core PMU without memory events, and IBS. */
static inline void fake_amd(int swfilt)
{
    fake_file("cpu/type", FAKE_TYPE);
    fake_file("cpu/format/event", "config:0-7,32-35");
    fake_file("cpu/format/umask", "config:8-15");
    fake_file("cpu/caps/max_precise", "2");
    fake_file("ibs_fetch/type", FAKE_TYPE);
    fake_file("ibs_fetch/format/rand_en", "config:57");
    fake_file("ibs_op/type", FAKE_TYPE);
    fake_file("ibs_op/format/cnt_ctl", "config:19");
    fake_file("ibs_op/format/l3missonly", "config:16");
    fake_file("ibs_op/caps/zen4_ibs_extensions", "1");
    if (swfilt)
        fake_file("ibs_op/format/swfilt", "config2:0");
}

#endif
