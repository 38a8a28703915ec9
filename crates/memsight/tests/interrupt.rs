//! Ctrl-C stops a run cleanly and keeps what was measured.

mod common;

use std::time::Duration;

use common::memsight;

/// Ladder settings whose points never converge under a long budget: the run would take minutes.
const NEVER_CONVERGES: [&str; 9] = [
    "--no-progress",
    "--max-size",
    "1M",
    "--target-ci",
    "0.0000001",
    "--min-samples",
    "5",
    "--point-budget",
    "30",
];

/// Starts `cmd`, sends it SIGINT after 2.5 s, and returns its output; asserts it stopped
/// (within a minute of the signal) with exit code 130.
fn interrupted(cmd: &mut std::process::Command) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    // A bound that tells a stop from a hang, not a timing: giving back a hugetlb pool or
    // writing a report took over 10 s on a loaded 2-CPU machine; each test also checks that
    // the results say they are partial.
    let waited = t.elapsed();
    assert!(
        waited < Duration::from_secs(60),
        "stopped, not hung: {waited:?}"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn sigint_writes_partial_results_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("partial.json");
    interrupted(
        memsight()
            .arg("latency")
            .args(NEVER_CONVERGES)
            .arg("-o")
            .arg(&file),
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    let points = doc["results"]["ladders"][0]["main"]["points"]
        .as_array()
        .unwrap();
    assert!(!points.is_empty(), "what was measured is kept");
    common::assert_valid(&doc);
}

#[test]
fn sigint_during_run_keeps_a_partial_run_in_files_and_history() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let out_dir = dir.path().join("r");
    // Without the drift probes, the ladder starts at once and the signal finds it measuring
    // (the probes' own interrupt is tests/drift_cli.rs's).
    interrupted(
        memsight()
            .arg("run")
            .arg("--no-drift")
            .args(NEVER_CONVERGES)
            .arg("--db")
            .arg(&db)
            .arg("--out")
            .arg(&out_dir),
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    common::assert_valid(&doc);
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("interrupted"),
        "the report says the run is partial"
    );
    let rows = common::json(memsight().args(["history", "--json", "--db"]).arg(&db));
    assert_eq!(
        rows["runs"][0]["complete"], false,
        "the history marks it partial"
    );
}

/// `rowbuffer --reserve-huge` raises a hugetlb pool for the run; Ctrl-C in the middle of the
/// sweep must still give every page back. As root only (the pools are root's).
#[test]
fn sigint_during_a_reserved_sweep_gives_the_huge_pages_back() {
    let _serial = common::measuring();
    let pools = [
        "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
        "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
    ];
    let read = || -> Vec<Option<String>> {
        pools
            .iter()
            .map(|p| std::fs::read_to_string(p).ok())
            .collect()
    };
    let before = read();
    if !common::is_root() || before.iter().all(Option::is_none) {
        eprintln!("skipped: needs root and a hugetlb pool");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("partial.json");
    interrupted(
        memsight()
            .args([
                "rowbuffer",
                "--reserve-huge",
                "--kernels",
                "copy",
                "--no-probe",
            ])
            // A given size skips the working-set probes, so the signal lands in the sweep
            // however busy the machine is (it stops a run still setting up with no file).
            .args(["--array-size", "64M"])
            .args(["--no-progress", "--reps", "3", "-o"])
            .arg(&file),
    );
    assert_eq!(read(), before, "the pools are as they were");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
}

/// Ctrl-C during a profile keeps its readings, stops the program it started and reaps it.
#[test]
fn sigint_during_a_profile_keeps_its_readings_and_stops_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("profile.json");
    // A marker no other process carries, to find the program afterwards.
    let marker = format!("{}", 3000 + std::process::id() % 1000);
    interrupted(
        memsight()
            .args(["profile", "--no-progress", "--no-pressure", "-o"])
            .arg(&file)
            .args(["--", "sleep", &marker]),
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["results"]["ending"], "interrupted");
    assert!(!doc["results"]["timeline"].as_array().unwrap().is_empty());
    let left = std::process::Command::new("pgrep")
        .args(["-f", &format!("^sleep {marker}$")])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "the program was stopped and reaped");
    common::assert_valid(&doc);
}
