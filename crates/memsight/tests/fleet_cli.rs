//! `memsight fleet DIR` on a directory built from a recorded run: six nodes, one made slower,
//! one with different DIMMs, plus a corrupt file, a partial result, a failed rank and a hung one.
//! And the Prometheus export of a run and of the fleet report.

mod common;

use std::path::Path;

use common::{assert_valid, json, memsight, recorded_run, scale};
use serde_json::Value;

fn node(base: &Value, name: &str, lat: f64, bw: f64) -> Value {
    let mut d = base.clone();
    d["environment"]["hostname"] = Value::String(name.into());
    scale(&mut d["results"]["latency"], lat);
    scale(&mut d["results"]["bandwidth"], bw);
    d
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The fleet directory: node01–node06 (node04 30% slower memory, node06 other DIMM parts),
/// node07 corrupt, node08 partial, ranks 8 (failed) and 9 (hung) with status files only.
fn fleet_dir(dir: &Path) {
    let base = recorded_run();
    // Small, deterministic differences: healthy nodes are alike but not identical.
    let jitter = [1.0, 1.004, 0.997, 1.0, 1.002, 0.998];
    for (i, j) in jitter.iter().enumerate() {
        let name = format!("node{:02}", i + 1);
        let (lat, bw) = if i == 3 { (1.3 * j, 0.7 * j) } else { (*j, *j) };
        let mut d = node(&base, &name, lat, bw);
        if i == 5 {
            for dev in d["results"]["dimms"]["inventory"]["devices"]
                .as_array_mut()
                .unwrap()
            {
                if dev["populated"] == true {
                    dev["part_number"] = Value::String("M393A4K40DB3-CWE".into());
                }
            }
        }
        write(
            dir,
            &format!("{name}/run.json"),
            &serde_json::to_string(&d).unwrap(),
        );
    }
    let full = serde_json::to_string(&node(&base, "node07", 1.0, 1.0)).unwrap();
    write(dir, "node07/run.json", &full[..full.len() / 2]);
    let mut partial = node(&base, "node08", 1.0, 1.0);
    partial["complete"] = Value::Bool(false);
    write(
        dir,
        "node08/run.json",
        &serde_json::to_string(&partial).unwrap(),
    );
    for (rank, state, reason) in [
        (8, "failed", "\"cannot bind memory to NUMA node 1\""),
        (9, "running", "null"),
    ] {
        write(
            dir,
            &format!("job/rank-{rank:05}.status.json"),
            &format!(
                r#"{{"rank":{rank},"size":10,"host":"node{rank:02}","pid":1,"launcher":"slurm","local_size":1,"started":"2026-11-23T03:00:00Z","state":"{state}","reason":{reason},"result":null}}"#
            ),
        );
    }
}

fn fleet_of(dir: &Path, extra: &[&str]) -> Value {
    let doc = json(memsight().args(["fleet", "--json"]).arg(dir).args(extra));
    assert_valid(&doc);
    doc
}

#[test]
fn the_slow_node_is_named_and_every_fault_reported() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    let doc = fleet_of(tmp.path(), &[]);
    let r = &doc["results"];
    let members: Vec<&str> = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(members.len(), 6, "{members:?}");
    let outliers = r["outliers"].as_array().unwrap();
    assert!(!outliers.is_empty());
    // Every flagged figure belongs to node04, and is worse.
    for o in outliers {
        assert_eq!(o["member"], "node04", "{o}");
        assert_eq!(o["direction"], "worse", "{o}");
    }
    let keys: Vec<&str> = outliers
        .iter()
        .map(|o| o["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"latency/cpu0/level/memory"), "{keys:?}");
    assert!(
        keys.iter().any(|k| k.starts_with("bandwidth/read/")),
        "{keys:?}"
    );
    let kinds: Vec<(&str, &str)> = r["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["who"].as_str().unwrap(), f["kind"].as_str().unwrap()))
        .collect();
    assert!(
        kinds.contains(&("node07/run.json", "unreadable")),
        "{kinds:?}"
    );
    assert!(kinds.contains(&("node08/run.json", "partial")), "{kinds:?}");
    assert!(kinds.contains(&("rank 8 (node08)", "failed")), "{kinds:?}");
    assert!(
        kinds.contains(&("rank 9 (node09)", "no_result")),
        "{kinds:?}"
    );
    // Ranks 0–7 of the 10 the launcher started left no status file.
    assert!(
        kinds
            .iter()
            .any(|k| k.0 == "rank 0" && k.1 == "never_started"),
        "{kinds:?}"
    );
    let findings = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        findings.contains("node06: DIMM inventory differs"),
        "{findings}"
    );
    assert!(
        findings.contains("cannot bind memory to NUMA node 1"),
        "{findings}"
    );
    // The headline columns include memory latency and read bandwidth at 2 threads.
    let head: Vec<&str> = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap())
        .collect();
    assert!(
        head.contains(&"latency/cpu0/level/memory") && head.contains(&"bandwidth/read/2t"),
        "{head:?}"
    );
}

#[test]
fn stricter_or_looser_settings_move_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    // For health checks: exit 1 when a node stands out worse or a fault was found, reports
    // written all the same.
    let out = memsight()
        .arg("fleet")
        .arg(tmp.path())
        .args(["--fail-on-outliers", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("node04"));
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
    let loose = fleet_of(tmp.path(), &["--min-change", "0.5"]);
    assert!(
        loose["results"]["outliers"].as_array().unwrap().is_empty(),
        "a 30% change is under 50%"
    );
    for bad in [["--threshold", "0"], ["--min-change", "2"]] {
        let out = memsight()
            .arg("fleet")
            .arg(tmp.path())
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
    }
    let out = memsight()
        .args(["fleet", "/nonexistent/fleet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
}

/// A health check whose results never arrived must not pass: an empty directory, one holding
/// only unreadable files, and fewer results than `--expect` all exit 1 with one line.
#[test]
fn missing_results_fail_the_check() {
    let stderr_of = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).to_string();
    let empty = tempfile::tempdir().unwrap();
    for extra in [&[][..], &["--fail-on-outliers"][..]] {
        let out = memsight()
            .arg("fleet")
            .arg(empty.path())
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {}", stderr_of(&out));
        let err = stderr_of(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("no usable memsight result"), "{err}");
    }
    let corrupt = tempfile::tempdir().unwrap();
    write(corrupt.path(), "node01/run.json", "{\"schema\": ");
    let out = memsight()
        .arg("fleet")
        .arg(corrupt.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // Six usable results of seven expected: the report is written, then exit 1.
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    let out = memsight()
        .arg("fleet")
        .arg(tmp.path())
        .args(["--expect", "7", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
    let err = stderr_of(&out);
    assert!(err.contains("of the 7 expected"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // As many as expected: the check passes (no --fail-on-outliers).
    let out = memsight()
        .arg("fleet")
        .arg(tmp.path())
        .args(["--expect", "6", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let out = memsight()
        .arg("fleet")
        .arg(tmp.path())
        .args(["--expect", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_fleet_page_names_outliers_and_links_node_reports() {
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    std::fs::write(tmp.path().join("node01/report.html"), "<html></html>").unwrap();
    let html = tmp.path().join("fleet.html");
    let out = memsight()
        .arg("fleet")
        .arg(tmp.path())
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<a href=\"node01/report.html\">report</a>"));
    assert!(page.contains("node04"));
    assert!(
        page.matches("<svg").count() >= 2,
        "a distribution chart per headline figure"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("▲"), "outliers marked on the terminal");
}

#[test]
fn prometheus_export_of_a_run_and_of_a_fleet() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    let out = memsight()
        .args(["export", "--format", "prometheus"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    common::check_exposition(&text);
    assert!(text.contains("# TYPE memsight_latency_seconds gauge"));
    assert!(text.contains(
        "memsight_latency_seconds{command=\"run\",suite=\"latency\",test=\"latency\",cpu=\"0\",level=\"memory\"}"
    ));
    assert!(text.contains("memsight_result_info{command=\"run\""));
    let tmp = tempfile::tempdir().unwrap();
    fleet_dir(tmp.path());
    let report = tmp.path().join("fleet.json");
    let out = memsight()
        .arg("fleet")
        .arg(tmp.path())
        .arg("-o")
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = memsight()
        .args(["export", "--format", "prometheus"])
        .arg(&report)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    common::check_exposition(&text);
    assert!(
        text.contains("memsight_fleet_outlier_score{command=\"fleet\",member=\"node04\""),
        "{text}"
    );
    assert!(text.contains(
        "memsight_fleet_fault{command=\"fleet\",member=\"node07/run.json\",kind=\"unreadable\"} 1"
    ));
    assert!(
        text.contains("memsight_latency_seconds{command=\"fleet\",member=\"node01\""),
        "{text}"
    );
}

#[test]
fn a_fleet_of_one_under_hydra_variables_and_a_rank_claimed_twice() {
    let _m = common::measuring();
    let tmp = tempfile::tempdir().unwrap();
    let run = || {
        let mut c = memsight();
        c.args(["run", "--quick", "--no-progress", "--fleet"])
            .arg(tmp.path())
            .args(["--min-samples", "3", "--point-budget", "0.05"])
            .env("PMI_RANK", "0")
            .env("PMI_SIZE", "1")
            .env("PMI_KVSNAME", "kvs_42");
        for v in [
            "SLURM_JOB_ID",
            "SLURM_PROCID",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
        ] {
            c.env_remove(v);
        }
        c.output().unwrap()
    };
    let out = run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = tmp.path().join("kvs_42");
    assert!(job.join("rank-00000/run.json").is_file());
    assert!(job.join("rank-00000/report.html").is_file());
    // The rank's compact record beside its result: what `memsight fleet` reads.
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(job.join("rank-00000/run.summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["schema"], "memsight-node-summary");
    assert!(!summary["figures"].as_array().unwrap().is_empty());
    let status: Value =
        serde_json::from_str(&std::fs::read_to_string(job.join("rank-00000.status.json")).unwrap())
            .unwrap();
    assert_eq!(status["state"], "done");
    assert_eq!(status["launcher"], "mpich");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(job.join("fleet.json")).unwrap()).unwrap();
    assert_valid(&report);
    assert_eq!(report["results"]["members"].as_array().unwrap().len(), 1);
    assert_eq!(report["results"]["expected"], 1);
    // The same rank again in the same directory: refused before measuring, in one line.
    let out = run();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already taken"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_large_fleet_is_drawn_as_histograms_and_its_slow_node_found() {
    // 120 nodes of one recorded bandwidth result, healthy ones within ±1%, node077 20% slower.
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results/bandwidth.json");
    let base: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..120 {
        let mut d = base.clone();
        d["environment"]["hostname"] = Value::String(format!("node{i:03}"));
        let f = if i == 77 {
            0.8
        } else {
            1.0 + 0.01 * ((i % 21) as f64 - 10.0) / 10.0
        };
        scale(&mut d["results"], f);
        write(
            tmp.path(),
            &format!("n{i:03}/bandwidth.json"),
            &serde_json::to_string(&d).unwrap(),
        );
    }
    let html = tmp.path().join("fleet.html");
    let start = std::time::Instant::now();
    let doc = fleet_of(tmp.path(), &["--html", html.to_str().unwrap()]);
    eprintln!("120 results aggregated in {:?}", start.elapsed());
    let r = &doc["results"];
    assert_eq!(r["members"].as_array().unwrap().len(), 120);
    let flagged: std::collections::BTreeSet<&str> = r["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["member"].as_str().unwrap())
        .collect();
    assert_eq!(flagged.into_iter().collect::<Vec<_>>(), vec!["node077"]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("across the 120 nodes of group 0"),
        "histograms, not 120 bars per figure"
    );
    assert!(page.contains("flagged: node077"));
    // The page has the flagged node's row, not one per node.
    assert!(page.contains("Flagged nodes: 1 of 120") && !page.contains("node078"));
}

/// Corrected memory errors (EDAC) are figures of every run: the node whose count stands out
/// within its group is named.
#[test]
fn a_node_with_rising_corrected_errors_stands_out() {
    let tmp = tempfile::tempdir().unwrap();
    let base = recorded_run();
    for (i, ce) in [0u64, 1, 0, 2, 0, 480].iter().enumerate() {
        let name = format!("node{:02}", i + 1);
        let mut d = node(&base, &name, 1.0, 1.0);
        d["environment"]["memory_errors"] = serde_json::json!([{
            "name": "mc0", "driver_name": "Skylake Socket#0 IMC#0", "ce": ce, "ue": 0,
            "ce_noinfo": 0, "ue_noinfo": 0, "seconds_since_reset": 86400,
            "dimms": [{"name": "dimm0", "label": "CPU_SrcID#0_MC#0_Chan#0_DIMM#0",
                       "location": "channel 0 slot 0", "size_mb": 32768, "ce": ce, "ue": 0}]
        }]);
        write(
            tmp.path(),
            &format!("{name}/run.json"),
            &serde_json::to_string(&d).unwrap(),
        );
    }
    let doc = fleet_of(tmp.path(), &[]);
    let text = doc["results"].to_string();
    assert!(text.contains("health/memory-errors/ce"), "{text}");
    let outliers: Vec<&Value> = doc["results"]["outliers"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    assert!(
        outliers
            .iter()
            .any(|o| o.to_string().contains("node06") && o.to_string().contains("memory-errors")),
        "{outliers:?}"
    );
}

/// A rank killed after writing its (partial) result but before updating its status is one
/// fault, the partial result, not also "no result".
#[test]
fn a_rank_killed_between_result_and_status_is_one_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let base = recorded_run();
    for rank in 0..2 {
        let mut d = node(&base, &format!("node{rank:02}"), 1.0, 1.0);
        d["complete"] = Value::Bool(rank == 0);
        write(
            tmp.path(),
            &format!("job/rank-{rank:05}/run.json"),
            &serde_json::to_string(&d).unwrap(),
        );
        let (state, result) = if rank == 0 {
            ("done", "\"rank-00000/run.json\"")
        } else {
            ("running", "null")
        };
        write(
            tmp.path(),
            &format!("job/rank-{rank:05}.status.json"),
            &format!(
                r#"{{"rank":{rank},"size":2,"host":"node{rank:02}","pid":1,"launcher":"slurm","local_size":1,"started":"2026-11-23T03:00:00Z","state":"{state}","reason":null,"result":{result}}}"#
            ),
        );
    }
    let doc = fleet_of(tmp.path(), &[]);
    let faults = doc["results"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0]["kind"], "partial");
}

/// Marks every summary under `v` as resting on disturbed samples.
fn mark_short(v: &mut Value) {
    match v {
        Value::Object(m) if m.contains_key("median") && m.contains_key("ci_level") => {
            m.insert(
                "shortfall".into(),
                serde_json::json!({"clean": 0, "wanted": 5, "disturbed_kept": 5, "cause": "lost_cpu"}),
            );
        }
        Value::Object(m) => m.values_mut().for_each(mark_short),
        Value::Array(a) => a.iter_mut().for_each(mark_short),
        _ => {}
    }
}

/// A node whose bandwidth figures rest on disturbed samples looks slow, but is not judged: the
/// fleet names it as disturbed instead of flagging its memory.
#[test]
fn figures_on_too_few_clean_samples_are_not_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let base = recorded_run();
    for i in 1..=5 {
        let name = format!("node{i:02}");
        let mut d = node(&base, &name, 1.0, if i == 3 { 0.6 } else { 1.0 });
        if i == 3 {
            mark_short(&mut d["results"]["bandwidth"]);
        }
        write(
            tmp.path(),
            &format!("{name}/run.json"),
            &serde_json::to_string(&d).unwrap(),
        );
    }
    let doc = fleet_of(tmp.path(), &[]);
    let r = &doc["results"];
    let flagged: Vec<&Value> = r["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["member"] == "node03")
        .collect();
    assert!(flagged.is_empty(), "{flagged:?}");
    let findings = r["findings"].to_string();
    assert!(
        findings.contains("node03: ") && findings.contains("rest on disturbed samples"),
        "{findings}"
    );
}

/// The Catamount paper's HPCCG experiment across nodes is one command: `rowbuffer --fleet DIR`
/// under a launcher leaves each rank's study under DIR and the fleet report compares HPCCG's
/// time per solve (here one rank, under Slurm's variables).
#[test]
fn the_row_buffer_study_runs_as_a_fleet() {
    let _m = common::measuring();
    let tmp = tempfile::tempdir().unwrap();
    let mut c = memsight();
    c.args([
        "rowbuffer",
        "--kernels",
        "hpccg",
        "--offsets",
        "0..64K/32K",
        "--reps",
        "1",
        "--samples",
        "1",
        "--no-probe",
        "--array-size",
        "8M",
        "--no-progress",
        "--fleet",
    ])
    .arg(tmp.path())
    .env("SLURM_JOB_ID", "77")
    .env("SLURM_STEP_ID", "0")
    .env("SLURM_PROCID", "0")
    .env("SLURM_STEP_NUM_TASKS", "1")
    .env("SLURM_NTASKS", "1");
    for v in [
        "PMI_RANK",
        "PMI_SIZE",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
    ] {
        c.env_remove(v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = std::fs::read_dir(tmp.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(job.join("rank-00000/rowbuffer.json").is_file());
    let status: Value =
        serde_json::from_str(&std::fs::read_to_string(job.join("rank-00000.status.json")).unwrap())
            .unwrap();
    assert_eq!(status["result"], "rank-00000/rowbuffer.json");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(job.join("fleet.json")).unwrap()).unwrap();
    assert_valid(&report);
    let r = &report["results"];
    assert_eq!(r["members"][0]["command"], "rowbuffer");
    let head: Vec<&str> = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap())
        .collect();
    assert!(
        head.iter()
            .any(|k| k.starts_with("rowbuffer/hpccg/") && k.ends_with("/solve-ms-median")),
        "{head:?}"
    );
}
