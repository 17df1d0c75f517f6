#!/usr/bin/env bash
# Runs the benchmarks (not part of the test suite) and prints their figures; record them
# with the machine details in docs/benchmarks.md.
#   scripts/bench.sh                 all benchmarks
#   scripts/bench.sh scheduler       one of: scheduler
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
./scripts/build.sh
which=${1:-all}
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
if [ "$which" = all ] || [ "$which" = scheduler ]; then
  echo "=== scheduler: 5,000 nodes, 10,000 pods"
  for run in 1 2 3; do ./build/bench/scheduler_bench ./build/cmd 5000 10000 32 1000 | grep -E "^(phase|SUMMARY|scheduler:)"; done
fi
