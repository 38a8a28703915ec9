//! What a memory cgroup holds, for memory a program is answerable for beyond its resident set.
//!
//! `/proc/PID/status` counts the file pages a process maps, not the page cache its `read` and
//! `write` calls fill; the kernel charges that cache to the memory cgroup of the task that first
//! brought a page in, and counts it there (`file` in cgroup v2's `memory.stat`, `cache` in v1's).
//! So memsight runs a program it starts in a group of its own, made beside its own group (a
//! sibling in v2, where a group with processes may not have children that use controllers; a
//! child in v1), so that the limits above memsight's group bind the program too; and for a
//! running process it reads the group the process is in, saying how many processes share it.
//! Pages another task cached first stay charged to that task's group: the figure is the cache
//! the program brought in, not every cached page it reads.

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cgroup::{group_dirs, memberships, mounts};
use crate::sysfs::FsRoot;

/// What one memory cgroup holds, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupMemory {
    /// Anonymous memory charged to the group.
    pub anon: u64,
    /// Page cache charged to it: file pages its members brought in first (tmpfs and shared
    /// memory excluded), mapped or not.
    pub page_cache: u64,
    /// Of the page cache, pages mapped by a process.
    pub mapped_file: u64,
    /// Of the page cache, pages dirty or under writeback.
    pub dirty: u64,
    /// tmpfs and shared memory charged to it.
    pub shmem: u64,
    /// Its pages in swap (none where the kernel does not account swap per group).
    pub swap: Option<u64>,
}

/// Reads `memory.stat` (v2 names, or v1's own-group names) and, for v2, `memory.swap.current`.
pub fn parse_stat(text: &str, v2: bool, swap_current: Option<u64>) -> GroupMemory {
    // "key value" lines.
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    if v2 {
        let file = get("file").unwrap_or(0);
        let shmem = get("shmem").unwrap_or(0);
        GroupMemory {
            anon: get("anon").unwrap_or(0),
            // v2's `file` counts tmpfs and shared memory too.
            page_cache: file.saturating_sub(shmem),
            mapped_file: get("file_mapped").unwrap_or(0),
            dirty: get("file_dirty").unwrap_or(0) + get("file_writeback").unwrap_or(0),
            shmem,
            swap: swap_current,
        }
    } else {
        let shmem = get("shmem").unwrap_or(0);
        GroupMemory {
            anon: get("rss").unwrap_or(0),
            // v1's `cache` counts tmpfs and shared memory too.
            page_cache: get("cache").unwrap_or(0).saturating_sub(shmem),
            mapped_file: get("mapped_file").unwrap_or(0),
            dirty: get("dirty").unwrap_or(0) + get("writeback").unwrap_or(0),
            shmem,
            // Present only with swap accounting on (`swapaccount=1`).
            swap: get("swap"),
        }
    }
}

/// A memory cgroup directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDir {
    pub dir: PathBuf,
    /// The group's path inside its hierarchy ("/system.slice/app.service").
    pub name: String,
    pub v2: bool,
}

impl GroupDir {
    /// What the group holds now; `None` once it is gone.
    pub fn memory(&self) -> Option<GroupMemory> {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        let swap = if self.v2 {
            std::fs::read_to_string(self.dir.join("memory.swap.current"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
        } else {
            None
        };
        Some(parse_stat(&stat, self.v2, swap))
    }

    /// The processes in the group.
    pub fn processes(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// True for a hierarchy's root: the whole machine, nobody's own memory.
    pub fn is_root(&self) -> bool {
        self.name.trim_matches('/').is_empty()
    }
}

/// The memory cgroup of process `pid` (`None`: this process) under `fs`: the v2 group where the
/// memory controller is enabled there, else the v1 memory group.
pub fn group_of(fs: &FsRoot, pid: Option<u32>) -> Option<GroupDir> {
    let mounts = mounts(&fs.read("/proc/self/mountinfo").unwrap_or_default());
    let who = pid.map_or("self".to_string(), |p| p.to_string());
    let membership = fs.read(&format!("/proc/{who}/cgroup"))?;
    let mut found: Vec<GroupDir> = memberships(&membership)
        .into_iter()
        .filter_map(|(v2, name)| {
            let m = mounts.iter().find(|m| m.v2 == v2)?;
            let dir = fs.path(&group_dirs(m, &name).first()?.display().to_string());
            dir.join("memory.stat")
                .exists()
                .then_some(GroupDir { dir, name, v2 })
        })
        .collect();
    // v2 first: on a hybrid machine the v2 line exists but its groups have no memory.stat.
    found.sort_by_key(|g| !g.v2);
    found.into_iter().next()
}

/// A memory cgroup memsight made for a program it starts; removed when dropped (any process
/// still in it moves back to memsight's group first).
#[derive(Debug)]
pub struct ProgramGroup {
    pub group: GroupDir,
    /// The group's `cgroup.procs`, open for the child to write its pid to.
    procs: File,
    /// Where memsight itself is, for processes left behind.
    home: GroupDir,
}

impl ProgramGroup {
    /// Makes `memsight-profile-<pid>` beside (v2) or under (v1) memsight's memory group.
    /// `Err` says in one line why not (not root, no memory controller, a read-only hierarchy).
    pub fn create(fs: &FsRoot) -> Result<ProgramGroup, String> {
        let home = group_of(fs, None)
            .ok_or("no memory cgroup readable for this process (no memory controller mounted)")?;
        let leaf = format!("memsight-profile-{}", crate::groupjoin::unique_suffix());
        // In v2 a group that holds processes cannot give its children the memory controller:
        // the program's group is a sibling of memsight's, or a child of the root.
        let (dir, name) = match (home.v2, home.is_root()) {
            (true, false) => (
                home.dir.parent().unwrap_or(&home.dir).join(&leaf),
                format!("{}/{leaf}", parent_name(&home.name)),
            ),
            _ => (
                home.dir.join(&leaf),
                format!("{}/{leaf}", home.name.trim_end_matches('/')),
            ),
        };
        std::fs::create_dir(&dir).map_err(|e| {
            format!(
                "cannot make a memory cgroup for the program in {} ({e}): run as root, or where the cgroup tree is delegated to you",
                dir.parent().unwrap_or(&dir).display()
            )
        })?;
        let group = GroupDir {
            dir,
            name,
            v2: home.v2,
        };
        let procs = File::options()
            .write(true)
            .open(group.dir.join("cgroup.procs"));
        match procs {
            Ok(procs) if group.memory().is_some() => Ok(ProgramGroup { group, procs, home }),
            Ok(_) | Err(_) => {
                let _ = std::fs::remove_dir(&group.dir);
                Err(format!(
                    "the memory cgroup made in {} has no memory accounting or cannot take processes",
                    group.dir.display()
                ))
            }
        }
    }

    /// Makes the program started by `cmd` join the group between fork and exec, so that
    /// everything it allocates or caches is charged to it from its first page.
    pub fn join_on_exec(&self, cmd: &mut Command) {
        crate::groupjoin::on_exec(cmd, &self.procs);
    }

    /// True when `pid` is in the group.
    pub fn holds(&self, pid: u32) -> bool {
        self.group.processes().contains(&pid)
    }
}

impl Drop for ProgramGroup {
    fn drop(&mut self) {
        // A program that left children running: they go back to memsight's group, so that the
        // group can be removed (its charges stay with the parent in v1, in a dying group in v2).
        if let Ok(mut home) = File::options()
            .write(true)
            .open(self.home.dir.join("cgroup.procs"))
        {
            for pid in self.group.processes() {
                let _ = writeln!(home, "{pid}");
            }
        }
        let _ = std::fs::remove_dir(&self.group.dir);
    }
}

fn parent_name(name: &str) -> &str {
    let name = name.trim_end_matches('/');
    name.rsplit_once('/').map_or("", |(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_and_v1_stat_give_page_cache_without_shared_memory() {
        let v2 = "anon 1048576\nfile 5242880\nkernel 4096\nshmem 1048576\nfile_mapped 409600\nfile_dirty 8192\nfile_writeback 4096\n";
        let m = parse_stat(v2, true, Some(12288));
        assert_eq!(m.anon, 1 << 20);
        assert_eq!(m.page_cache, 4 << 20);
        assert_eq!(
            (m.mapped_file, m.dirty, m.shmem),
            (409_600, 12_288, 1 << 20)
        );
        assert_eq!(m.swap, Some(12288));
        let v1 = "cache 3145728\nrss 2097152\nrss_huge 0\nshmem 1048576\nmapped_file 4096\ndirty 0\nwriteback 0\nswap 0\ntotal_cache 99999999\n";
        let m = parse_stat(v1, false, None);
        assert_eq!((m.anon, m.page_cache, m.shmem), (2 << 20, 2 << 20, 1 << 20));
        assert_eq!(m.swap, Some(0));
        // Without swap accounting v1 has no swap line: unknown, not zero.
        assert_eq!(parse_stat("cache 0\nrss 0\n", false, None).swap, None);
    }

    #[test]
    fn a_process_group_is_found_in_the_hierarchy_that_accounts_memory() {
        let d = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(d.path().to_path_buf());
        fs.put(
            "/proc/self/mountinfo",
            "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
        )
        .unwrap();
        fs.put("/proc/77/cgroup", "4:memory:/slurm/job_7/step_0\n0::/\n")
            .unwrap();
        fs.put(
            "/sys/fs/cgroup/memory/slurm/job_7/step_0/memory.stat",
            "cache 0\n",
        )
        .unwrap();
        fs.put(
            "/sys/fs/cgroup/memory/slurm/job_7/step_0/cgroup.procs",
            "77\n78\n",
        )
        .unwrap();
        let g = group_of(&fs, Some(77)).expect("the v1 memory group");
        assert!(!g.v2 && !g.is_root());
        assert_eq!(g.name, "/slurm/job_7/step_0");
        assert_eq!(g.processes(), vec![77, 78]);
        assert_eq!(g.memory().map(|m| m.page_cache), Some(0));
        // A process gone, or in no accounted group: nothing.
        assert_eq!(group_of(&fs, Some(78)), None);
    }

    #[test]
    fn parent_names() {
        assert_eq!(parent_name("/a/b/c"), "/a/b");
        assert_eq!(parent_name("/a"), "");
    }

    /// On a machine where this process may make a memory cgroup (root, a delegated tree), a
    /// started program is in it from its first page, and the file it writes is charged to it;
    /// elsewhere the refusal is one line.
    #[test]
    fn a_started_program_is_charged_its_page_cache() {
        let g = match ProgramGroup::create(&FsRoot::live()) {
            Ok(g) => g,
            Err(why) => {
                assert!(!why.contains('\n'), "{why}");
                return;
            }
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cached");
        let mut cmd = Command::new("dd");
        cmd.args(["if=/dev/zero", "bs=1M", "count=16", "status=none"])
            .arg(format!("of={}", out.display()));
        g.join_on_exec(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let inside = g.holds(child.id());
        assert!(child.wait().unwrap().success());
        let m = g.group.memory().unwrap();
        // (tmpfs under /tmp charges shared memory, a disk page cache.) The child may have exited before it was looked for; its charges say it was there.
        assert!(
            inside || m.page_cache + m.shmem > 0,
            "the program never joined"
        );
        assert!(
            m.page_cache + m.shmem >= 8 << 20,
            "16 MiB written, {} charged",
            m.page_cache + m.shmem
        );
        let path = g.group.dir.clone();
        drop(g);
        assert!(!path.exists(), "the group is removed");
    }
}
