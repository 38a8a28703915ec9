#!/usr/bin/env bash
# Metrics as operations use them, with the real components, on loopback:
#  1. three `memsight run --quick` results exported for Prometheus give identical label sets;
#  2. Debian's prometheus-node-exporter reads a textfile directory holding memsight-run.prom and
#     memsight-latency.prom (two commands) with no scrape error and both files' series;
#  3. the alerting rules shipped in packaging/examples/prometheus pass `promtool check rules` and
#     their unit tests (`promtool test rules`);
#  4. a real Prometheus scrapes that node_exporter, and every query of the Grafana dashboard
#     shipped in packaging/examples/grafana returns data.
#  5. the metrics unit's own command lines: an interrupted run exports complete 0, every system
#     call a run and its export make is one its SystemCallFilter= allows, and
#     `systemd-analyze security` scores it at most 2.0.
# Needs prometheus, prometheus-node-exporter and promtool (Debian: prometheus,
# prometheus-node-exporter), curl, python3, strace and systemd-analyze.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() {
  echo "test-metrics: FAIL: $*" >&2
  exit 1
}
for c in prometheus prometheus-node-exporter promtool curl python3 strace systemd-analyze; do
  command -v "$c" >/dev/null || fail "$c is not installed"
done
# The release binary (scripts/portable.sh: what the tarball and the packages hold; test.sh --full
# has built it by now), built when missing: not a second release compile of its own.
ms=$PWD/target/portable/$(uname -m)/memsight
[[ -x $ms ]] || bash scripts/portable.sh "$(uname -m)" >/dev/null || fail "the portable binary did not build"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "test-metrics: three quick runs give one label set"
# One directory a run: export --to refuses a second file of one command in a directory (the
# textfile collector would drop its duplicate samples).
for i in 1 2 3; do
  "$ms" run --quick --no-history --quiet --no-progress --out "$work/run$i" >/dev/null
  "$ms" export "$work/run$i" --format prometheus --to "$work/run$i/memsight-run.prom"
done
python3 - "$work"/run{1,2,3}/memsight-run.prom <<'PY' || fail "the label sets differ between runs"
import re, sys
# name{a="x",b="y"} value: the series without its value (memsight escapes no quote in a label).
SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? \S+$')
def labels(path):
    out = set()
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = SERIES.match(line.strip())
        assert m, f"not a sample line: {line!r}"
        pairs = tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or "")))
        out.add((m.group(1), pairs))
    return out
sets = [labels(p) for p in sys.argv[1:]]
for i, s in enumerate(sets[1:], 2):
    if s != sets[0]:
        print("run 1 only:", sorted(sets[0] - s)[:5], "run", i, "only:", sorted(s - sets[0])[:5])
        sys.exit(1)
print(f"  {len(sets[0])} series, the same in all three")
PY

echo "test-metrics: node_exporter reads two commands' textfiles without a scrape error"
tf=$work/textfile
mkdir "$tf"
cp "$work/run3/memsight-run.prom" "$tf/memsight-run.prom"
"$ms" latency --max-size 64MiB --min-samples 3 --point-budget 0.2 --no-tlb --json --no-progress >"$work/latency.json"
"$ms" export "$work/latency.json" --format prometheus --to "$tf/memsight-latency.prom"
ne_port=$(port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" \
  --collector.disable-defaults --collector.textfile --collector.textfile.directory="$tf" \
  >"$work/node-exporter.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$ne_port/metrics" >"$work/scrape" 2>/dev/null && break
  sleep 0.2
done
[[ -s $work/scrape ]] || fail "node_exporter did not answer: $(tail -3 "$work/node-exporter.log")"
grep -q '^node_textfile_scrape_error 0' "$work/scrape" || fail "node_textfile_scrape_error is not 0"
grep -q 'memsight_latency_seconds{command="run"' "$work/scrape" || fail "the run's series are missing"
grep -q 'memsight_latency_seconds{command="latency"' "$work/scrape" || fail "the latency command's series are missing"
if grep -iE 'collected before|error' "$work/node-exporter.log" | grep -v 'level=info' >/dev/null; then
  fail "node_exporter logged errors: $(grep -iE 'collected before|error' "$work/node-exporter.log" | head -3)"
fi
echo "  $(grep -c '^memsight_' "$work/scrape") memsight samples from two files, no error"

echo "test-metrics: the unit's commands: an interrupted run exports complete 0; the call filter allows every call"
unit=packaging/systemd/memsight-metrics.service
# Its lines as systemd runs them, the binary being this one and the state directory a scratch one.
unit_cmd() {
  sed -n "s|^$1=||p" "$unit" | grep -v '^+' | sed -e "s|/usr/bin/memsight|$ms|g" -e "s|/var/lib/memsight|$work/state|g"
}
mkdir -p "$work/state"
start=$(unit_cmd ExecStart)
export_cmd=$(unit_cmd ExecStopPost)
[[ -n $start && -n $export_cmd ]] || fail "the unit has no ExecStart or unprivileged ExecStopPost"
# A run stopped while it measures (the unit's timeout, a shutdown) exits 130 with its partial
# result, and the export, an ExecStopPost that runs whatever the exit, says complete 0.
timeout -s INT 3 $start && fail "the run was not stopped"
$export_cmd || fail "the export of an interrupted run failed"
grep -q '^memsight_result_complete{command="run"} 0$' "$work/state/memsight-run.prom" ||
  fail "the interrupted run did not export complete 0"
# systemd kills a unit whose process makes a call outside SystemCallFilter=: trace a whole run
# and its export, and hold every call against the filter as this systemd expands it.
strace -f -qq -c -o "$work/calls.run" $start || fail "the traced run failed"
strace -f -qq -c -o "$work/calls.export" $export_cmd || fail "the traced export failed"
python3 - "$unit" "$work"/calls.run "$work"/calls.export <<'PY' || fail "the unit's SystemCallFilter= refuses a call memsight makes"
import subprocess, sys
groups = {}
def expand(name):
    if not name.startswith("@"):
        return {name}
    if name not in groups:
        out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True).stdout
        groups[name] = set()
        words = (l.strip() for l in out.splitlines()[1:])
        groups[name] = set().union(*(expand(w) for w in words if w and not w.startswith("#")))
    return groups[name]
allowed = set()
for line in open(sys.argv[1]):
    if line.startswith("SystemCallFilter="):
        spec = line.split("=", 1)[1].split()
        deny = spec[0].startswith("~")
        names = set().union(*(expand(n.lstrip("~")) for n in spec))
        allowed = allowed - names if deny else allowed | names
used = set()
for path in sys.argv[2:]:
    for line in open(path).read().splitlines()[2:]:
        w = line.split()
        if w and not w[-1].startswith("-") and w[-1] != "total":
            used.add(w[-1])
refused = sorted(used - allowed)
print(f"  {len(used)} distinct calls, all allowed" if not refused else f"  refused: {refused}")
sys.exit(1 if refused else 0)
PY
(cd "$work" && systemd-analyze security --offline=true --threshold=20 "$OLDPWD/$unit") >"$work/security.log" 2>&1 ||
  { tail -3 "$work/security.log" >&2; fail "systemd-analyze security scores the unit above 2.0"; }
echo "  $(grep -o 'exposure level.*' "$work/security.log")"

echo "test-metrics: the alerting rules pass promtool's checks and unit tests"
(cd packaging/examples/prometheus && promtool check rules memsight-alerts.yml && promtool test rules memsight-alerts.test.yml) >"$work/promtool.log" 2>&1 ||
  { cat "$work/promtool.log" >&2; fail "promtool"; }

echo "test-metrics: every dashboard query returns data from a real Prometheus"
pr_port=$(port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$ne_port']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$pr_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
query() { curl -sf --get "http://127.0.0.1:$pr_port/api/v1/query" --data-urlencode "query=$1"; }
ready=
for _ in $(seq 100); do
  if query 'memsight_result_info' 2>/dev/null | grep -q '"command"'; then ready=1; break; fi
  sleep 0.3
done
[[ -n $ready ]] || fail "Prometheus has no memsight series: $(tail -3 "$work/prometheus.log")"
python3 - "$pr_port" packaging/examples/grafana/memsight-dashboard.json <<'PY' || fail "a dashboard query returned no data"
import json, sys, urllib.parse, urllib.request
port, path = sys.argv[1], sys.argv[2]
dash = json.load(open(path))
bad = 0
for p in dash["panels"]:
    for t in p.get("targets", []):
        expr = t["expr"].replace("$instance", ".*")
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        r = json.load(urllib.request.urlopen(url))
        n = len(r["data"]["result"]) if r.get("status") == "success" else 0
        print(f"  {n:3} series  {p['title']}")
        bad += n == 0
sys.exit(1 if bad else 0)
PY
echo "test-metrics: passed"
