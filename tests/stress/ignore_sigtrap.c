/*
 * ignore_sigtrap.c - SIGTRAP ignored (tests/stress/run: ignore_sigtrap).
 * The program sets SIG_IGN, raises SIGTRAP 5 times (nothing may happen),
 * and works in two threads. Issue 10: ignoring SIGTRAP silently gave 0
 * samples. wasp must keep sampling; the program's raises stay ignored.
 */
#include <signal.h>
#include "stress.h"

static void *worker(void *arg)
{
    stress_note_thread();
    stress_burn(300.0);
    return arg;
}

int main(void)
{
    struct sigaction now;
    pthread_t t;
    stress_note_thread();
    signal(SIGTRAP, SIG_IGN);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    for (int i = 0; i < 5; i++) {
        stress_burn(60.0);
        raise(SIGTRAP);
    }
    pthread_join(t, NULL);
    sigaction(SIGTRAP, NULL, &now);
    printf("ignore_sigtrap: survived 5 raises, SIGTRAP %s\n",
           now.sa_handler == SIG_IGN ? "still ignored" : "NOT ignored");
    stress_facts();
    return 0;
}
