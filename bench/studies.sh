#!/usr/bin/env bash
# The published studies on this host: every figure docs/studies.md quotes "measured here" comes
# from one run of this script (a benchmark, not a test: the figures are this machine's). Each
# study's command is the one the studies page gives, at its defaults unless noted; the record
# names the host, CPU model, date and the load before and after.
# Usage: [OUT=FILE] [SKIP=shen,vorobev,ferreira,li-kang,epyc,looi-xu] bench/studies.sh
# OUT defaults to bench/results/DATE-CPU-studies.md; the record is also printed.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p memsight
ms=$PWD/target/release/memsight
model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
slug=$(printf '%s' "$model" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//' | cut -c1-40)
out=${OUT:-bench/results/$(date -u +%F)-$slug-studies.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
skip() { [[ ",${SKIP:-}," == *",$1,"* ]]; }
# Runs memsight with JSON out into $work/NAME.json, timing it.
json() {
  local name=$1
  shift
  local t0=$SECONDS
  "$ms" --json --no-progress "$@" >"$work/$name.json"
  echo "    ($name: \`memsight $*\`, $((SECONDS - t0)) s)"
}
# Prints what bench/studies.py reads of $work/NAME.json as KIND.
show() { python3 bench/studies.py "$2" "$work/$1.json"; }

{
  echo "# The published studies on $model, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo '```'
  echo "host: $(hostname) · $(nproc) CPUs · kernel $(uname -r)"
  echo "uptime before: $(uptime)"
  echo '```'
  echo
  echo '```'
  if ! skip shen; then
    echo "Shen 2020 (DDR4 organisation, bandwidth by read:write mix)"
    json plan dimms --plan "EPYC 7713" --dimm M393A4G43BB4-CWE=8 --plan "EPYC 7713" \
      --dimm M393A4K40EB3-CWECQ=8 --ccds 8
    show plan plan
    json mix bandwidth --test all-reads,3:1,2:1,1:1,stream-triad-like
    show mix bandwidth
    json bwmem bandwidth --test read,write,rmw,copy
    show bwmem bandwidth
  fi
  if ! skip vorobev; then
    echo "Vorobev 2020 (glibc arenas against TCMalloc)"
    json alloc alloc
    show alloc alloc
  fi
  if ! skip ferreira; then
    echo "Ferreira et al. 2008 (Catamount: page mapping and row-buffer conflicts)"
    json rowbuffer rowbuffer --kernels copy,hpccg --stat best
    show rowbuffer rowbuffer
  fi
  if ! skip li-kang; then
    echo "Li and Kang 2019 (MemVerge: libpmemobj pools)"
    json pmem-fill pmem --pool-size 4225761280
    show pmem-fill pmem
    json pmem-class pmem --sizes 1M,4K --pool-size 4225761280 --class unit=1M,units=256,align=4K,header=none
    show pmem-class pmem
    json pmem-conc pmem --sizes 4K --concurrency
    show pmem-conc pmem
    json pmem-volume pmem --sizes 1M --volume --volume-zero
    show pmem-volume pmem
  fi
  if ! skip epyc; then
    echo "EPYC 7002 review (latency, NT stores, hinted reads, CLZERO)"
    json latency latency
    show latency latency
    json nt bandwidth --test read,read-nta,read-movntdqa,write,write-nt --isa avx2
    show nt bandwidth
  fi
  if ! skip looi-xu; then
    echo "Looi and Xu 2019 (tiers, access granularity, loaded latency)"
    json tiers tiers --dax /dev/shm
    show tiers tiers
    json loaded loaded-latency
    show loaded loaded
  fi
  echo '```'
  echo
  echo '```'
  echo "uptime after: $(uptime)"
  echo '```'
} | tee "$out"
echo "written to $out" >&2
