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
# Prints what a Python snippet reads from $work/NAME.json (bound as `r`, the results).
show() {
  local name=$1
  python3 - "$work/$name.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"]
exec(sys.argv[2])
PY
}

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
    show plan '
for p in r["plans"]:
    x = p["parts"][0]; o = x["organisation"]; t = x["timings"]; w = p.get("power") or {}
    act = 4 * 64 / x["tfaw_ns"]
    print(f"  {x[\"part\"]}: {x[\"chips\"]} chips, {o[\"bank_groups\"]}x{o[\"banks_per_group\"]} banks, {o[\"rows\"]} rows x {o[\"columns\"]} columns, page {o[\"page_bytes\"]} B, tFAW {x[\"tfaw_ns\"]:.1f} ns, peak {p[\"peak_mbs\"]/1000:.1f} GB/s, power {w.get(\"idle_w\", 0):.1f} W idle / {w.get(\"loaded_w\", 0):.1f} W loaded, activate ceiling {act:.1f} GB/s per rank")
'
    json mix bandwidth --test all-reads,3:1,2:1,1:1,stream-triad-like
    show mix '
full = max(p["threads"] for p in r["points"])
for p in r["points"]:
    if p["threads"] == full:
        print(f"  {p[\"test\"][\"name\"]:>18}: {p[\"program_gbs\"][\"median\"]:.1f} GB/s program, {p[\"dram_gbs\"][\"median\"]:.1f} GB/s est. DRAM ({p[\"threads\"]} threads, {p[\"bytes_per_thread\"] >> 20} MiB each)")
'
    json bwmem bandwidth --test read,write,rmw,copy
    show bwmem '
full = max(p["threads"] for p in r["points"])
for p in r["points"]:
    if p["threads"] == full:
        print(f"  {p[\"test\"][\"name\"]:>18}: {p[\"program_gbs\"][\"median\"]:.1f} GB/s program")
'
  fi
  if ! skip vorobev; then
    echo "Vorobev 2020 (glibc arenas against TCMalloc)"
    json alloc alloc
    show alloc '
for c in r["configs"]:
    s = c.get("peak_rss_over_peak_live") or {}; a = c.get("arenas") or {}
    print(f"  {c[\"config\"][\"name\"]:>15}: peak RSS / peak live {s.get(\"median\", float(\"nan\")):.2f}x, arenas {a.get(\"median\", \"-\")}")
print("  " + "; ".join(r["recommendation"]))
'
  fi
  if ! skip ferreira; then
    echo "Ferreira et al. 2008 (Catamount: page mapping and row-buffer conflicts)"
    json rowbuffer rowbuffer --kernels copy,hpccg --stat best
    show rowbuffer '
for s in r["summaries"]:
    print(f"  {s[\"kernel\"]} on {s[\"memory\"]}: peak {s[\"peak_gbs\"]:.1f}, median {s[\"median_gbs\"]:.1f}, worst {s[\"worst_gbs\"]:.1f} GB/s, {s[\"dips\"]} dips over {s[\"points\"]} points")
print("  probe: " + (r.get("probe") or {}).get("message", "-")[:160])
'
  fi
  if ! skip li-kang; then
    echo "Li and Kang 2019 (MemVerge: libpmemobj pools)"
    json pmem-fill pmem --pool-size 4225761280
    show pmem-fill '
print("  " + ", ".join(f"{f[\"object_bytes\"]} B {100 * f[\"utilisation\"]:.1f}%" for f in r["fills"]))
'
    json pmem-class pmem --sizes 1M,4K --pool-size 4225761280 --class unit=1M,units=256,align=4K,header=none
    show pmem-class '
print("  class 1 MiB x 256: " + ", ".join(f"{f[\"object_bytes\"]} B {100 * f[\"utilisation\"]:.1f}%" for f in r["custom"]))
'
    json pmem-conc pmem --sizes 4K --concurrency
    show pmem-conc '
for c in r["concurrency"]:
    f = c.get("free_at_failure") or {}
    print(f"  {c[\"strategy\"]:>9}: {c[\"failures\"]} of {c[\"allocations\"] + c[\"failures\"]} failed, imbalance {c[\"imbalance\"]}, exhaustion {c[\"exhausted\"]}, free at failure {100 * f.get(\"median\", 0):.0f}% (least {100 * f.get(\"least\", 0):.0f}%), {c[\"allocations_per_s\"]:.0f}/s")
'
    json pmem-volume pmem --sizes 1M --volume --volume-zero
    show pmem-volume '
for v in r["volume"]:
    print(f"  volume {v[\"strategy\"]:>9}: {v[\"seconds\"]:.3f} s")
'
  fi
  if ! skip epyc; then
    echo "EPYC 7002 review (latency, NT stores, hinted reads, CLZERO)"
    json latency latency
    show latency '
l = r["ladders"][0]
mem = next(p for p in l["levels"]["plateaus"] if p["name"] == "memory")
print(f"  memory {mem[\"ns\"]:.1f} ns on 4 KiB pages" + (f"; at {l[\"tlb\"][-1][\"size_bytes\"] >> 20} MiB {l[\"tlb\"][-1][\"small_ns\"]:.1f} ns vs {l[\"tlb\"][-1][\"huge_ns\"]:.1f} ns on huge pages" if l["tlb"] else ""))
'
    json nt bandwidth --test read,read-nta,read-movntdqa,write,write-nt --isa avx2
    show nt '
full = max(p["threads"] for p in r["points"])
for p in r["points"]:
    if p["threads"] == full:
        print(f"  {p[\"test\"][\"name\"]:>14} (AVX2): {p[\"program_gbs\"][\"median\"]:.1f} GB/s")
print("  " + "; ".join(f for f in r["findings"] if "CLZERO" in f or "skipped" in f))
'
  fi
  if ! skip looi-xu; then
    echo "Looi and Xu 2019 (tiers, access granularity, loaded latency)"
    json tiers tiers --dax /dev/shm
    show tiers '
for t in r["targets"]:
    blocks = ", ".join(f"{b[\"block_bytes\"]} B {b[\"ns\"][\"median\"]:.0f}" for b in t["block_latency"])
    print(f"  {t[\"target\"]}: read {t[\"read_latency_ns\"][\"median\"]:.0f} ns, write {t[\"write_latency_ns\"][\"median\"]:.0f} ns; by access size {blocks} ns; granules read {t[\"read_granule\"]} B, write {t[\"write_granule\"]} B")
'
    json loaded loaded-latency
    show loaded '
for c in r["curves"]:
    k = c["knee_gbs"]
    print(f"  {c[\"mix\"]}: saturation {c[\"saturation_gbs\"]:.1f} GB/s, knee " + (f"{k:.1f} GB/s" if k else "not reached"))
'
  fi
  echo '```'
  echo
  echo '```'
  echo "uptime after: $(uptime)"
  echo '```'
} | tee "$out"
echo "written to $out" >&2
