//! `memsight numa` end to end on this machine (one node here; the plans for many-node, CPU-less
//! and cgroup-limited machines are tested in memsight-core's plan module on recorded topologies).

mod common;

use common::{assert_valid, json, memsight};

#[test]
fn matrices_cover_every_row_and_column_plus_interleaved() {
    let doc = json(memsight().args([
        "numa",
        "--json",
        "--no-progress",
        "--latency-size",
        "32M",
        "--bandwidth-size",
        "16M",
        "--min-samples",
        "3",
        "--point-budget",
        "0.2",
    ]));
    assert_valid(&doc);
    let r = &doc["results"];
    let rows = r["plan"]["initiators"].as_array().unwrap().len();
    let targets = r["plan"]["targets"].as_array().unwrap().len();
    let cols = r["columns"].as_array().unwrap();
    assert_eq!(cols.len(), targets + 1);
    assert_eq!(cols.last().unwrap()["label"], "interleaved");
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), rows);
    for row in cells {
        assert_eq!(row.as_array().unwrap().len(), targets + 1);
        for c in row.as_array().unwrap() {
            assert!(c["latency_ns"]["median"].as_f64().unwrap() > 0.0);
            assert!(c["bandwidth_gbs"]["median"].as_f64().unwrap() > 0.0);
            // Write and NT-write matrices by default, same cells and sampling.
            let kernels: Vec<&str> = c["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| {
                    assert!(k["gbs"]["median"].as_f64().unwrap() > 0.0);
                    k["test"].as_str().unwrap()
                })
                .collect();
            assert_eq!(kernels, ["write", "write-nt"]);
            // Three alternating rounds by default, their spread kept per cell.
            assert!(c["latency_between_rounds"].as_f64().unwrap() >= 0.0, "{c}");
            assert!(
                c["bandwidth_between_rounds"].as_f64().unwrap() >= 0.0,
                "{c}"
            );
            assert!(c["latency_ns"]["n"].as_u64().unwrap() >= 9, "{c}");
        }
    }
    assert!(
        r["method"]
            .as_str()
            .unwrap()
            .contains("3 alternating rounds")
    );
    if targets == 1 {
        let f = r["findings"].as_array().unwrap();
        assert!(f.iter().any(|x| common::text(x).contains("one NUMA node")));
    }
}

/// Any bandwidth test makes a matrix (the EPYC 7002 review's NT-hint reads here); kernels this
/// CPU lacks and unknown names are refused in one line before anything runs.
#[test]
fn chosen_kernels_make_their_matrices_and_bad_ones_are_refused() {
    let doc = json(memsight().args([
        "numa",
        "--json",
        "--no-progress",
        "--latency-size",
        "32M",
        "--bandwidth-size",
        "16M",
        "--min-samples",
        "3",
        "--point-budget",
        "0.2",
        "--test",
        "read-nta",
    ]));
    assert_valid(&doc);
    let r = &doc["results"];
    assert!(r["method"].as_str().unwrap().contains("read-nta kernel"));
    for c in r["cells"][0].as_array().unwrap() {
        assert!(c["bandwidth_gbs"].is_null(), "read was not asked for");
        assert_eq!(c["kernels"][0]["test"], "read-nta");
    }
    let out = memsight()
        .args(["numa", "--test", "read-sideways"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown test 'read-sideways'"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = memsight()
        .args(["numa", "--rounds", "21"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--rounds 21: give 1 (one test after another) to 20"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
