#!/usr/bin/env bash
# memsight coherence against what a user would write by hand (bench/coherence-peer.c: pinned
# pthreads, C11 atomics, a fixed amount of work timed from a shared start to the last thread's
# end, the median of 7 runs), alternating on the same CPUs (a benchmark, not a test: it prints
# machine-dependent rates).
#
# Both count alike: the team's increments per second on one counter (relaxed fetch-add), two
# threads' increments of their own words adjacent in one line and padded to lines of their own
# (plain `(*p)++` and atomic), and 64-byte messages through a ring of 64 lines (GB/s).
# Writes a record to bench/results.
# Usage: [ROUNDS=5] [CPUS=0,1] bench/coherence-peer.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
cpus=${CPUS:-0,1}
cargo build --release --locked -q -p memsight
ms=target/release/memsight
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -pthread bench/coherence-peer.c -o "$out/peer"
model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
for r in $(seq 1 "$rounds"); do
  echo "$r $(cut -d' ' -f1 /proc/loadavg)" >>"$out/rounds"
  "$ms" coherence --cpus "$cpus" --json --no-progress >"$out/ms-$r.json"
  "$out/peer" "$cpus" >"$out/peer-$r.txt"
done
python3 - "$out" "$rounds" "$model" "$cpus" <<'PY'
import datetime, json, platform, statistics, sys
out, rounds, model, cpus = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
loads = [l.split()[1] for l in open(f"{out}/rounds")]
rows = {}
for r in range(1, rounds + 1):
    res = json.load(open(f"{out}/ms-{r}.json"))["results"]
    mine = {f"counter {c['threads']}t": c["mops"] for c in res["contended"]}
    for how, tag in (("plain", ""), ("atomic", "-atomic")):
        mine[f"adjacent{tag}"] = res["false_sharing"][how]["adjacent_mops"]
        mine[f"padded{tag}"] = res["false_sharing"][how]["padded_mops"]
    mine["ring"] = res["ring"]["gbps"]
    peer = {}
    for line in open(f"{out}/peer-{r}.txt"):
        name, threads, value, unit = line.split()
        peer[f"counter {threads}t" if name == "counter" else name] = (float(value), unit)
    for k, (v, unit) in peer.items():
        s = mine.get(k)
        if s is None:
            continue
        disturbed = bool(s.get("shortfall") and s["shortfall"].get("disturbed_kept", 0) > 0)
        rows.setdefault(k, []).append((s["median"], v, unit, disturbed))
print(f"# memsight coherence against a hand-written C program, CPUs {cpus}")
print(f"host {platform.node()}, {model}, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC")
print(f"load average (1 min) before each round: {' '.join(loads)}")
print()
print("| test | unit | memsight (median of rounds) | C program | ratio of medians | per-round ratios | rounds with disturbed figures |")
print("|---|---|---|---|---|---|---|")
for k, v in rows.items():
    m = statistics.median(x[0] for x in v)
    p = statistics.median(x[1] for x in v)
    per = " ".join(f"{x[0] / x[1]:.2f}" for x in v)
    print(f"| {k} | {v[0][2]} | {m:.4g} | {p:.4g} | {m / p:.2f} | {per} | {sum(x[3] for x in v)} |")
def slow(rows, a, b, i):
    return statistics.median(x[i] for x in rows[b]) / statistics.median(x[i] for x in rows[a])
print()
for tag in ("", "-atomic"):
    if f"adjacent{tag}" in rows:
        print(f"false sharing{tag or ' (plain)'}: padded ÷ adjacent memsight {slow(rows, f'adjacent{tag}', f'padded{tag}', 0):.2f}×, C program {slow(rows, f'adjacent{tag}', f'padded{tag}', 1):.2f}×")
PY
