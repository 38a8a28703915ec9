#!/usr/bin/env python3
"""The layering rules of the workspace, checked (CI runs this; a violation fails the build).

1. Crates depend only downwards: memsight-kernels, memsight-core and memsight-model at the bottom
   (none of them depending on another memsight crate above it), then memsight-suites, then
   memsight-results, then the memsight binary. A [dependencies] entry naming a crate at the same
   level or above is an upward import.
2. Inside every crate, no modules form a circle, at any depth: among the children of one module,
   child A depends on child B when a file in A's subtree names something in B's (`crate::…`,
   `super::…`, `self::…` paths and `use` items, grouped imports included; test modules left out).
   A circle is printed with its edges and the file that makes each.
3. Suites are siblings over one measuring layer: in the suites crate, a suite (any top-level
   module but `measure`) names `measure` and nothing of another suite, and `measure` names no
   suite. The composite studies in COMPOSITES may name the suites listed for them, and each
   must say in its opening comment that it is a composite study.
4. The suites crate keeps no process-wide mutable state: no `static` holding a Mutex, RwLock,
   OnceLock, LazyLock, Cell or atomic, and no `thread_local!`. What a suite measures must depend
   only on what it is given (machine facts travel in `memsight_suites::machine::Machine`), never on
   which suite ran before it in the same process.

Usage: scripts/check-layers.py [REPO]   (exit 0 clean, 1 on a violation)
"""
import pathlib
import re
import sys

LEVEL = {
    "memsight-kernels": 0,
    "memsight-core": 0,
    "memsight-model": 0,
    "memsight-suites": 1,
    "memsight-results": 2,
    "memsight": 3,
}


MEASURE = "measure"
# Composite studies and the suites they run as parts of their own.
COMPOSITES = {
    "tiers": {"dimms", "loaded", "numa"},
    "profile": {"alloc", "loaded"},
}


def sibling_problems(src, repo):
    """Suites naming other suites (rule 3), with the file behind each edge."""
    graphs, why = module_graphs(src)
    out = []
    for a, targets in sorted(graphs.get((), {}).items()):
        for b in sorted(targets):
            if b == MEASURE:
                continue
            allowed = COMPOSITES.get(a, set())
            if a == MEASURE or b not in allowed:
                who = "the measuring layer" if a == MEASURE else f"suite {a}"
                out.append(
                    f"{who} names suite {b} ({why[((), a, b)].relative_to(repo)}): move what they share into {MEASURE}/"
                )
    for name in sorted(COMPOSITES):
        head = ""
        for f in (src / name / "mod.rs", src / f"{name}.rs"):
            if f.exists():
                head = "\n".join(l for l in f.read_text().splitlines()[:40] if l.startswith("//!"))
        if "composite study" not in head:
            out.append(f"suite {name} is a declared composite but its opening comment does not say it is a composite study")
    return out


def crate_deps(cargo_toml):
    deps, section = [], None
    for line in cargo_toml.read_text().splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s
            continue
        if section == "[dependencies]":
            m = re.match(r"(memsight[\w-]*)\s*[.=]", s)
            if m:
                deps.append(m.group(1))
    return deps


def module_path(src, f):
    """The module a file holds: src/a.rs and src/a/mod.rs are [a], src/a/b.rs is [a, b]."""
    rel = list(f.relative_to(src).with_suffix("").parts)
    if rel in (["lib"], ["main"]):
        return []
    if rel[-1] == "mod":
        rel = rel[:-1]
    return rel


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def paths_named(text, here):
    """Module paths a file names: `crate::a::b`, `super::x`, `self::x`, grouped imports too."""
    out = []
    parent = here[:-1]
    for m in re.finditer(r"\b(crate|super|self)::((?:\w+::)*)(\{[^}]*\}|\w+)", text):
        head, mid, last = m.group(1), m.group(2), m.group(3)
        base = {"crate": [], "super": parent, "self": here}[head]
        prefix = base + [p for p in mid.split("::") if p]
        if last.startswith("{"):
            for item in re.findall(r"(?:^|[{,])\s*([\w:]+)", last):
                out.append(prefix + [p for p in item.split("::") if p and p != "self"])
        else:
            out.append(prefix + [last])
    return out


def module_graphs(src):
    """For every module with children: the graph among its children (an edge when anything in
    one child's subtree names something in another's), and the file behind each edge."""
    files = sorted(src.rglob("*.rs"))
    modules = {tuple(module_path(src, f)) for f in files}
    graphs, why = {}, {}
    for f in files:
        here = module_path(src, f)
        text = strip_comments(f.read_text()).split("#[cfg(test)]")[0]
        for target in paths_named(text, here):
            # The longest prefix that is a module.
            t = next((target[:n] for n in range(len(target), 0, -1) if tuple(target[:n]) in modules), None)
            if t is None:
                continue
            # The common ancestor, and the two children of it the edge runs between.
            k = 0
            while k < min(len(here), len(t)) and here[k] == t[k]:
                k += 1
            if k >= len(here) or k >= len(t):
                continue  # a module naming itself, an ancestor or a descendant
            parent, a, b = tuple(here[:k]), here[k], t[k]
            graphs.setdefault(parent, {}).setdefault(a, set()).add(b)
            graphs[parent].setdefault(b, set())
            why.setdefault((parent, a, b), f)
    return graphs, why


def find_cycle(graph):
    colour, stack = {}, []

    def visit(n):
        colour[n] = 1
        stack.append(n)
        for k in sorted(graph[n]):
            if colour.get(k) == 1:
                return stack[stack.index(k):] + [k]
            if k not in colour:
                c = visit(k)
                if c:
                    return c
        stack.pop()
        colour[n] = 2
        return None

    for n in sorted(graph):
        if n not in colour:
            c = visit(n)
            if c:
                return c
    return None


STATE = re.compile(
    r"\bstatic\s+(?:mut\s+)?\w+\s*:\s*[^=;]*\b(Mutex|RwLock|OnceLock|LazyLock|OnceCell|Cell|RefCell|Atomic\w+)\b"
    r"|\bthread_local!"
)


def process_state(src):
    """Files of a crate that hold process-wide mutable state, with the line."""
    out = []
    for f in sorted(src.rglob("*.rs")):
        text = strip_comments(f.read_text()).split("#[cfg(test)]")[0]
        for m in STATE.finditer(text):
            line = text[: m.start()].count("\n") + 1
            out.append(f"{f}:{line}: {m.group(0).strip()}")
    return out


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    problems = []
    crates = sorted((repo / "crates").iterdir())
    for c in crates:
        name = c.name
        if name not in LEVEL:
            problems.append(f"{name}: a crate the layering does not know; give it a level in scripts/check-layers.py")
            continue
        for d in crate_deps(c / "Cargo.toml"):
            if d not in LEVEL:
                continue
            if LEVEL[d] >= LEVEL[name]:
                problems.append(f"{name} depends on {d}: an import at the same level or upwards")
        graphs, why = module_graphs(c / "src")
        for parent, graph in sorted(graphs.items()):
            cycle = find_cycle(graph)
            if cycle:
                where = "::".join(parent) or "crate root"
                edges = ", ".join(
                    f"{a} → {b} ({why[(parent, a, b)].relative_to(repo)})"
                    for a, b in zip(cycle, cycle[1:])
                )
                problems.append(f"{name} ({where}): modules in a circle: {edges}")
    problems += sibling_problems(repo / "crates" / "memsight-suites" / "src", repo)
    for hit in process_state(repo / "crates" / "memsight-suites" / "src"):
        problems.append(f"process-wide mutable state in the suites crate (pass it in a value): {hit}")
    for p in problems:
        print(f"check-layers: {p}", file=sys.stderr)
    if not problems:
        print(f"check-layers: {len(crates)} crates, downward only, no module circle, suites siblings over measure/, no process-wide state in the suites")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
