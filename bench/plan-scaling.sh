#!/usr/bin/env bash
# How a run's predicted time grows with the machine: `memsight run --plan` at each level on
# synthetic topologies of 2 to 512 CPUs (2 hardware threads a core) and 1 to 8 NUMA nodes
# (4 GB of memory a CPU, at least 16 GB a node), each node with a 32 MB L3 (hwloc's synthetic topologies, made with lstopo-no-graphics
# from Debian's hwloc-nox). Prints a Markdown table of predicted seconds (quick / default /
# thorough) and what a 45 s budget leaves out of the default run. Nothing is measured.
#
#   bench/plan-scaling.sh [OUT]      (docs/limits.md quotes its table)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/memsight-plan-scaling}
ms=${MEMSIGHT:-target/release/memsight}
[[ -x $ms ]] || cargo build --release --locked -p memsight >/dev/null
command -v lstopo-no-graphics >/dev/null || { echo "plan-scaling.sh: needs lstopo-no-graphics (apt install hwloc-nox)" >&2; exit 2; }
mkdir -p "$out"
total() { python3 -c 'import json,sys; p=json.load(sys.stdin); print("%.0f" % (p["start_s"] + sum(s["predicted_s"] for s in p["suites"])))'; }
echo "| CPUs | nodes | quick s | default s | thorough s | default with --time-budget 45s |"
echo "|---|---|---|---|---|---|"
for cpus in 2 16 64 256 512; do
  for nodes in 1 2 4 8; do
    (( cpus >= 2 * nodes )) || continue
    packs=$(( nodes >= 2 ? 2 : 1 ))
    gb=$(( cpus * 4 / nodes > 16 ? cpus * 4 / nodes : 16 ))
    desc="pack:$packs numa:$(( nodes / packs ))(memory=${gb}GB) l3:1(size=32MB) core:$(( cpus / 2 / nodes )) l2:1(size=2MB) l1d:1(size=48KB) pu:2"
    xml=$out/${cpus}pu-${nodes}n.xml
    rm -f "$xml"
    lstopo-no-graphics --input "$desc" --of xml "$xml"
    row="| $cpus | $nodes"
    for level in --quick "" --thorough; do
      row+=" | $("$ms" --topology-xml "$xml" run --plan --json $level | total)"
    done
    fitted=$({ "$ms" --topology-xml "$xml" run --plan --json --time-budget 45s 2>&1 || true; } | python3 -c '
import json, sys
t = sys.stdin.read()
try:
    p = json.loads(t)
except ValueError:
    print("refused"); sys.exit()
gone = ", ".join(s["suite"] for s in p.get("left_out", []))
print("%.0f s%s" % (p["start_s"] + sum(s["predicted_s"] for s in p["suites"]), ", without " + gone if gone else ""))')
    echo "$row | $fitted |"
  done
done
