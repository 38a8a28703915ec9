#!/usr/bin/env bash
# The test suite under competition, as CI machines and shared nodes give it: while the tests run,
# one process keeps a CPU busy and another streams memory. A suite is trusted only once it
# passes like this (timing-dependent tests must assert what holds on a loaded machine).
#
#   scripts/test-under-load.sh [--rounds N] [--cargo-only]
#
# --rounds N      run the tests N times in a row (default 5); stops at the first failure
# --cargo-only    run `cargo test --locked --all-targets` instead of scripts/test.sh (the README's
#                 test command: also fmt, clippy, aarch64 under qemu, the package, the launchers)
# Writes a record to bench/results/ (one file per day and host): host, CPU model, load, outcome.
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=5
cmd=(bash scripts/test.sh)
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --cargo-only) cmd=(cargo test --locked --all-targets); shift ;;
    *) echo "usage: $0 [--rounds N] [--cargo-only]" >&2; exit 2 ;;
  esac
done

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT INT TERM
# A CPU-bound competitor: it takes a CPU the tests would use.
( while :; do :; done ) &
pids+=($!)
# A memory-streaming competitor: copies 256 MiB over and over, sharing the memory bandwidth.
python3 -c '
b = bytearray(256 << 20)
while True:
    c = bytes(b)
' &
pids+=($!)

host=$(hostname -s)
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
day=$(date -u +%F)
out=bench/results/$day-test-under-load-$host.md
# A second run the same day gets its own file (the time added) rather than replacing the first.
[[ ! -e $out ]] || out=${out%.md}-$(date -u +%H%M).md
logs=${CARGO_TARGET_DIR:-target}
mkdir -p bench/results "$logs"
{
  echo "# Tests under load, $host, $day"
  echo
  echo "- CPU: $cpu ($(nproc) CPUs), $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo "- command: \`${cmd[*]}\`, with a CPU-bound loop and a 256 MiB memory-copy loop running"
  echo "- memsight at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- crates 2>/dev/null || echo "+changes")"
  echo
  echo "| round | started (UTC) | load before | seconds | outcome |"
  echo "|---|---|---|---|---|"
} >"$out"
passed=0
for r in $(seq "$rounds"); do
  start=$(date -u +%T)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  t0=$SECONDS
  if "${cmd[@]}" >"$logs/test-under-load-$r.log" 2>&1; then
    outcome=passed; passed=$((passed + 1))
  else
    outcome="FAILED ($logs/test-under-load-$r.log: $(grep -m1 -E '^test .* FAILED|panicked at|^error' "$logs/test-under-load-$r.log" | cut -c1-120))"
  fi
  echo "| $r | $start | $load | $((SECONDS - t0)) | $outcome |" >>"$out"
  echo "test-under-load: round $r: $outcome"
  [[ $outcome == passed ]] || break
done
echo >>"$out"
echo "$passed of $rounds round(s) passed in a row." >>"$out"
echo "test-under-load: $passed of $rounds passed; record in $out"
((passed == rounds))
