//! Every result type, not only `memsight run`: stored in the history, compared (with itself, with a
//! run, across commands), exported and re-rendered. The documents in `tests/data/results/` were
//! written by each command on the project's VM (sizes kept small; see `tests/data/README.md`).

mod common;

use std::path::{Path, PathBuf};

use common::{assert_valid, json, memsight, ok, refused};

fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results")
}

/// Every recorded result document, with its command.
fn documents() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(results_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    out
}

/// The history's rows, as `history --json` lists them: the command of each.
fn stored_commands(db: &Path) -> Vec<String> {
    let list = json(memsight().args(["--json", "history", "--db"]).arg(db));
    let mut out: Vec<String> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["command"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn the_recordings_cover_every_command_with_results() {
    let commands: Vec<String> = common::schema_commands()
        .into_iter()
        .filter(|name| name != "run")
        .collect();
    let recorded: Vec<String> = documents().into_iter().map(|(c, _)| c).collect();
    for c in commands {
        assert!(
            recorded.contains(&c),
            "no recorded result of `memsight {c}` in tests/data/results"
        );
    }
    // Each file holds what its name says and is valid against the schema of its command.
    for (command, path) in documents() {
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc["command"], command.as_str(), "{}", path.display());
        assert_valid(&doc);
    }
}

#[test]
fn every_result_type_reaches_history_compare_export_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    for (i, (command, path)) in documents().into_iter().enumerate() {
        let id = (i + 1).to_string();
        let out = memsight()
            .args(["history", "--db"])
            .arg(&db)
            .arg("--import")
            .arg(&path)
            .output()
            .unwrap();
        ok(&out);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&format!("as {id}")),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        // Export: one CSV row per figure, every key once.
        let csv = ok(&memsight()
            .args(["export", &id, "--format", "csv", "--db"])
            .arg(&db)
            .output()
            .unwrap());
        let keys: Vec<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(2).unwrap())
            .collect();
        assert!(!keys.is_empty(), "{command}: no figures exported");
        let mut unique = keys.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), keys.len(), "{command}: repeated keys");

        // Compare, stored against the file: the same figures, none judged changed.
        let c = json(
            memsight()
                .args(["--json", "compare", "--all-figures", &id])
                .arg(&path)
                .arg("--db")
                .arg(&db),
        );
        let rows = c["rows"].as_array().unwrap();
        assert_eq!(rows.len(), keys.len(), "{command}");
        assert_eq!(c["a"]["command"], command.as_str());
        for r in rows {
            let v = r["verdict"].as_str().unwrap();
            // A figure resting on disturbed samples is not judged even against itself.
            assert!(
                v == "noise" || v == "unjudged" || v == "disturbed",
                "{command}: {r}"
            );
        }

        // Report: a page with the command's own section, machine strings escaped.
        let html = dir.path().join(format!("{command}.html"));
        ok(&memsight()
            .args(["report", &id, "--db"])
            .arg(&db)
            .arg("--html")
            .arg(&html)
            .output()
            .unwrap());
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(
            page.contains(&format!("memsight {command}")),
            "{command}: page title"
        );
        assert!(page.contains("<section"), "{command}: no section");
    }
    let mut expected: Vec<String> = documents().into_iter().map(|(c, _)| c).collect();
    expected.sort();
    assert_eq!(stored_commands(&db), expected);
}

#[test]
fn a_run_compares_with_a_result_of_one_of_its_suites() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    let bw = results_dir().join("bandwidth.json");
    let c = json(memsight().args(["--json", "compare"]).arg(&bw).arg(&run));
    let rows = c["rows"].as_array().unwrap();
    // Only bandwidth figures, and the two measured the same way on both sides are judged.
    assert!(
        rows.iter()
            .all(|r| r["key"].as_str().unwrap().starts_with("bandwidth"))
    );
    let both: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| !r["a"].is_null() && !r["b"].is_null())
        .collect();
    assert!(both.len() >= 2, "{both:?}");
    for r in both {
        assert!(r["floor"].as_f64().unwrap() >= 0.01, "{r}");
        assert!(r["p_value"].as_f64().is_some(), "{r}");
    }
    assert!(
        c["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("only the bandwidth figures"))
    );
}

#[test]
fn figures_measured_differently_are_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let bw = results_dir().join("bandwidth.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&bw).unwrap()).unwrap();
    for p in doc["results"]["points"].as_array_mut().unwrap() {
        p["bytes_per_thread"] = (8u64 << 20).into();
    }
    let small = dir.path().join("small.json");
    std::fs::write(&small, serde_json::to_string(&doc).unwrap()).unwrap();
    let c = json(memsight().args(["--json", "compare"]).arg(&bw).arg(&small));
    for r in c["rows"].as_array().unwrap() {
        assert_eq!(r["verdict"], "different", "{r}");
        assert!(r["note"].as_str().unwrap().contains("8 MiB per thread"));
    }
    // A latency ladder measured with another access pattern.
    let lat = results_dir().join("latency.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&lat).unwrap()).unwrap();
    doc["results"]["method"]["pattern"] = serde_json::json!({"kind": "random"});
    let random = dir.path().join("random.json");
    std::fs::write(&random, serde_json::to_string(&doc).unwrap()).unwrap();
    let c = json(
        memsight()
            .args(["--json", "compare", "--all-figures"])
            .arg(&lat)
            .arg(&random),
    );
    let ladder: Vec<&serde_json::Value> = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["key"].as_str().unwrap().starts_with("latency/cpu0/")
                && !r["key"].as_str().unwrap().contains("level")
        })
        .collect();
    assert!(!ladder.is_empty());
    assert!(
        ladder.iter().all(|r| r["verdict"] == "different"),
        "{ladder:?}"
    );
}

#[test]
fn results_of_unrelated_commands_are_refused() {
    let d = results_dir();
    refused(
        &memsight()
            .arg("compare")
            .arg(d.join("latency.json"))
            .arg(d.join("bandwidth.json"))
            .output()
            .unwrap(),
        "nothing to compare",
    );
    // A run holds no STREAM figures.
    refused(
        &memsight()
            .arg("compare")
            .arg(d.join("stream.json"))
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json"))
            .output()
            .unwrap(),
        "nothing to compare",
    );
    // `memsight env` has no figures to store.
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("env.json");
    ok(&memsight()
        .args(["env", "--no-progress", "-o"])
        .arg(&env)
        .output()
        .unwrap());
    refused(
        &memsight()
            .args(["history", "--db"])
            .arg(dir.path().join("h.sqlite"))
            .arg("--import")
            .arg(&env)
            .output()
            .unwrap(),
        "no figures to store or compare",
    );
}

#[test]
fn a_history_from_before_other_commands_is_migrated() {
    // A version-2 database, as memsight wrote it before results of every command were stored:
    // its rows are runs.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.sqlite");
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    ok(&memsight()
        .args(["history", "--db"])
        .arg(&db)
        .arg("--import")
        .arg(&run)
        .output()
        .unwrap());
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("ALTER TABLE runs DROP COLUMN command; PRAGMA user_version = 2;")
            .unwrap();
    }
    ok(&memsight()
        .args(["history", "--db"])
        .arg(&db)
        .arg("--import")
        .arg(results_dir().join("latency.json"))
        .output()
        .unwrap());
    assert_eq!(stored_commands(&db), ["latency", "run"]);
}

/// Rust syntax in text meant for people: a struct (`Errno { code: 22`), an option or result
/// (`Some(`), a vector (`[0, 1]`), an enum variant name (`(Given)`, `MemoryMode`), or a byte
/// unit on a count. Each match is returned with its context.
fn internal_syntax(text: &str) -> Vec<String> {
    // Names people use that look like Rust identifiers: units, products, file fields.
    const ALLOWED: [&str; 12] = [
        "KiB",
        "MiB",
        "GiB",
        "TiB",
        "VmRSS",
        "MemTotal",
        "MemAvailable",
        "RocksDB",
        "PowerEdge",
        "TCMalloc",
        "ThinkSystem",
        "ProLiant",
    ];
    let patterns = [
        r"\b[A-Za-z_]+ \{ ?[a-z_]+: ",
        r"\b(?:Some|Ok|Err)\(",
        r"\[\[?\d+(?:, \d+)+\]",
        r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\b",
        r"\((?:Given|Sysfs|Hwloc|Kernel|Mbind|Regular|Nt|Clzero|DevDax|FsDax|Emulated)\)",
        r"\bNone\b",
        r"(?:arenas|chunks)[^=,]{0,20} = \d+(?:\.\d+)? [KMG]?i?B\b",
        r"\bthe seed\b",
    ];
    let mut out = Vec::new();
    for p in patterns {
        for m in regex::Regex::new(p).unwrap().find_iter(text) {
            if ALLOWED.contains(&m.as_str()) {
                continue;
            }
            let (a, b) = (m.start().saturating_sub(60), (m.end() + 30).min(text.len()));
            let (a, b) = (
                (0..=a).rev().find(|&i| text.is_char_boundary(i)).unwrap(),
                (b..=text.len())
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap(),
            );
            out.push(format!("{:?} in …{}…", m.as_str(), &text[a..b]));
        }
    }
    out
}

/// What a person reads of every recorded result, on the terminal (`memsight show`) and in the
/// HTML report, holds no Rust syntax, enum names or raw errors.
#[test]
fn what_people_read_holds_no_internal_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = documents().into_iter().map(|(_, p)| p).collect();
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json"));
    let mut found = Vec::new();
    let markup =
        regex::Regex::new(r"(?s)<style.*?</style>|<script.*?</script>|<svg.*?</svg>|<[^>]+>")
            .unwrap();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = ok(&memsight().arg("show").arg(&path).output().unwrap());
        found.extend(
            internal_syntax(&text)
                .into_iter()
                .map(|m| format!("{name} (terminal): {m}")),
        );
        let html = dir.path().join(format!("{name}.html"));
        ok(&memsight()
            .arg("report")
            .arg(&path)
            .arg("--html")
            .arg(&html)
            .output()
            .unwrap());
        let page = std::fs::read_to_string(&html).unwrap();
        // The page's text: tags, styles and scripts removed, entities decoded.
        let page = markup
            .replace_all(&page, " ")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'");
        found.extend(
            internal_syntax(&page)
                .into_iter()
                .map(|m| format!("{name} (HTML): {m}")),
        );
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_scan_for_internal_names_finds_them() {
    for bad in [
        "near memory: 4 MiB in front of node 0 (Given); working sets",
        "hwloc_topology_load failed with errno Some(Errno { code: 22, description: None })",
        "2 thread(s) on CPUs [0, 1], avx512",
        "arenas (malloc_info) = 9 B, next",
        "the source is MemoryMode here",
    ] {
        assert!(!internal_syntax(bad).is_empty(), "{bad}");
    }
    for good in [
        "near memory: 4 MiB in front of node 0 (as given with --near-size)",
        "64 GiB RDIMM 2Rx4, arenas (malloc_info) = 9, chunks = 3",
        "CPUs 0-1 (node 0), DDR4-3200, Dell PowerEdge R7525",
    ] {
        assert!(
            internal_syntax(good).is_empty(),
            "{good}: {:?}",
            internal_syntax(good)
        );
    }
}
