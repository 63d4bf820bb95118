/*
 * switches.h - a thread's context switches, as the kernel counts them.
 *
 * Every switch of a thread wasp samples costs it wasp's events' share
 * (switch_cost.h), asleep or not: a thread that blocks a hundred thousand
 * times a second pays that whatever its sampling interval. Each profile
 * counts its thread's switches (voluntary and not) while it was sampled,
 * and thread_switches charges them.
 */
#ifndef WASP_SWITCHES_H
#define WASP_SWITCHES_H

#include <stdint.h>
#include <sys/types.h>

/* Signal-safe (one system call): the calling thread's switches so far.
 * Returns 0, or -1 with *n untouched. */
int switches_own(uint64_t *n);

/* Normal context: thread tid's of this process, from /proc (absent in a
 * sandbox or a chroot: -1, *n untouched). */
int switches_of(pid_t tid, uint64_t *n);

#endif
