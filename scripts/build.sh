#!/usr/bin/env bash
# Configures and builds Shepherd. Usage: scripts/build.sh [--sanitize] [target...]
#   default      -> build/       (-O2, line tables: what `shepherd up` and the benchmarks run)
#   --sanitize   -> build-asan/  (AddressSanitizer + UndefinedBehaviorSanitizer, -O2, line
#                                 tables only: what the test suite runs)
#   target...    -> only these CMake targets (default: everything). Named groups:
#                   programs (what `shepherd up` runs), tests (programs + test binaries),
#                   benchmarks (programs + benchmark binaries)
# Ninja is used for new build directories (an existing one keeps its generator); ccache,
# when installed, caches compilations across build directories and clones.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  shift
  dir=build-asan
  # Optimized: sanitizers stay precise at -O2 and the load tests stay meaningful.
  extra=(-DSHEPHERD_SANITIZE=ON)
fi
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja > /dev/null; then
  extra+=(-G Ninja)
fi
if command -v ccache > /dev/null; then
  extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout, so clones in other directories share the cache.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" > /dev/null
targets=()
for t in "$@"; do
  case "$t" in
    programs) targets+=(shepherd_programs) ;;
    tests) targets+=(shepherd_tests) ;;
    benchmarks) targets+=(shepherd_benchmarks) ;;
    *) targets+=("$t") ;;
  esac
done
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
else
  cmake --build "$dir" -j "$jobs"
fi
