#!/usr/bin/env bash
# Configures and builds Shepherd. Usage: scripts/build.sh [--sanitize] [target...]
#   default      -> build/       (RelWithDebInfo)
#   --sanitize   -> build-asan/  (AddressSanitizer + UndefinedBehaviorSanitizer, -O2)
#   target...    -> only these CMake targets (default: everything)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  shift
  dir=build-asan
  # Optimized: sanitizers stay precise at -O2 and the load tests stay meaningful.
  extra=(-DSHEPHERD_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" > /dev/null
if [ $# -gt 0 ]; then
  cmake --build "$dir" -j "$jobs" --target "$@"
else
  cmake --build "$dir" -j "$jobs"
fi
