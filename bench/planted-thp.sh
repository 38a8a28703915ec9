#!/usr/bin/env bash
# A real change of a node's configuration, planted and judged by `check --baseline last:N`:
# transparent huge pages switched off under a latency check that depends on them. The check is
# the one a site whose jobs chase pointers over large footprints would run: the latency ladder in
# random order over the whole working set (`--pattern random`) on THP-backed buffers
# (`--page-kind thp`), up to 1 GiB (`--max-size 1G`: on 4 KiB pages its page-table entries,
# 2 MiB, no longer sit in a core's L2, so every miss of the TLB costs a trip beyond it), so memory
# latency includes what the TLB costs and huge pages save. N quick
# latency runs make the baseline (in their own history); then CONTROL runs as they are and
# PLANTED runs with THP `never` are measured as stored results and judged against it (they do
# not join the history). Prints one verdict line per run. The drift probes lose their huge pages
# too and read the machine a little worse (+4 to +13% on their chase, measured); the check's
# slow-phase allowance is bounded by that, so a shortfall far beyond it is still judged.
#
#   bench/planted-thp.sh [OUT] [N] [CONTROL] [PLANTED]     (root, for the THP switch)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/memsight-planted-thp}
n=${2:-10}
control=${3:-5}
planted=${4:-5}
ms=${MEMSIGHT:-target/release/memsight}
[[ -x $ms ]] || cargo build --release --locked -p memsight >/dev/null
[[ $(id -u) == 0 ]] || { echo "planted-thp.sh: needs root to switch transparent huge pages" >&2; exit 2; }
thp=/sys/kernel/mm/transparent_hugepage/enabled
was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
[[ $was != never ]] || { echo "planted-thp.sh: THP is already 'never' here: nothing to plant" >&2; exit 2; }
trap 'echo "$was" >"$thp"' EXIT
rm -rf "$out"
mkdir -p "$out"
db=$out/history.sqlite
flags=(--quick --quiet --no-progress --only latency --pattern random --page-kind thp --max-size 1G)
echo "# $(date -u +%FT%TZ) $(hostname) · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') · $(nproc) CPUs · THP $was"
echo "# uptime: $(uptime)"
echo "# memsight run ${flags[*]}"
for i in $(seq "$n"); do
  "$ms" run "${flags[@]}" --db "$db" --out "$out/base$i" >/dev/null
done
echo "# $n baseline runs stored"
stored() {
  local dir=$out/$1 line
  "$ms" run "${flags[@]}" --no-history --out "$dir" >/dev/null 2>&1 || true
  set +e
  line=$("$ms" check --baseline "last:$n" --db "$db" --format line "$dir" 2>&1 | tail -n 1)
  set -e
  echo "$1 $line"
}
for i in $(seq "$control"); do stored "control-$i"; done
echo never >"$thp"
for i in $(seq "$planted"); do stored "thp-never-$i"; done
echo "$was" >"$thp"
# The memory latency of each run, as stored, for the record.
for d in "$out"/*/; do
  v=$("$ms" export "$d" --format csv 2>/dev/null | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["key"] == "latency/cpu0/level/memory":
        print("%.1f" % float(r["value"]))' || true)
  echo "# $(basename "$d") memory latency ${v:-?} ns"
done
echo "# uptime: $(uptime)"
