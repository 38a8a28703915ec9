//! `memsight coherence` end to end.

mod common;

use common::{assert_findings_follow_their_figures, assert_valid, json, memsight};

#[test]
fn every_test_has_its_figures_and_findings_cite_them() {
    if std::thread::available_parallelism().unwrap().get() < 2 {
        return;
    }
    let doc = json(memsight().args([
        "coherence",
        "--json",
        "--no-progress",
        "--cpus",
        "0,1",
        "--ring-slots",
        "16",
        "--min-samples",
        "3",
        "--point-budget",
        "0.1",
    ]));
    assert_valid(&doc);
    assert_findings_follow_their_figures(&doc);
    let r = &doc["results"];
    // A contended figure that too few undisturbed samples stand behind is not given, and says
    // why (on a busy machine): each figure is either given or named in `not_given`.
    let not_given = r["not_given"].to_string();
    let threads: Vec<u64> = r["contended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["threads"].as_u64().unwrap())
        .collect();
    for k in [1, 2] {
        let named = not_given.contains(&format!("one counter, {k} threads"));
        assert!(
            threads.contains(&k) != named,
            "{k} threads: {threads:?} {not_given}"
        );
    }
    let positive = |s: &serde_json::Value| s["median"].as_f64().unwrap() > 0.0;
    assert!(
        r["contended"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| positive(&c["mops"]))
    );
    for how in ["plain", "atomic"] {
        let l = &r["false_sharing"][how];
        if l.is_null() {
            assert!(
                not_given.contains(&format!("false sharing, {how}")),
                "{not_given}"
            );
        } else {
            assert!(
                positive(&l["adjacent_mops"]) && positive(&l["padded_mops"]),
                "{l}"
            );
        }
    }
    assert_eq!(r["ring"]["slots"], 16);
    assert!(positive(&r["ring"]["gbps"]));
    // A finding for each comparison the figures allow: the ring's at least.
    let cited = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["cites"].as_array().is_none_or(|c| c.is_empty()))
        .count();
    assert!((1..=4).contains(&cited), "{}", r["findings"]);
}

#[test]
fn bad_input_is_one_line() {
    for (args, says) in [
        (vec!["--cpus", "0"], "at least 2 CPUs"),
        (vec!["--ring-slots", "12"], "power of two"),
        (vec!["--ring-slots", "2"], "power of two"),
    ] {
        let out = memsight().arg("coherence").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
