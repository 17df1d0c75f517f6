#!/usr/bin/env bash
# Quick start, step two: the whole test suite, exactly as CI runs it.
#   1. set-up (Debian packages), release build, unit tests (ctest), the watch stress
#      test, end-to-end suites, the ported conformance tests (conformance/RESULTS.md) and
#      the kubectl 1.27-1.33 matrix (tests/kubectl_matrix/MATRIX.md);
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
  export SHEPHERD_APISERVER="$PWD/$builddir/cmd/shepherd-apiserver"
  step "unit tests ($builddir)"
  ctest --test-dir "$builddir" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" -E watch_stress
  step "watch stress: 200 reconnecting watchers, 500 writes/s, 2 minutes ($builddir)"
  ctest --test-dir "$builddir" --output-on-failure -R watch_stress
  step "end-to-end tests ($builddir)"
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e
  step "conformance ($builddir)"
  /usr/bin/python3 conformance/run.py
  step "kubectl 1.27-1.33 matrix ($builddir)"
  /usr/bin/python3 tests/kubectl_matrix/report.py
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
