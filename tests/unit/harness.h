/*
 * harness.h - the smallest test harness that does the job.
 *
 * Each test file defines tests with TEST(name) and lists them in main via
 * RUN(name); CHECK* records a failure and goes on. The runner prints
 * "N passed, N failed" per file, which tests/unit/run sums.
 */
#ifndef WASP_HARNESS_H
#define WASP_HARNESS_H

#include <stdio.h>
#include <string.h>

static int harness_failed_checks;
static int harness_passed, harness_failed;

#define TEST(name) static void name(void)

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
        harness_failed_checks++; \
    } } while (0)

#define CHECK_EQ_U(a, b) do { \
    unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    if (a_ != b_) { \
        fprintf(stderr, "  %s:%d: %s == %s failed: %llu (0x%llx) vs %llu (0x%llx)\n", \
                __FILE__, __LINE__, #a, #b, a_, a_, b_, b_); \
        harness_failed_checks++; \
    } } while (0)

#define CHECK_STR(a, b) do { \
    const char *a_ = (a), *b_ = (b); \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) { \
        fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" vs \"%s\"\n", \
                __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
        harness_failed_checks++; \
    } } while (0)

#define RUN(name) do { \
    int before_ = harness_failed_checks; \
    name(); \
    if (harness_failed_checks == before_) { harness_passed++; } \
    else { harness_failed++; fprintf(stderr, "FAIL %s\n", #name); } \
    } while (0)

#define HARNESS_EXIT() \
    (printf("%s: %d passed, %d failed\n", __FILE__, harness_passed, harness_failed), \
     harness_failed ? 1 : 0)

#endif
