#!/usr/bin/env bash
# Does `memsight profile` infer the bandwidth a program draws? Loads of known bandwidth run as the
# profiled program, each on LOAD_CPU with the probe on PROBE_CPU, ROUNDS times alternating:
#   idle              `sleep 6`                                   (0 GB/s)
#   read / copy / write   `memsight bandwidth --test T --cpus LOAD_CPU` (its own DRAM-estimate figure)
#   stream            `memsight stream --cpus LOAD_CPU`           (the mean of its four kernels in
#                                                                 DRAM bytes, write allocate counted,
#                                                                 per average time)
#   held-R            `memsight bandwidth --rate R --seconds 8 --cpus LOAD_CPU` for each R of RATES
#                     (GB/s, default "4 8 12 16"): reads held at a set rate (its median second)
#   heldw-R           the same with writes, for each R of WRITE_RATES (program GB/s, default none;
#                     its figure is in DRAM bytes, read-for-ownership counted: about 2R): where the
#                     write curves rise well before the read curve does, these reach the rising part
# The curves are measured once first (loaded-latency, all reads, 2:1 and all writes, in
# CURVE_ROUNDS alternating rounds, default 5, each round's sweep read as well as their merge) with
# the chase on PROBE_CPU and the load on LOAD_CPU. For each load the record gives the load's own
# figure, the interval the profile inferred from the median probe latency, and whether it holds
# the figure; then the cache-line ping-pong between the two CPUs (`memsight c2c`), which tells a
# guest whose host moved its two virtual CPUs (apart, or onto one core complex) during the run.
# A benchmark, not a test: machine-dependent figures.
# Usage: [ROUNDS=3] [CURVE_ROUNDS=5] [MERGED=1] [PROBE_CPU=1] [LOAD_CPU=0] [RATES="4 8 12 16"] [WRITE_RATES="14 18 22"]
#        [OUT=FILE] bench/profile-known-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
curve_rounds=${CURVE_ROUNDS:-5}
probe=${PROBE_CPU:-1}
load=${LOAD_CPU:-0}
read -r -a rates <<<"${RATES:-4 8 12 16}"
read -r -a write_rates <<<"${WRITE_RATES:-}"
cargo build --release --locked -q -p memsight
ms=$PWD/target/release/memsight
model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
out=${OUT:-bench/results/$(date -u +%F)-profile-known-load-$(hostname -s).md}
# A second run the same day gets its own file (the time added) rather than replacing the first.
[[ -n ${OUT:-} || ! -e $out ]] || out=${out%.md}-$(date -u +%H%M).md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curves=$work/rounds.json
"$ms" loaded-latency --no-progress --mix reads,2:1,all-writes --points 8 --rounds "$curve_rounds" \
  --cpus "$probe,$load" -o "$curves" >/dev/null
# MERGED=1: each load is profiled twice in a row, against the family as measured (each round's
# sweep read as well as their merge: "rounds") and against a copy whose points keep no rounds
# (their merge alone, as memsight read curves before it kept them: "merged").
families=(rounds)
if [[ ${MERGED:-0} == 1 ]]; then
  families+=(merged)
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["results"]["curves"]:
    for p in c["points"]:
        p.pop("round_latencies_ns", None)
json.dump(d, open(sys.argv[2], "w"))' "$curves" "$work/merged.json"
fi
# The load's own figure from its JSON on stdout (GB/s, estimated DRAM bytes).
cat >"$work/known.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
kind = sys.argv[2]
r = d["results"]
if r.get("held"):
    print(r["held"]["dram_gbs"])
elif kind == "stream":
    # The mean over the four kernels of DRAM bytes (write allocate counted) per average time:
    # the traffic while STREAM's loops run, not its best iteration.
    ks = r["kernels"]
    print(sum(k["dram_bytes"] / k["avg_time_s"] for k in ks) / len(ks) / 1e9)
else:
    print(r["points"][0]["dram_gbs"]["median"])
EOF
cat >"$work/inferred.py" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["results"]["pressure"]
o = p["overall"] or {}
k = o.get("kind")
lo, hi = {"flat": (0, o.get("below_gbs")), "within": (o.get("low_gbs"), o.get("high_gbs")),
          "unbounded": (0, float("inf")),
          "above": (o.get("at_least_gbs"), float("inf")),
          "saturated": (o.get("at_least_gbs"), float("inf"))}.get(k, (None, None))
fmt = lambda v: "inf" if v == float("inf") else f"{v:.1f}"
print(f'{k} {fmt(lo)} {fmt(hi)} {p["overall_ns"]} {p["family_idle_ns"]} {p["dropped"]} {p["samples"]}')
EOF
# The family's shape: where each curve leaves its idle latency's noise (5%), if it does.
cat >"$work/family.py" <<'EOF'
import json, sys
for c in json.load(open(sys.argv[1]))["results"]["curves"]:
    pts = c["points"]
    idle, last = pts[0]["latency_ns"]["median"], max(p["latency_ns"]["median"] for p in pts)
    leaves = next((p["bandwidth_gbs"] for p in pts if p["latency_ns"]["median"] > idle * 1.05), None)
    mix = c["mix"] if isinstance(c["mix"], str) else json.dumps(c["mix"])
    where = f"leaves it at {leaves:.1f} GB/s" if leaves else "flat to its end"
    top = pts[-1].get("round_latencies_ns") or [pts[-1]["latency_ns"]["median"]]
    print(f"| {mix} | {len(pts)} | {idle:.0f} | {last:.0f} | {min(top):.0f}–{max(top):.0f} | {c['saturation_gbs']:.1f} | {where} |")
EOF
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "+changes")
{
  echo "# memsight profile against loads of known bandwidth, $(hostname -s), $(date -u +%F)"
  echo
  echo "- CPU: $model ($(nproc) CPUs); probe on CPU $probe, load on CPU $load; $rounds rounds"
  echo "- curves: \`memsight loaded-latency --mix reads,2:1,all-writes --points 8 --rounds $curve_rounds --cpus $probe,$load\`"
  echo "- memsight at $commit; uptime at start: $(uptime)"
  echo
  echo "| curve | points | idle ns | highest ns | last point's rounds, ns | saturation GB/s (DRAM est.) | 5% above idle |"
  echo "|---|---|---|---|---|---|---|"
  python3 "$work/family.py" "$curves"
  echo
  echo "| round | load | family read as | known GB/s (DRAM est.) | inferred | probe ns (scaled) | idle ns | dropped | holds | c2c ns |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$out"
for ((r = 1; r <= rounds; r++)); do
  for kind in idle read copy write stream "${rates[@]/#/held-}" "${write_rates[@]/#/heldw-}"; do
    case $kind in
      idle) cmd=(sleep 6) ;;
      held-*) cmd=("$ms" --no-progress bandwidth --rate "${kind#held-}GB/s" --seconds 8 --test read
        --cpus "$load" --size 512M -o "$work/load.json") ;;
      heldw-*) cmd=("$ms" --no-progress bandwidth --rate "${kind#heldw-}GB/s" --seconds 8 --test write
        --cpus "$load" --size 512M -o "$work/load.json") ;;
      stream) cmd=("$ms" --no-progress stream --cpus "$load" -o "$work/load.json") ;;
      *) cmd=("$ms" --no-progress bandwidth --test "$kind" --cpus "$load" --size 512M
        --rounds 1 --point-budget 5 -o "$work/load.json") ;;
    esac
    for family in "${families[@]}"; do
      "$ms" profile --json --no-progress --curves "$work/$family.json" --probe-cpu "$probe" -- \
        "${cmd[@]}" >"$work/p.json" 2>"$work/load.err"
      known=0
      [[ $kind == idle ]] || known=$(python3 "$work/known.py" "$work/load.json" "$kind")
      read -r what lo hi ns idle dropped samples < <(python3 "$work/inferred.py" "$work/p.json")
      holds=$(python3 -c "k=$known; lo=float('$lo'); hi=float('$hi'); print('yes' if lo <= k <= hi else 'no')")
      c2c=$("$ms" --json --no-progress c2c --cpus "$probe,$load" --modified-only --point-budget 0.3 \
        | python3 -c 'import json, sys; p = json.load(sys.stdin)["results"]["pairs"][0]; print(round(p["modified_ns"]["median"]))')
      printf '| %s | %s | %s | %.1f | %s %s–%s | %.0f | %.0f | %s/%s | %s | %s |\n' "$r" "$kind" \
        "$family" "$known" "$what" "$lo" "$hi" "$ns" "$idle" "$dropped" "$samples" "$holds" "$c2c" \
        | tee -a "$out"
    done
  done
done
echo >>"$out"
echo "- uptime at end: $(uptime)" >>"$out"
echo "record: $out"
