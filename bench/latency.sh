#!/usr/bin/env bash
# Latency ladder benchmark (not a test: absolute timings, machine-dependent).
#
# Runs the default ladder ROUNDS times (default 3), alternating the three chase orders in each
# round so that drift in machine load hits all of them alike:
#   window  – memsight's default (random inside 256 KiB windows, multichase's method)
#   random  – uniformly random (adds TLB misses with 4 KiB pages)
#   stride  – sequential 128 B stride, the lmbench lat_mem_rd order (prefetchers hide latency)
# No latency peer (lmbench, multichase, MLC) is packaged for Debian 12, so the stride order stands
# in for lat_mem_rd's method. Prints, per detected level, the median over rounds of each round's
# plateau latency and the min–max over rounds, and the worst per-point CV.
# Usage: bench/latency.sh [ROUNDS] [extra memsight latency args...]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
cargo build --release --locked -q -p memsight
out=$(mktemp -d)
echo "uptime: $(uptime)"
for r in $(seq 1 "$rounds"); do
  for p in window random stride; do
    target/release/memsight latency --json --no-progress --pattern "$p" "$@" >"$out/$p-$r.json"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys, glob, os
d, rounds = sys.argv[1], int(sys.argv[2])
env = None
for p in ["window", "random", "stride"]:
    levels, cvs, rcvs, secs = {}, [], [], []
    for f in sorted(glob.glob(os.path.join(d, f"{p}-*.json"))):
        doc = json.load(open(f))
        env = doc["environment"]
        secs.append(doc["duration_s"])
        lad = doc["results"]["ladders"][0]
        for pl in lad["levels"]["plateaus"]:
            levels.setdefault(pl["name"], []).append((pl["ns"], pl["cycles"], pl["last_bytes"]))
        cvs += [pt["ns"]["cv"] for pt in lad["main"]["points"]]
        rcvs += [pt["ns"]["robust_cv"] for pt in lad["main"]["points"]]
    print(f"\n{p}: {rounds} rounds, {statistics.median(secs):.1f} s per ladder (median)")
    print(f"  {'level':8} {'median ns':>10} {'min–max ns':>16} {'cycles':>7} {'plateau ends':>13}")
    for name, v in levels.items():
        ns = [x[0] for x in v]
        print(f"  {name:8} {statistics.median(ns):10.2f} {min(ns):7.2f}–{max(ns):<8.2f} {statistics.median([x[1] for x in v]):7.1f} {max(x[2] for x in v)/1024:10.0f} KiB  (n={len(v)})")
    for label, v in (("CV", cvs), ("robust CV", rcvs)):
        v.sort()
        print(f"  per-point {label}: median {100*statistics.median(v):.2f}%, 90th pct {100*v[int(0.9*(len(v)-1))]:.2f}%, worst {100*v[-1]:.2f}%, under 2%: {sum(x < 0.02 for x in v)}/{len(v)}")
print(f"\nmachine: {env['cpu']['model_name']}, {env['topology']['threads']} threads, hypervisor {env['cpu']['hypervisor']}, load {env['load']['load_avg_1m']}")
PY
rm -rf "$out"
