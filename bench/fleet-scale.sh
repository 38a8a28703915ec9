#!/usr/bin/env bash
# `memsight fleet` at scale: synthetic fleets made from one real result, timed with their peak
# memory. Each node is the result with its hostname changed and its bandwidth figures jittered
# by up to ±2%; node 7 of each fleet is 20% slower, and must be the node the analysis flags.
#
#   bench/fleet-scale.sh [--result FILE] [--full N,…] [--summaries N,…] [--keep DIR]
#
# --result FILE     the real result the nodes are made from (default: the thorough run recorded
#                   in crates/memsight/tests/data, a 2-vCPU EPYC guest's)
# --full N,…        fleets of full results (default 1000,10000); the first is also summarised
#                   (`fleet --summarise`) and analysed again from its summaries
# --summaries N,…   fleets of node summaries alone, as `run --fleet` writes them (default 100000)
# --keep DIR        build the fleets under DIR and leave them (default: a temporary directory,
#                   removed after)
# Writes a record to bench/results/: host, CPU model, load, and per fleet its files' bytes on
# disk, the wall time, the peak RSS and whether the planted node was flagged.
set -euo pipefail
cd "$(dirname "$0")/.."
result=crates/memsight/tests/data/run-thorough.json
full=1000,10000
summaries=100000
keep=
while (($#)); do
  case $1 in
    --result) result=$2; shift 2 ;;
    --full) full=$2; shift 2 ;;
    --summaries) summaries=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--result FILE] [--full N,…] [--summaries N,…] [--keep DIR]" >&2; exit 2 ;;
  esac
done
cargo build --release --locked -q
bin=$PWD/target/release/memsight
work=${keep:-$(mktemp -d)}
[[ -n $keep ]] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work"

# make KIND N DIR: N nodes under DIR, each a full result (KIND=full) or a summary (KIND=summary,
# cloned from SUMMARY, a real node's summary).
make() {
  python3 - "$1" "$2" "$3" "$result" "${SUMMARY:-}" <<'EOF'
import json, os, random, sys
kind, n, out, result, summary = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
random.seed(42)
base = json.load(open(summary if kind == "summary" else result))

def scale_summaries(v, f):
    # Every median, CI, extreme and sample of a bandwidth summary, times f.
    if isinstance(v, dict):
        is_summary = "median" in v and "ci_low" in v
        for k, x in v.items():
            if is_summary and k in ("median", "ci_low", "ci_high", "min", "max", "mean"):
                v[k] = x * f
            elif is_summary and k == "samples":
                v[k] = [s * f for s in x]
            else:
                scale_summaries(x, f)
    elif isinstance(v, list):
        for x in v:
            scale_summaries(x, f)

for i in range(n):
    f = 0.8 if i == 7 else 1 + random.uniform(-0.02, 0.02)
    host = f"node{i:06d}"
    d = os.path.join(out, host)
    os.makedirs(d, exist_ok=True)
    if kind == "full":
        doc = json.loads(json.dumps(base))
        doc["environment"]["hostname"] = host
        scale_summaries(doc["results"]["bandwidth"], f)
        json.dump(doc, open(os.path.join(d, "run.json"), "w"))
    else:
        s = json.loads(json.dumps(base))
        s["host"] = host
        for fig in s["figures"]:
            if fig["key"].startswith("bandwidth/"):
                fig["value"] *= f
                if "ci" in fig:
                    fig["ci"] = [c * f for c in fig["ci"]]
        json.dump(s, open(os.path.join(d, "run.summary.json"), "w"))
EOF
}

host=$(hostname -s)
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
day=$(date -u +%F)
out=bench/results/$day-fleet-scale-$host.md
rows=()
# measure LABEL DIR [ARGS…]: one `memsight fleet` of DIR (with its Parquet table and page), its
# wall time, peak RSS and verdict; then the terminal report (untimed) and a DuckDB query over the
# table for the nodes 10% below their group's median bandwidth.
measure() {
  local label=$1 dir=$2; shift 2
  local bytes; bytes=$(du -sb "$dir" | cut -f1)
  local nodes; nodes=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | wc -l)
  /usr/bin/time -f "%e %M" -o "$work/time" "$bin" fleet --json --no-progress \
    --parquet "$work/fleet.parquet" --html "$work/fleet.html" "$@" "$dir" >"$work/fleet.json" || true
  read -r wall rss <"$work/time"
  local found flagged
  found=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["results"]["members"]))' "$work/fleet.json")
  flagged=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(sorted({o["member"] for o in d["results"]["outliers"]})) or "none")' "$work/fleet.json")
  "$bin" fleet --no-progress "$@" "$dir" >"$work/fleet.txt" 2>/dev/null || true
  local lines; lines=$(wc -l <"$work/fleet.txt")
  local sql=n/a
  if python3 -c 'import duckdb' 2>/dev/null; then
    sql=$(python3 bench/fleet-sql.py "$work/fleet.parquet")
  fi
  local pq html; pq=$(stat -c %s "$work/fleet.parquet"); html=$(stat -c %s "$work/fleet.html")
  echo "fleet-scale: $label: $nodes nodes, $bytes B, ${wall} s, peak RSS ${rss} KiB, found $found, flagged $flagged, Parquet $pq B, page $html B, $lines terminal lines, DuckDB: $sql" >&2
  rows+=("| $label | $nodes | $((bytes / 1048576)) MiB | $((bytes / nodes)) B | $wall s | $((rss / 1024)) MiB | $found | $flagged | $((pq / 1024)) KiB | $((html / 1024)) KiB | $lines | $sql |")
}

# shot PNG: the last fleet page drawn by headless Chromium (the top 1280 × 4000 pixels).
shot() {
  command -v chromium >/dev/null || { echo "fleet-scale: no chromium: no screenshot" >&2; return 0; }
  local profile; profile=$(mktemp -d)
  timeout 300 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1280,4000 \
    --screenshot="$PWD/$1" "file://$work/fleet.html" >/dev/null 2>&1 || echo "fleet-scale: chromium failed" >&2
  rm -rf "$profile"
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=, read -ra fulls <<<"$full"
for n in "${fulls[@]}"; do
  [[ -n $n ]] || continue
  make full "$n" "$work/full-$n"
  measure "full results" "$work/full-$n"
  if [[ $n == "${fulls[0]}" ]]; then
    "$bin" fleet --json --no-progress --summarise "$work/full-$n" >/dev/null || true
    find "$work/full-$n" -name run.json -delete
    measure "summaries written by --summarise" "$work/full-$n"
    SUMMARY=$work/full-$n/node000000/run.summary.json
    cp "$SUMMARY" "$work/one.summary.json"
  fi
  rm -rf "$work/full-$n"
done
IFS=, read -ra sums <<<"$summaries"
for n in "${sums[@]}"; do
  [[ -n $n ]] || continue
  if [[ -z ${SUMMARY:-} || ! -f $work/one.summary.json ]]; then
    make full 1 "$work/one"
    "$bin" fleet --json --no-progress --summarise "$work/one" >/dev/null || true
    cp "$work/one/node000000/run.summary.json" "$work/one.summary.json"
  fi
  SUMMARY=$work/one.summary.json make summary "$n" "$work/sum-$n"
  measure "summaries" "$work/sum-$n"
  shot "bench/results/$day-fleet-page-$n.png"
  [[ -n $keep ]] || rm -rf "$work/sum-$n"
done

{
  echo "# memsight fleet at scale, $host, $day"
  echo
  echo "- CPU: $cpu ($(nproc) CPUs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  echo "- load before: $load; memsight at $(git rev-parse --short HEAD)"
  echo "- nodes made from \`$result\` ($(stat -c %s "$result") B), bandwidth jittered ±2%, node 7 (\`node000007\`) 20% slower"
  echo "- command: \`memsight fleet --json --parquet FILE --html FILE DIR\`; wall time and peak RSS from /usr/bin/time"
  echo "- then, untimed: the terminal report's lines (\`memsight fleet DIR\`), and the hosts a DuckDB query over the Parquet table finds 10% below their group's median bandwidth"
  echo
  echo "| read from | nodes | on disk | per node | wall | peak RSS | members found | flagged | Parquet | page | terminal lines | DuckDB finds |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$out"
echo "fleet-scale: record in $out" >&2
