#!/usr/bin/env bash
# Installs every Debian package Shepherd needs to build, run and test. Idempotent:
# packages already present are skipped, so a second run costs one dpkg query.
set -euo pipefail

packages=(
  # build
  build-essential cmake g++ pkg-config clang clang-format libclang-rt-14-dev
  # Ninja builds; ccache keeps compilations across build directories and runs
  ninja-build ccache
  # libraries (see docs/adr for why each one)
  libboost1.81-dev rapidjson-dev libyaml-cpp-dev libsqlite3-dev libssl-dev
  libcurl4-openssl-dev libgtest-dev libgmock-dev zlib1g-dev
  # kubelet-lite: CRI over gRPC, containerd + runc + CNI, images built offline
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  containerd runc containernetworking-plugins busybox-static iproute2
  # test clients and tools
  python3-kubernetes python3-pytest python3-yaml curl sqlite3
  # Debian's Ruby client: its watch_* methods use the legacy /watch/ paths (test_legacy_watch.py)
  ruby-kubeclient
  # libfaketime: runs a server "later" to prove tokens expire (tests/e2e/test_security.py)
  libfaketime
  # the reference store in the benchmarks (issue 8) and the distributed mode (issue 9)
  etcd-server linux-perf
)

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
