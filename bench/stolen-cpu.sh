#!/usr/bin/env bash
# Does a stolen CPU make memory look faster? (a benchmark, not a test)
#
# Alternates, ROUNDS times (default 5), `memsight bandwidth --test read` on 2 CPUs undisturbed and
# with a competing process pinned to the second CPU that is busy 3 ms of every 10 ms (the case
# that once read 1.4–1.8× too fast when teams were timed per thread). Prints per round the
# median, the highest kept sample, the samples dropped and any shortfall, then the medians over
# rounds and the highest disturbed sample ÷ the undisturbed median of the same round (goal: ≤ 1.30).
# Usage: [ROUNDS=5] [SIZE=256M] bench/stolen-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p memsight
ms=target/release/memsight
cpus=$(python3 -c 'import os; c=sorted(os.sched_getaffinity(0)); print(",".join(map(str,c[:2])) if len(c)>1 else "")')
[[ -n $cpus ]] || { echo "needs 2 CPUs" >&2; exit 2; }
victim=${cpus#*,}
out=$(mktemp -d)
trap 'rm -rf "$out"; [[ -n ${hog:-} ]] && kill "$hog" 2>/dev/null || true' EXIT
echo "uptime: $(uptime)"
for r in $(seq 1 "${ROUNDS:-5}"); do
  $ms --json --no-progress bandwidth --test read --cpus "$cpus" --size "${SIZE:-256M}" >"$out/calm-$r.json"
  taskset -c "$victim" python3 -c '
import time
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < 0.003:
        pass
    time.sleep(0.007)' &
  hog=$!
  sleep 0.2
  $ms --json --no-progress bandwidth --test read --cpus "$cpus" --size "${SIZE:-256M}" >"$out/stolen-$r.json"
  kill "$hog"; wait "$hog" 2>/dev/null || true; hog=
done
python3 - "$out" "${ROUNDS:-5}" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, r):
    p = json.load(open(f"{d}/{kind}-{r}.json"))["results"]["points"][0]["program_gbs"]
    return p
calm, stolen, ratio = [], [], []
print(f"{'round':<6}{'calm median':>12}{'calm max':>10}{'stolen median':>15}{'stolen max':>12}{'max/calm':>10}{'dropped':>9}  shortfall")
for r in range(1, rounds + 1):
    c, s = load("calm", r), load("stolen", r)
    calm.append(c["median"]); stolen.append(s["median"])
    ratio.append(max(s["samples"]) / c["median"])
    sf = s.get("shortfall")
    print(f"{r:<6}{c['median']:>12.1f}{max(c['samples']):>10.1f}{s['median']:>15.1f}{max(s['samples']):>12.1f}{ratio[-1]:>10.2f}{s['dropped']:>9}  {json.dumps(sf) if sf else '-'}")
print(f"GB/s (program bytes, read, 2 threads), medians over rounds: undisturbed {statistics.median(calm):.1f}, stolen {statistics.median(stolen):.1f}; "
      f"highest stolen sample ÷ its round's undisturbed median: {max(ratio):.2f} (goal ≤ 1.30; the machine's bandwidth swings between rounds, so each round is its own reference)")
PY
echo "uptime: $(uptime)"
