#!/usr/bin/env python3
"""Checks the findings of memsight result files against what they cite.

Usage: scripts/check-findings.py RESULT.json...

A finding object (`text`, `cites`, `evidence`) that cites a figure resting on disturbed samples
must say so: its evidence is `mixed` or `disturbed` and its text starts with the ⚠ mark. One whose
cited figures are all clean carries no mark. Advice (a finding under an `advice` or `recommendation` key) on doubtful
evidence must read "unconfirmed". Findings kept as bare sentences (suites whose findings cite no
sampled figure, or files before schema 4) are counted, not judged. Prints one line per failure,
then a count per file and the closing line `N passed, M failed`; exits 1 on any failure.
"""

import json
import sys

MARK = "⚠"


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
    return None


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
    sys.exit(main(sys.argv[1:]))
