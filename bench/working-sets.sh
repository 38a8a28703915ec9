#!/usr/bin/env bash
# Do memory figures depend on how far past the caches the working set goes? memsight sizes its
# memory working sets from the core's latency curve (256 MiB for a chase) and, for bandwidth, also
# from a streaming check (the size it chooses is printed) where sizes taken from a claimed L3
# would be far larger (4 × CLAIM_MIB, default 480 MiB as some hypervisors report). This runs both,
# alternating, ROUNDS times (default 5), on the same CPUs and 4 KiB pages, and prints the medians
# and their ratio (a benchmark, not a test: it prints machine-dependent figures).
# Usage: [ROUNDS=5] [CLAIM_MIB=480] bench/working-sets.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
claim=${CLAIM_MIB:-480}
cargo build --release --locked -q -p memsight
ms=target/release/memsight
cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')
n=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
big_lat=$((4 * claim))M
big_bw=$((4 * claim / n))M
lat() {
  "$ms" --json --no-progress latency --min-size "$1" --max-size "$1" --no-tlb --parallel 1 \
    --cpu "${cpus%%,*}" --page-kind 4k |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["results"]["ladders"][0]["main"]["points"][-1]["ns"]["median"])'
}
# $2 = default: the size memsight chooses (latency curve and streaming check).
bw() {
  local size=()
  [[ $2 == default ]] || size=(--size "$2")
  "$ms" --json --no-progress bandwidth --test "$1" "${size[@]}" --cpus "$cpus" --page-kind 4k |
    python3 -c 'import json,sys; p=json.load(sys.stdin)["results"]["points"][0]; print(p["program_gbs"]["median"], p["bytes_per_thread"])'
}
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "uptime: $(uptime)"
echo "CPUs $cpus; $rounds rounds alternating; 4 KiB pages; claimed L3 $claim MiB"
report() {
  python3 - "$@" <<'PY'
import statistics, sys
name, unit, small, big = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
s, b = statistics.median(map(float, small)), statistics.median(map(float, big))
print(f"{name:<34} {unit:<5} curve-sized {s:8.1f} ({min(map(float, small)):.1f}–{max(map(float, small)):.1f})"
      f"   claim-sized {b:8.1f} ({min(map(float, big)):.1f}–{max(map(float, big)):.1f})   ratio {s / b:.3f}")
PY
}
chosen=0
for what in "latency:ns" "read:GB/s" "copy-nt:GB/s" "write:GB/s"; do
  name=${what%%:*}
  unit=${what##*:}
  small=()
  big=()
  for ((r = 0; r < rounds; r++)); do
    for order in a b; do
      if [[ ($order == a && $((r % 2)) == 0) || ($order == b && $((r % 2)) == 1) ]]; then
        if [[ $name == latency ]]; then
          small+=("$(lat 256M)")
        else
          read -r gbs chosen <<<"$(bw "$name" default)"
          small+=("$gbs")
        fi
      else
        if [[ $name == latency ]]; then
          big+=("$(lat "$big_lat")")
        else
          read -r gbs _ <<<"$(bw "$name" "$big_bw")"
          big+=("$gbs")
        fi
      fi
    done
  done
  label=$([[ $name == latency ]] && echo "DRAM latency 256M vs $big_lat" || echo "$name $((chosen >> 20))M vs $big_bw per thread")
  report "$label" "$unit" "${small[*]}" "${big[*]}"
done
echo "uptime: $(uptime)"
