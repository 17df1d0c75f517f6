#!/usr/bin/env bash
# Quick start, step two: the whole test suite, exactly as CI runs it.
#   1. set-up (Debian packages), release build, unit tests (ctest), the watch stress
#      test, end-to-end suites, the ported conformance tests (conformance/RESULTS.md) and
#      the kubectl 1.27-1.33 matrix (tests/kubectl_matrix/MATRIX.md);
#   2. the end-to-end suites, conformance and the matrix again with the API servers on etcd
#      (--etcd-servers; one etcd for the pass, a key prefix per test server);
#   3. the first pass against the AddressSanitizer/UBSan build (without the matrix).
# Set SHEPHERD_SKIP_ASAN=1 to skip the third pass, SHEPHERD_SKIP_ETCD=1 the second (for quick
# local iterations).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo; echo "=== $* ($(( $(date +%s) - start ))s)"; }

step "setup"
./scripts/setup-deps.sh

run_suites() {
  local builddir=$1 matrix=${2:-matrix}
  export SHEPHERD_APISERVER="$PWD/$builddir/cmd/shepherd-apiserver"
  step "unit tests ($builddir)"
  ctest --test-dir "$builddir" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" -E watch_stress
  step "watch stress: 200 reconnecting watchers, 500 writes/s, 2 minutes ($builddir)"
  ctest --test-dir "$builddir" --output-on-failure -R watch_stress
  step "end-to-end tests ($builddir)"
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e
  step "conformance ($builddir)"
  /usr/bin/python3 conformance/run.py
  if [ "$matrix" = matrix ]; then
    step "kubectl 1.27-1.33 matrix ($builddir)"
    /usr/bin/python3 tests/kubectl_matrix/report.py
  fi
}

step "build"
./scripts/build.sh
run_suites build

if [ "${SHEPHERD_SKIP_ETCD:-0}" != "1" ]; then
  step "etcd pass: start etcd"
  etcd_dir=$(mktemp -d /tmp/shepherd-etcd.XXXXXX)
  /usr/bin/python3 tests/harness/etcd_cluster.py serve --dir "$etcd_dir" --endpoints-file "$etcd_dir/endpoints" \
    >"$etcd_dir/serve.log" 2>&1 &
  etcd_pid=$!
  stop_etcd() { kill "$etcd_pid" 2>/dev/null; wait "$etcd_pid" 2>/dev/null; rm -rf "$etcd_dir"; }
  trap stop_etcd EXIT
  for _ in $(seq 600); do [ -s "$etcd_dir/endpoints" ] || ! kill -0 "$etcd_pid" 2>/dev/null && break; sleep 0.1; done
  if [ ! -s "$etcd_dir/endpoints" ]; then cat "$etcd_dir/serve.log" "$etcd_dir"/*.log; exit 1; fi
  export SHEPHERD_ETCD_SERVERS=$(cat "$etcd_dir/endpoints")
  export SHEPHERD_APISERVER="$PWD/build/cmd/shepherd-apiserver"
  step "end-to-end tests (build, etcd at $SHEPHERD_ETCD_SERVERS)"
  # Not again here: the fault tests start their own etcd whatever the pass, and streaming
  # reads storage as any GET does (CI time; see README "Tests").
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e --ignore=tests/e2e/test_etcd_faults.py \
    --ignore=tests/e2e/test_distributed.py --ignore=tests/e2e/test_streaming.py
  step "conformance (build, etcd)"
  /usr/bin/python3 conformance/run.py  # writes conformance/RESULTS-etcd.md
  step "kubectl 1.27-1.33 matrix (build, etcd)"
  /usr/bin/python3 tests/kubectl_matrix/report.py -o tests/kubectl_matrix/MATRIX-etcd.md
  unset SHEPHERD_ETCD_SERVERS
  stop_etcd
  trap - EXIT
fi

if [ "${SHEPHERD_SKIP_ASAN:-0}" != "1" ]; then
  step "build with sanitizers"
  ./scripts/build.sh --sanitize
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The matrix checks client compatibility, which the first two passes cover; the
  # sanitizers get the e2e and conformance suites (CI time: see README "Tests").
  run_suites build-asan no-matrix
fi
step "all tests passed"
