#!/usr/bin/env python3
"""Formatting, checked on every Rust file of the workspace.

`cargo fmt --check` formats only the files it reaches from each crate's roots through `mod`
lines, and a module declared inside a macro is not reached (rust-lang/rustfmt#3253): such a file
is never checked and its formatting drifts unseen. This runs `cargo fmt --all -- --check
--verbose`, fails as it fails, and also fails when a Rust file tracked under crates/ is not among
the files rustfmt names.

Usage: scripts/check-format.py [REPO]   (exit 0 clean, 1 misformatted or unreached)
"""
import pathlib
import subprocess
import sys


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    run = subprocess.run(
        ["cargo", "fmt", "--all", "--", "--check", "--verbose"],
        cwd=repo, capture_output=True, text=True,
    )
    reached = set()
    for line in run.stdout.splitlines() + run.stderr.splitlines():
        if line.startswith("Formatting "):
            reached.add(pathlib.Path(line[len("Formatting "):].strip()).resolve())
    diff = "\n".join(l for l in run.stdout.splitlines() if not l.startswith("Formatting "))
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--", "crates/*.rs"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    files = [repo / f for f in tracked if f]
    unreached = sorted(str(f.relative_to(repo)) for f in files if f.resolve() not in reached)
    failed = False
    if run.returncode != 0:
        sys.stdout.write(diff + "\n" + run.stderr)
        print("check-format: cargo fmt --check found misformatted code (run `cargo fmt --all`)")
        failed = True
    for f in unreached:
        print(f"check-format: {f}: rustfmt never reaches it (declare its module with a plain "
              "`mod` line, not inside a macro)")
        failed = True
    if not files:
        print("check-format: no tracked Rust files under crates/ (run it in the repository)")
        failed = True
    if not failed:
        print(f"check-format: {len(files)} Rust files formatted and all reached by rustfmt")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
