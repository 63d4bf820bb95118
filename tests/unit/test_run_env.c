/*
 * test_run_env.c - LD_PRELOAD and JAVA_TOOL_OPTIONS for any library path:
 * what ld.so splits (spaces, colons) and what the JVM splits (whitespace,
 * unless quoted).
 */
#include "harness.h"
#include "run_env.h"

#include <stdlib.h>

static char err[512];

static void clean(void)
{
    unsetenv("LD_PRELOAD");
    unsetenv("LD_LIBRARY_PATH");
    unsetenv("JAVA_TOOL_OPTIONS");
    unsetenv("WASP_OPTIONS");
    unsetenv("ASAN_OPTIONS");
}

TEST(plain_path_goes_as_it_is)
{
    clean();
    setenv("LD_PRELOAD", "/x/other.so", 1);
    CHECK_EQ_U(run_env_set("/opt/wasp/lib/libwasp.so", "mode=dead-store,dir=/tmp/o", err, sizeof err), 0);
    CHECK_STR(getenv("LD_PRELOAD"), "/opt/wasp/lib/libwasp.so:/x/other.so");
    CHECK(getenv("LD_LIBRARY_PATH") == NULL);
    CHECK_STR(getenv("JAVA_TOOL_OPTIONS"), "-agentpath:/opt/wasp/lib/libwasp.so=mode=dead-store,dir=/tmp/o");
    CHECK_STR(getenv("WASP_OPTIONS"), "mode=dead-store,dir=/tmp/o");
}

TEST(a_space_goes_through_the_library_path_and_quotes)
{
    clean();
    setenv("LD_LIBRARY_PATH", "/usr/local/lib", 1);
    setenv("JAVA_TOOL_OPTIONS", "-Xmx1g", 1);
    CHECK_EQ_U(run_env_set("/my tools/lib/libwasp.so", "dir=/tmp/a b", err, sizeof err), 0);
    CHECK_STR(getenv("LD_PRELOAD"), "libwasp.so");
    CHECK_STR(getenv("LD_LIBRARY_PATH"), "/my tools/lib:/usr/local/lib");
    CHECK_STR(getenv("JAVA_TOOL_OPTIONS"), "-agentpath:\"/my tools/lib/libwasp.so=dir=/tmp/a b\" -Xmx1g");
}

TEST(quotes_pick_the_other_kind_or_are_refused)
{
    clean();
    CHECK_EQ_U(run_env_set("/w/lib/libwasp.so", "dir=/tmp/a\"b", err, sizeof err), 0);
    CHECK_STR(getenv("JAVA_TOOL_OPTIONS"), "-agentpath:'/w/lib/libwasp.so=dir=/tmp/a\"b'");
    CHECK(run_env_set("/w/lib/libwasp.so", "dir=/tmp/a\"b'c", err, sizeof err) != 0);
    CHECK(strstr(err, "both kinds of quote") != NULL);
    CHECK(run_env_set("/w:x y/lib/libwasp.so", "dir=o", err, sizeof err) != 0);
    CHECK(strstr(err, "':' or ';'") != NULL);
}

/* An ASan runtime loaded after libwasp.so would end the program at its
 * start; the user's own options come after wasp's, so theirs win. */
TEST(asan_is_told_it_may_load_second)
{
    clean();
    CHECK_EQ_U(run_env_set("/w/lib/libwasp.so", "dir=o", err, sizeof err), 0);
    CHECK_STR(getenv("ASAN_OPTIONS"), "verify_asan_link_order=0");
    clean();
    setenv("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=1", 1);
    CHECK_EQ_U(run_env_set("/w/lib/libwasp.so", "dir=o", err, sizeof err), 0);
    CHECK_STR(getenv("ASAN_OPTIONS"), "verify_asan_link_order=0:detect_leaks=0:verify_asan_link_order=1");
}

int main(void)
{
    RUN(plain_path_goes_as_it_is);
    RUN(a_space_goes_through_the_library_path_and_quotes);
    RUN(quotes_pick_the_other_kind_or_are_refused);
    RUN(asan_is_told_it_may_load_second);
    clean();
    return HARNESS_EXIT();
}
