//! What the kernel says about another process's memory: `/proc/PID/status` (memory held),
//! `/proc/PID/smaps_rollup` (huge-page coverage), `/proc/PID/numa_maps` (pages per node) and
//! each thread's last CPU (`/proc/PID/task/TID/stat`). Parsers take the text, so that recorded
//! files from other machines test them; readers return `None` once the process is gone.

use std::collections::BTreeMap;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Memory a process holds (`/proc/PID/status`), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Held {
    pub rss: u64,
    /// Anonymous resident memory (heap, stacks, anonymous mappings).
    pub anon: u64,
    /// Resident file pages mapped by it (its share of the page cache that it maps).
    pub file: u64,
    /// Resident shared memory (tmpfs, shmem, SysV).
    pub shmem: u64,
    /// Its pages in swap.
    pub swap: u64,
    pub threads: u32,
}

/// Reads the `kB` fields of `/proc/PID/status`.
pub fn parse_status(text: &str) -> Held {
    let mut h = Held::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let number = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok());
        let Some(n) = number else { continue };
        match key {
            "VmRSS" => h.rss = n * 1024,
            "RssAnon" => h.anon = n * 1024,
            "RssFile" => h.file = n * 1024,
            "RssShmem" => h.shmem = n * 1024,
            "VmSwap" => h.swap = n * 1024,
            "Threads" => h.threads = n as u32,
            _ => {}
        }
    }
    h
}

/// Huge-page coverage (`/proc/PID/smaps_rollup`), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HugeCoverage {
    /// Anonymous memory, THP included.
    pub anonymous: u64,
    /// Of which on transparent huge pages.
    pub anon_huge: u64,
    /// File and shmem memory mapped with huge pages.
    pub file_huge: u64,
    /// hugetlbfs pages mapped (private and shared).
    pub hugetlb: u64,
}

impl HugeCoverage {
    /// Share of anonymous memory on transparent huge pages (none without anonymous memory).
    pub fn thp_share(&self) -> Option<f64> {
        (self.anonymous > 0).then(|| self.anon_huge as f64 / self.anonymous as f64)
    }
}

/// Reads the `kB` fields of `/proc/PID/smaps_rollup` (or sums `/proc/PID/smaps`).
pub fn parse_smaps(text: &str) -> HugeCoverage {
    let mut c = HugeCoverage::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(kb) = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
        else {
            continue;
        };
        match key {
            "Anonymous" => c.anonymous += kb * 1024,
            "AnonHugePages" => c.anon_huge += kb * 1024,
            "FilePmdMapped" | "ShmemPmdMapped" => c.file_huge += kb * 1024,
            "Private_Hugetlb" | "Shared_Hugetlb" => c.hugetlb += kb * 1024,
            _ => {}
        }
    }
    c
}

/// A process's pages on one NUMA node (`/proc/PID/numa_maps`), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodePages {
    pub node: usize,
    pub bytes: u64,
    /// Of which anonymous (heap, stacks, anonymous mappings).
    pub anon: u64,
    /// Of which in mappings whose policy is not the default (bind, interleave, preferred …).
    pub by_policy: u64,
}

/// Pages per node from `numa_maps`: each line's `N<node>=<pages>` in units of its
/// `kernelpagesize_kB` (a transparent huge page counts as its base pages there).
pub fn parse_numa_maps(text: &str) -> Vec<NodePages> {
    let mut nodes: BTreeMap<usize, NodePages> = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(_addr), Some(policy)) = (fields.next(), fields.next()) else {
            continue;
        };
        let fields: Vec<&str> = fields.collect();
        let page = fields
            .iter()
            .find_map(|f| f.strip_prefix("kernelpagesize_kB="))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(4)
            * 1024;
        let anon = fields
            .iter()
            .any(|f| f.starts_with("anon=") || *f == "heap" || *f == "stack");
        let by_policy = policy != "default";
        for f in &fields {
            let Some((n, pages)) = f.strip_prefix('N').and_then(|r| r.split_once('=')) else {
                continue;
            };
            let (Ok(node), Ok(pages)) = (n.parse::<usize>(), pages.parse::<u64>()) else {
                continue;
            };
            let e = nodes.entry(node).or_insert(NodePages {
                node,
                ..Default::default()
            });
            e.bytes += pages * page;
            if anon {
                e.anon += pages * page;
            }
            if by_policy {
                e.by_policy += pages * page;
            }
        }
    }
    nodes.into_values().collect()
}

/// The CPU a thread last ran on: field 39 of `/proc/PID/task/TID/stat` (the command name,
/// field 2, is in parentheses and may hold spaces, so fields are counted after its `)`).
pub fn parse_last_cpu(stat: &str) -> Option<usize> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(36)?.parse().ok()
}

/// One reading of a process.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    pub seconds: f64,
    pub held: Held,
    pub huge: HugeCoverage,
    pub nodes: Vec<NodePages>,
    /// What its memory cgroup held then (page cache and swap charged to it), where one is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<memsight_core::memcg::GroupMemory>,
    /// Memory traffic its resctrl monitoring group counted since the start, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitored_bytes: Option<u64>,
}

/// When `numa_maps` is read. The kernel builds it by walking every page table of the process,
/// which takes a noticeable share of a CPU for a process of hundreds of GiB; so once read, it is
/// read again only after 20 times what that read took (the watcher spends at most about 5% of
/// its time there), and the readings between carry the last pages per node. But a reading is
/// also taken whenever the resident size has moved by more than an eighth since the last one:
/// the placement is judged at the peak, and on a busy machine a slow read (the watcher
/// descheduled) pushed the next one seconds away, so that the peak carried pages counted
/// before the program had written its memory. Growth by eighths costs a few readings more.
#[derive(Debug, Default)]
pub struct NumaMaps {
    due: Option<Instant>,
    last: Vec<NodePages>,
    /// The resident size when `last` was read, bytes.
    last_rss: u64,
}

impl NumaMaps {
    /// Pages per node of `pid`, whose resident size is now `rss`: read now when due or when
    /// the resident size moved by more than an eighth since the last reading, else that one's.
    pub fn read(&mut self, pid: u32, rss: u64) -> Vec<NodePages> {
        let now = Instant::now();
        if self.due.is_none_or(|due| now >= due) || self.last_rss.abs_diff(rss) > self.last_rss / 8
        {
            let text =
                std::fs::read_to_string(format!("/proc/{pid}/numa_maps")).unwrap_or_default();
            self.last = parse_numa_maps(&text);
            self.last_rss = rss;
            self.due = Some(now + now.elapsed() * 20);
        }
        self.last.clone()
    }
}

/// Reads a process now; `None` when it is gone (or its status cannot be read).
pub fn snapshot(pid: u32, seconds: f64, numa: &mut NumaMaps) -> Option<Snapshot> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let held = parse_status(&status);
    // A zombie has no memory left: it is gone for our purposes.
    if held.rss == 0
        && status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    {
        return None;
    }
    let nodes = numa.read(pid, held.rss);
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .or_else(|_| std::fs::read_to_string(format!("/proc/{pid}/smaps")))
        .unwrap_or_default();
    Some(Snapshot {
        seconds,
        held,
        huge: parse_smaps(&smaps),
        nodes,
        group: None,
        monitored_bytes: None,
    })
}

/// The CPUs the process's threads last ran on, now.
pub fn thread_cpus(pid: u32) -> Vec<usize> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter_map(|s| parse_last_cpu(&s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numa_maps lines of a two-node server running a bound, partly interleaved program (the
    /// format of Linux 6.x: policy, then the mapping's kind, counts and pages per node).
    const NUMA_MAPS: &str = "\
55d0c8a00000 default file=/usr/bin/app mapped=40 active=0 N0=30 N1=10 kernelpagesize_kB=4
55d0c9000000 default heap anon=2048 dirty=2048 N0=1024 N1=1024 kernelpagesize_kB=4
7f1000000000 interleave:0-1 anon=262144 dirty=262144 N0=131072 N1=131072 kernelpagesize_kB=4
7f2000000000 bind:1 file=/dev/hugepages/buf huge dirty=8 N1=8 kernelpagesize_kB=2048
7ffd1c000000 default stack anon=33 dirty=33 N0=33 kernelpagesize_kB=4
7ffd1c100000 default
";

    #[test]
    fn numa_maps_gives_bytes_per_node_by_kind_and_policy() {
        let n = parse_numa_maps(NUMA_MAPS);
        assert_eq!(n.len(), 2);
        let (n0, n1) = (n[0], n[1]);
        assert_eq!(n0.node, 0);
        assert_eq!(n0.bytes, (30 + 1024 + 131072 + 33) * 4096);
        assert_eq!(n0.anon, (1024 + 131072 + 33) * 4096);
        assert_eq!(n0.by_policy, 131072 * 4096);
        assert_eq!(n1.bytes, (10 + 1024 + 131072) * 4096 + 8 * 2048 * 1024);
        assert_eq!(n1.by_policy, 131072 * 4096 + 8 * 2048 * 1024);
    }

    #[test]
    fn status_and_smaps_give_memory_held_and_huge_coverage() {
        let h = parse_status(
            "Name:\tstream\nVmRSS:\t  1048576 kB\nRssAnon:\t  1040000 kB\nRssFile:\t 8000 kB\nRssShmem:\t 576 kB\nVmSwap:\t 12 kB\nThreads:\t8\n",
        );
        assert_eq!(h.rss, 1 << 30);
        assert_eq!(
            (h.anon, h.file, h.shmem),
            (1_040_000 << 10, 8000 << 10, 576 << 10)
        );
        assert_eq!((h.swap, h.threads), (12 << 10, 8));
        let c = parse_smaps(
            "55d0c8a00000-7ffd1c121000 ---p 00000000 00:00 0 [rollup]\nRss: 1048576 kB\nAnonymous: 1040000 kB\nAnonHugePages: 780000 kB\nShmemPmdMapped: 0 kB\nFilePmdMapped: 2048 kB\nShared_Hugetlb: 0 kB\nPrivate_Hugetlb: 16384 kB\n",
        );
        assert_eq!(c.anon_huge, 780_000 << 10);
        assert_eq!((c.file_huge, c.hugetlb), (2048 << 10, 16384 << 10));
        assert!((c.thp_share().unwrap() - 0.75).abs() < 1e-9);
        assert_eq!(HugeCoverage::default().thp_share(), None);
    }

    #[test]
    fn a_threads_last_cpu_is_read_past_a_name_with_spaces() {
        let stat = "4242 (my prog) R 1 4242 4242 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 3 0 123 1000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 7 0 0 0 0 0";
        assert_eq!(parse_last_cpu(stat), Some(7));
        assert_eq!(parse_last_cpu("garbage"), None);
        // This process: its threads ran somewhere it may run.
        let me = thread_cpus(std::process::id());
        assert!(!me.is_empty());
        let mut numa = NumaMaps::default();
        let s = snapshot(std::process::id(), 0.0, &mut numa).unwrap();
        assert!(s.held.rss > 0 && s.held.threads >= 1);
        assert!(!s.nodes.is_empty(), "numa_maps names at least one node");
        // Read again at once: not due yet unless the read took no measurable time, and either
        // way the same nodes.
        let again = snapshot(std::process::id(), 0.0, &mut numa).unwrap();
        assert_eq!(
            again.nodes.iter().map(|n| n.node).collect::<Vec<_>>(),
            s.nodes.iter().map(|n| n.node).collect::<Vec<_>>()
        );
    }

    /// A reading not yet due is taken anyway once the resident size moved by more than an
    /// eighth (the peak must not carry pages counted long before it), and not for less.
    #[test]
    fn numa_maps_is_read_again_when_the_resident_size_moves() {
        let me = std::process::id();
        let mut numa = NumaMaps::default();
        numa.read(me, 800 << 20);
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        numa.due = Some(far);
        numa.read(me, 850 << 20);
        assert_eq!(numa.last_rss, 800 << 20, "a move of 6% waits for its turn");
        numa.read(me, 1000 << 20);
        assert_eq!(numa.last_rss, 1000 << 20, "a growth of 25% is read at once");
        numa.due = Some(far);
        numa.read(me, 100 << 20);
        assert_eq!(numa.last_rss, 100 << 20, "so is a fall to a tenth");
    }
}
