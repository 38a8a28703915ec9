#!/usr/bin/env python3
"""The size rules of the workspace, checked (CI runs this; a violation fails the build).

1. No source file over 700 lines (tests/ included: a test file that long wants splitting too).
2. No function over 80 lines outside test code, unless the line just above its `fn` (or above its
   attributes) is a comment starting `// long:` that says why it is one piece.
3. The binary crate (crates/memsight/src) under 6,000 lines: it holds flags, dispatch and
   rendering; anything it grows beyond that belongs in a library crate.

A function's length runs from its `fn` line to its closing brace. Test code is any module behind
`#[cfg(test)]`, files under tests/, and files named tests.rs or *_tests.rs (test modules kept apart).

Usage: scripts/check-size.py [REPO] [--list]   (exit 0 clean, 1 on a violation; --list prints
every function over the limit, excused or not)
"""
import pathlib
import re
import sys

MAX_FILE = 700
MAX_FN = 80
MAX_BINARY = 6000
FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)")


def code_only(line):
    """The line without its string literals and line comment, for brace counting."""
    line = re.sub(r'b?"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "' '", line)
    return line.split("//")[0]


def test_ranges(lines):
    """Line ranges (start, end) of modules behind #[cfg(test)]."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip().startswith("#[cfg(test)]"):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("#["):
                j += 1
            if j < len(lines) and re.match(r"\s*(pub\s+)?mod\s+\w+\s*\{", lines[j]):
                end = block_end(lines, j)
                out.append((i, end))
                i = end
        i += 1
    return out


def block_end(lines, start):
    """The line whose brace closes the block opened at or after `start`."""
    depth, opened = 0, False
    for k in range(start, len(lines)):
        c = code_only(lines[k])
        for ch in c:
            if ch == "{":
                depth += 1
                opened = True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return k
        if not opened and c.rstrip().endswith(";"):
            return k  # a declaration without a body
    return len(lines) - 1


def excused(lines, i):
    k = i - 1
    while k >= 0 and (lines[k].strip().startswith("#[") or lines[k].strip().startswith("///")):
        k -= 1
    while k >= 0 and lines[k].strip().startswith("//") and not lines[k].strip().startswith("// long:"):
        k -= 1
    return k >= 0 and lines[k].strip().startswith("// long:")


def long_functions(path):
    lines = path.read_text().splitlines()
    if "/tests/" in str(path) or path.name == "tests.rs" or path.name.endswith("_tests.rs"):
        return []  # test files: under tests/, or a `#[cfg(test)] mod …_tests;` of their own
    tests = test_ranges(lines)
    out = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m or any(a <= i <= b for a, b in tests):
            continue
        end = block_end(lines, i)
        n = end - i + 1
        if n > MAX_FN:
            out.append((m.group(1), i + 1, n, excused(lines, i)))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    listing = "--list" in sys.argv
    repo = pathlib.Path(args[0] if args else pathlib.Path(__file__).parent.parent)
    problems, binary = [], 0
    for f in sorted((repo / "crates").rglob("*.rs")):
        if "/target/" in str(f):
            continue
        rel = f.relative_to(repo)
        n = len(f.read_text().splitlines())
        if str(rel).startswith("crates/memsight/src/"):
            binary += n
        if n > MAX_FILE:
            problems.append(f"{rel}: {n} lines (at most {MAX_FILE}; split it)")
        for name, line, length, ok in long_functions(f):
            if listing:
                print(f"{length:4} {rel}:{line} {name}{'  (excused)' if ok else ''}")
            if not ok:
                problems.append(f"{rel}:{line}: fn {name} is {length} lines (at most {MAX_FN}, or a `// long:` comment saying why)")
    if binary >= MAX_BINARY:
        problems.append(f"crates/memsight/src: {binary} lines (under {MAX_BINARY}: move what is not flags, dispatch or rendering to a library crate)")
    for p in problems:
        print(f"check-size: {p}", file=sys.stderr)
    if not problems:
        print(f"check-size: files ≤ {MAX_FILE} lines, functions ≤ {MAX_FN} or excused, binary crate {binary} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
