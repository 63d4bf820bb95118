/*
 * msan_scope.h - wasp's own work inside a MemorySanitizer program.
 *
 * MSan checks what every intercepted libc call is handed and takes memory
 * its instrumented code did not write for uninitialised: libdw's paths and
 * wasp's buffers are such memory, and MSan ends the program at the first.
 * Nothing wasp hands libc is the program's, so wasp's normal-context work
 * (writing profiles, reading symbol tables) turns the checks off meanwhile.
 */
#ifndef WASP_MSAN_SCOPE_H
#define WASP_MSAN_SCOPE_H

/* Normal context. 0: this thread's interceptor checks off; 1: back on. A
 * no-op outside MSan programs; errno is kept. */
void msan_checks(int on);

#endif
