//! `memsight loaded-latency` end to end (1 chase CPU + 1 load CPU here).

mod common;

use common::{assert_valid, json, memsight};

#[test]
fn curve_runs_from_idle_to_saturation() {
    if std::thread::available_parallelism().unwrap().get() < 2 {
        return;
    }
    let doc = json(memsight().args([
        "loaded-latency",
        "--json",
        "--no-progress",
        "--mix",
        "reads,2:1",
        "--points",
        "3",
        "--size",
        "32M",
        "--load-size",
        "16M",
        "--settle-ms",
        "20",
        "--min-samples",
        "3",
        "--point-budget",
        "0.1",
    ]));
    assert_valid(&doc);
    let r = &doc["results"];
    assert_eq!(
        r["plan"]["load_cpus"].as_array().unwrap().len() + 1,
        std::thread::available_parallelism().unwrap().get()
    );
    let curves = r["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 2);
    for c in curves {
        let pts = c["points"].as_array().unwrap();
        assert_eq!(pts.len(), 3);
        assert!(pts[0]["delay_cycles"].is_null(), "idle first");
        let bws: Vec<f64> = pts
            .iter()
            .map(|p| p["bandwidth_gbs"].as_f64().unwrap())
            .collect();
        assert!(bws.windows(2).all(|w| w[0] <= w[1]), "sorted by bandwidth");
        // Loaded traffic is far above the chase's own trickle.
        assert!(bws[2] > 2.0 * bws[0], "{bws:?}");
        assert!(c["saturation_gbs"].as_f64().unwrap() >= bws[2] - 1e-9);
        for p in pts {
            assert!(p["latency_ns"]["median"].as_f64().unwrap() > 0.0);
        }
    }
}

#[test]
fn bad_loaded_input_is_refused() {
    for (args, needle) in [
        (&["loaded-latency", "--cpus", "0"][..], "at least 2 CPUs"),
        (&["loaded-latency", "--mix", "4:4"][..], "unknown mix"),
        (&["loaded-latency", "--node", "77"][..], "node 77"),
        (&["loaded-latency", "--knee", "0.5"][..], "--knee"),
    ] {
        let out = memsight().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
