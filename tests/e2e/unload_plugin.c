/*
 * unload_plugin.c - the library the e2e case `unload` loads, runs and
 * unloads (unload.c says why). Built twice: as unload_plugin.so with the
 * planted dead store, and with -DOTHER as unload_other.so, other code that
 * the program loads next, most often into the addresses the first left.
 */
#ifndef OTHER
static volatile int sink[4096];

/* Every element is overwritten the next round and never read: dead. */
long plugin_work(long rounds)
{
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < 4096; i++)
            sink[i] = (int)r; /* PLANT: unload-store */
    return rounds;
}
#else
/* As large as the plugin, so that it fits the hole the plugin left exactly
 * (a smaller one lands at the top of the hole, past the plugin's code). */
static volatile int table[4096];

long other_work(long rounds)
{
    long s = 0;
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < 4096; i++)
            s += table[i] * r + (s >> 3);
    return s;
}
#endif
