#!/usr/bin/env python3
"""Checks the findings of memsight result files against what they cite.

Usage: scripts/check-findings.py RESULT.json...
       scripts/check-findings.py --self-test

A finding object (`text`, `cites`, `evidence`) that cites a figure resting on disturbed samples
must say so: its evidence is `mixed` or `disturbed` and its text starts with the ⚠ mark. One whose
cited figures are all clean carries no mark. Advice (a finding under an `advice` or `recommendation` key) on doubtful
evidence must read "unconfirmed". A comparative sentence must follow its numbers: one that says
two figures differ ("slower", "rises", "more than", "two coherence transactions", ...) and not
that they are the same is refused when it prints a ratio whose interval holds 1 (the interval it
prints beside it, else the one the confidence intervals of the two cited figures whose ratio it
is allow, else a ratio that prints as 1.00×), or when the figures of one unit it cites all lie
within each other's confidence intervals (`ci` of each cited figure). Findings kept as bare sentences (suites whose findings cite no sampled figure, or files
before schema 4) are counted, not judged. Prints one line per failure, then a count per file and
the closing line `N passed, M failed`; exits 1 on any failure.
"""

import itertools
import json
import re
import sys

MARK = "⚠"
# Words that say two figures differ, and words that say they do not.
# ("more than 20%" is a threshold, not a comparison of two figures.)
DIFFERENCE = re.compile(r"\b(slower|faster|(?:more|less|higher|lower) than(?!\s*[\d±])|twice|"
                        r"costs? more|costs? less|two coherence transactions|beyond the noise|"
                        r"rises|longer)\b")
SAME = re.compile(r"\b(the same|within the noise|no faster|no slower|about what|about the same|"
                  r"alike|within \d+% of)\b")
RATIO = re.compile(r"(\d+(?:\.\d+)?)\s*×")


def overlap(a, b):
    return a["ci"][0] <= b["ci"][1] and b["ci"][0] <= a["ci"][1]


# The interval a sentence prints beside its ratio ("1.01× ... (0.98–1.04 within the figures'
# confidence intervals)").
PRINTED = re.compile(r"(\d+(?:\.\d+)?)[–-](\d+(?:\.\d+)?) within the figures' confidence intervals")


def interval_of(ratio, decimals, cites):
    """The interval the cited figures' confidence intervals allow a printed ratio: from the two
    cited figures of one unit whose ratio prints as it (either way round), or None."""
    tol = 0.5 * 10 ** -decimals + 1e-9
    for a, b in itertools.permutations([c for c in cites if c.get("ci")], 2):
        if a["unit"] == b["unit"] and b["value"] and abs(a["value"] / b["value"] - ratio) <= tol:
            return a["ci"][0] / b["ci"][1], a["ci"][1] / b["ci"][0]
    return None


def contradiction(f):
    """Why a finding's comparative clause contradicts its numbers, or None."""
    text = f["text"]
    d = DIFFERENCE.search(text)
    differs = d and not SAME.search(text) and "unconfirmed" not in text
    for m in RATIO.finditer(text):
        if not differs:
            break
        ratio, decimals = float(m.group(1)), len(m.group(1).partition(".")[2])
        printed = PRINTED.search(text, m.end(), m.end() + 160)
        iv = ((float(printed.group(1)), float(printed.group(2))) if printed
              else interval_of(ratio, decimals, f.get("cites", [])))
        if iv and iv[0] <= 1.0 <= iv[1]:
            return f"prints {m.group(0)}, within the noise ({iv[0]:.2f}–{iv[1]:.2f}), but says '{d.group(0)}'"
        if iv is None and round(ratio, 2) == 1.0:
            return f"prints {m.group(0)} but says '{d.group(0)}'"
    # (A finding already marked unconfirmed says its comparison may not hold.)
    if not d or SAME.search(text) or "unconfirmed" in text:
        return None
    sampled = [c for c in f.get("cites", []) if c.get("ci")]
    for unit, group in itertools.groupby(sorted(sampled, key=lambda c: c["unit"]), key=lambda c: c["unit"]):
        group = list(group)
        if len(group) >= 2 and all(overlap(a, b) for a, b in itertools.combinations(group, 2)):
            values = ", ".join(f"{c['value']:.3g}" for c in group)
            return (f"says '{d.group(0)}' of {unit} figures within each other's confidence "
                    f"intervals ({values})")
    return None


def findings(value, under=None):
    """Yields (key the list sits under, finding) for every finding object or sentence."""
    if isinstance(value, dict):
        if "text" in value and "evidence" in value:
            yield under, value
            return
        for key, v in value.items():
            if key in ("findings", "advice", "recommendation") and isinstance(v, list):
                for f in v:
                    if isinstance(f, str):
                        yield key, f
                    else:
                        yield from findings(f, key)
            else:
                yield from findings(v, under)
    elif isinstance(value, list):
        for v in value:
            yield from findings(v, under)


def judge(under, f):
    """What is wrong with one finding object, or None."""
    disturbed = [c for c in f.get("cites", []) if c.get("disturbed")]
    doubtful = f["evidence"] in ("mixed", "disturbed")
    text = f["text"]
    if disturbed and not doubtful:
        return f"cites {len(disturbed)} disturbed figure(s) but its evidence is {f['evidence']}"
    if disturbed and not text.startswith(MARK):
        return "cites disturbed figures but its text carries no ⚠"
    if not disturbed and text.startswith(MARK + " ") and f["evidence"] == "clean":
        return "rests on clean figures but carries ⚠"
    if under in ("advice", "recommendation") and doubtful and "unconfirmed" not in text:
        return "advice on disturbed evidence not marked unconfirmed"
    return contradiction(f)


def self_test():
    """The rules on made-up findings: each case, and what the check must say of it."""
    def cite(value, lo, hi, unit="ns"):
        return {"what": "x", "value": value, "unit": unit, "disturbed": False, "ci": [lo, hi]}
    cases = [
        ("a handoff takes 1.01× one atomic transfer: a read miss and then an upgrade, two coherence transactions a turn",
         [cite(30.0, 29.5, 30.6), cite(30.3, 29.8, 30.9)], True),
        ("a handoff takes 1.01× one atomic transfer (0.98–1.04): the same cost within the noise",
         [cite(30.0, 29.5, 30.6), cite(30.3, 29.8, 30.9)], False),
        ("a handoff takes 1.90× one atomic transfer: two coherence transactions a turn",
         [cite(30.0, 29.5, 30.6), cite(57.0, 56.0, 58.0)], False),
        ("persisting makes such writes 1.0× slower", [], True),
        ("node 1 reads slower than node 0", [cite(100.0, 95.0, 110.0), cite(104.0, 99.0, 109.0)], True),
        ("node 1 reads slower than node 0", [cite(100.0, 95.0, 101.0), cite(140.0, 130.0, 150.0)], False),
        ("memory bandwidth 30 GB/s, latency 100 ns, more than the probes' spread",
         [cite(30.0, 29.0, 31.0, "GB/s"), cite(100.0, 99.0, 101.0)], False),
        ("the rounds lay more than 20% apart", [cite(100.0, 95.0, 110.0), cite(104.0, 99.0, 109.0)], False),
        # Several pairs: the ratio printed with its interval, one pair far from the other.
        ("a handoff takes 1.01× one atomic transfer (median over 2 pair(s), 0.97–1.05 within the figures' confidence intervals): two coherence transactions a turn",
         [cite(30.0, 29.5, 30.6), cite(30.3, 29.8, 30.9), cite(90.0, 88.0, 92.0), cite(91.0, 89.0, 93.0)], True),
        ("latency rises 1.0× from 4 KiB (1.52 ns) to 32 KiB (1.53 ns)",
         [cite(1.52, 1.45, 1.64), cite(1.53, 1.46, 1.62)], True),
        ("latency rises 66.3× from 4 KiB (1.52 ns) to 64 MiB (100.9 ns)",
         [cite(1.521, 1.453, 1.643), cite(100.88, 98.13, 104.98)], False),
    ]
    bad = 0
    for text, cites, refused in cases:
        why = contradiction({"text": text, "cites": cites, "evidence": "clean"})
        if (why is not None) != refused:
            bad += 1
            print(f"self-test: {'missed' if refused else 'refused'}: {text} ({why})")
    print(f"self-test: {len(cases) - bad} of {len(cases)} cases as expected")
    return 1 if bad else 0


def main(paths):
    passed = failed = 0
    for path in paths:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"{path}: not a result ({e})")
            continue
        objects = sentences = marked = 0
        for under, f in findings(doc.get("results", {})):
            if isinstance(f, str):
                sentences += 1
                continue
            objects += 1
            marked += f["evidence"] in ("mixed", "disturbed")
            why = judge(under, f)
            if why:
                failed += 1
                print(f"FAIL {path}: {why}: {f['text'][:160]}")
            else:
                passed += 1
        print(
            f"{path}: {objects} finding object(s), {marked} marked as resting on disturbed samples; "
            f"{sentences} sentence(s) not judged"
        )
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main(sys.argv[1:]))
