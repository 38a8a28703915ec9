//! A fleet beyond a screen: 45 nodes of one recorded run, node07's bandwidth 20% lower. The
//! report aggregates (the flagged node's row, each group's distributions) unless every row is
//! asked for; the planted node is named in the text, the JSON, the HTML, and by a DuckDB query
//! over the Parquet table, whose values are the JSON's. One result's Parquet export holds the
//! CSV export's values.
//!
//! CI installs pyarrow and duckdb (scripts/test.sh); elsewhere the Python half is skipped with
//! a message when they are missing (set CI=true to make that a failure).

mod common;

use std::path::Path;

use common::{json, memsight, ok, pipe, recorded_run, scale};
use serde_json::Value;

const NODES: usize = 45;

fn fleet_dir(dir: &Path) {
    let base = recorded_run();
    for i in 0..NODES {
        let name = format!("node{i:02}");
        let mut d = base.clone();
        d["environment"]["hostname"] = Value::String(name.clone());
        // ±0.6% of jitter, node07 20% slower.
        let f = if i == 7 {
            0.8
        } else {
            1.0 + 0.006 * ((i * 7 % 11) as f64 / 5.0 - 1.0)
        };
        scale(&mut d["results"]["bandwidth"], f);
        let p = dir.join(&name).join("run.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_string(&d).unwrap()).unwrap();
    }
}

/// Whether Python can read Parquet here; in CI it must.
fn python_reads_parquet() -> bool {
    let found = pipe("python3", &["-c", "import pyarrow, duckdb"], "").is_some_and(|r| r.0);
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install pyarrow and duckdb (scripts/test.sh does)"
        );
        eprintln!("pyarrow or duckdb missing: the Parquet files were not read back");
    }
    found
}

/// Reads the fleet's table with DuckDB: the nodes a query finds 10% below their group's median
/// bandwidth, and every flagged and headline value compared with the JSON report's.
const FLEET_CHECK: &str = r#"
import json, sys, duckdb, pyarrow.parquet as pq
table, report = sys.argv[1], json.load(open(sys.argv[2]))["results"]
meta = pq.ParquetFile(table).metadata.metadata
assert meta[b"memsight.schema"] == b"memsight-figures", meta
kv = dict(duckdb.sql(f"SELECT decode(key), decode(value) FROM parquet_kv_metadata('{table}')").fetchall())
assert kv["memsight.schema"] == "memsight-figures" and kv["memsight.schema_version"] == "1", kv
groups = duckdb.sql(f"SELECT DISTINCT \"group\", group_fingerprint FROM '{table}'").fetchall()
assert len(groups) == 1 and groups[0][0] == 0 and "CPU: AMD EPYC" in groups[0][1], groups
slow = duckdb.sql(f"""
  WITH m AS (SELECT "group", key, conditions, median(value) AS med FROM '{table}'
             WHERE NOT disturbed AND suite = 'bandwidth' GROUP BY ALL)
  SELECT DISTINCT t.host FROM '{table}' t JOIN m USING ("group", key, conditions)
  WHERE NOT t.disturbed AND t.suite = 'bandwidth' AND t.value < 0.9 * m.med
  ORDER BY 1""").fetchall()
assert slow == [("node07",)], slow
rows = {(h, k): (v, f) for h, k, v, f in
        duckdb.sql(f"SELECT host, key, value, flagged FROM '{table}'").fetchall()}
assert len(report["outliers"]) > 0
for o in report["outliers"]:
    v, f = rows[(o["member"], o["key"])]
    assert v == o["value"] and f == o["direction"], (o, v, f)
flagged = {(h, k) for (h, k), (_, f) in rows.items() if f is not None}
assert flagged == {(o["member"], o["key"]) for o in report["outliers"]}
n = 0
for m in report["members"]:
    for k, v in m["headline"].items():
        assert rows[(m["name"], k)][0] == v, (m["name"], k)
        n += 1
threads = duckdb.sql(f"SELECT DISTINCT threads FROM '{table}' WHERE suite = 'bandwidth' ORDER BY 1").fetchall()
assert threads == [(1,), (2,)], threads
print(f"ok {len(rows)} rows, {n} headline values")
"#;

#[test]
fn a_large_fleet_is_aggregated_and_its_table_names_the_planted_node() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    fleet_dir(&dir);
    let table = tmp.path().join("fleet.parquet");
    let html = tmp.path().join("fleet.html");
    let report = json(
        memsight()
            .args(["fleet", "--json", "--parquet"])
            .arg(&table)
            .arg("--html")
            .arg(&html)
            .arg(&dir),
    );
    let r = &report["results"];
    let outliers = r["outliers"].as_array().unwrap();
    assert!(!outliers.is_empty());
    assert!(
        outliers.iter().all(|o| o["member"] == "node07"),
        "{outliers:?}"
    );
    // Each headline figure's spread in the group, the planted node flagged.
    let read = r["distributions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["key"] == "bandwidth/read/2t")
        .expect("the read bandwidth's distribution");
    assert_eq!(read["n"], NODES);
    assert_eq!(read["flagged"], serde_json::json!(["node07"]));
    assert!(read["q1"].as_f64() <= read["median"].as_f64());
    assert!(read["min"].as_f64() < Some(0.85 * read["median"].as_f64().unwrap()));

    // The terminal: the flagged node's row, no row for the others.
    let text = ok(&memsight().arg("fleet").arg(&dir).output().unwrap());
    assert!(
        text.contains(&format!("Flagged nodes: 1 of {NODES}")),
        "{text}"
    );
    assert!(
        text.contains("node07") && !text.contains("node08"),
        "{text}"
    );
    assert!(text.contains("Figures across each group"), "{text}");
    let every = ok(&memsight()
        .args(["fleet", "--all-nodes"])
        .arg(&dir)
        .output()
        .unwrap());
    assert!(every.contains("node08") && every.contains("node44"));

    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("node07"));
    for i in (0..NODES).filter(|&i| i != 7) {
        assert!(
            !page.contains(&format!("node{i:02}")),
            "node{i:02} on the page"
        );
    }
    assert!(
        page.contains("across the 45 nodes of group 0"),
        "histograms"
    );

    // A fleet report's own export would put every member under one host: refused, pointing to
    // the table that has them.
    let saved = tmp.path().join("report.json");
    std::fs::write(&saved, serde_json::to_string(&report).unwrap()).unwrap();
    common::refused(
        &memsight()
            .arg("export")
            .arg(&saved)
            .args(["--format", "parquet", "--to"])
            .arg(tmp.path().join("x.parquet"))
            .output()
            .unwrap(),
        "--parquet FILE",
    );
    if python_reads_parquet() {
        let args = ["-", table.to_str().unwrap(), saved.to_str().unwrap()];
        let (good, out, err) = pipe("python3", &args, FLEET_CHECK).unwrap();
        assert!(good, "{out}{err}");
        assert!(out.starts_with("ok "), "{out}");
    }
}

/// One result's table against its CSV export: the same figures, values, intervals and
/// dimensions, the counts as integers.
const EXPORT_CHECK: &str = r#"
import csv, sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1]).to_pylist()
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(t) == len(rows) > 100, (len(t), len(rows))
for p, c in zip(t, rows):
    assert p["key"] == c["key"] and p["suite"] == c["suite"], (p["key"], c["key"])
    assert p["value"] == float(c["value"]), p["key"]
    assert (p["ci_low"] is None) == (c["ci_low"] == ""), p["key"]
    if p["ci_low"] is not None:
        assert p["ci_low"] == float(c["ci_low"]) and p["ci_high"] == float(c["ci_high"])
    for d in ("threads", "working_set_bytes", "cpu"):
        assert (str(p[d]) if p[d] is not None else "") == c[d], (p["key"], d)
    for d in ("test", "mix", "level", "node"):
        assert (p[d] or "") == c[d], (p["key"], d)
    assert str(p["disturbed"]).lower() == c["disturbed"]
    assert str(p["slow_phase"]).lower() == c["slow_phase"]
    assert str(p["not_converged"]).lower() == c["not_converged"]
assert t[0]["host"] == "vm" and t[0]["group"] is None and t[0]["started"] is not None
print("ok", len(t))
"#;

#[test]
fn a_results_parquet_table_holds_its_csv_export() {
    let tmp = tempfile::tempdir().unwrap();
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    let table = tmp.path().join("run.parquet");
    let csv = tmp.path().join("run.csv");
    for (format, to) in [("parquet", &table), ("csv", &csv)] {
        ok(&memsight()
            .arg("export")
            .arg(&run)
            .args(["--format", format, "--to"])
            .arg(to)
            .output()
            .unwrap());
    }
    let bytes = std::fs::read(&table).unwrap();
    assert_eq!(&bytes[bytes.len() - 4..], b"PAR1", "a whole Parquet file");
    assert_eq!(&bytes[..4], b"PAR1", "a Parquet file");
    if python_reads_parquet() {
        let (good, out, err) = pipe(
            "python3",
            &["-", table.to_str().unwrap(), csv.to_str().unwrap()],
            EXPORT_CHECK,
        )
        .unwrap();
        assert!(good, "{out}{err}");
    }
}
