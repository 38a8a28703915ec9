//! memsight inside a real memory cgroup, as Slurm's `ConstrainRAMSpace`, containers and systemd
//! units start it: the limit is read (v1 or v2, whichever this machine mounts with the memory
//! controller), a run completes within it with what does not fit skipped and said, and an
//! explicit size beyond it is refused in one line. Needs root and a writable memory hierarchy;
//! says why and passes otherwise (the unit tests of `memsight_core::cgroup` cover the reading on
//! recorded trees of both layouts).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::memsight;

/// A memory cgroup made for one test and removed after it.
struct Group {
    dir: PathBuf,
    /// The file that takes the limit, and the one that takes a process.
    limit_file: &'static str,
}

impl Group {
    /// A child group with `bytes` as its limit under the first writable memory hierarchy.
    fn new(name: &str, bytes: u64) -> Result<Group, String> {
        if !nix_is_root() {
            return Err("not root".into());
        }
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in mountinfo.lines() {
            let Some((head, tail)) = line.split_once(" - ") else {
                continue;
            };
            let point = head.split_whitespace().nth(4).unwrap_or("");
            let mut t = tail.split_whitespace();
            let (fstype, opts) = (t.next().unwrap_or(""), t.nth(1).unwrap_or(""));
            let (limit_file, usable) = match fstype {
                "cgroup" if opts.split(',').any(|o| o == "memory") => {
                    ("memory.limit_in_bytes", true)
                }
                // v2: the memory controller must already be given to the root's children.
                "cgroup2" => (
                    "memory.max",
                    std::fs::read_to_string(Path::new(point).join("cgroup.subtree_control"))
                        .is_ok_and(|s| s.split_whitespace().any(|c| c == "memory")),
                ),
                _ => continue,
            };
            if !usable {
                continue;
            }
            let dir = Path::new(point).join(format!("{name}-{}", std::process::id()));
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let g = Group { dir, limit_file };
            std::fs::write(g.dir.join(limit_file), bytes.to_string())
                .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
            return Ok(g);
        }
        Err("no writable memory cgroup hierarchy".into())
    }

    /// Runs memsight with `args` inside the group (the shell moves itself in, then execs).
    fn run(&self, args: &[&str]) -> Output {
        let bin = memsight().get_program().to_owned();
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(bin)
            .args(args);
        for (k, v) in memsight().get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        c.output().expect("sh runs")
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Every process in it has exited; an empty group can be removed.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|u| u.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_run_fits_a_1_gib_cgroup_and_a_larger_size_is_refused() {
    let g = match Group::new("memsight-test", 1 << 30) {
        Ok(g) => g,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let env = g.run(&["env"]);
    assert!(env.status.success(), "{}", text(&env.stderr));
    let shown = text(&env.stdout);
    assert!(
        shown.contains("cgroup limit 1 GiB (cgroup v"),
        "the limit is read: {shown}"
    );
    assert!(shown.contains(g.limit_file), "{shown}");

    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let run = g.run(&[
        "run",
        "--quick",
        "--no-history",
        "--no-progress",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "killed or failed in a 1 GiB cgroup: {}",
        text(&run.stderr)
    );
    assert!(dir.join("run.json").exists());

    // Default bandwidth sizes: the tests whose arrays fit run, the others are skipped and
    // said; where none fits (a noisy latency probe falls back on the reported caches, which
    // can ask for more), one line says so and nothing is killed.
    let bw = g.run(&["bandwidth", "--test", "read,copy", "--json"]);
    match bw.status.code() {
        Some(0) => {
            let doc: serde_json::Value = serde_json::from_slice(&bw.stdout).unwrap();
            let skipped = doc["results"]["config"]["skipped"].to_string();
            let ran = doc["results"]["points"].to_string();
            for test in ["read", "copy"] {
                assert!(
                    ran.contains(&format!("\"{test}\""))
                        || (skipped.contains(test) && skipped.contains("does not fit")),
                    "{test} neither ran nor was skipped for its size: {skipped}"
                );
            }
        }
        Some(2) => {
            let err = text(&bw.stderr);
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("does not fit"), "{err}");
        }
        other => panic!(
            "bandwidth in a 1 GiB cgroup: {other:?} {}",
            text(&bw.stderr)
        ),
    }

    // An explicit size beyond the limit: one line, exit 2, nothing killed.
    let scan = g.run(&["scan", "--size", "2GiB"]);
    assert_eq!(scan.status.code(), Some(2), "{}", text(&scan.stderr));
    let err = text(&scan.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("2 GiB"), "{err}");
}
