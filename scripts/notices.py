#!/usr/bin/env python3
"""The third-party notices: what memsight's binaries compile in, and what its source holds.

    scripts/notices.py third-party ABOUT.json [HWLOC-COPYING] > THIRD-PARTY.md
        ABOUT.json is cargo-about's JSON for the memsight binary (packaging/notices/about.toml):
        every crate compiled in, grouped by licence text, then hwloc's notice (its COPYING, for
        the binaries that link it statically) and SQLite's dedication to the public domain.
    scripts/notices.py debian-copyright [--check]
        debian/copyright (DEP-5) for the source package: memsight, every crate of Cargo.lock
        (vendor/ of the source tarball) with its authors and licence, the SQLite source
        libsqlite3-sys carries, and one stand-alone paragraph per licence named.
    scripts/notices.py rpm-provides [--check]
        The spec's `Provides: bundled(crate(NAME)) = VERSION` lines (Fedora's rule for bundled
        code): every crate the packages' build links into the binary on the architectures the
        spec builds for, between the spec's two marker lines.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMON = Path("/usr/share/common-licenses")
# Licences Debian ships in /usr/share/common-licenses, by SPDX identifier.
IN_COMMON = {"Apache-2.0": "Apache-2.0", "MPL-2.0": "MPL-2.0", "CC0-1.0": "CC0-1.0",
             "LGPL-2.1-or-later": "LGPL-2.1"}
# Where a crate keeps the text of a licence it offers, by SPDX identifier.
LICENCE_FILES = {"MIT": ["LICENSE-MIT", "LICENSE.md", "LICENSE"], "BSD-2-Clause": ["LICENSE-BSD"],
                 "BSD-3-Clause": ["LICENSE", "LICENSE-BSD", "COPYING"], "BSL-1.0": ["LICENSE-BOOST", "LICENSE-BSL"],
                 "0BSD": ["LICENSE-0BSD"], "Unlicense": ["UNLICENSE"], "Zlib": ["LICENSE-ZLIB", "LICENSE-ZLIB.md", "LICENSE"],
                 "Unicode-3.0": ["LICENSE-UNICODE"], "MIT-0": ["LICENSE-MIT-0", "LICENSE"],
                 "LLVM-exception": ["LICENSE-Apache-2.0_WITH_LLVM-exception"]}


def third_party(about_path, hwloc_copying=None):
    about = json.loads(Path(about_path).read_text())
    out = ["# Third-party software in memsight", "",
           "memsight is licensed under the MIT licence or the Apache License 2.0, at your option",
           "(LICENSE, LICENSE-MIT, LICENSE-APACHE). Its binaries compile in the Rust crates below, each",
           "under the licence named (for a crate offered under several, the first of MIT, Apache-2.0,",
           "BSD, ISC, Zlib it offers), with the notice its authors ship. The portable and static",
           "binaries also link hwloc and SQLite, whose notices follow; the distribution packages link",
           "the system's. Made by cargo-about from this release's dependency tree.", "",
           "## Licences", ""]
    out += [f"- {o['name']} ({o['id']}): {o['count']} crate{'s' if o['count'] != 1 else ''}" for o in about["overview"]]
    for lic in about["licenses"]:
        users = ", ".join(f"{u['crate']['name']} {u['crate']['version']}" for u in lic["used_by"])
        out += ["", f"## {lic['name']}: {users}", "", "```text", lic["text"].strip("\n"), "```"]
    out += notices(about)
    out += ["", "## hwloc (BSD-3-Clause), linked statically into the portable and static binaries", ""]
    if hwloc_copying:
        out += ["```text", Path(hwloc_copying).read_text().strip("\n"), "```"]
    else:
        sys.exit("notices.py: hwloc's COPYING is needed for the binaries that link it")
    out += ["", "## SQLite (public domain), compiled into the portable and static binaries", "",
            "SQLite's authors have dedicated its source code to the public domain",
            "(https://www.sqlite.org/copyright.html); it carries no licence and no notice to keep."]
    return "\n".join(out) + "\n"


def notices(about):
    """The NOTICE files the compiled-in crates ship (Apache-2.0 section 4(d) asks that they go
    along), each distinct text once, with the crates that carry it."""
    texts = {}
    for c in about["crates"]:
        d = Path(c["package"]["manifest_path"]).parent
        for name in ("NOTICE", "NOTICE.txt", "NOTICE.md"):
            if (d / name).is_file():
                text = (d / name).read_text(errors="replace").strip("\n")
                texts.setdefault(text, []).append(f"{c['package']['name']} {c['package']['version']}")
    out = []
    for text, crates in texts.items():
        out += ["", f"## NOTICE of {', '.join(crates)}", "", "```text", text, "```"]
    return out


def dep5_expr(spdx):
    """An SPDX expression as DEP-5 writes it ("MIT/Apache-2.0" is an old spelling of OR)."""
    e = re.sub(r"\s*/\s*", " OR ", spdx.strip())
    e = e.replace("Apache-2.0 WITH LLVM-exception", "Apache-2.0-with-LLVM-exception")
    return e.replace(" OR ", " or ").replace(" AND ", " and ")


def licence_ids(expr):
    return {t for t in re.split(r"[\s()]+", expr) if t and t not in ("or", "and")}


def crate_text(dirs, ident):
    """The text of licence IDENT from the first crate that ships it, copyright lines left out."""
    key = "LLVM-exception" if ident == "Apache-2.0-with-LLVM-exception" else ident
    for d in dirs:
        for name in LICENCE_FILES.get(key, []):
            p = d / name
            if p.is_file():
                lines = [l.rstrip() for l in p.read_text(errors="replace").splitlines()]
                if key == "LLVM-exception":
                    # Only the exception: the Apache licence itself is in common-licenses.
                    start = next((i for i, l in enumerate(lines) if "LLVM Exceptions" in l), 0)
                    lines = lines[start:]
                lines = [l for l in lines if not re.match(r"\s*Copyright\b", l)]
                while lines and not lines[0].strip():
                    lines.pop(0)
                return "\n".join(lines).strip("\n")
    return None


def paragraph(ident, dirs):
    if ident in IN_COMMON:
        return [f"License: {ident}",
                f" On Debian systems, the complete text is in {COMMON / IN_COMMON[ident]}."]
    text = crate_text(dirs, ident)
    if text is None:
        sys.exit(f"notices.py: no crate ships the text of {ident}")
    body = [(" " + l) if l.strip() else " ." for l in text.splitlines()]
    if ident == "Apache-2.0-with-LLVM-exception":
        body = [" The Apache License 2.0 (/usr/share/common-licenses/Apache-2.0), with this exception:", " ."] + body
    return [f"License: {ident}"] + body


def cargo(*args):
    """Cargo's standard output for ARGS in this workspace, fetching any crate of Cargo.lock that
    cargo's cache lacks (a machine that only built memsight for its own target has not downloaded
    the crates other targets use; `CARGO_NET_OFFLINE=true` forbids the download). A failure is
    one line, cargo's own reason and what to do, never a traceback."""
    try:
        run = subprocess.run(["cargo", *args, "--locked"], cwd=ROOT, capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"notices.py: cannot start cargo ({e}): install Rust from https://rustup.rs")
    if run.returncode != 0:
        lines = [l.strip() for l in run.stderr.splitlines() if l.strip()]
        reason = next((l for l in lines if l.startswith("error")), lines[-1] if lines else "no message")
        sys.exit(f"notices.py: cargo {args[0]} failed ({reason}); the crates of Cargo.lock must be "
                 "in cargo's cache: run `cargo fetch --locked` on a machine that reaches crates.io")
    return run.stdout


def debian_copyright():
    meta = json.loads(cargo("metadata", "--format-version", "1"))
    mit = (ROOT / "LICENSE-MIT").read_text()
    out = ["Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
           "Upstream-Name: memsight",
           "Comment: vendor/ holds the crates memsight compiles, as cargo-vendor-filterer copies them",
           " (crates only other operating systems use are left as empty stubs).", "",
           "Files: *", f"Copyright: {copyright_line(mit)}", "License: MIT or Apache-2.0", ""]
    # Third-party programs the tests run, vendored unchanged under testdata/ with their licence.
    nhc = (ROOT / "testdata/nhc/LICENSE").read_bytes().decode("latin-1")  # its (c) sign is Latin-1
    nhc_copyright = ["2010-2022 Michael Jennings <mej@eterm.org>",
                     "2015 The Regents of the University of California, through Lawrence Berkeley"
                     " National Laboratory", "2021-2022 Triad National Security, LLC"]
    out += ["Files: testdata/nhc/*", "Copyright: " + "\n ".join(nhc_copyright),
            "License: BSD-3-Clause-LBNL", ""]
    ids, dirs_by_id = {"MIT", "Apache-2.0"}, {}
    for p in sorted(meta["packages"], key=lambda p: (p["name"], p["version"])):
        if p["source"] is None:
            continue
        expr = dep5_expr(p.get("license") or "")
        if not expr:
            sys.exit(f"notices.py: {p['name']} {p['version']} names no licence")
        d = Path(p["manifest_path"]).parent
        for i in licence_ids(expr):
            ids.add(i)
            dirs_by_id.setdefault(i, []).append(d)
        authors = p.get("authors") or [f"the {p['name']} authors"]
        out += [f"Files: vendor/{p['name']}-{p['version']}/*",
                "Copyright: " + "\n ".join(a.replace("\n", " ") for a in authors),
                f"License: {expr}", ""]
        if p["name"] == "libsqlite3-sys":
            out += [f"Files: vendor/{p['name']}-{p['version']}/sqlite3/*",
                    "Copyright: none (dedicated to the public domain by SQLite's authors)",
                    "License: public-domain", ""]
    ids.add("public-domain")
    ids.add("BSD-3-Clause-LBNL")
    for i in sorted(ids):
        if i == "public-domain":
            out += ["License: public-domain",
                    " SQLite's authors have dedicated its source to the public domain",
                    " (https://www.sqlite.org/copyright.html).", ""]
        elif i == "BSD-3-Clause-LBNL":
            out += ["License: BSD-3-Clause-LBNL"] + [(" " + l.rstrip()) if l.strip() else " ."
                                                     for l in nhc.strip().splitlines()] + [""]
        elif i == "MIT":
            out += ["License: MIT"] + [(" " + l) if l.strip() else " ."
                                       for l in mit.splitlines() if not l.startswith("Copyright")] + [""]
        else:
            out += paragraph(i, dirs_by_id.get(i, [])) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


SPEC = ROOT / "packaging/rpm/memsight.spec"
PROVIDES_BEGIN = "# bundled crates: made by scripts/notices.py rpm-provides from Cargo.lock"
PROVIDES_END = "# end of bundled crates"


def bundled_crates(spec_text):
    """(name, version) of every crate linked into the packages' binary on the architectures the
    spec builds for (its ExclusiveArch): the packages' features (--no-default-features), no
    build scripts' or proc macros' dependencies (they run at build time and are not shipped), as
    Fedora's vendor manifest counts them; workspace crates left out."""
    m = re.search(r"^ExclusiveArch:\s*(.+)$", spec_text, re.M)
    if not m:
        sys.exit(f"notices.py: {SPEC} has no ExclusiveArch")
    found = set()
    for arch in m.group(1).split():
        tree = cargo("tree", "-q", "-p", "memsight", "--no-default-features",
                     "-e", "no-build,no-dev,no-proc-macro", "--target", f"{arch}-unknown-linux-gnu",
                     "--prefix", "none", "--format", "{p}")
        for line in tree.splitlines():
            m = re.match(r"^(\S+) v(\S+)( \((.*)\))?", line)
            if m and not (m.group(4) or "").startswith("/"):
                found.add((m.group(1), m.group(2)))
    return sorted(found)


def rpm_version(semver):
    """A crate's version as RPM compares it, the way Fedora writes it: the pre-release after ~
    (sorting before the release), any - inside it as _, build metadata dropped (semver ignores
    it in ordering; kept, 1.2.2+spec-1.1.0 would sort after 1.2.2 and hide from an advisory)."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?", semver)
    if not m:
        sys.exit(f"notices.py: {semver} is not a semantic version")
    return m.group(1) + (f"~{m.group(2).replace('-', '_')}" if m.group(2) else "")


def rpm_provides(spec_text):
    """The spec with its bundled-crates block made afresh."""
    lines = [PROVIDES_BEGIN] + [f"Provides:       bundled(crate({n})) = {rpm_version(v)}"
                                for n, v in bundled_crates(spec_text)] + [PROVIDES_END]
    begin, end = spec_text.find(PROVIDES_BEGIN), spec_text.find(PROVIDES_END)
    if begin < 0 or end < begin:
        sys.exit(f"notices.py: {SPEC} lacks the bundled-crates marker lines")
    return spec_text[:begin] + "\n".join(lines) + spec_text[end + len(PROVIDES_END):]


def write_or_check(path, text, check, what, command):
    """Writes TEXT to PATH, or with CHECK fails when PATH does not hold it (a stale file)."""
    if not check:
        path.write_text(text)
    elif not path.exists() or path.read_text() != text:
        sys.exit(f"{what}: out of date with Cargo.lock (run scripts/notices.py {command})")


def copyright_line(mit):
    m = re.search(r"^Copyright \(c\) (.+)$", mit, re.M)
    return m.group(1) if m else "the memsight developers"


def main():
    args = sys.argv[1:]
    if args[:1] == ["third-party"] and len(args) in (2, 3):
        sys.stdout.write(third_party(*args[1:]))
    elif args[:1] == ["debian-copyright"] and args[1:] in ([], ["--check"]):
        write_or_check(ROOT / "debian/copyright", debian_copyright(), args[1:] == ["--check"],
                       "debian/copyright", "debian-copyright")
    elif args[:1] == ["rpm-provides"] and args[1:] in ([], ["--check"]):
        write_or_check(SPEC, rpm_provides(SPEC.read_text()), args[1:] == ["--check"],
                       "the spec's bundled crates", "rpm-provides")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
