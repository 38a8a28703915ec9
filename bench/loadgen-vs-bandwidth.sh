#!/usr/bin/env bash
# Do loaded-latency's load generators move what `bandwidth` moves? (a benchmark, not a test)
#
# For every traffic mix, alternating ROUNDS times (default 5): the saturation point of a
# loaded-latency curve with one load thread and no delay (chase on the first CPU, load on the
# second), and `memsight bandwidth` with the same access pattern on the load CPU alone (2:1, one
# read and one regular write stream, is the `copy` kernel; the 2:1 mix kernel trails it). Both in
# estimated DRAM bytes (regular stores count their read for ownership), 10^9 B/s. Goal: within 15%.
# Usage: [ROUNDS=5] bench/loadgen-vs-bandwidth.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p memsight
ms=target/release/memsight
read -r chase load < <(python3 -c 'import os; c=sorted(os.sched_getaffinity(0)); print(c[0], c[1])')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "uptime: $(uptime)"
for r in $(seq 1 "${ROUNDS:-5}"); do
  for m in reads 3:1 2:1 1:1-nt nt-writes; do
    case $m in reads) t=read a=1;; 3:1) t=3:1 a=3;; 2:1) t=copy a=2;; 1:1-nt) t=1:1-nt a=2;; nt-writes) t=write-nt a=1;; esac
    f=${m//:/_}
    $ms --json --no-progress loaded-latency --mix "$m" --points 2 --cpus "$chase,$load" \
      --size 64M --load-size 768M >"$out/ll-$f-$r.json"
    $ms --json --no-progress bandwidth --test "$t" --cpus "$load" --size "$((256 * a))M" >"$out/bw-$f-$r.json"
  done
done
python3 - "$out" "${ROUNDS:-5}" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
print(f"{'mix':<10}{'loaded saturation GB/s':>24}{'bandwidth GB/s':>16}{'ratio':>7}")
for m in ["reads", "3:1", "2:1", "1:1-nt", "nt-writes"]:
    f = m.replace(":", "_")
    ll = [json.load(open(f"{d}/ll-{f}-{r}.json"))["results"]["curves"][0]["saturation_gbs"] for r in range(1, rounds + 1)]
    bw = [json.load(open(f"{d}/bw-{f}-{r}.json"))["results"]["points"][0]["dram_gbs"]["median"] for r in range(1, rounds + 1)]
    a, b = statistics.median(ll), statistics.median(bw)
    print(f"{m:<10}{a:>14.1f} ({min(ll):.1f}–{max(ll):.1f}){b:>9.1f} ({min(bw):.1f}–{max(bw):.1f}){a/b:>7.2f}")
PY
echo "uptime: $(uptime)"
