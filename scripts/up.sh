#!/usr/bin/env bash
# Quick start, step one: installs what Shepherd needs, builds it, and runs a cluster in
# the foreground. Arguments go to `shepherd up` (e.g. --data-dir DIR --port PORT).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh --run
# Only what `shepherd up` runs: tests and benchmarks build when their commands run.
./scripts/build.sh programs
exec ./build/cmd/shepherd up "$@"
