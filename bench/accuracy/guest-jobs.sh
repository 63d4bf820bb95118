#!/bin/bash
# bench/accuracy/guest-jobs.sh - runs in the QEMU TCG guest (tests/guest/run
# --suite jobs): one `wasp run` per line of /w/jobs, "NAME MODE COMMAND...",
# each into /tmp/out/NAME with its stderr in /tmp/out/NAME.log and its
# exit status in /tmp/out/NAME.status; WASP_JOBS_ARGS are more `wasp run`
# options (tests/guest/run's WASP_GUEST_RUN_ARGS). COMMAND's stdout is discarded. Each
# job's guest time goes to the console ("# guest job ...", which the host
# prints).
set -u
cd /tmp || exit 1
uptime_s() { cut -d' ' -f1 /proc/uptime; }
while read -r name mode cmd; do
    [ -n "$name" ] || continue
    start=$(uptime_s)
    # shellcheck disable=SC2086 # COMMAND and WASP_JOBS_ARGS are word lists
    /w/build/bin/wasp run --mode "$mode" --interval "${WASP_JOBS_INTERVAL:-500us}" ${WASP_JOBS_ARGS:-} -o "/tmp/out/$name" -- \
        $cmd >/dev/null 2>"/tmp/out/$name.log"
    rc=$?
    echo $rc >"/tmp/out/$name.status"
    awk -v n="$name" -v r="$rc" -v s="$start" -v e="$(uptime_s)" \
        'BEGIN { printf "# guest job %s: exit %d, %.1f s\n", n, r, e - s }'
done </w/jobs
