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
        }
    }
    if targets == 1 {
        let f = r["findings"].as_array().unwrap();
        assert!(
            f.iter()
                .any(|x| x.as_str().unwrap().contains("one NUMA node"))
        );
    }
}
