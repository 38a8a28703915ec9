//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The memsight binary under test. Runs that do not name a database store their history in a
/// file under cargo's target directory, never in the user's real history.
pub fn memsight() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memsight"));
    c.env(
        "MEMSIGHT_DB",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/memsight-test-history.sqlite"),
    );
    c
}

/// The recorded machines the tests read: `testdata/` at the top of this repository (dmidecode
/// dumps, hwloc XML and sysfs snapshots; sources and licences in `testdata/README.md`).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Unpacks an hwloc sysfs snapshot (`linux/NAME.tar.bz2`) and returns its root directory.
pub fn unpack_fsroot(name: &str, into: &Path) -> PathBuf {
    let tarball = fixtures()
        .join("hwloc/linux")
        .join(format!("{name}.tar.bz2"));
    let st = Command::new("tar")
        .arg("xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(into)
        .status()
        .expect("tar runs");
    assert!(st.success(), "unpacking {}", tarball.display());
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(into)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "one root in {name}");
    dirs.pop().unwrap()
}

/// A recorded hwloc XML topology. Most were written by hwloc 3 (`version="3.0"`), which
/// memsight reads with the hwloc 2 it links (`Topology::from_xml_file`), as a user's would be.
pub fn xml_fixture(name: &str) -> PathBuf {
    fixtures().join("hwloc/xml").join(name)
}

/// The stdout of a run that must succeed; panics with stderr otherwise.
pub fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "memsight failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs memsight with args and parses its `--json` output; panics with stderr on failure.
pub fn json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("memsight runs");
    serde_json::from_str(&ok(&out)).expect("stdout is JSON")
}

/// The JSON Schema `memsight schema` prints.
pub fn schemas() -> serde_json::Value {
    json(memsight().arg("schema"))
}

/// The commands whose results the schema describes.
pub fn schema_commands() -> Vec<String> {
    schemas()["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix("results-").map(str::to_string))
        .collect()
}

/// Validates a result document against the schema, taken as it is.
pub fn assert_valid(doc: &serde_json::Value) {
    let s = schemas();
    let v = jsonschema::validator_for(&s).expect("the schema compiles as it is");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", doc["command"]);
}

/// Holds a result's findings to scripts/check-findings.py: doubt marks where the figures rest on
/// disturbed samples, and comparative sentences that follow their numbers.
pub fn assert_findings_follow_their_figures(doc: &serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("result.json");
    std::fs::write(&file, serde_json::to_vec(doc).unwrap()).unwrap();
    findings_check(&[file.as_os_str()]);
}

/// Runs scripts/check-findings.py with `args`, asserting that it passes.
pub fn findings_check(args: &[&std::ffi::OsStr]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/check-findings.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Serialises the tests of one binary that time memory: two ladders pinned to the same CPU would
/// share it and distort each other's figures (and their orderings).
pub fn measuring() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sampling settings that keep a test ladder short: one size per octave, 3 samples, 50 ms a size.
pub const QUICK: [&str; 7] = [
    "--no-progress",
    "--points-per-octave",
    "1",
    "--min-samples",
    "3",
    "--point-budget",
    "0.05",
];

/// memsight run as an unprivileged user (uid 65534) through `setpriv`, from a copy of the binary
/// in a world-readable temporary directory (the checkout may sit below a directory that user
/// cannot enter).
pub struct Unprivileged {
    pub dir: tempfile::TempDir,
}

/// Whether the tests run as root (effective uid 0).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

impl Unprivileged {
    /// `None`, with a message, unless the tests run as root and `setpriv` exists.
    pub fn new() -> Option<Self> {
        use std::os::unix::fs::PermissionsExt;
        if !is_root() || Command::new("setpriv").arg("--version").output().is_err() {
            eprintln!("needs root and setpriv to drop to an unprivileged user: skipping");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = dir.path().join("memsight");
        std::fs::copy(env!("CARGO_BIN_EXE_memsight"), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        Some(Unprivileged { dir })
    }

    /// The command, working in the copy's directory.
    pub fn memsight(&self) -> Command {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(self.dir.path().join("memsight"))
            .current_dir(self.dir.path());
        c
    }
}

/// Asserts that a run was refused as bad input: exit 2, one line on stderr naming `needle`, no
/// panic. Returns the message.
pub fn refused(out: &std::process::Output, needle: &str) -> String {
    refused_with(out, needle, 2)
}

/// Like [`refused`], for what the system refused (a corrupt database, a full disk): exit 3.
pub fn system_refused(out: &std::process::Output, needle: &str) -> String {
    refused_with(out, needle, 3)
}

fn refused_with(out: &std::process::Output, needle: &str, code: i32) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "exit {code} expected: {err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"));
    err
}

/// Checks Prometheus text the way its users' tools read it: the official Python client's parser
/// and `promtool check metrics` where installed (CI installs python3-prometheus-client and
/// prometheus), else the line grammar; every family in base units with HELP and TYPE, and no two
/// samples of a family with the same labels (a scrape would refuse them).
pub fn check_exposition(text: &str) {
    let mut seen = std::collections::BTreeSet::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a value");
        let name = series.split('{').next().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
        assert!(
            text.contains(&format!("# HELP {name} "))
                && text.contains(&format!("# TYPE {name} gauge")),
            "{name} lacks HELP or TYPE"
        );
        for unit in [
            "nanoseconds",
            "gigabytes",
            "megabytes",
            "percent",
            "milliseconds",
        ] {
            assert!(!name.contains(unit), "{name}: not a base unit");
        }
        assert!(!series.contains("started="), "a per-run label: {line}");
        assert!(
            value.parse::<f64>().is_ok() || value == "NaN" || value.ends_with("Inf"),
            "{line}"
        );
        assert!(seen.insert(series.to_string()), "duplicate series {series}");
    }
    // Debian's python3 (where python3-prometheus-client installs), not a pyenv one on PATH.
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let parsed = pipe(
        python,
        &[
            "-c",
            "import sys; from prometheus_client.parser import text_string_to_metric_families as p; n=sum(len(f.samples) for f in p(sys.stdin.read())); print(n)",
        ],
        text,
    );
    match parsed {
        Some((true, out, _)) => {
            let n: usize = out.trim().parse().unwrap();
            assert_eq!(n, text.lines().filter(|l| !l.starts_with('#')).count());
        }
        Some((false, _, err)) if err.contains("No module named") => {
            eprintln!("prometheus_client not installed: its parser was not run");
        }
        Some((false, _, err)) => panic!("prometheus_client refused the text: {err}"),
        None => eprintln!("no python3: the Python parser was not run"),
    }
    match pipe("promtool", &["check", "metrics"], text) {
        Some((ok, out, err)) => assert!(ok, "promtool check metrics: {out}{err}"),
        None => eprintln!("promtool not installed: its check was not run"),
    }
}

/// Runs `cmd args` with `input` on stdin: (success, stdout, stderr), or `None` when it cannot
/// start.
pub fn pipe(cmd: &str, args: &[&str], input: &str) -> Option<(bool, String, String)> {
    use std::io::Write;
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    // A program that stops before reading all its input (an import that failed) closes the
    // pipe: its exit status and stderr say why, a broken pipe here would only hide it.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// A finding's sentence, whether the result keeps it as an object (schema 4) or a string.
#[allow(dead_code)]
pub fn text(f: &serde_json::Value) -> &str {
    f.as_str()
        .or_else(|| f["text"].as_str())
        .expect("a finding is a sentence or an object with its text")
}

/// The thorough run recorded on a real machine (`tests/data/run-thorough.json`), as JSON.
pub fn recorded_run() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Multiplies every statistic of a summary (median, CI, extremes, samples) under `v` by `f`.
pub fn scale(v: &mut serde_json::Value, f: f64) {
    match v {
        serde_json::Value::Object(m) => {
            let is_summary = m.contains_key("median") && m.contains_key("ci_low");
            for (k, x) in m.iter_mut() {
                if is_summary
                    && ["median", "ci_low", "ci_high", "min", "max", "mean"].contains(&k.as_str())
                {
                    if let Some(n) = x.as_f64() {
                        *x = serde_json::json!(n * f);
                    }
                } else if k == "ns" && x.is_f64() {
                    // Plateau latencies of the ladder's levels are plain numbers.
                    *x = serde_json::json!(x.as_f64().unwrap() * f);
                } else if is_summary && k == "samples" {
                    for s in x.as_array_mut().into_iter().flatten() {
                        if let Some(n) = s.as_f64() {
                            *s = serde_json::json!(n * f);
                        }
                    }
                } else {
                    scale(x, f);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| scale(x, f)),
        _ => {}
    }
}

/// `doc` with every two-thread bandwidth scaled by `factor`.
pub fn scale_team_bandwidth(doc: &mut serde_json::Value, factor: f64) {
    for p in doc["results"]["bandwidth"]["points"]
        .as_array_mut()
        .unwrap()
    {
        if p["threads"].as_u64() != Some(2) {
            continue;
        }
        let s = &mut p["program_gbs"];
        for k in ["median", "ci_low", "ci_high", "min", "max", "mean"] {
            if let Some(x) = s[k].as_f64() {
                s[k] = (factor * x).into();
            }
        }
        for x in s["samples"].as_array_mut().unwrap() {
            *x = (factor * x.as_f64().unwrap()).into();
        }
    }
}
