#!/usr/bin/env bash
# Quick start, step two: the whole test suite, exactly as CI runs it (.ci/run).
#   1. set-up (Debian packages) and the sanitizer build (AddressSanitizer + UBSan, build-asan/;
#      every suite runs against it, so memory errors and leaks fail the run);
#   2. unit tests (ctest, with the layering check), the watch stress test, the end-to-end
#      suites and, beside them in a second process, the ported conformance tests
#      (conformance/RESULTS.md) and the kubectl 1.27-1.33 matrix
#      (tests/kubectl_matrix/MATRIX.md);
#   3. the etcd pass: the end-to-end and conformance tests whose behaviour depends on the
#      store (pytest marker `storage`) again with the API servers on one etcd
#      (conformance/RESULTS-etcd.md).
# The release build (build/) is what scripts/up.sh runs and scripts/bench.sh measures; the
# suite does not build it. Each step's wall time is printed at the end.
#
#   scripts/test.sh                 everything (CI)
#   scripts/test.sh --quick         unit tests and the end-to-end tests not marked `slow`
#   scripts/test.sh --only PATTERN  only tests matching PATTERN in every suite (ctest -R,
#                                   pytest -k); no etcd pass
#   scripts/test.sh --etcd-all      the etcd pass runs every end-to-end, conformance and
#                                   matrix test, not only the `storage` ones
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all only="" etcd_all=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --only) mode=only; only=${2:?--only needs a pattern}; shift ;;
    --etcd-all) etcd_all=1 ;;
    *) echo "test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

start=$(date +%s)
step_names=() step_secs=() step_start=$start current=""
step() {
  local now; now=$(date +%s)
  if [ -n "$current" ]; then step_names+=("$current"); step_secs+=($((now - step_start))); fi
  current="$*" step_start=$now
  echo; echo "=== $* ($((now - start))s)"
}
summary() {
  local rc=$? now; now=$(date +%s)
  if [ -n "$current" ]; then step_names+=("$current"); step_secs+=($((now - step_start))); fi
  echo; echo "=== step times"
  for i in "${!step_names[@]}"; do printf '%6ds  %s\n' "${step_secs[$i]}" "${step_names[$i]}"; done
  printf '%6ds  total (%s)\n' $((now - start)) "$([ $rc -eq 0 ] && echo passed || echo "FAILED, exit $rc")"
}
trap summary EXIT

# pytest exits 5 when a selection matches nothing: fine for --only.
pytest_ok() {
  local rc=0
  "$@" || rc=$?
  if [ $rc -eq 5 ] && [ "$mode" = only ]; then rc=0; fi
  return $rc
}

step "setup"
./scripts/setup-deps.sh

step "build with sanitizers (build-asan)"
./scripts/build.sh --sanitize tests
builddir=build-asan
export SHEPHERD_APISERVER="$PWD/$builddir/cmd/shepherd-apiserver"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
pytest=(/usr/bin/python3 -m pytest -q -p no:cacheprovider)
jobs=$(nproc 2>/dev/null || echo 2)

case "$mode" in
  quick)
    step "unit tests"
    ctest --test-dir "$builddir" --output-on-failure -j "$jobs" -E watch_stress
    step "end-to-end tests, not slow"
    "${pytest[@]}" tests/e2e -m "not slow"
    ;;
  only)
    step "unit tests matching $only"
    ctest --test-dir "$builddir" --output-on-failure -j "$jobs" -R "$only"
    step "end-to-end tests matching $only"
    pytest_ok "${pytest[@]}" tests/e2e -k "$only"
    step "conformance tests matching $only"
    pytest_ok "${pytest[@]}" conformance -k "$only"
    step "kubectl matrix cells matching $only"
    pytest_ok "${pytest[@]}" tests/kubectl_matrix -k "$only"
    ;;
  all)
    step "unit tests"
    ctest --test-dir "$builddir" --output-on-failure -j "$jobs" -E watch_stress
    step "watch stress: reconnecting watchers under a steady write load"
    ctest --test-dir "$builddir" --output-on-failure -R watch_stress
    # The conformance tests and the kubectl matrix mostly wait (upstream's probe and
    # grace timings), so they run beside the end-to-end tests, in their own process group,
    # on pod subnets of their own; their output follows the end-to-end tests'.
    step "end-to-end tests, with conformance and the kubectl 1.27-1.33 matrix beside them"
    beside_log=$(mktemp /tmp/shepherd-beside.XXXXXX)
    SHEPHERD_TEST_SUBNETS=200-249 setsid bash -c '
      t0=$(date +%s); rc=0
      /usr/bin/python3 conformance/run.py --shards 3 || rc=$?
      t1=$(date +%s)
      /usr/bin/python3 tests/kubectl_matrix/report.py || rc=$?
      t2=$(date +%s)
      printf "\n=== beside the end-to-end tests: conformance %ds, kubectl matrix %ds\n" \
        $((t1 - t0)) $((t2 - t1))
      exit $rc' >"$beside_log" 2>&1 </dev/null &
    beside_pid=$!
    # On an early exit, pytest's fixtures clean up on SIGINT (nodes, containers, bridges).
    stop_beside() {
      if kill -0 "$beside_pid" 2>/dev/null; then
        kill -INT -- "-$beside_pid" 2>/dev/null
        wait "$beside_pid" 2>/dev/null
      fi
      rm -f "$beside_log"
    }
    trap 'stop_beside; summary' EXIT
    e2e_rc=0
    SHEPHERD_TEST_SUBNETS=100-199 "${pytest[@]}" tests/e2e || e2e_rc=$?
    step "conformance and the kubectl matrix: the rest of their run"
    beside_rc=0
    wait "$beside_pid" || beside_rc=$?
    cat "$beside_log"
    rm -f "$beside_log"
    trap summary EXIT
    [ "$e2e_rc" = 0 ] || { echo "end-to-end tests failed (exit $e2e_rc)"; exit 1; }
    [ "$beside_rc" = 0 ] || { echo "conformance or the kubectl matrix failed (exit $beside_rc)"; exit 1; }

    step "etcd pass: start etcd"
    etcd_dir=$(mktemp -d /tmp/shepherd-etcd.XXXXXX)
    /usr/bin/python3 tests/harness/etcd_cluster.py serve --dir "$etcd_dir" --endpoints-file "$etcd_dir/endpoints" \
      >"$etcd_dir/serve.log" 2>&1 &
    etcd_pid=$!
    stop_etcd() { kill "$etcd_pid" 2>/dev/null; wait "$etcd_pid" 2>/dev/null; rm -rf "$etcd_dir"; }
    trap 'stop_etcd; summary' EXIT
    for _ in $(seq 600); do [ -s "$etcd_dir/endpoints" ] || ! kill -0 "$etcd_pid" 2>/dev/null && break; sleep 0.1; done
    if [ ! -s "$etcd_dir/endpoints" ]; then cat "$etcd_dir/serve.log" "$etcd_dir"/*.log; exit 1; fi
    export SHEPHERD_ETCD_SERVERS; SHEPHERD_ETCD_SERVERS=$(cat "$etcd_dir/endpoints")
    # The fault and distributed tests start their own etcd whatever the pass (first pass).
    etcd_ignore=(--ignore=tests/e2e/test_etcd_faults.py --ignore=tests/e2e/test_distributed.py)
    if [ "$etcd_all" = 1 ]; then
      step "etcd pass: end-to-end tests (etcd at $SHEPHERD_ETCD_SERVERS)"
      "${pytest[@]}" tests/e2e "${etcd_ignore[@]}"
      step "etcd pass: conformance"
      /usr/bin/python3 conformance/run.py  # writes conformance/RESULTS-etcd.md
      step "etcd pass: kubectl matrix"
      /usr/bin/python3 tests/kubectl_matrix/report.py -o tests/kubectl_matrix/MATRIX-etcd.md
    else
      step "etcd pass: end-to-end tests marked storage (etcd at $SHEPHERD_ETCD_SERVERS)"
      "${pytest[@]}" tests/e2e -m storage "${etcd_ignore[@]}"
      step "etcd pass: conformance tests marked storage"
      /usr/bin/python3 conformance/run.py -m storage  # writes conformance/RESULTS-etcd.md
    fi
    unset SHEPHERD_ETCD_SERVERS
    stop_etcd
    trap summary EXIT
    ;;
esac
step "all tests passed"
