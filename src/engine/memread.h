/*
 * memread.h - reading the profiled program's memory without ever faulting.
 *
 * Signal-safe: one system call, no malloc, no locks, no stdio; errno is
 * preserved. Every read of program memory from a signal handler goes
 * through here (or through a monitor_io built on it): an address taken
 * from an interrupted context (registers, frame pointers, stack slots) can
 * be unmapped or a guard page, and a fault inside wasp's handler would
 * kill the program.
 */
#ifndef WASP_MEMREAD_H
#define WASP_MEMREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies len bytes at addr of the process that thread tid belongs to into
 * out. Returns 0, or -1 when any byte is unreadable (out is then zeroed). */
int memread(pid_t tid, uint64_t addr, void *out, size_t len);

#endif
