/*
 * attach.h - `wasp attach PID`: profile a running HotSpot JVM for a while.
 */
#ifndef WASP_ATTACH_H
#define WASP_ATTACH_H

int attach_main(int argc, char **argv);

#endif
