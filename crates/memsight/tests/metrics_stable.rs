//! node_exporter drops memsight's samples without a scrape error in two cases (docs/operations.md):
//! two textfiles holding one command's series, and one metric family whose `# HELP` differs
//! between two files (written by two memsight versions). The first is refused by `export --to`;
//! the second is prevented by never changing a family's help text: this test holds every
//! family's text to the list in tests/data/prometheus-help.txt.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{memsight, ok};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Every `# HELP` line the recorded results export: family → text.
fn help_lines() -> BTreeMap<String, String> {
    let mut files = vec![data().join("run-thorough.json")];
    for e in std::fs::read_dir(data().join("results")).unwrap() {
        files.push(e.unwrap().path());
    }
    let mut out = BTreeMap::new();
    for f in files {
        let o = memsight()
            .args(["export", "--format", "prometheus"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", f.display());
        for line in String::from_utf8(o.stdout).unwrap().lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, text) = rest.split_once(' ').unwrap();
                out.insert(name.to_string(), text.to_string());
            }
        }
    }
    out
}

#[test]
fn no_family_changes_its_help_text() {
    let pinned: BTreeMap<String, String> =
        std::fs::read_to_string(data().join("prometheus-help.txt"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (n, t) = l.split_once(' ').unwrap();
                (n.to_string(), t.to_string())
            })
            .collect();
    for (name, text) in help_lines() {
        let Some(want) = pinned.get(&name) else {
            panic!("{name} is a new family: add `{name} {text}` to tests/data/prometheus-help.txt");
        };
        assert_eq!(
            &text, want,
            "{name}'s help text changed: node_exporter drops the family from a textfile directory holding files of two versions; keep the old text"
        );
    }
}

#[test]
fn a_second_textfile_of_one_command_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = data().join("run-thorough.json");
    let export = |name: &str| {
        memsight()
            .args(["export", "--format", "prometheus", "--to"])
            .arg(dir.path().join(name))
            .arg(&run)
            .output()
            .unwrap()
    };
    assert!(export("memsight-run.prom").status.success());
    // Rewriting the same file is the refresh: allowed.
    assert!(export("memsight-run.prom").status.success());
    let second = export("other.prom");
    assert_eq!(second.status.code(), Some(2));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("memsight-run.prom") && err.contains("one file per command"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Another command's file beside it is fine.
    let latency = memsight()
        .args(["export", "--format", "prometheus", "--to"])
        .arg(dir.path().join("memsight-latency.prom"))
        .arg(data().join("results/latency.json"))
        .output()
        .unwrap();
    ok(&latency);
}
