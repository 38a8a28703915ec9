#!/usr/bin/env bash
# `check --baseline last:N` on this machine, as an unattended health loop uses it
# (docs/operations.md): N quick runs make the first baseline, then QUIET checks each measure a
# quick run and judge it against the N runs before it (each joins the history once judged).
# Then, as stored results against the last N quiet runs (not joining the history): PLANTED
# control runs as they are (they should pass), PLANTED runs with transparent huge pages switched
# off (the bandwidth suite's buffers on 4 KiB pages: a real change of the node's configuration,
# which should fail), and PLANTED runs beside a memory hog on the second CPU (which takes the
# measuring threads' CPU: disturbed, so INCOMPLETE, never PASS). Prints one line per check; keeps
# the history in OUT for bench/changes.py.
#
#   bench/baseline.sh [OUT] [N] [QUIET] [PLANTED]     (root, for the THP switch)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/memsight-baseline}
n=${2:-10}
quiet=${3:-20}
planted=${4:-3}
ms=${MEMSIGHT:-target/release/memsight}
[[ -x $ms ]] || cargo build --release --locked -p memsight >/dev/null
[[ $(id -u) == 0 ]] || { echo "baseline.sh: needs root to switch transparent huge pages" >&2; exit 2; }
thp=/sys/kernel/mm/transparent_hugepage/enabled
was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
trap 'echo "$was" >"$thp"' EXIT
rm -rf "$out"
mkdir -p "$out"
db=$out/history.sqlite
echo "# $(date -u +%FT%TZ) $(hostname) · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') · $(nproc) CPUs · THP $was"
echo "# uptime: $(uptime)"
for i in $(seq "$n"); do
  "$ms" run --quick --quiet --no-progress --only latency,bandwidth --db "$db" --out "$out/base$i" >/dev/null
done
echo "# $n baseline runs stored"
judge() {
  local line
  set +e
  line=$("$ms" check --baseline "last:$n" --db "$db" --format line --no-progress 2>&1 | tail -n 1)
  set -e
  echo "$1 $line"
}
for i in $(seq "$quiet"); do judge "quiet $i"; done
# The planted changes are judged as stored results against the last N quiet runs: they do not
# join the history (a rolling baseline would take them in).
stored() {
  local dir=$out/$1 line
  "$ms" run --quick --quiet --no-progress --no-history --only latency,bandwidth --out "$dir" >/dev/null 2>&1 || true
  set +e
  line=$("$ms" check --baseline "last:$n" --db "$db" --format line "$dir" 2>&1 | tail -n 1)
  set -e
  echo "$1 $line"
}
for i in $(seq "$planted"); do stored "control-$i"; done
for i in $(seq "$planted"); do
  echo never >"$thp"
  stored "thp-off-$i"
  echo "$was" >"$thp"
done
# A memory hog on the second CPU: the measuring threads lose their CPU to it, so the figures
# rest on disturbed samples and are not judged (INCOMPLETE), never passed.
for i in $(seq "$planted"); do
  taskset -c 1 dd if=/dev/zero of=/dev/null bs=64M count=100000000 2>/dev/null &
  hog=$!
  stored "hog-$i"
  kill "$hog"
  wait "$hog" 2>/dev/null || true
done
echo "# uptime: $(uptime)"
