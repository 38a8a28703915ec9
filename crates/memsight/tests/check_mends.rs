//! `memsight check` as an unattended health check leans on it (docs/operations.md): a slow
//! phase excuses a shortfall only as large as the slow phase; a reference that cannot judge a
//! figure is INCOMPLETE, never FAIL; a new reference's memory minimum is MemTotal's; Nagios
//! gets UNKNOWN for a command line it cannot read, and perfdata with ranges and units.

mod common;

use std::path::{Path, PathBuf};

use common::{memsight, ok};

fn thorough() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json")
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `check --format F --reference REF RESULT`: (exit code, stdout).
fn check(format: &str, reference: &Path, result: &Path) -> (Option<i32>, String) {
    let out = memsight()
        .args(["check", "--format", format, "--reference"])
        .arg(reference)
        .arg(result)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A reference made from the recorded run, written as JSON in `dir`.
fn reference(dir: &Path) -> serde_json::Value {
    let path = dir.join("made.json");
    let out = memsight()
        .args(["check", "--make-reference"])
        .arg(&path)
        .arg(thorough())
        .output()
        .unwrap();
    ok(&out);
    read_json(&path)
}

fn write(dir: &Path, name: &str, v: &serde_json::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p
}

/// A drift series whose verdict says the bandwidth suite measured with the machine at `share`
/// of its best (one core's rate and the team's).
fn slow_bandwidth(share: f64) -> serde_json::Value {
    let affected = serde_json::json!([{"suite": "bandwidth", "from_s": 10.0, "to_s": 20.0,
        "share_of_best": share}]);
    serde_json::json!({
        "method": "m", "cpu": 0, "buffer_bytes": 268435456u64, "probes": [], "phases": [],
        "findings": [],
        "verdict": {"usable": 4, "probes": 4, "bandwidth_ratio": 1.0 / share,
            "latency_ratio": 1.0, "noise": 0.01, "moved": true, "slow_from_s": 10.0,
            "slow_to_s": 20.0, "slow": affected, "cpu_shared": [],
            "team": {"usable": 4, "bandwidth_ratio": 1.0 / share, "best_gbs": 50.0,
                "low_gbs": 50.0 * share, "moved": true, "slow": affected}}
    })
}

/// The read bandwidth expectation of `r` raised so that the recorded figure is `short` below
/// it, judged without tolerance.
fn expect_read_above(r: &mut serde_json::Value, value: f64, short: f64) {
    let read = r["figure"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|f| f["select"] == "bandwidth/read/2t")
        .expect("the reference holds read bandwidth");
    read["expect"] = (value / (1.0 - short)).into();
    read["tolerance"] = serde_json::json!({"relative": 0.0});
}

/// The recorded read bandwidth as `check` reads it, against `reference`.
fn read_value(reference: &Path, doc: &Path) -> f64 {
    let out = memsight()
        .args(["check", "--json", "--reference"])
        .arg(reference)
        .arg(doc)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bandwidth/read/2t")
        .and_then(|c| c["value"].as_f64())
        .expect("the run holds bandwidth/read/2t")
}

/// Probes 5% slow while bandwidth measured: a figure 3% short is not judged (INCOMPLETE), one
/// 50% short fails, as `compare` bounds the same allowance.
#[test]
fn a_slow_phase_excuses_no_more_than_its_own_depth() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = read_json(&thorough());
    doc["results"]["drift"] = slow_bandwidth(0.95);
    let result = write(dir.path(), "slow.json", &doc);
    let mut r = reference(dir.path());
    let value = read_value(&dir.path().join("made.json"), &result);
    expect_read_above(&mut r, value, 0.03);
    let (code, line) = check("line", &write(dir.path(), "r3.json", &r), &result);
    assert_eq!(code, Some(3), "{line}");
    assert!(line.starts_with("memsight: INCOMPLETE"), "{line}");
    expect_read_above(&mut r, value, 0.50);
    let (code, line) = check("line", &write(dir.path(), "r50.json", &r), &result);
    assert_eq!(code, Some(1), "{line}");
    assert!(
        line.starts_with("memsight: FAIL bandwidth/read/2t"),
        "{line}"
    );
    // Without the slow phase the 3% shortfall is a failure.
    let steady = write(dir.path(), "steady.json", &read_json(&thorough()));
    let (code, line) = check(
        "line",
        &write(dir.path(), "r3b.json", &{
            let mut r = r.clone();
            expect_read_above(&mut r, value, 0.03);
            r
        }),
        &steady,
    );
    assert_eq!(code, Some(1), "{line}");
}

/// A unit the figure is not in says the reference is wrong: INCOMPLETE (exit 3, UNKNOWN for
/// Nagios), so that one error in a cluster's reference drains no node.
#[test]
fn a_reference_in_the_wrong_unit_is_incomplete_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = reference(dir.path());
    for f in r["figure"].as_array_mut().unwrap() {
        if f["select"] == "bandwidth/read/2t" {
            f["unit"] = "ns".into();
        }
    }
    let bad = write(dir.path(), "bad-unit.json", &r);
    let (code, line) = check("line", &bad, &thorough());
    assert_eq!(code, Some(3), "{line}");
    assert!(
        line.starts_with("memsight: INCOMPLETE") && line.contains("bandwidth/read/2t"),
        "{line}"
    );
    let (code, line) = check("nagios", &bad, &thorough());
    assert_eq!(code, Some(3), "{line}");
    assert!(line.starts_with("MEMSIGHT UNKNOWN"), "{line}");
}

/// The memory minimum of a new reference is 98% of MemTotal, the figure `check` holds against
/// it, not of the NUMA nodes' sum (which a guest's nodes may leave far below).
#[test]
fn a_new_reference_takes_its_memory_minimum_from_memtotal() {
    let dir = tempfile::tempdir().unwrap();
    let r = reference(dir.path());
    let doc = read_json(&thorough());
    let total = doc["environment"]["memory"]["total_bytes"]
        .as_f64()
        .unwrap();
    let nodes = doc["environment"]["topology"]["total_memory_bytes"]
        .as_f64()
        .unwrap();
    assert!(
        nodes < 0.5 * total,
        "the recorded run's nodes hold less than MemTotal"
    );
    let min = r["health"]["memory_at_least"].as_str().unwrap();
    let gib: f64 = min.trim_end_matches("GiB").parse().unwrap();
    let bytes = gib * (1u64 << 30) as f64;
    assert!((bytes / total - 0.98).abs() < 0.01, "{min} of {total} B");
    // A node that lost most of its memory fails.
    let mut lost = doc.clone();
    lost["environment"]["memory"]["total_bytes"] = ((0.26 * total) as u64).into();
    let (code, line) = check(
        "line",
        &write(dir.path(), "r.json", &r),
        &write(dir.path(), "lost.json", &lost),
    );
    assert_eq!(code, Some(1), "{line}");
    assert!(line.contains("health/memory"), "{line}");
}

/// A monitoring plugin answers every time: a command line it cannot read is UNKNOWN (3) with
/// the reason on stdout; perfdata carry the reference's range as warn and crit, min 0, and
/// name units the format has no symbol for.
#[test]
fn nagios_says_unknown_for_usage_errors_and_gives_ranges_in_perfdata() {
    let out = memsight()
        .args(["check", "--format", "nagios", "--no-such-flag"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{line}");
    assert!(line.starts_with("MEMSIGHT UNKNOWN - usage:"), "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");

    let dir = tempfile::tempdir().unwrap();
    let r = write(dir.path(), "r.json", &reference(dir.path()));
    let (code, line) = check("nagios", &r, &thorough());
    assert_eq!(code, Some(0), "{line}");
    let (_, perf) = line.trim().split_once(" | ").expect("perfdata");
    let read = perf
        .split(" '")
        .find(|p| {
            p.trim_start_matches('\'')
                .starts_with("bandwidth/read/2t GB/s")
        })
        .unwrap_or_else(|| panic!("{perf}"));
    let (_, data) = read.split_once("'=").unwrap();
    let parts: Vec<&str> = data.split(';').collect();
    assert_eq!(parts.len(), 5, "{data}");
    assert!(parts[1].ends_with(':') && parts[1] == parts[2], "{data}");
    assert_eq!(parts[3], "0", "{data}");
    let memory = perf
        .split(" '")
        .find(|p| p.contains("latency/cpu0/level/memory'"))
        .unwrap_or_else(|| panic!("{perf}"));
    assert!(
        memory.contains("s;~:0."),
        "latency in seconds, at most: {memory}"
    );
    // Plain decimals: the format has no exponents.
    for item in perf.split(' ').filter_map(|p| p.split_once("'=")) {
        assert!(!item.1.contains('e'), "{perf}");
    }
}
