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

/// An hwloc XML fixture readable by the installed hwloc (2.x). Files written by hwloc 3 say
/// `version="3.0"` but use no element hwloc 2.9 lacks; the version attribute is rewritten in a
/// temporary copy so Debian's library reads them.
pub fn xml_fixture(name: &str, tmp: &Path) -> PathBuf {
    let src = fixtures().join("hwloc/xml").join(name);
    let text = std::fs::read_to_string(&src).unwrap();
    let out = tmp.join(name);
    std::fs::write(
        &out,
        text.replace("<topology version=\"3.0\">", "<topology version=\"2.0\">"),
    )
    .unwrap();
    out
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

/// The JSON Schemas `memsight schema` prints.
pub fn schemas() -> serde_json::Value {
    json(memsight().arg("schema"))
}

/// Validates a result document against the envelope schema and its command's results schema.
pub fn assert_valid(doc: &serde_json::Value) {
    let s = schemas();
    let envelope = jsonschema::validator_for(&s["envelope"]).expect("envelope schema compiles");
    let errors: Vec<String> = envelope
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "envelope: {errors:?}");
    let cmd = doc["command"].as_str().unwrap();
    let rs = &s["results"][cmd];
    if !rs.is_null() {
        let v = jsonschema::validator_for(rs).expect("results schema compiles");
        let errors: Vec<String> = v
            .iter_errors(&doc["results"])
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "results of {cmd}: {errors:?}");
    }
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
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit 2 expected: {err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"));
    err
}
