#!/usr/bin/env bash
# memsight stream against STREAM 5.10, alternating, by vector width and page kind: which of
# memsight's variants reads STREAM's Triad (a benchmark, not a test: machine-dependent figures).
#
# Builds STREAM from PEERS_DIR/stream (a clone of github.com/jeffhammond/STREAM; its code is not
# part of this repository) as bench/peers.sh does (80M elements, NTIMES 20, gcc -O3
# -march=native), then runs, ROUNDS times (default 5): STREAM, and memsight stream at every
# vector width this CPU has on 4 KiB pages, and the widest on THP; every one on THREADS threads
# (default: all CPUs), pinned one per CPU. Prints each round and the medians of the best rates,
# with each variant's ratio to STREAM.
# Usage: PEERS_DIR=DIR [ROUNDS=5] [THREADS=N] bench/stream-peer.sh
set -euo pipefail
peers=${PEERS_DIR:-}
[[ -n $peers && -f $peers/stream/stream.c ]] || {
  echo "bench/stream-peer.sh: set PEERS_DIR to a folder holding stream/ (github.com/jeffhammond/STREAM)" >&2
  exit 2
}
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
threads=${THREADS:-$(nproc)}
cargo build --release --locked -q -p memsight
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
gcc -O3 -march=native -fopenmp -mcmodel=medium -fno-tree-loop-distribute-patterns \
  -DSTREAM_ARRAY_SIZE=80000000 -DNTIMES=20 "$peers/stream/stream.c" -o "$build/stream"
ms=target/release/memsight
isas=$("$ms" env --json | python3 -c 'import json,sys; f=json.load(sys.stdin)["environment"]["cpu"]["features"]; print(" ".join(x for x, k in (("avx512", "avx512f"), ("avx2", "avx2"), ("sse2", "sse2")) if f.get(k)))')
widest=${isas%% *}
cpus=$(seq -s, 0 $((threads - 1)))
echo "# STREAM 5.10 against memsight stream, Triad and Copy (best rates), $threads thread(s)"
echo "host $(hostname), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)"
loop=$(objdump -d --no-show-raw-insn "$build/stream" | grep -oE 'vfmadd[0-9]+pd .*%[yz]mm[0-9]+' | head -1)
echo "STREAM's Triad loop: ${loop:-?}"
out=$build/rows
for r in $(seq 1 "$rounds"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=true OMP_PLACES=cores "$build/stream" |
    awk -v r="$r" -v l="$load" '/^(Copy|Triad):/ {print r, l, "STREAM", $1, $2}' >>"$out"
  variants=()
  for isa in $isas; do variants+=("$isa 4k"); done
  variants+=("$widest thp")
  for v in "${variants[@]}"; do
    set -- $v
    "$ms" stream --elements 80000000 --ntimes 20 --cpus "$cpus" --isa "$1" --page-kind "$2" --json --no-progress |
      python3 -c '
import json, sys
d = json.load(sys.stdin)["results"]
for k in d["kernels"]:
    if k["function"] in ("Copy", "Triad"):
        print(sys.argv[1], sys.argv[2], "memsight-" + sys.argv[3] + "-" + sys.argv[4], k["function"] + ":", k["best_rate_mbs"])
' "$r" "$load" "$1" "$2" >>"$out"
  done
done
python3 - "$out" <<'EOF'
import collections, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = collections.defaultdict(list)
at = {}
for r, load, who, kernel, mbs in rows:
    by[(who, kernel.rstrip(":"))].append(float(mbs) / 1000)
    at[(r, who, kernel.rstrip(":"))] = float(mbs)
print()
# Two ratios: of the medians, and the median of each round's ratio to the STREAM run just
# before it (the host's slow and fast phases move both tools of one round alike).
print("| variant | Copy GB/s (median, min–max) | ratio | round ratio | Triad GB/s (median, min–max) | ratio | round ratio |")
print("|---|---|---|---|---|---|---|")
ref = {k: statistics.median(by[("STREAM", k)]) for k in ("Copy", "Triad")}
rounds = sorted({r for r, _, _ in at}, key=int)
for who in sorted({w for w, _ in by}, key=lambda w: (w != "STREAM", w)):
    cells = []
    for k in ("Copy", "Triad"):
        v = by[(who, k)]
        per = [at[(r, who, k)] / at[(r, "STREAM", k)] for r in rounds if (r, who, k) in at]
        cells.append(f"{statistics.median(v):.1f} ({min(v):.1f}–{max(v):.1f}) | {statistics.median(v) / ref[k]:.2f} | {statistics.median(per):.2f}")
    print(f"| {who} | " + " | ".join(cells) + " |")
print()
print("rounds (round, 1-min load, who, kernel, MB/s):")
for row in rows:
    print(" ", " ".join(row))
EOF
echo "uptime after: $(uptime)"
