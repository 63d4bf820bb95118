/*
 * test_memread.c - memread: program memory read through the kernel. A bad
 * address (unmapped, PROT_NONE, half mapped) is an error code, never a
 * SIGSEGV, and errno is left as it was.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "harness.h"
#include "memread.h"

static char *pages;   /* page 0 readable, page 1 PROT_NONE, page 2 unmapped */
static long page;

static void map_pages(void)
{
    page = sysconf(_SC_PAGESIZE);
    pages = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(pages, 0x5a, page);
    mprotect(pages + page, page, PROT_NONE);
    munmap(pages + 2 * page, page);
}

static uint64_t addr(long offset)
{
    return (uint64_t)(uintptr_t)(pages + offset);
}

TEST(reads_mapped_memory)
{
    uint64_t v = 0;
    uint8_t big[300];
    CHECK_EQ_U(memread(gettid(), addr(8), &v, 8), 0);
    CHECK_EQ_U(v, 0x5a5a5a5a5a5a5a5aULL);
    CHECK_EQ_U(memread(gettid(), addr(0), big, sizeof(big)), 0);
    CHECK_EQ_U(big[299], 0x5a);
}

TEST(unmapped_is_an_error_not_a_crash)
{
    uint64_t v = 7;
    CHECK_EQ_U(memread(gettid(), addr(2 * page + 16), &v, 8), (unsigned long long)-1);
    CHECK_EQ_U(v, 0);   /* zeroed: a caller that ignores the error sees no stale value */
    CHECK_EQ_U(memread(gettid(), 8, &v, 8), (unsigned long long)-1);   /* page 0 */
    CHECK_EQ_U(memread(gettid(), 0xffff800000000000ULL, &v, 8), (unsigned long long)-1);   /* kernel */
}

/* HotSpot's stack guard zones are PROT_NONE pages like this one. */
TEST(guard_page_is_an_error_not_a_crash)
{
    uint64_t v = 7;
    CHECK_EQ_U(memread(gettid(), addr(page + 64), &v, 8), (unsigned long long)-1);
    CHECK_EQ_U(v, 0);
}

TEST(half_readable_is_an_error)
{
    uint64_t v = 7;
    CHECK_EQ_U(memread(gettid(), addr(page - 4), &v, 8), (unsigned long long)-1);
    CHECK_EQ_U(v, 0);
}

TEST(errno_is_preserved)
{
    uint64_t v;
    errno = 4242;
    memread(gettid(), addr(page + 8), &v, 8);
    CHECK_EQ_U(errno, 4242);
    memread(gettid(), addr(0), &v, 8);
    CHECK_EQ_U(errno, 4242);
}

int main(void)
{
    map_pages();
    RUN(reads_mapped_memory);
    RUN(unmapped_is_an_error_not_a_crash);
    RUN(guard_page_is_an_error_not_a_crash);
    RUN(half_readable_is_an_error);
    RUN(errno_is_preserved);
    return HARNESS_EXIT();
}
