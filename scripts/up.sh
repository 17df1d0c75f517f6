#!/usr/bin/env bash
# Quick start, step one: installs what Shepherd needs, builds it, and runs a cluster in
# the foreground. Arguments go to `shepherd up` (e.g. --data-dir DIR --port PORT).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
./scripts/build.sh
exec ./build/cmd/shepherd up "$@"
