#!/bin/bash
# bench/accuracy/guest-jobs.sh - runs in the QEMU TCG guest (tests/guest/run
# --suite jobs): one `wasp run` per line of /w/jobs, "NAME MODE COMMAND...",
# each into /tmp/out/NAME with its stderr in /tmp/out/NAME.log and its
# exit status in /tmp/out/NAME.status. COMMAND's stdout is discarded.
cd /tmp || exit 1
while read -r name mode cmd; do
    [ -n "$name" ] || continue
    echo "# guest job $name: $(cut -d' ' -f1 /proc/uptime) s"
    # shellcheck disable=SC2086 # COMMAND is a word list
    /w/build/bin/wasp run --mode "$mode" --interval "${WASP_JOBS_INTERVAL:-500us}" -o "/tmp/out/$name" -- \
        $cmd >/dev/null 2>"/tmp/out/$name.log"
    echo $? >"/tmp/out/$name.status"
done </w/jobs
