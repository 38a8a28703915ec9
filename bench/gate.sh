#!/usr/bin/env bash
# The regression gate on real noise and beside a memory hog: PAIRS (default 5) back-to-back
# pairs of `memsight run --quick` judged with `compare --fail-on-regression=5` on a quiet
# machine, then a pair whose second run measures beside `stress-ng --stream` on every CPU, and
# one whose second run measures on CPU 0 while the hog streams on CPU 1 (no CPU shared), and one
# whose second run measures on CPU 0 while `stress-ng --cache` thrashes the caches from CPU 1. Prints
# each pair's verdict line and exit status as a Markdown record for bench/results.
#   bench/gate.sh [PAIRS]
set -uo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
command -v stress-ng >/dev/null || { echo "bench/gate.sh: needs stress-ng (apt install stress-ng)" >&2; exit 2; }
cargo build --release --locked -q -p memsight || exit 1
ms=target/release/memsight
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null' EXIT
run() { "$@" run --quick --no-history --quiet --no-progress --out "$work/$run_id" >/dev/null 2>&1; }
judge() {
  local line code
  line=$("$ms" compare "$work/$1" "$work/$2" --fail-on-regression=5 2>&1 >/dev/null | grep '^memsight: \(PASS\|FAIL\|INCOMPLETE\)')
  code=$?
  "$ms" compare "$work/$1" "$work/$2" --fail-on-regression=5 >/dev/null 2>&1
  code=$?
  echo "| $3 | $code | ${line#memsight: } | $(cut -d' ' -f1 /proc/loadavg) |"
}
echo "# Regression gate: compare --fail-on-regression=5 on real noise and beside a memory hog"
echo
echo "host $(hostname), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)"
echo "uptime before: $(uptime)"
echo
echo "| pair | exit | verdict | 1-min load |"
echo "|---|---|---|---|"
for i in $(seq 1 "$pairs"); do
  run_id=q$i-a; run "$ms"
  run_id=q$i-b; run "$ms"
  judge "q$i-a" "q$i-b" "quiet $i"
done
# beside ID LABEL PREFIX… -- HOG…: a pair whose second run measures beside the hog.
beside() {
  local id=$1 label=$2; shift 2
  local pre=() hog
  while [[ $1 != -- ]]; do pre+=("$1"); shift; done
  shift
  run_id=$id-a; run "${pre[@]}" "$ms"
  "$@" --timeout 120s >/dev/null 2>&1 &
  hog=$!
  sleep 3
  run_id=$id-b; run "${pre[@]}" "$ms"
  kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null
  judge "$id-a" "$id-b" "$label"
  sleep 10
}
beside h "beside stress-ng --stream on every CPU" -- stress-ng --stream "$(nproc)"
beside p "on CPU 0, beside stress-ng --stream on CPU 1" taskset -c 0 -- stress-ng --stream 1 --taskset 1
beside c "on CPU 0, beside stress-ng --cache (thrashing the shared L3) on CPU 1" taskset -c 0 -- stress-ng --cache 1 --taskset 1
echo
echo "uptime after: $(uptime)"
