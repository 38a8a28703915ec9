//! A node judged by its own history (docs/operations.md): `memsight history --changes` finds a
//! step planted in its stored runs within one run of where it was planted, none in a figure
//! that held its level, and exports the last change point of each figure as a gauge holding its
//! time; `check --baseline last:N` passes a run like the ones before it and fails one that fell
//! beyond their spread.

mod common;

use std::path::{Path, PathBuf};

use common::{memsight, ok, scale_team_bandwidth};

fn thorough() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json")
}

/// Thirty runs a day apart with 1% of noise on the two-thread bandwidths, 10% lower from the
/// twentieth on, stored in a history in `dir`.
fn history_with_a_step(dir: &Path) -> PathBuf {
    history_of(dir, 30, |i| if i >= 20 { 0.90 } else { 1.0 })
}

/// `n` runs a day apart, run i's two-thread bandwidths scaled by `level(i)` with 1% of noise.
fn history_of(dir: &Path, n: usize, level: impl Fn(usize) -> f64) -> PathBuf {
    history_with_probes(dir, n, level, |_| 1.0)
}

/// Drift probes reading the machine at `share` of 16 GB/s for one core, 32 for the team.
fn probes(share: f64) -> serde_json::Value {
    let p: Vec<serde_json::Value> = (0..4)
        .map(|i| {
            serde_json::json!({"at_s": 5.0 * i as f64, "label": "p", "read_gbs": 16.0 * share,
                "team_read_gbs": 32.0 * share, "read_spread": 0.01, "latency_ns": 110.0 / share,
                "dropped": 0})
        })
        .collect();
    serde_json::json!({"method": "m", "cpu": 0, "buffer_bytes": 268435456u64, "probes": p,
        "phases": [], "verdict": null, "findings": []})
}

/// As [`history_of`], run i's drift probes reading the machine at `probe(i)` of its level.
fn history_with_probes(
    dir: &Path,
    n: usize,
    level: impl Fn(usize) -> f64,
    probe: impl Fn(usize) -> f64,
) -> PathBuf {
    let db = dir.join("history.sqlite");
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(thorough()).unwrap()).unwrap();
    let mut files = Vec::new();
    let mut seed = 12345u64;
    for i in 0..n {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let noise = ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.02;
        let mut doc = base.clone();
        doc["started"] = format!("2026-01-{:02}T06:00:00Z", i + 1).into();
        scale_team_bandwidth(&mut doc, level(i) * (1.0 + noise));
        doc["results"]["drift"] = probes(probe(i));
        let f = dir.join(format!("run{i}.json"));
        std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
        files.push(f);
    }
    let out = memsight()
        .args(["history", "--db"])
        .arg(&db)
        .arg("--import")
        .args(&files)
        .output()
        .unwrap();
    ok(&out);
    db
}

#[test]
fn a_planted_step_is_found_and_a_steady_figure_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = history_with_a_step(dir.path());
    let prom = dir.path().join("changes.prom");
    let out = memsight()
        .args(["--json", "history", "--changes", "--db"])
        .arg(&db)
        .arg("--prometheus")
        .arg(&prom)
        .output()
        .unwrap();
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "memsight-changes");
    let figures = v["figures"].as_array().unwrap();
    let read = figures
        .iter()
        .find(|f| f["key"] == "bandwidth/read/2t")
        .expect("bandwidth/read/2t has a series");
    assert_eq!(read["runs"], 30);
    let changes = read["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let started = changes[0]["started"].as_str().unwrap();
    let day: i64 = started[8..10].parse().unwrap();
    assert!(
        (day - 21).abs() <= 1,
        "the step was planted on day 21: {started}"
    );
    assert_eq!(changes[0]["worse"], true);
    let size = changes[0]["change"].as_f64().unwrap();
    assert!((size + 0.10).abs() < 0.02, "{size}");
    // The ladder's figures were never touched: one level each.
    let steady = figures
        .iter()
        .filter(|f| f["key"].as_str().unwrap().starts_with("latency/"))
        .collect::<Vec<_>>();
    assert!(!steady.is_empty());
    assert!(
        steady
            .iter()
            .all(|f| f["changes"].as_array().unwrap().is_empty())
    );

    // The textfile: the time of the step's run and its size, for the figures that moved.
    let text = std::fs::read_to_string(&prom).unwrap();
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("memsight_change_point_timestamp_seconds{")
                && l.contains("test=\"read\"")
                && l.contains("threads=\"2\"")
        })
        .unwrap_or_else(|| panic!("{text}"));
    let t: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    let jan_1 = 1_767_225_600.0; // 2026-01-01T00:00:00Z
    assert!(
        t > jan_1 + 19.0 * 86400.0 && t < jan_1 + 22.0 * 86400.0,
        "{line}"
    );
    assert!(
        !text.contains("level=\"memory\""),
        "a steady figure has no change point"
    );

    // A selector narrows the figures; a nonsense probability is refused in one line.
    let out = memsight()
        .args([
            "--json",
            "history",
            "--changes",
            "--key",
            "latency/*/level/*",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["figures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["key"].as_str().unwrap().starts_with("latency/"))
    );
    let out = memsight()
        .args(["history", "--changes", "--max-p", "2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// `check --baseline last:N RESULT` on the runs' last: one like the runs before it passes (and
/// the baseline is the N before it, not itself); one 30% below them fails naming the figure; a
/// history too short for a baseline is refused in one line.
#[test]
fn a_run_is_judged_against_the_runs_before_it() {
    let dir = tempfile::tempdir().unwrap();
    // Runs 0–10 steady; run 11 30% lower.
    let db = history_of(dir.path(), 12, |i| if i == 11 { 0.70 } else { 1.0 });
    let check = |result: &str, window: &str| {
        memsight()
            .args(["check", "--format", "line", "--baseline", window, "--db"])
            .arg(&db)
            .arg(result)
            .output()
            .unwrap()
    };
    let like = check("latest~1", "last:10");
    let line = String::from_utf8_lossy(&like.stdout);
    assert_eq!(
        like.status.code(),
        Some(0),
        "{line}{}",
        String::from_utf8_lossy(&like.stderr)
    );
    assert!(line.starts_with("memsight: PASS"), "{line}");
    let low = check("latest", "last:10");
    let line = String::from_utf8_lossy(&low.stdout);
    assert_eq!(low.status.code(), Some(1), "{line}");
    assert!(line.starts_with("memsight: FAIL bandwidth/"), "{line}");
    // The oldest run has no runs before it.
    let out = memsight()
        .args(["check", "--baseline", "last:10", "--db"])
        .arg(&db)
        .arg(dir.path().join("run0.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a baseline needs at least 5"), "{err}");
    let out = check("latest", "last:2");
    assert_eq!(
        out.status.code(),
        Some(2),
        "a window under 5 runs is refused"
    );
}

/// A run that fell short by no more than its own drift probes read the machine slower than in
/// the baseline runs is not judged (the host moved): INCOMPLETE, never PASS; the same shortfall
/// with steady probes fails.
#[test]
fn a_shortfall_the_probes_explain_is_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let db = history_with_probes(
        dir.path(),
        12,
        |i| if i == 11 { 0.90 } else { 1.0 },
        |i| if i == 11 { 0.88 } else { 1.0 },
    );
    let out = memsight()
        .args(["check", "--format", "line", "--baseline", "last:10", "--db"])
        .arg(&db)
        .arg("latest")
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{line}");
    assert!(
        line.starts_with("memsight: INCOMPLETE") && line.contains("host moved"),
        "{line}"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = history_with_probes(
        dir.path(),
        12,
        |i| if i == 11 { 0.90 } else { 1.0 },
        |_| 1.0,
    );
    let out = memsight()
        .args(["check", "--format", "line", "--baseline", "last:10", "--db"])
        .arg(&db)
        .arg("latest")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
