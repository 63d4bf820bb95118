#!/bin/sh
# Builds the demo program, profiles it for silent stores, prints the report
# and writes it as HTML too (build/demo/report.html).
set -e
cd "$(dirname "$0")/.."
mkdir -p build/demo
gcc -O2 -g -o build/demo/demo examples/demo.c
rm -rf build/demo/profile
build/bin/wasp run --mode silent-store --interval 1ms -o build/demo/profile -- build/demo/demo
build/bin/wasp report build/demo/profile --top 5
build/bin/wasp report build/demo/profile -o build/demo/report.html
echo "HTML report: $(pwd)/build/demo/report.html"
