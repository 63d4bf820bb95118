/*
 * test_unloads.c - which unloaded library a native frame's code was
 * (src/native/unloads.c): the one that covered its pc and was unloaded
 * after the frame was captured; none for code still mapped.
 */
#include "harness.h"
#include "native.h"

static loaded_object object(const char *path, uint64_t lo)
{
    return (loaded_object){ .path = (char *)path, .base = lo, .lo = lo, .hi = lo + 0x5000 };
}

/* Unloads o (the other objects stay loaded). */
static void unload(loaded_object o, loaded_object stays)
{
    loaded_object before[2] = { o, stays };
    unloads_note(before, 2, &stays, 1);
}

/* The path unloads_find gives for pc in a frame of generation gen, or "". */
static const char *code_of(uint64_t pc, uint64_t gen)
{
    const char *path = "";
    uint64_t base;
    return unloads_find(pc, gen, &path, &base) >= 0 ? path : "";
}

TEST(a_frame_is_named_after_the_library_unloaded_after_it)
{
    loaded_object a = object("/p/a.so", 0x10000), libc = object("/lib/libc.so.6", 0x90000);
    uint64_t g = unloads_generation();
    unload(a, libc);
    CHECK(unloads_generation() == g + 1);
    CHECK_STR(code_of(0x11000, g), "/p/a.so");
    CHECK_STR(code_of(0x11000, g + 1), "");   /* captured later: what is mapped there now */
    CHECK_STR(code_of(0x91000, g), "");       /* libc stayed: never noted */
}

TEST(another_library_in_the_same_place_is_told_apart)
{
    loaded_object a = object("/p/a2.so", 0x20000), b = object("/p/b.so", 0x20000),
                  libc = object("/lib/libc.so.6", 0x90000);
    uint64_t g = unloads_generation();
    unload(a, libc);
    unload(b, libc);   /* loaded into a's place, run, unloaded */
    CHECK(unloads_generation() == g + 2);
    CHECK_STR(code_of(0x21000, g), "/p/a2.so");
    CHECK_STR(code_of(0x21000, g + 1), "/p/b.so");
    CHECK_STR(code_of(0x21000, g + 2), "");
}

TEST(one_library_reloaded_in_place_keeps_one_generation)
{
    loaded_object a = object("/p/loop.so", 0x30000), libc = object("/lib/libc.so.6", 0x90000);
    uint64_t g = unloads_generation();
    unload(a, libc);
    for (int i = 0; i < 100; i++)
        unload(a, libc);
    CHECK(unloads_generation() == g + 1);      /* contexts do not multiply per reload */
    CHECK_STR(code_of(0x31000, g), "/p/loop.so");
    CHECK_STR(code_of(0x31000, g + 1), "/p/loop.so");   /* frames of the later loads */
}

int main(void)
{
    RUN(a_frame_is_named_after_the_library_unloaded_after_it);
    RUN(another_library_in_the_same_place_is_told_apart);
    RUN(one_library_reloaded_in_place_keeps_one_generation);
    return HARNESS_EXIT();
}
