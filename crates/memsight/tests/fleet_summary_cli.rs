//! The compact per-node record: `memsight fleet --summarise` writes each node's summary beside
//! its result, and a fleet of summaries alone is analysed as its full results are. A fleet
//! larger than `--max-nodes` is refused, not read in part.

mod common;

use std::path::Path;

use common::{assert_valid, json, memsight, recorded_run, scale};
use serde_json::Value;

/// Eight nodes of one recorded run, node05's bandwidth 25% lower.
fn fleet_dir(dir: &Path) {
    let base = recorded_run();
    let jitter = [1.0, 1.003, 0.998, 1.001, 0.75, 0.999, 1.002, 0.997];
    for (i, j) in jitter.iter().enumerate() {
        let name = format!("node{:02}", i + 1);
        let mut d = base.clone();
        d["environment"]["hostname"] = Value::String(name.clone());
        scale(&mut d["results"]["bandwidth"], *j);
        let p = dir.join(&name).join("run.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_string(&d).unwrap()).unwrap();
    }
}

/// The flagged (member, key, value) of a fleet report.
fn flagged(doc: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = doc["results"]["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["member"].to_string(),
                o["key"].to_string(),
                o["value"].to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_fleet_of_summaries_is_analysed_as_its_full_results() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    let full = json(
        memsight()
            .args(["fleet", "--json", "--summarise"])
            .arg(tmp.path()),
    );
    assert_valid(&full);
    let from_full = flagged(&full);
    assert!(!from_full.is_empty());
    assert!(
        from_full.iter().all(|(m, _, _)| m == "\"node05\""),
        "{from_full:?}"
    );
    // Every node has its summary, a small part of its result.
    for i in 1..=8 {
        let dir = tmp.path().join(format!("node{i:02}"));
        let result = std::fs::metadata(dir.join("run.json")).unwrap().len();
        let summary = std::fs::metadata(dir.join("run.summary.json"))
            .unwrap()
            .len();
        assert!(
            summary * 5 < result,
            "summary {summary} B of a {result} B result"
        );
        std::fs::remove_file(dir.join("run.json")).unwrap();
    }
    // The results gone, the summaries alone give the same report's outliers and headline.
    let summaries = json(memsight().args(["fleet", "--json"]).arg(tmp.path()));
    assert_valid(&summaries);
    assert_eq!(flagged(&summaries), from_full);
    let members = |d: &Value| d["results"]["members"].as_array().unwrap().len();
    assert_eq!(members(&summaries), 8);
    assert_eq!(
        summaries["results"]["headline"], full["results"]["headline"],
        "headline columns"
    );
}

#[test]
fn a_fleet_beyond_max_nodes_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    let out = memsight()
        .args(["fleet", "--max-nodes", "5"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("more than 5 results"), "{stderr}");
}
