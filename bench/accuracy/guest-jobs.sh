#!/bin/bash
# bench/accuracy/guest-jobs.sh - runs in the QEMU TCG guest (tests/guest/run
# --suite jobs): one `wasp run` per line of /w/jobs, "NAME MODE COMMAND...",
# each into /tmp/out/NAME with its stderr in /tmp/out/NAME.log, its exit
# status in /tmp/out/NAME.status and a crashed JVM's report, if any, in
# /tmp/out/NAME.hs_err.log. A NAME on several lines runs that many times
# into the same directory (one process each: reports merge them), its log
# appended, its status the first failure's. COMMAND's stdout is discarded. WASP_JOBS_ARGS:
# more `wasp run` options (tests/guest/run's WASP_GUEST_RUN_ARGS). Each
# job's guest time goes to the console ("# guest job ...", which the host
# prints).
set -u
uptime_s() { cut -d' ' -f1 /proc/uptime; }
while read -r name mode cmd; do
    [ -n "$name" ] || continue
    # Each job in a directory of its own, so that a crashed JVM's
    # hs_err_pid*.log comes back as NAME.hs_err.log.
    mkdir -p "/tmp/jobs/$name" && cd "/tmp/jobs/$name" || exit 1
    start=$(uptime_s)
    # shellcheck disable=SC2086 # COMMAND and WASP_JOBS_ARGS are word lists
    /w/build/bin/wasp run --mode "$mode" --interval "${WASP_JOBS_INTERVAL:-500us}" ${WASP_JOBS_ARGS:-} -o "/tmp/out/$name" -- \
        $cmd >/dev/null 2>>"/tmp/out/$name.log"
    rc=$?
    if [ "$(cat "/tmp/out/$name.status" 2>/dev/null || echo 0)" = 0 ]; then echo $rc >"/tmp/out/$name.status"; fi
    for f in hs_err_pid*.log; do
        if [ -f "$f" ]; then cp "$f" "/tmp/out/$name.hs_err.log"; fi
    done
    awk -v n="$name" -v r="$rc" -v s="$start" -v e="$(uptime_s)" \
        'BEGIN { printf "# guest job %s: exit %d, %.1f s\n", n, r, e - s }'
done </w/jobs
