//! The memory a cgroup lets this process have, from either hierarchy.
//!
//! Slurm (`ConstrainRAMSpace`), container runtimes and systemd units put work under a memory
//! cgroup; a buffer past its limit gets the process killed (exit 137, nothing kept), not an
//! allocation error. Machines run three layouts: cgroup v1 only (RHEL 7/8, many clusters), v2
//! only (RHEL 9, Debian 11+, Ubuntu 22.04+), and hybrid (v1 controllers with an empty v2
//! hierarchy beside them, where `/proc/self/cgroup` has a `0::` line although no v2 limit
//! applies). So both are read, each where `/proc/self/mountinfo` says it is mounted, from this
//! process's group up to the hierarchy's root (a parent's limit binds its children), and the
//! tightest bound wins:
//! - v1: `memory.limit_in_bytes` (with `memory.usage_in_bytes`, page cache included);
//! - v2: `memory.max`, and `memory.high`, above which the kernel throttles and reclaims hard, so
//!   a measurement sized past it would time reclaim rather than memory (with `memory.current`).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sysfs::FsRoot;

/// Which file set the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimitFile {
    /// cgroup v1 `memory.limit_in_bytes`.
    V1Limit,
    /// cgroup v2 `memory.max`.
    V2Max,
    /// cgroup v2 `memory.high`.
    V2High,
}

impl LimitFile {
    /// The file's name with its hierarchy, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            LimitFile::V1Limit => "cgroup v1 memory.limit_in_bytes",
            LimitFile::V2Max => "cgroup v2 memory.max",
            LimitFile::V2High => "cgroup v2 memory.high",
        }
    }
}

/// The tightest memory bound on this process's cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    /// What the bounded group already holds, when its usage file is readable.
    pub usage_bytes: Option<u64>,
    /// The bounded group, as a path inside its hierarchy.
    pub group: String,
    pub file: LimitFile,
}

/// A hierarchy mounted on this machine: where, and which part of it the mount shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// The group the mount's root is (not `/` inside a container with its own view).
    pub(crate) root: String,
    pub(crate) point: PathBuf,
    pub(crate) v2: bool,
}

/// The tightest memory bound of this process's cgroups, v1 and v2; `None` when unlimited.
pub fn memory_limit(fs: &FsRoot) -> Option<MemoryLimit> {
    let mounts = mounts(&fs.read("/proc/self/mountinfo").unwrap_or_default());
    let membership = fs.read("/proc/self/cgroup").unwrap_or_default();
    let mut best: Option<MemoryLimit> = None;
    for (v2, group) in memberships(&membership) {
        let Some(m) = mounts.iter().find(|m| m.v2 == v2) else {
            continue;
        };
        for dir in group_dirs(m, &group) {
            for found in limits_at(fs, &dir, v2) {
                if best.as_ref().is_none_or(|b| found.bytes < b.bytes) {
                    best = Some(found);
                }
            }
        }
    }
    best
}

/// cgroup mounts from `/proc/self/mountinfo`: every cgroup2 mount, and v1 mounts of the memory
/// controller.
pub(crate) fn mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|l| {
            // "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTIONS"
            let (head, tail) = l.split_once(" - ")?;
            let head: Vec<&str> = head.split_whitespace().collect();
            let tail: Vec<&str> = tail.split_whitespace().collect();
            let (root, point) = (*head.get(3)?, *head.get(4)?);
            let v2 = match *tail.first()? {
                "cgroup2" => true,
                "cgroup" if tail.get(2)?.split(',').any(|o| o == "memory") => false,
                _ => return None,
            };
            Some(Mount {
                root: unescape(root),
                point: PathBuf::from(unescape(point)),
                v2,
            })
        })
        .collect()
}

/// mountinfo escapes blanks and backslashes as octal (`\040`).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        match u8::from_str_radix(rest.get(i + 1..i + 4).unwrap_or(""), 8) {
            Ok(b) => {
                out.push(b as char);
                rest = &rest[i + 4..];
            }
            Err(_) => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// This process's groups from `/proc/self/cgroup`: (is v2, path) for the v2 line and the v1
/// line of the memory controller.
pub(crate) fn memberships(text: &str) -> Vec<(bool, String)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ':');
            let (id, controllers, path) = (it.next()?, it.next()?, it.next()?);
            if id == "0" && controllers.is_empty() {
                Some((true, path.to_string()))
            } else if controllers.split(',').any(|c| c == "memory") {
                Some((false, path.to_string()))
            } else {
                None
            }
        })
        .collect()
}

/// The directories of `group` and its ancestors under mount `m`, deepest first; the part of the
/// path above the mount's root is not visible and is skipped.
pub(crate) fn group_dirs(m: &Mount, group: &str) -> Vec<PathBuf> {
    let inside = if m.root == "/" {
        group
    } else {
        group.strip_prefix(m.root.as_str()).unwrap_or(group)
    };
    let mut rel = PathBuf::from(inside.trim_start_matches('/'));
    let mut out = Vec::new();
    loop {
        out.push(m.point.join(&rel));
        if !rel.pop() {
            break;
        }
    }
    out
}

/// The bounds set in one group's directory.
fn limits_at(fs: &FsRoot, dir: &Path, v2: bool) -> Vec<MemoryLimit> {
    let d = dir.display().to_string();
    let group = d.clone();
    let read = |f: &str| fs.read(&format!("{d}/{f}"));
    // "max" (v2) and v1's page-rounded i64::MAX both mean no limit.
    let bound = |f: &str| {
        read(f)
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&b| b < 1 << 60)
    };
    let files: &[(&str, LimitFile, &str)] = if v2 {
        &[
            ("memory.max", LimitFile::V2Max, "memory.current"),
            ("memory.high", LimitFile::V2High, "memory.current"),
        ]
    } else {
        &[(
            "memory.limit_in_bytes",
            LimitFile::V1Limit,
            "memory.usage_in_bytes",
        )]
    };
    files
        .iter()
        .filter_map(|&(f, file, usage)| {
            Some(MemoryLimit {
                bytes: bound(f)?,
                usage_bytes: read(usage).and_then(|v| v.parse().ok()),
                group: group.clone(),
                file,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    fn tree(mountinfo: &str, cgroup: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, FsRoot) {
        let d = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(d.path().to_path_buf());
        fs.put("/proc/self/mountinfo", mountinfo).unwrap();
        fs.put("/proc/self/cgroup", cgroup).unwrap();
        for (p, t) in files {
            fs.put(p, t).unwrap();
        }
        (d, fs)
    }

    /// The hybrid layout: a `0::/` line with no v2 limit must not hide the v1 limit, and a
    /// parent's limit binds its child.
    #[test]
    fn hybrid_v1_limit_up_the_hierarchy() {
        let (_d, fs) = tree(
            HYBRID_MOUNTS,
            "4:memory:/slurm/uid_0/job_7\n1:cpu:/\n0::/\n",
            &[
                (
                    "/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes",
                    "9223372036854771712",
                ),
                (
                    "/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes",
                    "1000",
                ),
                (
                    "/sys/fs/cgroup/memory/slurm/uid_0/memory.limit_in_bytes",
                    "1073741824",
                ),
                (
                    "/sys/fs/cgroup/memory/slurm/uid_0/memory.usage_in_bytes",
                    "5000",
                ),
                ("/sys/fs/cgroup/unified/cgroup.controllers", ""),
            ],
        );
        let l = memory_limit(&fs).expect("limited");
        assert_eq!(l.bytes, 1 << 30);
        assert_eq!(l.usage_bytes, Some(5000));
        assert_eq!(l.file, LimitFile::V1Limit);
        assert!(l.group.ends_with("slurm/uid_0"), "{}", l.group);
    }

    /// v2 only: `memory.high` below `memory.max` is the bound that matters.
    #[test]
    fn v2_high_below_max() {
        let (_d, fs) = tree(
            "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            "0::/system.slice/memsight.service\n",
            &[
                (
                    "/sys/fs/cgroup/system.slice/memsight.service/memory.max",
                    "2147483648",
                ),
                (
                    "/sys/fs/cgroup/system.slice/memsight.service/memory.high",
                    "1610612736",
                ),
                (
                    "/sys/fs/cgroup/system.slice/memsight.service/memory.current",
                    "42",
                ),
                ("/sys/fs/cgroup/system.slice/memory.max", "max"),
            ],
        );
        let l = memory_limit(&fs).expect("limited");
        assert_eq!((l.bytes, l.file), (1536 << 20, LimitFile::V2High));
        assert_eq!(l.usage_bytes, Some(42));
    }

    /// A container sees its own group as the mount's root: the path in `/proc/self/cgroup` is
    /// read relative to it.
    #[test]
    fn container_mount_root() {
        let (_d, fs) = tree(
            "900 800 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
            "0::/docker/abc\n",
            &[("/sys/fs/cgroup/memory.max", "536870912")],
        );
        assert_eq!(memory_limit(&fs).map(|l| l.bytes), Some(512 << 20));
    }

    #[test]
    fn unlimited_and_unmounted() {
        let (_d, fs) = tree(
            HYBRID_MOUNTS,
            "4:memory:/\n0::/\n",
            &[(
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712",
            )],
        );
        assert_eq!(memory_limit(&fs), None);
        // A memory line with no memory hierarchy mounted: nothing to read, no guess.
        let (_d, fs) = tree("", "4:memory:/x\n", &[]);
        assert_eq!(memory_limit(&fs), None);
    }

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/a\\"), r"/a\\");
    }
}
