#!/bin/sh
# Builds the demo program, profiles it for silent stores, prints the report
# and writes it as HTML too (build/demo/report.html). On a machine whose
# hardware watchpoints never fire (many VMs), the sampled mode cannot pair
# anything, so the demo shows the exact mode's report instead (every access
# watched under Valgrind; a shorter run, since that is ~20x slower).
set -e
cd "$(dirname "$0")/.."
mkdir -p build/demo
gcc -O2 -g -o build/demo/demo examples/demo.c
rm -rf build/demo/profile
# `wasp doctor --watch` exits 0 when a watchpoint fires here; anything else
# (it does not, or an older wasp without the check) means use the exact mode.
if build/bin/wasp doctor --watch >/dev/null 2>&1; then
    build/bin/wasp run --mode silent-store --interval 1ms -o build/demo/profile -- build/demo/demo
else
    echo "watchpoints do not fire on this machine: showing the exact mode's report"
    build/bin/wasp run --exact --mode silent-store -o build/demo/profile -- build/demo/demo 200
fi
build/bin/wasp report build/demo/profile --top 5
build/bin/wasp report build/demo/profile -o build/demo/report.html
echo "HTML report: $(pwd)/build/demo/report.html"
