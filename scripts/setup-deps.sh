#!/usr/bin/env bash
# Installs the Debian packages Shepherd needs. Idempotent: packages already present are
# skipped, so a second run costs one dpkg query.
#   scripts/setup-deps.sh          everything: build, run, test and benchmark (test.sh, bench.sh)
#   scripts/setup-deps.sh --run    only what building and running a cluster needs (up.sh):
#                                  a first cluster on a fresh machine does not wait for the
#                                  test clients and tools
set -euo pipefail

# Build and run a cluster.
packages=(
  # build
  build-essential cmake g++ pkg-config
  # Ninja builds; ccache keeps compilations across build directories and runs
  ninja-build ccache
  # libraries (see docs/adr for why each one; GoogleTest because configuring needs it)
  libboost1.81-dev rapidjson-dev libyaml-cpp-dev libsqlite3-dev libssl-dev
  libcurl4-openssl-dev libgtest-dev libgmock-dev zlib1g-dev
  # kubelet-lite: CRI over gRPC, containerd + runc + CNI, images built offline
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  containerd runc containernetworking-plugins busybox-static iproute2
  # the offline image builder (kubelet-lite/images/build-images.sh)
  python3
  # the distributed mode (shepherd up --etcd; issue 9), also the benchmarks' reference store
  etcd-server
)
if [ "${1:-}" != "--run" ]; then
  packages+=(
    # the thread-safety check and the fuzz build (clang), formatting
    clang clang-format libclang-rt-14-dev
    # test clients and tools
    python3-kubernetes python3-pytest python3-yaml curl sqlite3
    # Debian's Ruby client: its watch_* methods use the legacy /watch/ paths (test_legacy_watch.py)
    ruby-kubeclient
    # libfaketime: runs a server "later" to prove tokens expire (tests/e2e/test_security.py)
    libfaketime
    # profiles in the benchmarks (issue 8)
    linux-perf
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
