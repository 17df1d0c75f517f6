#!/usr/bin/env bash
# Quick start, step two: the whole test suite, exactly as CI runs it.
#   1. set-up (Debian packages), release build, unit tests (ctest), end-to-end suites
#      with real kubectl and python clients;
#   2. the same against the AddressSanitizer/UBSan build.
# Set SHEPHERD_SKIP_ASAN=1 to run only the first pass (for quick local iterations).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo; echo "=== $* ($(( $(date +%s) - start ))s)"; }

step "setup"
./scripts/setup-deps.sh

run_suites() {
  local builddir=$1
  step "unit tests ($builddir)"
  ctest --test-dir "$builddir" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
  step "end-to-end tests ($builddir)"
  SHEPHERD_APISERVER="$PWD/$builddir/cmd/shepherd-apiserver" \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e
}

step "build"
./scripts/build.sh
run_suites build

if [ "${SHEPHERD_SKIP_ASAN:-0}" != "1" ]; then
  step "build with sanitizers"
  ./scripts/build.sh --sanitize
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suites build-asan
fi
step "all tests passed"
