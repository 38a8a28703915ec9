#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit, property and integration tests.
# The integration tests read hwloc's recorded machines from ../shared/fixtures (found by walking
# up from the crate) or from $MEMSIGHT_FIXTURES.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
cargo fmt --all -- --check
cargo clippy --locked --all-targets -q -- -D warnings
cargo test --locked --all-targets
