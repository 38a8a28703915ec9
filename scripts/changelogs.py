#!/usr/bin/env python3
"""The packages' changelogs, made from CHANGELOG.md (Keep a Changelog): debian/changelog and the
%changelog of packaging/rpm/memsight.spec, with the spec's Version taken from Cargo.toml.

    scripts/changelogs.py           rewrite both files
    scripts/changelogs.py --check   say which is out of date and exit 1 (tests/changelog.rs)

The maintainer who signs the entries is debian/control's Maintainer; every release gets Debian
revision 1 and RPM release 1. Entries are the release's own text: each bullet one entry, its
section ("Added", "Fixed", ...) before it when there is one.
"""
import datetime
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging/rpm/memsight.spec"
DEB_CHANGELOG = ROOT / "debian/changelog"


def cargo_version():
    text = (ROOT / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


def maintainer():
    text = (ROOT / "debian/control").read_text()
    return re.search(r"^Maintainer: (.+)$", text, re.M).group(1).strip()


def releases():
    """(version, date, [entry]) for every release, newest first; Unreleased is left out."""
    out, current = [], None
    section = None
    for line in (ROOT / "CHANGELOG.md").read_text().splitlines():
        head = re.match(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?", line)
        if head:
            current = None
            if head.group(1) != "Unreleased":
                if not head.group(2):
                    sys.exit(f"CHANGELOG.md: release {head.group(1)} has no date")
                current = (head.group(1), datetime.date.fromisoformat(head.group(2)), [])
                out.append(current)
            section = None
            continue
        if current is None:
            continue
        entries = current[2]
        if line.startswith("### "):
            section = line[4:].strip()
        elif line.startswith("- "):
            entries.append((f"{section}: " if section else "") + line[2:].strip())
        elif line.startswith("  ") and line.strip() and entries:
            entries[-1] += " " + line.strip()
        elif line.strip() and not line.startswith("["):
            entries.append(line.strip())
    if not out:
        sys.exit("CHANGELOG.md names no release")
    return out


def plain(text):
    """Markdown's code spans and links as plain text."""
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    return text.replace("`", "")


def debian(rels, who):
    blocks = []
    for version, date, entries in rels:
        lines = [f"memsight ({version}-1) unstable; urgency=medium", ""]
        for e in entries:
            lines += textwrap.wrap(plain(e), 78, initial_indent="  * ", subsequent_indent="    ")
        stamp = datetime.datetime.combine(date, datetime.time(12), datetime.timezone.utc)
        lines += ["", f" -- {who}  {stamp.strftime('%a, %d %b %Y %H:%M:%S +0000')}"]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def rpm(rels, who):
    blocks = []
    for version, date, entries in rels:
        lines = [f"* {date.strftime('%a %b %d %Y')} {who} - {version}-1"]
        for e in entries:
            # (A % would start a macro in a spec.)
            lines += textwrap.wrap(plain(e).replace("%", "%%"), 78, initial_indent="- ", subsequent_indent="  ")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def spec_with(rels, who):
    text = SPEC.read_text()
    text = re.sub(r"^Version:(\s+)\S+$", lambda m: f"Version:{m.group(1)}{cargo_version()}", text, count=1, flags=re.M)
    head, sep, _ = text.partition("\n%changelog\n")
    if not sep:
        sys.exit(f"{SPEC}: no %changelog section")
    return head + sep + rpm(rels, who)


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: scripts/changelogs.py [--check]")
    rels, who = releases(), maintainer()
    if rels[0][0] != cargo_version():
        sys.exit(f"CHANGELOG.md's latest release is {rels[0][0]}, Cargo.toml says {cargo_version()}")
    stale = []
    for path, text in ((DEB_CHANGELOG, debian(rels, who)), (SPEC, spec_with(rels, who))):
        if path.exists() and path.read_text() == text:
            continue
        if check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
    if stale:
        sys.exit(f"out of date with CHANGELOG.md: {', '.join(stale)} (run scripts/changelogs.py)")


if __name__ == "__main__":
    main()
