#!/usr/bin/env bash
# Runs the benchmark suite (not part of the test suite) and prints its figures; record
# them with the machine details in docs/benchmarks.md. Every benchmark starts its own
# servers on loopback in a fresh temporary directory. The whole suite takes ~27 minutes from a fresh clone
# on 2 cores.
#   scripts/bench.sh                 all benchmarks, three runs each
#   scripts/bench.sh writes          one of: writes, reads, watch, footprint, scheduler, pod-startup,
#                                    etcd (creates and per-node watches with the API server on
#                                    etcd), simulation, streaming; etcd-transport, watch-bandwidth (not in
#                                    the default run)
#   RUNS=1 scripts/bench.sh ...      fewer runs (the simulation, ~6 minutes, and streaming run once)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
# Only what the benchmarks run (not the test binaries): a fresh machine builds less.
./scripts/build.sh benchmarks
which=${1:-all}
runs=${RUNS:-3}
bin=./build/cmd
want() { [ "$which" = all ] || [ "$which" = "$1" ]; }
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "etcd: $(etcd --version | head -1)"
for run in $(seq 1 "$runs"); do
  echo "##### run $run of $runs"
  if want writes; then
    echo "=== writes: pod creates at 1/16/64/256 connections (durable), then etcd v3 puts of the same values"
    ./build/bench/api_bench "$bin" writes 20000 1,16,64,256
  fi
  if want reads; then
    echo "=== reads: 10,000 pods"
    ./build/bench/api_bench "$bin" reads 10000
  fi
  if want watch; then
    echo "=== watch fan-out: 1,000 watchers each on one node's pods, 1,000 writes/s"
    ./build/bench/watch_bench "$bin" 1000 1000 10 node
    echo "=== watch fan-out: 1,000 watchers on all pods, 1,000 writes/s (the issue's shape)"
    ./build/bench/watch_bench "$bin" 1000 1000 5 all
  fi
  # A tenth of the bandwidth either way (shows the all-pods shape is bandwidth-bound);
  # by name only, to keep the default suite well inside 30 minutes.
  if [ "$which" = watch-bandwidth ]; then
    echo "=== watch fan-out: 100 watchers on all pods, 1,000 writes/s"
    ./build/bench/watch_bench "$bin" 100 1000 5 all
    echo "=== watch fan-out: 1,000 watchers on all pods, 100 writes/s"
    ./build/bench/watch_bench "$bin" 1000 100 10 all
  fi
  if want etcd; then
    echo "=== on etcd: pod creates at 1/16/64/256 connections, then 1,000 per-node watchers at 1,000 writes/s"
    SHEPHERD_BENCH_STORAGE=etcd ./build/bench/api_bench "$bin" writes 20000 1,16,64,256
    SHEPHERD_BENCH_STORAGE=etcd ./build/bench/watch_bench "$bin" 1000 1000 10 node
  fi
  if [ "$which" = etcd-transport ]; then
    echo "=== etcd transports: the JSON gateway (libcurl) and gRPC, puts and ranges at 1/16/64 connections"
    ./build/bench/etcd_transport_bench --transports=gateway,grpc,grpc-shared
  fi
  if want footprint; then
    echo "=== footprint: RSS at 0/10k/100k/150k pods, restart with 150k"
    ./build/bench/footprint_bench "$bin" 10000,100000,150000
  fi
  if want scheduler; then
    echo "=== scheduler: 5,000 nodes, 10,000 pods"
    ./build/bench/scheduler_bench "$bin" 5000 10000 32 1000 | grep -E "^(phase|SUMMARY|scheduler:)"
  fi
  if want pod-startup; then
    echo "=== pod start-up on a real node (containerd + kubelet-lite): 50 one at a time, then 50 at once"
    ./build/bench/pod_startup_bench "$bin" ./scripts/containerd.sh 50
  fi
done 2>&1 | grep -v "^I [0-9]"
if want simulation; then
  echo "=== cluster simulation: 1,000 fake nodes (kubelet-lite --fake-nodes), a Deployment of 100,000 pods"
  ./build/bench/cluster_sim_bench "$bin" 1000 100000 30 2>&1 | grep -v "^I [0-9]"
fi
if want streaming; then
  echo "=== streaming: kubectl 1.27 (SPDY) and 1.33 (WebSocket) exec and port-forward on a real node"
  /usr/bin/python3 bench/streaming_bench.py 2>&1 | grep -v "^I [0-9]"
fi
