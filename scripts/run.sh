#!/usr/bin/env bash
# Builds memsight in release mode and runs `memsight run` on its defaults. Extra arguments go to
# `memsight run` (e.g. --quick, --json, -o results.json).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
cargo build --release --locked -q -p memsight
exec target/release/memsight run "$@"
