#!/usr/bin/env bash
# memsight c2c against core-to-core-latency (its CAS bench, 1), alternating on the same two CPUs
# (a benchmark, not a test: it prints machine-dependent timings).
#
# Both count one coherence transaction a turn: core-to-core-latency's threads compare-and-swap
# one line between PING and PONG and it reports half a round trip; memsight's modified line is a
# compare-and-swap turn (one-way). The load-then-store turn memsight also measures (two
# transactions) is printed beside them.
# Installs core-to-core-latency with cargo when missing. Writes a record to bench/results.
# Usage: [ROUNDS=6] [CPUS=0,1] bench/c2c-peer.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-6}
cpus=${CPUS:-0,1}
command -v core-to-core-latency >/dev/null || cargo install --locked core-to-core-latency
cargo build --release --locked -q -p memsight
ms=target/release/memsight
model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  # core-to-core-latency: 1000 round trips a sample, 300 samples; its CSV is the lower triangle
  # of mean one-way latencies, the pair's value on the second line.
  peer=$(core-to-core-latency 1000 300 -b 1 -c "$cpus" --csv 2>/dev/null | sed -n 2p | tr -d ', ')
  "$ms" c2c --cpus "$cpus" --json --no-progress >"$out.json"
  python3 - "$out.json" "$peer" "$load" "$r" >>"$out" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
p = doc["results"]["pairs"][0]
ls = (p.get("load_store_ns") or {}).get("median", float("nan"))
m = p["modified_ns"]
disturbed = bool(m.get("shortfall") and m["shortfall"].get("disturbed_kept", 0) > 0)
print(f'{sys.argv[4]} {sys.argv[3]} {m["median"]:.1f} {float(sys.argv[2]):.1f} {ls:.1f} {int(disturbed)}')
EOF
done
python3 - "$out" "$model" "$cpus" <<'EOF'
import statistics, sys, datetime, platform
rows = [l.split() for l in open(sys.argv[1])]
print(f"# c2c against core-to-core-latency (CAS), CPUs {sys.argv[3]}")
print(f"host {platform.node()}, {sys.argv[2]}, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC")
print()
print("| round | load (1 min) | memsight atomic ns | core-to-core-latency ns | ratio | memsight load-then-store ns | disturbed |")
print("|---|---|---|---|---|---|---|")
ratios = []
for r, load, m, peer, ls, d in rows:
    ratio = float(m) / float(peer)
    ratios.append(ratio)
    print(f"| {r} | {load} | {m} | {peer} | {ratio:.2f} | {ls} | {'yes' if d == '1' else 'no'} |")
med = lambda i: statistics.median(float(x[i]) for x in rows)
print()
print(f"medians: memsight {med(2):.1f} ns, core-to-core-latency {med(3):.1f} ns, ratio of medians {med(2) / med(3):.2f}, median ratio {statistics.median(ratios):.2f}; load-then-store {med(4):.1f} ns ({med(4) / med(2):.2f}x the atomic turn)")
EOF
