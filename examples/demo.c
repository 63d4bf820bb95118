/*
 * demo.c - a small "image filter" with a classic silent store.
 *
 * apply_gain() rescales every pixel each frame; the gain table only changes
 * every 8th frame, yet refresh_gain_table() rewrites all of it every frame,
 * storing the same values again (silent stores at the line marked SILENT).
 * The fix: rebuild the table only when the gain changes.
 */
#include <stdio.h>
#include <stdlib.h>

#define PIXELS (1 << 14)
#define LEVELS (1 << 16)

static unsigned short image[PIXELS];
static unsigned short out[PIXELS];
static int gain_table[LEVELS];

__attribute__((noinline)) static void refresh_gain_table(int gain)
{
    for (int v = 0; v < LEVELS; v++)
        gain_table[v] = (v * gain) >> 4;   /* SILENT: same values 7 frames in 8 */
}

__attribute__((noinline)) static void apply_gain(void)
{
    for (int i = 0; i < PIXELS; i++)
        out[i] = (unsigned short)gain_table[image[i] & (LEVELS - 1)];
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 20000;
    unsigned long checksum = 0;
    srand(1);
    for (int i = 0; i < PIXELS; i++)
        image[i] = (unsigned short)(rand() & (LEVELS - 1));
    for (int f = 0; f < frames; f++) {
        refresh_gain_table(16 + f / 8);
        apply_gain();
        checksum += out[f % PIXELS];
    }
    printf("demo: %d frames, checksum %lu\n", frames, checksum);
    return 0;
}
