#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a number of
# executions (default 1,000,000), printing libFuzzer's summary. Not part of the test
# suite: a campaign takes several minutes per target on 2 cores.
#   scripts/fuzz.sh [runs] [target...]     targets: json_decode yaml_decode patch protobuf http_request
#                                          cron_schedule
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json_decode yaml_decode patch protobuf http_request cron_schedule)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DSHEPHERD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build-fuzz -j "$(nproc 2>/dev/null || echo 2)" --target $(printf 'fuzz_%s ' "${targets[@]}")
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  # Crash reproducers go under build-fuzz/, not into the working directory.
  mkdir -p "$corpus" build-fuzz/artifacts
  cp -n tests/fuzz/seeds/$t/* "$corpus"/ 2>/dev/null || true
  echo "=== fuzz_$t: $runs runs"
  start=$(date +%s)
  ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/tests/fuzz/fuzz_$t -runs="$runs" -max_len=4096 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/artifacts/$t- -print_final_stats=1 "$corpus" 2>&1 | grep -E "^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY)" || true
  echo "fuzz_$t: $(( $(date +%s) - start ))s"
done
