/*
 * test_doctor.c - `wasp doctor` against fake sysfs and JDK trees. The
 * breakpoint and task-clock lines are measured for real on this machine.
 */
#include <stdlib.h>
#include "harness.h"
#include "fake_sysfs.h"
#include "doctor.h"

static char *report(const char *sysfs, const char *jvm, int *rc, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *rc = doctor_report(f, sysfs, jvm, err, errlen);
    fclose(f);
    return text;
}

TEST(no_pmu_means_software_and_the_report_says_why)
{
    char err[1024] = "";
    int rc;
    const char *root = fake_begin();
    fake_software_pmus();
    char *out = report(root, "/nonexistent/jvm", &rc, err, sizeof(err));
    CHECK(strstr(out, "PMUs                 breakpoint software tracepoint") != NULL);
    CHECK(strstr(out, "memory events        none") != NULL);
    CHECK(strstr(out, "sampler (auto)       software (") != NULL);
    CHECK(strstr(out, "), every mode: no hardware PMU") != NULL);
    CHECK(strstr(out, "cpu timer            ") != NULL);
    CHECK(strstr(out, "JDKs                 none in /nonexistent/jvm") != NULL);
    CHECK(strstr(out, "task clock") != NULL && strstr(out, "breakpoints") != NULL);
    /* Whether this machine can profile is measured, not assumed: the verdict
     * and the exit status agree either way. */
    if (rc == 0)
        CHECK(strstr(out, "wasp can profile here: software sampler") != NULL);
    else
        CHECK(strstr(out, "wasp cannot profile here") != NULL && err[0]);
    free(out);
    fake_end();
}

TEST(an_intel_tree_lists_its_events_and_why_they_fail)
{
    char err[1024];
    int rc;
    const char *root = fake_begin();
    fake_intel_core("cpu", "skylake");
    char *out = report(root, "/nonexistent/jvm", &rc, err, sizeof(err));
    CHECK(strstr(out, "store events         cpu/mem-stores/ (type 2147483632, config 0x82d0, precise_ip 2): fails: the kernel refused") != NULL);
    CHECK(strstr(out, "load events          cpu/mem-loads/ (type 2147483632, config 0x1cd, config1 0x3, precise_ip 2)") != NULL);
    CHECK(strstr(out, "cpu/event=0xd0,umask=0x81/") != NULL);
    CHECK(strstr(out, "dead-store, silent-store: software: the kernel refused cpu/mem-stores/") != NULL);
    CHECK(strstr(out, "silent-load: software: the kernel refused cpu/mem-loads/") != NULL);
    free(out);
    fake_end();
}

static const char *in_dir(const char *dir, const char *rel)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    return path;
}

TEST(jdks_are_listed_once_with_their_versions)
{
    char err[1024], jvm[160];
    int rc;
    const char *root = fake_begin();
    fake_file("jvm/jdk-21/bin/java", "#!/bin/sh");
    fake_file("jvm/jdk-21/release", "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"21.0.4\"");
    fake_file("jvm/old/bin/java", "#!/bin/sh");
    fake_file("jvm/not-a-jdk/README", "x");
    snprintf(jvm, sizeof(jvm), "%s/jvm", root);
    chmod(in_dir(jvm, "jdk-21/bin/java"), 0755);
    chmod(in_dir(jvm, "old/bin/java"), 0755);
    CHECK(symlink("jdk-21", in_dir(jvm, "a-jdk-21-alias")) == 0);   /* sorts first, shown never */
    char *out = report(root, jvm, &rc, err, sizeof(err));
    CHECK(strstr(out, "/jvm/jdk-21 (21.0.4)") != NULL);
    CHECK(strstr(out, "/jvm/old (version unknown)") != NULL);
    CHECK(strstr(out, "a-jdk-21-alias") == NULL);
    CHECK(strstr(out, "not-a-jdk") == NULL);
    free(out);
    fake_end();
}

int main(void)
{
    RUN(no_pmu_means_software_and_the_report_says_why);
    RUN(an_intel_tree_lists_its_events_and_why_they_fail);
    RUN(jdks_are_listed_once_with_their_versions);
    return HARNESS_EXIT();
}
