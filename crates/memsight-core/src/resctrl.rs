//! Memory-bandwidth monitoring through resctrl (Intel RDT MBM, AMD PQoS): the L3 counts the
//! bytes that its misses and write-backs move to and from memory per RMID, and the kernel exposes
//! an RMID as a monitoring group under `/sys/fs/resctrl/mon_groups/`. A task carries its RMID
//! and passes it to the threads and processes it creates, so a group made for one program counts
//! that program's memory traffic alone, on every L3 domain (`mon_data/mon_L3_NN/mbm_total_bytes`,
//! and `mbm_local_bytes` for the part served by the local node). Unlike memory-controller
//! counters, this needs no PMU: it is what many clouds and guests that hide the PMU still expose.
//!
//! The counts are cumulative bytes since the group was made; the kernel widens the hardware's
//! narrow counters, so a difference of two readings is the traffic between them.

use std::fs::File;
use std::path::PathBuf;
use std::process::Command;

use crate::sysfs::FsRoot;

/// Where resctrl is mounted, from `/proc/self/mountinfo`.
fn mount_point(fs: &FsRoot) -> Option<PathBuf> {
    let info = fs.read("/proc/self/mountinfo")?;
    info.lines().find_map(|l| {
        let (head, tail) = l.split_once(" - ")?;
        (tail.split_whitespace().next()? == "resctrl")
            .then(|| head.split_whitespace().nth(4).map(|p| fs.path(p)))
            .flatten()
    })
}

/// Bytes counted by a group so far, summed over its L3 domains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: u64,
    /// Served by the node local to the L3 (none where the CPU does not count it).
    pub local: Option<u64>,
}

/// A monitoring group: its directory and the events it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonDir {
    pub dir: PathBuf,
    pub local: bool,
}

impl MonDir {
    /// The counts now; `Err` names the domain and what the kernel said when one is unreadable
    /// (`Unavailable` while the RMID was just allocated or was recycled, `Error` on a read fault).
    pub fn counts(&self) -> Result<Counts, String> {
        let data = self.dir.join("mon_data");
        let domains = std::fs::read_dir(&data)
            .map_err(|e| format!("resctrl: cannot list {} ({e})", data.display()))?;
        let mut c = Counts {
            total: 0,
            local: self.local.then_some(0),
        };
        let mut seen = 0;
        for d in domains.flatten() {
            // mon_L3_00, mon_L3_01 … (mon_MB_* and others carry no byte counts).
            if !d.file_name().to_string_lossy().starts_with("mon_L3_") {
                continue;
            }
            seen += 1;
            c.total += read_count(&d.path().join("mbm_total_bytes"))?;
            if let Some(l) = c.local.as_mut() {
                *l += read_count(&d.path().join("mbm_local_bytes"))?;
            }
        }
        if seen == 0 {
            return Err(format!("resctrl: no L3 domain under {}", data.display()));
        }
        Ok(c)
    }
}

fn read_count(path: &std::path::Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("resctrl: cannot read {} ({e})", path.display()))?;
    text.trim().parse().map_err(|_| {
        format!(
            "resctrl: {} reads {:?}, not a byte count",
            path.display(),
            text.trim()
        )
    })
}

/// What this machine offers: resctrl mounted with L3 memory-bandwidth monitoring. `Err` says in
/// one line why not.
pub fn available(fs: &FsRoot) -> Result<(PathBuf, bool), String> {
    let root = mount_point(fs).ok_or(
        "resctrl memory-bandwidth monitoring: resctrl is not mounted (mount -t resctrl resctrl /sys/fs/resctrl, on a CPU with RDT MBM or AMD PQoS)",
    )?;
    let features =
        std::fs::read_to_string(root.join("info/L3_MON/mon_features")).unwrap_or_default();
    let has = |f: &str| features.lines().any(|l| l.trim() == f);
    if !has("mbm_total_bytes") {
        return Err(format!(
            "resctrl memory-bandwidth monitoring: {} offers no mbm_total_bytes (the CPU or hypervisor does not monitor bandwidth)",
            root.display()
        ));
    }
    Ok((root, has("mbm_local_bytes")))
}

/// A monitoring group memsight made for a program; removed when dropped (its tasks go back to
/// the default group, as rmdir does).
#[derive(Debug)]
pub struct ProgramMon {
    pub mon: MonDir,
    tasks: File,
    /// Counts when the group was made (zero on a fresh RMID, but a recycled one may start
    /// elsewhere).
    pub start: Counts,
    /// When it was made.
    pub made: std::time::Instant,
}

impl ProgramMon {
    /// Makes `mon_groups/memsight-<pid>` in the default control group, for `pid` (this process,
    /// whose children it will hold, or one to adopt). A task outside the default group (a
    /// control group that sets its cache or bandwidth allocation, or a monitoring group someone
    /// else reads) is not moved: that would change its allocation or steal that monitoring.
    pub fn create(fs: &FsRoot, pid: u32) -> Result<ProgramMon, String> {
        let (root, local) = available(fs)?;
        let default: Vec<u32> = std::fs::read_to_string(root.join("tasks"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if !default.contains(&pid) {
            return Err(format!(
                "resctrl memory-bandwidth monitoring: pid {pid} is not in the default resctrl group (another control or monitoring group holds it), and memsight does not move it"
            ));
        }
        let dir = root.join(format!(
            "mon_groups/memsight-{}",
            crate::groupjoin::unique_suffix()
        ));
        std::fs::create_dir(&dir).map_err(|e| {
            let why = match e.raw_os_error() {
                Some(libc::ENOSPC) => "no RMID left: other monitoring groups hold them all".into(),
                _ => e.to_string(),
            };
            format!(
                "resctrl memory-bandwidth monitoring: cannot make {} ({why})",
                dir.display()
            )
        })?;
        let mon = MonDir { dir, local };
        let made = File::options()
            .write(true)
            .open(mon.dir.join("tasks"))
            .map_err(|e| e.to_string())
            .and_then(|tasks| Ok((tasks, mon.counts()?)));
        match made {
            Ok((tasks, start)) => Ok(ProgramMon {
                mon,
                tasks,
                start,
                made: std::time::Instant::now(),
            }),
            Err(why) => {
                let _ = std::fs::remove_dir(&mon.dir);
                Err(format!(
                    "resctrl memory-bandwidth monitoring: the group made cannot be used ({why})"
                ))
            }
        }
    }

    /// Puts the program started by `cmd` in the group between fork and exec.
    pub fn join_on_exec(&self, cmd: &mut Command) {
        crate::groupjoin::on_exec(cmd, &self.tasks);
    }

    /// Puts every thread of a running process in the group (threads it makes later follow).
    /// Returns how many joined.
    pub fn adopt(&self, pid: u32) -> usize {
        use std::io::Write as _;
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return 0;
        };
        let mut tasks = &self.tasks;
        dir.flatten()
            .filter(|t| writeln!(tasks, "{}", t.file_name().to_string_lossy()).is_ok())
            .count()
    }

    /// Bytes counted since the group was made.
    pub fn since_start(&self) -> Result<Counts, String> {
        let now = self.mon.counts()?;
        Ok(Counts {
            total: now.total.saturating_sub(self.start.total),
            local: now
                .local
                .zip(self.start.local)
                .map(|(n, s)| n.saturating_sub(s)),
        })
    }
}

impl Drop for ProgramMon {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.mon.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(features: &str) -> (tempfile::TempDir, FsRoot) {
        let d = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(d.path().to_path_buf());
        fs.put(
            "/proc/self/mountinfo",
            "22 1 0:20 / /sys rw - sysfs sysfs rw\n40 22 0:36 / /sys/fs/resctrl rw,relatime - resctrl resctrl rw\n",
        )
        .unwrap();
        fs.put("/sys/fs/resctrl/info/L3_MON/mon_features", features)
            .unwrap();
        (d, fs)
    }

    #[test]
    fn monitoring_is_found_only_where_bandwidth_is_counted() {
        let (_d, fs) = tree("llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n");
        let (root, local) = available(&fs).unwrap();
        assert!(root.ends_with("sys/fs/resctrl") && local);
        // Cache occupancy alone (CMT without MBM): no bandwidth.
        let (_d, fs) = tree("llc_occupancy\n");
        assert!(available(&fs).unwrap_err().contains("no mbm_total_bytes"));
        let d = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(d.path().to_path_buf());
        fs.put("/proc/self/mountinfo", "").unwrap();
        assert!(available(&fs).unwrap_err().contains("not mounted"));
    }

    /// A two-socket machine: two L3 domains summed, local beside total; an `Unavailable` domain
    /// is an error, not a zero.
    #[test]
    fn counts_are_summed_over_l3_domains() {
        let (d, fs) = tree("mbm_total_bytes\nmbm_local_bytes\n");
        let g = "/sys/fs/resctrl/mon_groups/memsight-1/mon_data";
        for (dom, total, local) in [("mon_L3_00", "1000", "900"), ("mon_L3_01", "24", "0")] {
            fs.put(&format!("{g}/{dom}/mbm_total_bytes"), total)
                .unwrap();
            fs.put(&format!("{g}/{dom}/mbm_local_bytes"), local)
                .unwrap();
        }
        fs.put(&format!("{g}/mon_MB_00/other"), "x").unwrap();
        let mon = MonDir {
            dir: d.path().join("sys/fs/resctrl/mon_groups/memsight-1"),
            local: true,
        };
        assert_eq!(
            mon.counts().unwrap(),
            Counts {
                total: 1024,
                local: Some(900)
            }
        );
        fs.put(&format!("{g}/mon_L3_01/mbm_total_bytes"), "Unavailable\n")
            .unwrap();
        assert!(mon.counts().unwrap_err().contains("\"Unavailable\""));
    }

    /// Where the group's directory cannot take tasks (here: a plain directory, not resctrl), it
    /// is removed again and the refusal is one line.
    #[test]
    fn a_group_that_cannot_take_tasks_is_not_left_behind() {
        let (d, fs) = tree("mbm_total_bytes\n");
        std::fs::create_dir_all(d.path().join("sys/fs/resctrl/mon_groups")).unwrap();
        fs.put("/sys/fs/resctrl/tasks", "1\n7\n").unwrap();
        let why = ProgramMon::create(&fs, 8).unwrap_err();
        assert!(why.contains("not in the default"), "{why}");
        let why = ProgramMon::create(&fs, 7).unwrap_err();
        assert!(
            why.contains("cannot be used") && !why.contains('\n'),
            "{why}"
        );
        let left = std::fs::read_dir(d.path().join("sys/fs/resctrl/mon_groups"))
            .unwrap()
            .count();
        assert_eq!(left, 0);
    }
}
