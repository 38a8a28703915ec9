#!/usr/bin/env bash
# For aarch64 (Neoverse): the kernel tests (NEON bandwidth kernels, chase, clock, flush) under
# qemu-user, then the portable binary (the release's) built, the workspace linted, and the
# binary run there on a smoke set.
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
. scripts/release-common.sh
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=$(qemu_aarch64)
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER
set -e
cargo clippy --locked --target aarch64-unknown-linux-gnu -p memsight-kernels --all-targets -q -- -D warnings
timeout 900 cargo test --locked --target aarch64-unknown-linux-gnu -p memsight-kernels

# The whole binary for aarch64 (Neoverse servers), as released: the portable build
# (scripts/portable.sh: zig for glibc 2.28, hwloc built static), the workspace's libraries and
# binary linted against the same hwloc (the kernels' tests are linted above), and the binary run
# under qemu-user on a smoke set: the command that matters most, `memsight run --quick`, must
# finish there (kernels a core lacks are left out and said). Timings under an emulator mean
# nothing; what is checked is that every path runs and its JSON reads.
arm=$(bash scripts/portable.sh aarch64)
PKG_CONFIG_ALLOW_CROSS=1 PKG_CONFIG_LIBDIR=$PWD/target/portable/hwloc-aarch64-v3/lib/pkgconfig \
  cargo clippy --locked --target aarch64-unknown-linux-gnu -q -- -D warnings
read -ra qemu <<<"$(qemu_aarch64)"
smoke=$(mktemp -d)
trap 'rm -rf "$smoke"' EXIT
"${qemu[@]}" "$arm" --json env >"$smoke/env.json"
"${qemu[@]}" "$arm" --json --no-progress latency --max-size 256K --no-tlb --parallel 2 >"$smoke/latency.json"
"${qemu[@]}" "$arm" --json --no-progress bandwidth --size 1M --cpus 0 --min-samples 3 \
  --point-budget 0.2 >"$smoke/bandwidth.json"
"${qemu[@]}" "$arm" --no-progress run --quick --no-history --out "$smoke/run" >/dev/null
python3 - "$smoke" <<'PY'
import json, sys
d = sys.argv[1]
env = json.load(open(f"{d}/env.json"))["environment"]
f = env["cpu"]["features"]
assert env["cpu"]["architecture"] == "aarch64", env["cpu"]["architecture"]
assert f["neon"] and not f["avx2"] and not f["avx512f"], f
lat = json.load(open(f"{d}/latency.json"))["results"]["ladders"][0]
assert lat["main"]["points"], "no latency points"
bw = json.load(open(f"{d}/bandwidth.json"))["results"]
assert bw["config"]["isa"] == "neon" and bw["points"], bw["config"]["isa"]
run = json.load(open(f"{d}/run/run.json"))
steps = json.dumps(run)
assert "copy-nt" in steps and "not implemented for NEON" in steps, "the quick run should say copy-nt was left out"
print("memsight: aarch64 binary ran env, latency, bandwidth and run --quick under qemu")
PY
