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
   module but `measure`; `probes`, the run's reference probes, is held to the same rule) names
   `measure` and nothing of another suite, and `measure` names no suite. Any module may name
   `suite_id`, the suites' names and what is decided about each, and `contract`, the one contract
   every suite keeps; neither names a suite module. The composite studies in COMPOSITES may name the suites listed for them, and each
   must say in its opening comment that it is a composite study.
4. The suites crate keeps no process-wide mutable state: no `static` holding a Mutex, RwLock,
   OnceLock, LazyLock, Cell or atomic, and no `thread_local!`. What a suite measures must depend
   only on what it is given (machine facts travel in `memsight_suites::machine::Machine`), never on
   which suite ran before it in the same process.

5. Figure keys are read only through `memsight_results::key`: outside its folder, no code
   takes a key's text apart (`.key.split(…)`, `.starts_with`, `.strip_prefix`, `.contains`,
   `.as_str()` …) and no string literal spells a key (`"dimms/peak"`: a literal that starts
   with a family's prefix and a `/`; the prefixes are read from `suite_of_prefix` in
   key/mod.rs). A line that holds such a literal for another reason says `// not a key:` why.

Test code (modules behind `#[cfg(test)]`, tests.rs and *_tests.rs) is left out of rules 2-5.

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
# The list of the suites' names (`SuiteId`): any module may name it, as it names no suite module.
SUITE_ID = "suite_id"
# The contract every suite implements: any module may name it, as it names no suite module.
CONTRACT = "contract"
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
            if b in (MEASURE, SUITE_ID, CONTRACT):
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


def mask(text):
    """The code alone, at the same offsets: comments (nested block comments too) and the
    insides of string and char literals become spaces (newlines kept), so that neither a `//`
    in a string nor a brace in a literal is read as code, and an offset in the mask is one in
    the file."""
    out, i, n = list(text), 0, len(text)

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            start, depth, i = i, 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            blank(start, i)
        elif (raw := RAW.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + raw.group(1), raw.end())
            end = n if end == -1 else end
            blank(raw.end(), end)
            i = end + 1 + len(raw.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif ch := CHAR.match(text, i):
            blank(i + 1, ch.end() - 1)
            i = ch.end()
        else:
            i += 1
    return "".join(out)


RAW = re.compile(r'b?r(#*)"')
CHAR = re.compile(r"'(?:\\[^']{1,10}|[^'\\])'")


def resolve(here, segments):
    """A path's segments from the crate root: `crate` starts there, `self` at this module, and
    every `super` (as many as are chained: `super::super::x`) one module up."""
    base = list(here)
    rest = list(segments)
    if rest and rest[0] == "crate":
        base, rest = [], rest[1:]
    while rest and rest[0] in ("self", "super"):
        if rest.pop(0) == "super":
            base = base[:-1]
    return base + rest


def paths_named(text, here):
    """Module paths a file names: `crate::a::b`, `super::x`, `super::super::x`, `self::x`,
    grouped imports too."""
    out = []
    for m in re.finditer(r"\b(crate|super|self)::((?:\w+::)*)(\{[^}]*\}|\w+)", text):
        # A match inside a longer path (`x::super::y` cannot be written) or one that starts
        # after another `super::`/`self::` of the same path is the tail of a path already read.
        before = text[max(0, m.start() - 2) : m.start()]
        if before == "::":
            continue
        head, mid, last = m.group(1), m.group(2), m.group(3)
        prefix = resolve(here, [head] + [p for p in mid.split("::") if p])
        if last.startswith("{"):
            for item in re.findall(r"(?:^|[{,])\s*([\w:]+)", last):
                out.append(resolve(prefix, [p for p in item.split("::") if p and p != "self"]))
        else:
            out.append(prefix + [last])
    return out


def test_spans(code):
    """The spans of the items behind `#[cfg(test)]` in masked code: a test module's block
    (however much code follows it), a test function, a `use` or a `mod tests;` line. Only
    those: code after a test module is still read."""
    spans, pos = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        if m.start() < pos:
            continue
        i = m.end()
        # Further attributes on the same item.
        while a := re.compile(r"\s*#\[[^\]]*\]").match(code, i):
            i = a.end()
        brace, semi = code.find("{", i), code.find(";", i)
        if brace != -1 and (semi == -1 or brace < semi):
            depth, pos = 0, len(code)
            for k in range(brace, len(code)):
                if code[k] == "{":
                    depth += 1
                elif code[k] == "}":
                    depth -= 1
                    if depth == 0:
                        pos = k + 1
                        break
        else:
            pos = len(code) if semi == -1 else semi + 1
        spans.append((m.start(), pos))
    return spans


def is_test_file(f):
    """Test modules kept in files of their own (tests.rs, *_tests.rs), as check-size.py counts them."""
    return f.name == "tests.rs" or f.name.endswith("_tests.rs")


def code_of(f):
    """A file's code as the rules read it: comments and literals blanked, test items out."""
    code = mask(f.read_text())
    for a, b in test_spans(code):
        code = code[:a] + re.sub(r"[^\n]", " ", code[a:b]) + code[b:]
    return code


def module_graphs(src):
    """For every module with children: the graph among its children (an edge when anything in
    one child's subtree names something in another's), and the file behind each edge."""
    files = sorted(src.rglob("*.rs"))
    modules = {tuple(module_path(src, f)) for f in files}
    graphs, why = {}, {}
    for f in files:
        if is_test_file(f):
            continue
        here = module_path(src, f)
        text = code_of(f)
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
        if is_test_file(f):
            continue
        text = code_of(f)
        for m in STATE.finditer(text):
            line = text[: m.start()].count("\n") + 1
            out.append(f"{f}:{line}: {m.group(0).strip()}")
    return out


KEY_DIR = pathlib.Path("crates/memsight-results/src/key")
KEY_TEXT_METHOD = re.compile(
    r"\.key\s*(?:\.\s*to_string\(\)\s*)?\.\s*(split|rsplit|split_once|starts_with|ends_with|strip_prefix|strip_suffix|contains|find|as_str|chars|bytes)\b"
)


def key_prefixes(repo):
    """The first parts of key text, as `Key::suite_of_prefix` lists them."""
    text = (repo / KEY_DIR / "mod.rs").read_text()
    body = text[text.index("fn suite_of_prefix"):]
    body = body[: body.index("_ => return None")]
    return sorted(set(re.findall(r'"([a-z][a-z-]*)"', body)))


def key_text_problems(repo):
    """Code outside the key module that reads or spells key text (rule 5)."""
    prefixes = key_prefixes(repo)
    literal = re.compile(r'"(?:%s)/' % "|".join(map(re.escape, prefixes)))
    out = []
    for f in sorted((repo / "crates").glob("*/src/**/*.rs")):
        if is_test_file(f) or (repo / KEY_DIR) in f.parents:
            continue
        text = f.read_text()
        code = code_of(f)
        lines = text.splitlines()
        for m in KEY_TEXT_METHOD.finditer(code):
            line = code[: m.start()].count("\n") + 1
            out.append(f"{f.relative_to(repo)}:{line}: takes key text apart ({m.group(0).strip()}): use the typed `Key`")
        for m in literal.finditer(text):
            # A literal in code (not in a comment, not in a test item): its quote is code.
            if code[m.start()] != '"':
                continue
            line = text[: m.start()].count("\n") + 1
            if "// not a key:" in lines[line - 1]:
                continue
            out.append(f"{f.relative_to(repo)}:{line}: spells a key ({lines[line - 1].strip()}): build a `Key`")
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
    for hit in key_text_problems(repo):
        problems.append(f"key text read outside memsight_results::key: {hit}")
    for p in problems:
        print(f"check-layers: {p}", file=sys.stderr)
    if not problems:
        print(f"check-layers: {len(crates)} crates, downward only, no module circle, suites siblings over measure/, no process-wide state in the suites, key text read only by the key module")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
