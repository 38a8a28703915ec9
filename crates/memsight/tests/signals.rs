//! A stop at any moment of a quick run keeps a readable result that says it is partial: SIGTERM
//! (a service manager, Slurm, a batch system's time limit) and SIGINT (Ctrl-C), in turn, at
//! offsets from the start to past the end of a whole run, landing in the environment probe,
//! the drift probes, between suites, inside them and while the result is written. Each result
//! must read as JSON the schema accepts, and `check` against a reference whose tolerances pass
//! any figure must call a partial one INCOMPLETE, never PASS.
//!
//! By default the offsets grow geometrically (`offsets`); `MEMSIGHT_SIGNAL_STEP_S=0.5` sends one
//! every half second instead (about five minutes instead of one, on 2 CPUs).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::memsight;

fn quick_run(out: &Path) -> Command {
    let mut c = memsight();
    c.args([
        "run",
        "--quick",
        "--no-history",
        "--no-progress",
        "--quiet",
        "--out",
    ])
    .arg(out)
    .stdout(Stdio::null());
    c
}

/// A reference made from `run`, its tolerances widened so that any figure passes: the verdict
/// then judges completeness alone.
fn lenient_reference(dir: &Path, run: &Path) -> PathBuf {
    let reference = dir.join("reference.toml");
    common::ok(
        &memsight()
            .args(["check", "--make-reference"])
            .arg(&reference)
            .arg(run.join("run.json"))
            .output()
            .unwrap(),
    );
    let text = std::fs::read_to_string(&reference).unwrap();
    let wide: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("relative =") {
                "relative = 1000.0".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&reference, wide + "\n").unwrap();
    reference
}

/// `check`'s verdict on a stored result.
fn verdict(reference: &Path, result: &Path) -> String {
    let out = memsight()
        .args(["--json", "check", "--reference"])
        .arg(reference)
        .arg(result)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    doc["verdict"].as_str().unwrap().to_string()
}

/// One run stopped `offset` after it started: its exit code and stderr, or `None` as its code
/// when it ended before the signal was sent.
struct Stopped {
    offset: f64,
    signal: &'static str,
    code: Option<i32>,
    stderr: String,
    out: PathBuf,
}

fn stop_at(child: &mut Child, offset: f64, signal: &'static str) -> bool {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return false;
    }
    let st = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "kill at {offset} s");
    true
}

/// Waits for `child`, failing the test if it does not stop within a minute of the signal (a
/// bound that tells a stop from a hang, not a timing).
fn wait(mut child: Child) -> (i32, String) {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(60), "stopped, not hung");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs quick runs stopped at each offset, one at a time (a run beside another would measure
/// as long again, and its offsets would fall in other phases).
fn stop_each(dir: &Path, offsets: &[f64]) -> Vec<Stopped> {
    let mut done = Vec::new();
    for (n, &t) in offsets.iter().enumerate() {
        let signal = if n % 2 == 0 { "TERM" } else { "INT" };
        let out = dir.join(format!("stopped-{t:.2}"));
        let t0 = Instant::now();
        let mut child = quick_run(&out).stderr(Stdio::piped()).spawn().unwrap();
        std::thread::sleep(Duration::from_secs_f64(t).saturating_sub(t0.elapsed()));
        let sent = stop_at(&mut child, t, signal);
        let (code, stderr) = wait(child);
        done.push(Stopped {
            offset: t,
            signal,
            code: sent.then_some(code),
            stderr,
            out,
        });
    }
    done
}

/// When the signals go, from just after the start (a signal before main installs its handler,
/// in the first milliseconds, ends the process as the default action does) to past the end of
/// a run `length` seconds long: by default 0.1 s × 1.6^k, dense where the setup's phases follow
/// each other fast (environment, reach probe, first drift probe, the ladder's start), then as
/// the whole run ends (its last probe, the writing) and after it; with MEMSIGHT_SIGNAL_STEP_S,
/// every that many seconds.
fn offsets(length: f64) -> Vec<f64> {
    let end = length + 1.0;
    if let Some(step) = std::env::var("MEMSIGHT_SIGNAL_STEP_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s >= 0.05)
    {
        return (0..)
            .map(|i| 0.1 + i as f64 * step)
            .take_while(|t| *t < end)
            .collect();
    }
    let mut at: Vec<f64> = (0..)
        .map(|k| 0.1 * 1.6f64.powi(k))
        .take_while(|t| *t < length - 1.0)
        .collect();
    at.extend([length - 0.1, length + 0.5]);
    at
}

#[test]
fn a_stop_at_any_moment_of_a_quick_run_keeps_a_partial_result() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    // A whole run: its length sets the offsets, and it makes the reference.
    let whole = dir.path().join("whole");
    let t0 = Instant::now();
    let st = quick_run(&whole).status().unwrap();
    assert!(st.success(), "an uninterrupted quick run: {st}");
    let length = t0.elapsed().as_secs_f64();
    let reference = lenient_reference(dir.path(), &whole);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(whole.join("run.json")).unwrap()).unwrap();
    common::assert_findings_follow_their_figures(&doc);
    assert_eq!(verdict(&reference, &whole.join("run.json")), "PASS");
    let offsets = offsets(length);
    let stopped = stop_each(dir.path(), &offsets);
    let (mut partial, mut named) = (0, 0);
    for s in &stopped {
        let at = format!("SIG{} at {:.2} s: {}", s.signal, s.offset, s.stderr.trim());
        let file = s.out.join("run.json");
        let text = std::fs::read(&file).unwrap_or_else(|e| panic!("{at}: no result ({e})"));
        let doc: serde_json::Value = serde_json::from_slice(&text).expect("whole JSON");
        common::assert_valid(&doc);
        let complete = doc["complete"].as_bool().unwrap();
        match (s.code, complete) {
            // It ended before the signal was sent, or as it was sent (after its last check).
            (None | Some(0), true) => {}
            (Some(130), false) => {
                partial += 1;
                assert_eq!(verdict(&reference, &file), "INCOMPLETE", "{at}");
                let skipped = doc["results"]["skipped"].as_array().unwrap();
                named += skipped
                    .iter()
                    .any(|l| l.as_str().unwrap().contains("interrupted"))
                    as usize;
            }
            // The stop came as the result was being written: complete, and said so.
            (Some(130), true) => assert!(
                s.stderr
                    .contains("interrupted after the measurements ended"),
                "{at}"
            ),
            (code, complete) => panic!("{at}: exit {code:?} with complete = {complete}"),
        }
    }
    // Nearly every offset falls inside the run (the last ones after it), and the results name
    // the suites the stop kept from running.
    assert!(
        partial * 4 + 8 >= offsets.len() * 3,
        "{partial} of {} stops found the run measuring",
        offsets.len()
    );
    assert!(
        named * 2 >= partial,
        "{named} of {partial} name what did not run"
    );
}
