/*
 * attach_codes.h - what Agent_OnAttach returns to `wasp attach`, through
 * the JVM's "return code: N" answer to the attach "load" command.
 *
 * Shared by the agent (src/jvm/onattach.c) and the CLI (src/cli/attach.c);
 * no JVM header here. The options string "stop" ends the active run.
 */
#ifndef WASP_ATTACH_CODES_H
#define WASP_ATTACH_CODES_H

#define AGENT_OK 0
#define AGENT_BAD_OPTIONS 101     /* the option string did not parse */
#define AGENT_RUN_ACTIVE 102      /* a run started by an earlier attach is still on */
#define AGENT_NO_RUN 103          /* "stop", but no attached run is on */
#define AGENT_START_FAILED 104    /* the engine could not start: the JVM's stderr says why */
#define AGENT_NATIVE 105          /* libwasp.so profiles this process through LD_PRELOAD or -agentpath */
#define AGENT_NO_THREADS 106      /* HotSpot's thread structures could not be read */

#endif
