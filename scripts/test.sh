#!/usr/bin/env bash
# The whole test suite: formatting, lints, the kernel tests and the portable binary for aarch64
# under qemu (best effort: skipped with a message where the cross toolchain cannot be had), unit,
# property and integration tests, fleet mode under real launchers, metrics with the real
# Prometheus components, then the release artefacts CI has time for (the portable tarballs, the
# source tarball, the .dsc/.deb and SRPM/RPM built from it) made and checked, in Debian 11 and
# 12 roots among other ways; scripts/release.sh --check makes and checks the whole release.
# The tests read recorded machines (dmidecode dumps, hwloc XML and sysfs snapshots) from
# testdata/ in this repository; nothing outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
# Without --full: formatting, lints, the layer and size checks and the test suite, for a
# contributor's change (about 14 minutes on 2 vCPUs from a fresh clone); --full adds the aarch64,
# release, distribution, launcher and metrics checks (.ci/run runs it; docs/testing.md gives the
# times).
full=false
case ${1:-} in
  --full) full=true ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--full]" >&2; exit 2 ;;
esac
# chromium: the HTML report is rendered headless and checked (tests/report_browser.rs);
# the allocators: memsight alloc compares them (tests/alloc_cli.rs); PMDK: memsight pmem;
# the launchers fleet mode runs under (scripts/test-launchers.sh) and the Prometheus text parser
# the export is checked with (tests/operations_cli.rs, with promtool from prometheus), and the
# Python JSON Schema validator the schema is checked with; rpm and cpio (rpmbuild, the RPM inspected)
# and debootstrap (the Debian 11 root the release binary runs in); node_exporter, Prometheus and
# curl (scripts/test-metrics.sh: the textfiles scraped, the alert rules' unit tests, the
# dashboard's queries); strace and systemd (the metrics unit's call filter and security score).
MEMSIGHT_TEST_PACKAGES="rpm cpio debootstrap debhelper lintian rpmlint busybox-static chromium libtcmalloc-minimal4 libjemalloc2 libmimalloc2.0 libpmemobj-dev pmdk-tools slurm-wlm munge openmpi-bin mpich python3-prometheus-client prometheus prometheus-node-exporter curl python3-jsonschema strace systemd systemd-container nagios4-core"
. scripts/deps.sh
# pyarrow and duckdb read the Parquet tables back as analysts would (tests/fleet_parquet.rs): from
# PyPI, the versions the tests were written against (pip puts a user install where this python3
# finds it).
parquet_readers=(pyarrow==26.0.1 duckdb==2.0.1)
if ! python3 -c 'import pyarrow, duckdb' 2>/dev/null; then
  python3 -m pip install --quiet --user "${parquet_readers[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages --user "${parquet_readers[@]}"
fi
# Each step says what it cost (docs/testing.md quotes them).
step() {
  local t0=$SECONDS
  "$@"
  echo "memsight: test step '$*' took $((SECONDS - t0)) s" >&2
}
# The whole run writes about 3.5 GB under target/ (the test build 2.1 GB, the portable builds and
# hwloc 0.8 GB, the Debian 11 root 0.2 GB; the quick run the test build alone). A full disk shows
# up late and obscurely (a linker killed by SIGBUS), so a short one is said first.
need_mb=2500
! $full || need_mb=4000
free_mb=$(mkdir -p "${CARGO_TARGET_DIR:-target}" && df -Pm "${CARGO_TARGET_DIR:-target}" | awk 'NR == 2 {print $4}')
if [[ $free_mb =~ ^[0-9]+$ ]] && ((free_mb < need_mb)); then
  echo "memsight: only ${free_mb} MB free under ${CARGO_TARGET_DIR:-target}; the test run writes about ${need_mb} MB there and may fail for want of space" >&2
fi
# Formatting, lints, and the structure the code must keep: crates depend only downwards, no
# modules form a circle, suites are siblings over the measuring layer; files, functions and the
# binary crate stay within their sizes (docs/architecture.md).
lints() {
  step python3 scripts/check-format.py
  step cargo clippy --locked --all-targets -q -- -D warnings
  step python3 scripts/check-layers.py
  step python3 scripts/check-size.py
}
if ! $full; then
  lints
  step cargo test --locked --all-targets
  echo "memsight: quick tests passed; scripts/test.sh --full adds the aarch64, release, distribution, launcher and metrics checks" >&2
  exit 0
fi
# What the release checks need first and mostly waits for (zig from PyPI, hwloc built for each
# architecture, a Debian 11 root from Debian's mirror) is made in the background meanwhile.
prep_log=${CARGO_TARGET_DIR:-target}/release-prepare.log
mkdir -p "$(dirname "$prep_log")"
# (The tools once, then hwloc for both architectures at the same time: configure is slow and
# mostly waits.)
prepare_builds() {
  bash scripts/portable.sh --tools aarch64 && bash scripts/portable.sh --tools x86_64 || return 1
  bash scripts/portable.sh --prepare aarch64 &
  local arm=$!
  bash scripts/portable.sh --prepare x86_64 || return 1
  wait "$arm"
}
prepare_builds >"$prep_log" 2>&1 &
prep=$!
bash scripts/check-release.sh --prepare >"$prep_log.root" 2>&1 &
prep_root=$!
trap 'kill "$prep" "$prep_root" 2>/dev/null || true' EXIT
lints
wait "$prep" || { cat "$prep_log" >&2; echo "memsight: preparing the release build failed" >&2; exit 1; }
# The release artefacts build at the lowest priority beside the aarch64 tests, the cargo tests and
# the launcher and metrics checks, on the CPU time those leave idle (the tests assert what holds
# on a loaded machine: scripts/test-under-load.sh): the portable binaries first (the aarch64 one
# scripts/test-aarch64.sh runs, then this machine's, which the launcher and metrics checks run),
# then the source tarball and the packages compiled from it. Only what CI checks is made
# (release.sh --for-tests): the static tarballs, the cross-built packages and the RPM's second
# compile are a release's (release.sh --check), which CI's time has no room for.
build_log=${CARGO_TARGET_DIR:-target}/release-build.log
{ nice -n 19 bash scripts/portable.sh aarch64 && nice -n 19 bash scripts/release.sh --for-tests; } >"$build_log" 2>&1 &
build=$!
trap 'kill "$prep_root" "$build" 2>/dev/null || true' EXIT
step bash scripts/test-aarch64.sh
step cargo test --locked --all-targets
# Fleet mode under real launchers (Open MPI's mpirun, MPICH's hydra, a one-node Slurm cluster
# started here), then metrics with the real components on loopback (node_exporter, Prometheus,
# promtool): mostly waiting on daemons, so the build goes on beside them. Both run this
# machine's portable binary, which the build made first (cargo waits for its lock if not yet).
bash scripts/portable.sh "$(uname -m)" >/dev/null || { echo "memsight: the portable binary did not build" >&2; exit 1; }
step bash scripts/test-launchers.sh
step bash scripts/test-metrics.sh
# The checks are done, so the build no longer competes with them: left at nice 19 beside other
# CPU-bound work (a shared CI runner; scripts/test-under-load.sh's competitors) it would get
# almost no CPU, so it goes on at normal priority (raising a priority needs root; otherwise it
# stays where it was).
renice_tree() {
  local p
  for p in $(pgrep -P "$1"); do renice_tree "$p"; done
  renice -n 0 -p "$1" >/dev/null 2>&1 || true
}
renice_tree "$build"
wait "$build" || { cat "$build_log" >&2; echo "memsight: the release binaries did not build" >&2; exit 1; }
wait "$prep_root" || { cat "$prep_log.root" >&2; echo "memsight: the Debian 11 and 12 roots could not be made" >&2; exit 1; }
# The artefacts the background build made, checked (not built twice): the glibc tarballs read
# and run (a Debian 11 root, qemu), the .deb and RPM built from the source tarball read, linted
# and taken through install, enable, removal and purge.
step bash scripts/release.sh --check-only --for-tests
