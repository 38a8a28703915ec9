//! `memsight run --plan` and `--time-budget` on recorded topologies: each suite's predicted time,
//! made without measuring; a budget that leaves the studies and matrices out on machines far
//! larger than the one running the tests; and a budget that cannot be met, refused in one line.

mod common;

use common::{fixtures, memsight, xml_fixture};
use serde_json::Value;

/// `run --plan --json` on a recorded topology.
fn plan(xml: &std::path::Path, args: &[&str]) -> Value {
    let out = memsight()
        .arg("--topology-xml")
        .arg(xml)
        .args(["run", "--plan", "--json"])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}", xml.display());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn total(p: &Value) -> f64 {
    let suites = p["suites"].as_array().unwrap();
    p["start_s"].as_f64().unwrap()
        + suites
            .iter()
            .map(|s| s["predicted_s"].as_f64().unwrap())
            .sum::<f64>()
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array().map_or(vec![], |a| {
        a.iter().map(|s| s["suite"].as_str().unwrap()).collect()
    })
}

fn machines() -> Vec<std::path::PathBuf> {
    let mut m: Vec<_> = [
        "192em64t-24n8c2t.xml",
        "96em64t-4n4d3ca2co-pci.xml",
        "32em64t-2n8c2t-pci-noio.xml",
        "cxlmem+dax.v3.xml",
    ]
    .iter()
    .map(|x| xml_fixture(x))
    .collect();
    m.push(fixtures().join("hwloc/synthetic/512pu-2pack-8n.xml"));
    m
}

/// `run --plan` with `--time-budget 45s` at `level`: the plan, or `None` when refused (exit 2,
/// one line naming what latency and bandwidth alone are predicted at).
fn budgeted(xml: &std::path::Path, level: &[&str]) -> Option<Value> {
    let out = memsight()
        .arg("--topology-xml")
        .arg(xml)
        .args(["run", "--plan", "--json", "--time-budget", "45s"])
        .args(level)
        .output()
        .unwrap();
    if out.status.code() == Some(2) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("predicted at") && err.contains("--quick"),
            "{err}"
        );
        return None;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn a_45_s_budget_holds_on_every_recorded_machine_and_keeps_latency_and_bandwidth() {
    for xml in machines() {
        for level in [&["--quick"][..], &[][..], &["--thorough"][..]] {
            // A quick health check fits on every machine; a fuller run fits or is refused.
            let Some(p) = budgeted(&xml, level) else {
                assert!(level != ["--quick"], "{}", xml.display());
                continue;
            };
            let kept = names(&p["suites"]);
            assert!(total(&p) <= 45.0, "{} {level:?}: {p}", xml.display());
            assert!(
                kept.contains(&"latency") && kept.contains(&"bandwidth"),
                "{kept:?}"
            );
            assert_eq!(p["budget_s"], 45.0);
        }
    }
}

#[test]
fn what_grows_with_the_node_is_predicted_and_left_out_first() {
    let big = fixtures().join("hwloc/synthetic/512pu-2pack-8n.xml");
    // A quick run on 512 CPUs is predicted in seconds, the matrices nowhere in it.
    let quick = plan(&big, &["--quick"]);
    assert!(total(&quick) < 45.0, "{quick}");
    let kept = names(&quick["suites"]);
    assert_eq!(kept[..2], ["latency", "bandwidth"], "{quick}");
    assert!(
        !kept.contains(&"numa") && !kept.contains(&"c2c"),
        "{kept:?}"
    );
    // The default run's NUMA matrix grows as nodes²: 8 rows × 9 columns.
    let full = plan(&big, &[]);
    let numa = full["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["suite"] == "numa")
        .unwrap();
    assert!(
        numa["work"].as_str().unwrap().starts_with("72 cells"),
        "{numa}"
    );
    assert!(total(&full) > 45.0);
    // Under a budget it goes, and c2c's pairs with it where they do not fit.
    let fitted = plan(&big, &["--time-budget", "45s"]);
    assert!(names(&fitted["left_out"]).contains(&"numa"), "{fitted}");
    // A plan measures nothing: no suite has a time taken.
    let suites = full["suites"].as_array().unwrap();
    assert!(suites.iter().all(|s| s.get("actual_s").is_none()), "{full}");
}

#[test]
fn a_budget_that_cannot_be_met_is_refused_in_one_line() {
    let out = memsight()
        .arg("--topology-xml")
        .arg(xml_fixture("192em64t-24n8c2t.xml"))
        .args(["run", "--plan", "--time-budget", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--time-budget 1s") && err.contains("predicted at"),
        "{err}"
    );
    let out = memsight()
        .args(["run", "--plan", "--time-budget", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_plan_table_says_what_will_not_run_and_why() {
    let out = memsight()
        .arg("--topology-xml")
        .arg(xml_fixture("32em64t-2n8c2t-pci-noio.xml"))
        .args(["run", "--quick", "--plan"])
        .output()
        .unwrap();
    let text = common::ok(&out);
    assert!(
        text.contains("predicted s") && text.contains("what was counted"),
        "{text}"
    );
    assert!(
        text.contains("not run: NUMA matrices: not in a quick run"),
        "{text}"
    );
    assert!(!text.contains("took s"), "{text}");
}
