#!/usr/bin/env bash
# The whole test suite: formatting, lints, the kernel tests for aarch64 under qemu (best effort:
# skipped with a message where the cross toolchain cannot be had), unit, property and
# integration tests, then the Debian package built and checked.
# The tests read recorded machines (dmidecode dumps, hwloc XML and sysfs snapshots) from
# testdata/ in this repository; nothing outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
# chromium: the HTML report is rendered headless and checked (tests/report_browser.rs);
# the allocators: memsight alloc compares them (tests/alloc_cli.rs); PMDK: memsight pmem;
# the launchers fleet mode runs under (scripts/test-launchers.sh) and the Prometheus text parser
# the export is checked with (tests/operations_cli.rs, with promtool from prometheus), and the
# Python JSON Schema validator the schema is checked with.
MEMSIGHT_TEST_PACKAGES="chromium libtcmalloc-minimal4 libjemalloc2 libmimalloc2.0 libpmemobj-dev pmdk-tools slurm-wlm munge openmpi-bin mpich python3-prometheus-client prometheus python3-jsonschema"
. scripts/deps.sh
cargo fmt --all -- --check
cargo clippy --locked --all-targets -q -- -D warnings
# Crates depend only downwards and no modules form a circle (docs/architecture.md).
python3 scripts/check-layers.py
bash scripts/test-aarch64.sh
cargo test --locked --all-targets
# The Debian package: built with cargo-deb, its contents, dependencies, man pages and completions
# checked, and its binary run from a scratch root.
bash scripts/package.sh --check
# Fleet mode under real launchers: Open MPI's mpirun and a one-node Slurm cluster started here.
bash scripts/test-launchers.sh
