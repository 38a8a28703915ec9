//! `memsight c2c` end to end.

mod common;

use common::{assert_findings_follow_their_figures, assert_valid, json, memsight};

#[test]
fn matrix_is_complete_and_symmetric_for_modified_lines() {
    let n = std::thread::available_parallelism().unwrap().get();
    if n < 2 {
        return;
    }
    let doc = json(memsight().args([
        "c2c",
        "--json",
        "--no-progress",
        "--cpus",
        "0,1",
        "--min-samples",
        "3",
        "--point-budget",
        "0.2",
    ]));
    assert_valid(&doc);
    assert_findings_follow_their_figures(&doc);
    let r = &doc["results"];
    let m = r["modified"].as_array().unwrap();
    assert_eq!(m.len(), 2);
    assert!(m[0][0].is_null() && m[1][1].is_null());
    assert_eq!(m[0][1], m[1][0]);
    let v = m[0][1].as_f64().unwrap();
    assert!(v > 0.0 && v < 100_000.0, "{v}");
    let pair = &r["pairs"][0];
    // Three samples, or fewer with the shortfall said (on a loaded machine the disturbed ones
    // are dropped and the point's budget may end first).
    let s = &pair["modified_ns"];
    assert!(
        s["n"].as_u64().unwrap() >= 3 || !s["shortfall"].is_null(),
        "{s}"
    );
    if cfg!(target_arch = "x86_64") {
        let c = r["clean"].as_array().unwrap();
        assert!(c[0][1].as_f64().unwrap() > 0.0 && c[1][0].as_f64().unwrap() > 0.0);
        assert!(r["tsc_ticks_per_ns"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn one_cpu_is_not_a_pair() {
    let out = memsight().args(["c2c", "--cpus", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("at least 2 CPUs") && err.lines().count() == 1,
        "{err}"
    );
}
