#!/usr/bin/env bash
# Runs the benchmarks (not part of the test suite) and prints their figures; record them
# with the machine details in docs/benchmarks.md.
#   scripts/bench.sh                 all benchmarks
#   scripts/bench.sh scheduler       one of: scheduler, pod-startup
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
if [ "$which" = all ] || [ "$which" = pod-startup ]; then
  echo "=== pod start-up on a real node (containerd + kubelet-lite): 50 one at a time, then 50 at once"
  for run in 1 2 3; do ./build/bench/pod_startup_bench ./build/cmd ./scripts/containerd.sh 50; done
fi
