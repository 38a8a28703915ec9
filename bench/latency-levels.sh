#!/usr/bin/env bash
# Default `memsight latency` ladders, ROUNDS quiet and ROUNDS beside a CPU-bound load on every
# CPU (stress-ng --cpu), alternating: does each name L1 for the plateau that starts at the
# smallest size and ends at the L1 the OS reports, and give a memory level within 7% of the
# ladder's largest point? (A benchmark, not a test: it prints machine-dependent figures.)
# Usage: [ROUNDS=5] bench/latency-levels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
command -v stress-ng >/dev/null || {
  echo "bench/latency-levels.sh: install stress-ng (apt-get install stress-ng)" >&2
  exit 1
}
cargo build --release --locked -q -p memsight
ms=target/release/memsight
model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
out=$(mktemp -d)
trap 'rm -rf "$out"; kill "${load:-}" 2>/dev/null || true' EXIT
echo "# Latency levels, quiet and beside a CPU-bound load"
echo "host $(hostname), $model, $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)"
echo
echo "| run | beside | load (1 min) | levels | L1 | memory ns | largest point ns | memory ÷ largest | holds |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  for beside in none cpu; do
    load=
    if [[ $beside == cpu ]]; then
      stress-ng --cpu "$(nproc)" --timeout 120s >/dev/null 2>&1 &
      load=$!
      sleep 2
    fi
    avg=$(cut -d' ' -f1 /proc/loadavg)
    "$ms" latency --json --no-progress >"$out/$r-$beside.json"
    [[ -n $load ]] && { kill "$load" 2>/dev/null || true; wait "$load" 2>/dev/null || true; }
    python3 - "$out/$r-$beside.json" "$r" "$beside" "$avg" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
reported = {c["level"]: c["size_bytes"] for c in doc["environment"]["topology"]["caches"]}
ladder = doc["results"]["ladders"][0]
plateaus = ladder["levels"]["plateaus"]
points = ladder["main"]["points"]
kib = lambda b: f"{b / 1024:g} KiB" if b < 1 << 20 else f"{b / (1 << 20):.3g} MiB"
names = " ".join(f'{p["name"]} {p["ns"]:.2f}' for p in plateaus)
l1 = next((p for p in plateaus if p["name"] == "L1"), None)
l1_ok = bool(l1 and l1["first_bytes"] == points[0]["size_bytes"]
             and 0.7 * reported.get(1, 0) <= l1["last_bytes"] <= 1.2 * reported.get(1, 0))
mem = next((p for p in plateaus if p["name"] == "memory"), None)
largest = points[-1]["ns"]["median"]
ratio = mem["ns"] / largest if mem else float("nan")
ok = l1_ok and mem is not None and abs(ratio - 1) <= 0.07
l1_text = f'{kib(l1["first_bytes"])}–{kib(l1["last_bytes"])}' if l1 else "-"
mem_text = f'{mem["ns"]:.1f}' if mem else "-"
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {names} | {l1_text} | {mem_text} | {largest:.1f} | {ratio:.3f} | {'yes' if ok else 'NO'} |")
EOF
  done
done
echo
echo "uptime after: $(uptime)"
