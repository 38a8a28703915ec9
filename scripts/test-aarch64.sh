#!/usr/bin/env bash
# The kernel tests (NEON bandwidth kernels, chase, clock, flush) for aarch64, run under qemu-user.
# Best effort: when the cross toolchain or the Rust target cannot be had here, it says so and
# skips; when the tests run, their failure fails the suite.
set -uo pipefail
cd "$(dirname "$0")/.."
skip() { echo "memsight: skipping aarch64 kernel tests: $*" >&2; exit 0; }
pkgs=(qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  [[ $(id -u) == 0 ]] || skip "missing ${missing[*]} (sudo apt-get install ${missing[*]})"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || skip "apt could not install ${missing[*]}"
fi
command -v rustup >/dev/null || skip "no rustup to add the aarch64-unknown-linux-gnu target"
rustup target list --installed 2>/dev/null | grep -q '^aarch64-unknown-linux-gnu$' \
  || timeout 300 rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1 \
  || skip "rustup could not add aarch64-unknown-linux-gnu"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
set -e
cargo clippy --locked --target aarch64-unknown-linux-gnu -p memsight-kernels --all-targets -q -- -D warnings
cargo test --locked --target aarch64-unknown-linux-gnu -p memsight-kernels
