//! `memsight profile`: a started program's memory held, huge-page coverage and placement; a
//! watched process; time limits, exit codes and bad input.

mod common;

use common::memsight;

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A program that writes 300 MiB and holds it for a second is seen holding it, on this
/// machine's nodes, with its threads' nodes known; its output does not spoil the JSON.
#[test]
fn a_started_program_is_seen_holding_what_it_wrote() {
    let out = memsight()
        .args([
            "profile",
            "--json",
            "--no-progress",
            "--interval-ms",
            "50",
            "--",
        ])
        .args([
            "python3",
            "-c",
            "import time; b = bytearray(b'x') * (300 << 20); print('held'); time.sleep(1.5)",
        ])
        .output()
        .unwrap();
    let doc = json(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("held"));
    let r = &doc["results"];
    assert_eq!(r["ending"]["exited"], 0);
    let peak = &r["peak"];
    let rss = peak["held"]["rss"].as_u64().unwrap();
    assert!(rss >= 300 << 20, "peak RSS {rss}");
    assert!(r["timeline"].as_array().unwrap().len() >= 3);
    // Page cache: read from a cgroup made for the program (then every reading carries it), or
    // the result says in one line why not.
    match r["memory_group"]["own"].as_bool() {
        Some(own) => {
            assert!(own);
            assert!(peak["group"]["page_cache"].is_u64(), "{peak}");
        }
        None => assert!(!r["no_memory_group"].as_str().unwrap().contains('\n')),
    }
    let nodes = r["placement"]["nodes"].as_array().unwrap();
    let paged: u64 = nodes.iter().map(|n| n["bytes"].as_u64().unwrap()).sum();
    assert!(paged >= 300 << 20, "numa_maps pages {paged}");
    assert!(
        !r["placement"]["thread_nodes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let findings: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(common::text)
        .collect();
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("memory held at the peak")),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(|f| f.starts_with("placement:")),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(|f| f.starts_with("huge pages:")),
        "{findings:?}"
    );
}

/// A running process is watched for the time asked; a program past --timeout is stopped and
/// reaped, and what was read is kept (exit 0: the limit was asked for).
#[test]
fn a_watch_and_a_time_limit_end_as_asked() {
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = sleeper.id().to_string();
    let doc = json(
        &memsight()
            .args([
                "profile",
                "--json",
                "--no-progress",
                "--no-pressure",
                "--pid",
                &pid,
                "--for",
                "1",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(doc["results"]["ending"], "completed");
    assert_eq!(doc["results"]["pid"].as_u64().unwrap().to_string(), pid);
    let _ = sleeper.kill();
    let _ = sleeper.wait();

    let doc = json(
        &memsight()
            .args([
                "profile",
                "--json",
                "--no-progress",
                "--no-pressure",
                "--timeout",
                "1",
                "--",
                "sleep",
                "30",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(doc["results"]["ending"], "timed-out");
    assert_eq!(doc["complete"], true);
    assert!(
        doc["results"]["seconds"].as_f64().unwrap() < 20.0,
        "stopped, not waited for"
    );
}

/// Bad input is one line and exit 2; a program that fails makes the profile fail (exit 3).
#[test]
fn bad_input_and_failing_programs_are_said_in_one_line() {
    for (args, code, says) in [
        (&[][..], 2, "give a program after `--`, or --pid PID"),
        (
            &["--", "/nonexistent/program"][..],
            2,
            "cannot start /nonexistent/program",
        ),
        (&["--pid", "4294967"][..], 2, "no such process"),
        (
            &["--interval-ms", "1", "--", "true"][..],
            2,
            "--interval-ms must be at least 10",
        ),
        (&["--", "false"][..], 3, "the program exited with code 1"),
    ] {
        let out = memsight()
            .args(["profile", "--no-progress", "--no-pressure"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// With recorded curves, a probe reads latency beside the program and each reading is mapped
/// to a bandwidth interval; curves that hold none are refused in one line.
#[test]
fn recorded_curves_give_a_pressure_reading() {
    let curves = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/results/loaded-latency.json");
    let doc = json(
        &memsight()
            .args(["profile", "--json", "--no-progress", "--curves"])
            .arg(&curves)
            .args(["--", "sleep", "1"])
            .output()
            .unwrap(),
    );
    let p = &doc["results"]["pressure"];
    assert!(
        p["family_source"]
            .as_str()
            .unwrap()
            .contains("loaded-latency.json")
    );
    assert!(p["probe_idle_ns"].as_f64().unwrap() > 0.0);
    let readings = p["readings"].as_array().unwrap();
    assert!(!readings.is_empty());
    assert!(
        readings.iter().any(|r| r["pressure"]["kind"].is_string()),
        "{readings:?}"
    );
    assert!(
        doc["results"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| common::text(f).starts_with("bandwidth pressure:")),
        "{}",
        doc["results"]["findings"]
    );
    common::assert_valid(&doc);
    let stream =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results/stream.json");
    let out = memsight()
        .args(["profile", "--no-progress", "--curves"])
        .arg(&stream)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no loaded-latency curves"));
}
