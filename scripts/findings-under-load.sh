#!/usr/bin/env bash
# Every finding read on a busy machine: the studies run at their quick level beside a CPU-bound
# load on every CPU, and each result's findings are checked in its JSON. A finding that cites a
# figure resting on disturbed samples must say so (its text starts with ⚠, its evidence is
# `mixed` or `disturbed`), advice on such evidence must read "unconfirmed", and no finding may
# give a transfer time or a padding as a fact from figures that all rest on disturbed samples.
#
#   scripts/findings-under-load.sh [--rounds N] [--out DIR]
#
# Writes a record to bench/results/ (host, CPU model, load, what was checked, what failed).
# Exit 0 when every round's every finding passes, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=1
out=$(mktemp -d)
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; mkdir -p "$out"; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--out DIR]" >&2; exit 2 ;;
  esac
done
cargo build --release --locked -q -p memsight || exit 1
ms=target/release/memsight
n=$(nproc)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT INT TERM
# CPU-bound competitors, one per CPU: the measuring threads lose their CPUs often.
for _ in $(seq 1 "$n"); do
  ( while :; do :; done ) &
  pids+=($!)
done
sleep 2
# The studies at their quick level; each writes its result (its exit code is not judged here:
# a study may say it could not measure, which is a result too).
studies=(
  "c2c|c2c"
  "coherence|coherence --min-samples 3 --point-budget 0.2"
  "rowbuffer|rowbuffer --kernels copy,hpccg --reps 2 --samples 3 --offsets 0..1M/64K --array-size 64M --no-probe"
  "loaded-latency|loaded-latency --points 3 --min-samples 3 --point-budget 0.2"
  "numa|numa --min-samples 3 --point-budget 0.2"
  "tiers|tiers --min-samples 3 --point-budget 0.2"
  "scan|scan --size 1G --granule 64M --min-samples 3 --point-budget 0.2"
  "latency|latency --max-size 256M --min-samples 3 --point-budget 0.2"
  "stream|stream --elements 20000000 --ntimes 5"
  "run|run --quick"
)
for r in $(seq 1 "$rounds"); do
  for s in "${studies[@]}"; do
    name=${s%%|*}
    # shellcheck disable=SC2086
    timeout 600 "$ms" ${s#*|} --json --no-progress >"$out/$r-$name.json" 2>"$out/$r-$name.err"
    echo "round $r: $name exit $? (load $(cut -d' ' -f1 /proc/loadavg))" >>"$out/log"
  done
done
cleanup
pids=()
python3 scripts/check-findings.py "$out"/*.json >"$out/check" 2>&1
status=$?
host=$(hostname -s)
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
record=bench/results/$(date -u +%F-%H%M)-findings-under-load-$host.md
{
  echo "# Findings under load"
  echo
  echo "host $host, $cpu, $n CPUs, $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)"
  echo "beside $n CPU-bound loops; $rounds round(s)"
  echo
  echo '```'
  cat "$out/log"
  cat "$out/check"
  echo '```'
} >"$record"
cat "$out/check"
echo "record: $record"
exit $status
