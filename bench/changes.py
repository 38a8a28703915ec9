#!/usr/bin/env python3
"""Precision and recall of `memsight history --changes` on this host's own series, judged the
way the Hunter paper (Fleming et al., ICPE 2023) judges change-point detection: real series
with steps of known size planted at known runs.

    bench/changes.py HISTORY.sqlite [RUNS]

HISTORY is a history of quick runs of one machine (bench/baseline.sh leaves one); the first
RUNS complete runs (default: all) are the series. First every summary figure's series is read
as it is: any change found there is counted (a real move of the host, or a false alarm). Then,
for each step size and position, a copy of the history gets every figure's values from that
run on moved by the step, the worse way (bandwidth down, latency up), and `history --changes`
is run on it: a planted step found within one run of where it was planted is a true positive,
any other change a false positive, a planted step not found a false negative.
"""
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

MS = str(Path(__file__).resolve().parent.parent / "target/release/memsight")
STEPS = [0.05, 0.10, 0.20]


def changes(db, key=None):
    cmd = [MS, "--json", "history", "--changes", "--db", str(db)]
    if key:
        cmd += ["--key", key]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["figures"]


def runs_of(db, limit):
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute(
        "SELECT id FROM runs WHERE command='run' AND complete=1 ORDER BY started, id")]
    con.close()
    return ids[:limit] if limit else ids


def trimmed(src, keep, dst):
    """A copy of the history holding only the runs `keep`."""
    shutil.copy(src, dst)
    con = sqlite3.connect(dst)
    con.execute("PRAGMA foreign_keys = ON")
    con.execute(f"DELETE FROM runs WHERE id NOT IN ({','.join(map(str, keep))})")
    con.execute(f"DELETE FROM figures WHERE run_id NOT IN ({','.join(map(str, keep))})")
    con.commit()
    con.close()


def plant(db, ids, at, step, better):
    """Every figure's values from run index `at` on moved by `step` the worse way."""
    con = sqlite3.connect(db)
    later = ",".join(map(str, ids[at:]))
    for key, higher in better.items():
        f = 1 - step if higher else 1 + step
        con.execute(f"UPDATE figures SET value = value * ? WHERE key = ? AND run_id IN ({later})",
                    (f, key))
    con.commit()
    con.close()


def main():
    src = Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    ids = runs_of(src, limit)
    n = len(ids)
    tmp = Path(tempfile.mkdtemp())
    base = tmp / "base.sqlite"
    trimmed(src, ids, base)
    found = changes(base)
    # Which way is better: bandwidth (GB/s) higher, everything else lower.
    better = {f["key"]: f["unit"].startswith("GB/s") for f in found}
    as_is = sum(len(f["changes"]) for f in found)
    print(f"# {len(found)} summary figures, {n} runs each")
    print(f"as recorded: {as_is} change(s) in {len(found)} series"
          + "".join(f"\n  {f['key']}: run index {[ids.index(c['run']) for c in f['changes']]}"
                    f" {[round(100 * c['change'], 1) for c in f['changes']]}%"
                    for f in found if f["changes"]))
    positions = [n // 3, n // 2, 2 * n // 3]
    print("| step | planted at | series | found ±1 | missed | other changes | precision | recall |")
    print("|---|---|---|---|---|---|---|---|")
    totals = {}
    for step in STEPS:
        for at in positions:
            db = tmp / f"plant-{step}-{at}.sqlite"
            shutil.copy(base, db)
            plant(db, ids, at, step, better)
            tp = fn = fp = 0
            for f in changes(db):
                idx = [ids.index(c["run"]) for c in f["changes"]]
                hit = [i for i in idx if abs(i - at) <= 1]
                tp += bool(hit)
                fn += not hit
                fp += len(idx) - (1 if hit else 0)
            t = totals.setdefault(step, [0, 0, 0])
            t[0] += tp
            t[1] += fn
            t[2] += fp
            prec = tp / (tp + fp) if tp + fp else float("nan")
            print(f"| {100 * step:.0f}% | run {at} of {n} | {tp + fn} | {tp} | {fn} | {fp} | "
                  f"{prec:.2f} | {tp / (tp + fn):.2f} |")
    print()
    print("| step | precision | recall |")
    print("|---|---|---|")
    for step, (tp, fn, fp) in totals.items():
        print(f"| {100 * step:.0f}% | {tp / (tp + fp):.3f} ({tp} of {tp + fp}) | "
              f"{tp / (tp + fn):.3f} ({tp} of {tp + fn}) |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
