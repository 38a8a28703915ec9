//! Drift during `memsight run`: the reference probes are taken and stored, a competing load
//! that starts part-way is reported with the suites it touched, and `--no-drift` leaves them
//! out. (The rule itself is unit-tested on synthetic series in `memsight_suites::probes`.)

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{memsight, ok};

/// Processes that stream memory on every CPU until killed: a competing job.
struct Load(Vec<Child>);

impl Load {
    fn start(n: usize) -> Load {
        let code = "a = bytearray(64 << 20)\nwhile True:\n    b = bytes(a)\n";
        Load(
            (0..n)
                .map(|_| {
                    Command::new("python3")
                        .args(["-c", code])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("python3 runs")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

#[test]
fn a_load_started_part_way_is_reported_with_the_suites_it_touched() {
    let out = tempfile::tempdir().unwrap();
    let run = memsight()
        .args(["run", "--quick", "--no-history", "--no-progress", "--json"])
        .arg("--out")
        .arg(out.path().join("run"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run's start probe and the first suite go undisturbed; then a job takes every CPU.
    std::thread::sleep(Duration::from_millis(2500));
    let load = Load::start(cpus());
    let output = run.wait_with_output().unwrap();
    drop(load);
    let doc: serde_json::Value = serde_json::from_str(&ok(&output)).unwrap();
    let drift = &doc["results"]["drift"];
    let probes = drift["probes"].as_array().expect("probes stored");
    assert!(probes.len() >= 3, "{drift}");
    assert_eq!(probes[0]["label"], "start");
    // Memory shared with it, or CPUs taken by it: either way the run says so and names the
    // suites measured while it ran (on a 2-CPU guest the job takes the probe's CPU too).
    let findings = drift["findings"].to_string();
    assert!(
        findings.contains("took the reference probe's CPU while these suites measured")
            || findings.contains("moved"),
        "the load went unreported: {drift}"
    );
    let v = &drift["verdict"];
    let named: Vec<&str> = ["slow", "cpu_shared"]
        .iter()
        .flat_map(|k| v[*k].as_array().into_iter().flatten())
        .filter_map(|a| a["suite"].as_str())
        .collect();
    assert!(v.is_null() || !named.is_empty(), "{v}");
}

#[test]
fn no_drift_takes_no_probe() {
    let out = tempfile::tempdir().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&ok(&memsight()
        .args([
            "run",
            "--quick",
            "--no-history",
            "--no-progress",
            "--json",
            "--no-drift",
            "--only",
            "latency",
        ])
        .arg("--out")
        .arg(out.path().join("run"))
        .output()
        .unwrap()))
    .unwrap();
    assert!(doc["results"].get("drift").is_none(), "{}", doc["results"]);
    // The run records its predicted time beside what the suite took (without probes in either).
    let timing = &doc["results"]["timing"];
    let latency = &timing["suites"][0];
    assert_eq!(latency["suite"], "latency", "{timing}");
    assert!(latency["predicted_s"].as_f64().unwrap() > 0.0, "{timing}");
    assert!(latency["actual_s"].as_f64().unwrap() > 0.0, "{timing}");
    assert_eq!(timing["start_s"], 0.0, "{timing}");
}

/// Ctrl-C during a run keeps the probes taken so far with the partial run. The signal comes
/// after 6 s; should a loaded machine still be sizing the probe then, the partial run says the
/// probe was interrupted before it started.
#[test]
fn an_interrupted_run_keeps_its_probes() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let child = memsight()
        .args(["run", "--no-history", "--no-progress"])
        .args(["--target-ci", "0.0000001", "--point-budget", "30"])
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(6));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(130));
    let err = String::from_utf8_lossy(&done.stderr);
    let bytes = std::fs::read(dir.join("run.json")).unwrap_or_else(|e| panic!("{e}: {err}"));
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(doc["complete"], false);
    match doc["results"]["drift"]["probes"].as_array() {
        Some(probes) => assert!(!probes.is_empty(), "the start probe is kept"),
        None => assert!(
            doc["results"]["skipped"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l
                    .as_str()
                    .unwrap()
                    .starts_with("drift: interrupted before its first probe")),
            "{}",
            doc["results"]["skipped"]
        ),
    }
}
