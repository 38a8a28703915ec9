#!/usr/bin/env bash
# Does memsight hold on this host? One command for the checks a new CPU kind needs (a benchmark,
# not a test: it prints machine-dependent figures), written as a Markdown record:
#   1. the core clock by every method memsight has (register-add chain, multiply chain, the PMU's
#      cycles where readable), ROUNDS times, and the L1 latency in cycles;
#   2. the L1 read of one thread in bytes per cycle against the load ports' limit;
#   3. how long the everyday commands take (`run --quick`, `run`, `latency`, `rowbuffer`) and
#      their peak memory, against the times memsight aims for;
#   4. memory figures at the working sets memsight chooses against sizes from a claimed L3
#      (bench/working-sets.sh);
#   5. with PEERS_DIR set, the side-by-side table against likwid-bench, STREAM and multichase
#      (bench/peers.sh), L1 and L2 classes included, and those again at AVX and SSE widths.
# Usage: [PEERS_DIR=DIR] [ROUNDS=5] [OUT=FILE] [SKIP=times,working-sets] bench/host-check.sh
# OUT defaults to bench/results/DATE-CPU-host-check.md; the record is also printed.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
cargo build --release --locked -q -p memsight
ms=$PWD/target/release/memsight
model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
slug=$(printf '%s' "$model" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//' | cut -c1-40)
out=${OUT:-bench/results/$(date -u +%F)-$slug-host-check.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Runs a memsight command ROUNDS times, each JSON result read by the script $work/$1.
rounds_of() {
  local script=$1
  shift
  for ((r = 0; r < rounds; r++)); do
    "$ms" --json --no-progress "$@" | python3 "$work/$script"
  done
}
# SKIP names sections to leave out: clock, l1, times, working-sets, peers.
skip() { [[ ",${SKIP:-}," == *",$1,"* ]]; }
cpu0=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
cat >"$work/clock.py" <<'PY'
import json, sys
l = json.load(sys.stdin)["results"]["ladders"][0]
c = l.get("core_clock")
l1 = next((p for p in l["levels"]["plateaus"] if p["name"] == "L1"), None)
if c is None:
    print("no clock printed (its methods disagreed):", "; ".join(f if isinstance(f, str) else f["text"] for f in l["levels"]["findings"]))
else:
    est = "  ".join(f"{e['method']} {e['ghz']:.3f} GHz (n={e['samples']})" for e in c.get("estimates", []))
    cyc = f"{l1['cycles']:.2f}" if l1 and l1.get("cycles") else "-"
    ns = f"{l1['ns']:.3f}" if l1 else "-"
    print(f"clock {c['ghz']['median']:.3f} GHz   {est}   L1 {ns} ns = {cyc} cycles")
PY
cat >"$work/l1.py" <<'PY'
import json, sys
r = json.load(sys.stdin)["results"]
p = r["points"][0]
line = next((t for t in (f if isinstance(f, str) else f["text"] for f in r["findings"]) if "per core cycle" in t), "no bytes-per-cycle finding")
print(f"{p['program_gbs']['median']:.1f} GB/s   {line}")
PY

{
  echo "# Host check: $model, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo '```'
  grep -m1 'vendor_id' /proc/cpuinfo
  grep -m1 'cpu family' /proc/cpuinfo
  grep -m1 -E '^model\s' /proc/cpuinfo
  echo "flags: $(grep -m1 -o -w -E 'avx512f|avx512_fp16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  "$ms" env | grep -E '^(hypervisor|memory|load) ' || true
  lscpu | grep -E '^(L1d|L2|L3) cache' || true
  echo "CPUs: $(nproc); memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "uptime: $(uptime)"
  echo '```'

  if ! skip clock; then
    echo
    echo "## Core clock and L1 latency (CPU $cpu0, $rounds rounds)"
    echo
    echo '```'
    rounds_of clock.py latency --max-size 32K --no-tlb --parallel 1 --cpu "$cpu0"
    echo '```'
  fi

  if ! skip l1; then
    echo
    echo "## L1 read, one thread (CPU $cpu0, 16 KiB, $rounds rounds)"
    echo
    echo '```'
    rounds_of l1.py bandwidth --test read --size 16K --cpus "$cpu0"
    echo '```'
  fi

  if ! skip times; then
    echo
    echo "## Time and peak memory of the everyday commands"
    echo
    echo "| command | aim | time | peak RSS | within aim |"
    echo "|---|---|---|---|---|"
    for spec in "run --quick:8" "run:60" "latency:30" "rowbuffer:180"; do
      cmd=${spec%%:*}
      aim=${spec##*:}
      # shellcheck disable=SC2086 # the command's words are meant to split
      (cd "$work" && /usr/bin/time -f '%e %M' -o "$work/time" "$ms" --no-progress $cmd \
        $([[ $cmd == run* ]] && echo --no-history --out "$work/runs") >/dev/null 2>"$work/err") || {
        echo "| \`memsight $cmd\` | ≤ $aim s | failed: $(tail -n1 "$work/err") | | no |"
        continue
      }
      read -r secs kib <"$work/time"
      ok=$(python3 -c "print('yes' if float('$secs') <= $aim else 'no')")
      echo "| \`memsight $cmd\` | ≤ $aim s | $secs s | $((kib / 1024)) MiB | $ok |"
    done
    echo
    echo "load after the timings: $(uptime)"
  fi

  if ! skip working-sets; then
    echo
    echo "## Working sets from the curve against sizes from a claimed L3"
    echo
    echo '```'
    ROUNDS=$rounds bash bench/working-sets.sh
    echo '```'
  fi

  if skip peers; then
    :
  elif [[ -n ${PEERS_DIR:-} ]]; then
    echo
    echo "## Against likwid-bench, STREAM and multichase"
    echo
    echo '```'
    ROUNDS=$rounds bash bench/peers.sh
    echo '```'
    # The cache-resident classes at the narrower widths too: every kernel must keep up.
    for narrow in avx sse; do
      echo
      echo "L1 and L2 classes, likwid *_$narrow against memsight at the same width:"
      echo
      echo '```'
      ROUNDS=$rounds ONLY=L1,L2 LIKWID_ISA=$narrow bash bench/peers.sh
      echo '```'
    done
  else
    echo
    echo "(peers not run: set PEERS_DIR to a folder holding multichase/ and stream/, see bench/peers.sh)"
  fi
} | tee "$out"
echo "written: $out" >&2
