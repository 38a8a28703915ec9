//! The environment report: everything about the machine and its current state that can move a
//! memory measurement, collected before every run and printed with every result, with warnings for
//! what distorts results (METHODS.md §7).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cpu::{CacheInfo, CpuInfo, sysfs_caches};
use crate::sysfs::{FsRoot, kv_field, selected};
use crate::topology::Topology;
use crate::units::{format_bytes, format_list};

/// One reserved huge page pool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HugePagePool {
    pub page_bytes: u64,
    pub total: u64,
    pub free: u64,
    pub reserved: u64,
    pub surplus: u64,
}

/// Memory the process can have.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct MemoryState {
    pub total_bytes: Option<u64>,
    /// `MemAvailable` of `/proc/meminfo`.
    pub available_bytes: Option<u64>,
    /// The tightest cgroup memory bound on the path of this process, v1 or v2, if any
    /// ([`crate::cgroup`]).
    pub cgroup_limit_bytes: Option<u64>,
    /// Memory the bounded cgroup already charges, when limited.
    pub cgroup_usage_bytes: Option<u64>,
    /// The bounded group's directory.
    pub cgroup_path: Option<String>,
    /// Which file set the bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_limit_file: Option<crate::cgroup::LimitFile>,
}

impl MemoryState {
    /// Counts `bytes` as held already (a buffer kept for the whole of a run): what a new
    /// allocation may use shrinks by as much.
    pub fn reserve(&mut self, bytes: u64) {
        if let Some(a) = &mut self.available_bytes {
            *a = a.saturating_sub(bytes);
        }
        if self.cgroup_limit_bytes.is_some() {
            self.cgroup_usage_bytes = Some(self.cgroup_usage_bytes.unwrap_or(0) + bytes);
        }
    }

    /// What a new allocation can use: MemAvailable, capped by the cgroup's headroom.
    pub fn usable_bytes(&self) -> Option<u64> {
        let cg = self
            .cgroup_limit_bytes
            .map(|l| l.saturating_sub(self.cgroup_usage_bytes.unwrap_or(0)));
        match (self.available_bytes, cg) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }
}

/// Load on the machine while measuring.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct LoadState {
    pub load_avg_1m: Option<f64>,
    pub load_avg_5m: Option<f64>,
    pub load_avg_15m: Option<f64>,
    /// Share of CPU time stolen by the hypervisor during a short sample, percent.
    pub steal_percent: Option<f64>,
    /// Share of CPU time busy (not idle) during the same sample, percent of all CPUs.
    pub busy_percent: Option<f64>,
    pub sample_ms: Option<u64>,
}

/// A condition that can distort a measurement.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Warning {
    /// Stable identifier (`vm`, `steal`, `load`, `governor`, `cache_mismatch` …).
    pub code: String,
    /// What happened, why it matters and what to do.
    pub message: String,
}

/// The environment report.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub cpu: CpuInfo,
    pub topology: Topology,
    /// CPU0's caches as sysfs lists them.
    pub sysfs_caches: Vec<CacheInfo>,
    /// Frequency governors in use (distinct values over all CPUs).
    pub governors: Vec<String>,
    pub boost: Option<bool>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub huge_pages: Vec<HugePagePool>,
    /// CPUs this process may run on (affinity ∩ cpuset), by OS index.
    pub allowed_cpus: Vec<usize>,
    /// NUMA nodes this process may allocate from.
    pub allowed_nodes: Vec<usize>,
    pub memory: MemoryState,
    pub load: LoadState,
    pub numa_balancing: Option<bool>,
    /// DAMON (kernel data-access monitor) running: kdamond threads sample and clear page-table
    /// accessed bits, which adds page walks and TLB flushes to whatever memsight measures.
    pub damon_active: Option<bool>,
    /// Corrected and uncorrected memory errors per controller and DIMM (EDAC); empty without
    /// an EDAC driver.
    #[serde(default)]
    pub memory_errors: Vec<crate::edac::Controller>,
    pub warnings: Vec<Warning>,
}

impl Environment {
    /// For a plan on a recorded topology: the memory the recording says that machine has (this
    /// machine's `/proc/meminfo` and cgroup do not describe it). A live environment is unchanged.
    pub fn recorded_memory(mut self) -> Self {
        let t = self.topology.total_memory_bytes;
        if self.topology.source != crate::topology::TopologySource::Live && t > 0 {
            self.memory = MemoryState {
                total_bytes: Some(t),
                available_bytes: Some(t),
                ..Default::default()
            };
        }
        self
    }

    /// Collects the report. `sample_load` takes a 200 ms look at `/proc/stat` for steal and busy
    /// time (live machines only).
    pub fn collect(fs: &FsRoot, topology: Topology, sample_load: bool) -> Self {
        let cpu = CpuInfo::read(fs);
        let first_cpu = topology.cpus.first().map_or(0, |c| c.os_index);
        let sysfs_caches = sysfs_caches(fs, first_cpu);
        let governors = governors(fs);
        let huge_pages = huge_page_pools(fs);
        let allowed_cpus = allowed_cpus(fs, &topology);
        let allowed_nodes = topology.allowed_nodes();
        let mut env = Environment {
            hostname: fs.read("/proc/sys/kernel/hostname"),
            kernel: fs.read("/proc/sys/kernel/osrelease").or_else(|| {
                fs.read("/proc/version")
                    .map(|v| v.split_whitespace().nth(2).unwrap_or("").to_string())
            }),
            os: fs.read("/etc/os-release").and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                    .map(|v| v.trim_matches('"').to_string())
            }),
            cpu,
            topology,
            sysfs_caches,
            governors,
            boost: fs
                .read_u64("/sys/devices/system/cpu/cpufreq/boost")
                .map(|b| b == 1),
            thp_enabled: fs
                .read("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|t| selected(&t)),
            thp_defrag: fs
                .read("/sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|t| selected(&t)),
            huge_pages,
            allowed_cpus,
            allowed_nodes,
            memory: read_memory(fs),
            load: read_load(fs, sample_load && fs.is_live()),
            numa_balancing: fs
                .read_u64("/proc/sys/kernel/numa_balancing")
                .map(|v| v != 0),
            damon_active: damon_active(fs),
            memory_errors: crate::edac::controllers(fs),
            warnings: Vec::new(),
        };
        if env.cpu.model_name.is_none() {
            env.cpu.model_name = env.topology.cpu_model.clone();
        }
        env.warnings = env.find_warnings();
        env
    }

    /// Checks that memory may be bound to `node` (when one is asked for).
    pub fn check_node(&self, node: Option<usize>) -> crate::Result<()> {
        match node {
            Some(n) if !self.allowed_nodes.contains(&n) => Err(crate::Error::input(format!(
                "NUMA node {n} is not one this process may allocate from ({}); choose one of those",
                format_list(&self.allowed_nodes)
            ))),
            _ => Ok(()),
        }
    }

    /// Free pages in the pool of a given huge page size.
    pub fn huge_pages_free(&self, page_bytes: u64) -> u64 {
        self.huge_pages
            .iter()
            .find(|p| p.page_bytes == page_bytes)
            .map_or(0, |p| p.free)
    }

    /// The L3 (or last level) cache size the OS reports per instance: hwloc's, else sysfs's.
    /// Never the legacy AMD leaf. A claim, not a measurement: hypervisors pass the host's
    /// through, so memory working sets come from the latency curve (memsight-suites `reach`).
    pub fn llc_bytes(&self) -> u64 {
        self.topology
            .last_level_cache()
            .map(|c| c.size_bytes)
            .or_else(|| self.sysfs_caches.iter().map(|c| c.size_bytes).max())
            .unwrap_or(32 << 20)
    }

    /// Every instance of the last-level cache the OS reports, together, bytes: what all cores
    /// could hold between them if the claim were true.
    pub fn llc_total_bytes(&self) -> u64 {
        self.topology
            .last_level_cache()
            .map_or(self.llc_bytes(), |c| c.size_bytes * c.instances as u64)
    }

    fn find_warnings(&self) -> Vec<Warning> {
        let mut w = self.sharing_warnings();
        w.extend(self.setting_warnings());
        w.extend(self.limit_warnings());
        w.extend(
            crate::edac::describe(&self.memory_errors)
                .into_iter()
                .map(|message| Warning {
                    code: "memory_errors".to_string(),
                    message,
                }),
        );
        w
    }

    /// What other load does to the figures: a hypervisor, steal, load average, busy CPUs.
    fn sharing_warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        let mut add = |code: &str, message: String| {
            w.push(Warning {
                code: code.to_string(),
                message,
            })
        };
        if let Some(h) = &self.cpu.hypervisor {
            add(
                "vm",
                format!(
                    "running under a hypervisor ({h}): bandwidth figures are meaningful, absolute DRAM latency less so (nested paging adds page-walk cost, the host shares caches and memory with other guests)"
                ),
            );
        }
        if let Some(s) = self.load.steal_percent.filter(|&s| s >= 1.0) {
            add(
                "steal",
                format!(
                    "{s:.1}% of CPU time was stolen by the hypervisor while sampling: other guests are running; expect noise and repeat at a quieter time"
                ),
            );
        }
        let ncpu = self.allowed_cpus.len().max(1) as f64;
        if let Some(l) = self.load.load_avg_1m.filter(|&l| l > 0.5 * ncpu) {
            add(
                "load",
                format!(
                    "load average {l:.2} on {ncpu} allowed CPUs: other work competes for cores and memory; stop it or expect noisy figures"
                ),
            );
        }
        if let Some(b) = self.load.busy_percent.filter(|&b| b > BUSY_PERCENT) {
            add(
                "busy",
                format!("the CPUs were {b:.0}% busy just before measuring: results will be noisy"),
            );
        }
        w
    }

    /// Settings that change the figures: frequency policy, THP, NUMA balancing, DAMON, SMT.
    fn setting_warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        let mut add = |code: &str, message: String| {
            w.push(Warning {
                code: code.to_string(),
                message,
            })
        };
        let slow: Vec<&String> = self
            .governors
            .iter()
            .filter(|g| g.as_str() != "performance")
            .collect();
        if !slow.is_empty() {
            add(
                "governor",
                format!(
                    "frequency governor '{}' lets the clock vary during a run; for stable figures set 'performance' (cpupower frequency-set -g performance)",
                    slow.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            );
        }
        if self.thp_enabled.as_deref() == Some("always") {
            add(
                "thp_always",
                "transparent huge pages are 'always': memsight asks for 4 KiB pages explicitly (MADV_NOHUGEPAGE) where it means 4 KiB, but other programs' memory will differ from what you measure".to_string(),
            );
        }
        if self.numa_balancing == Some(true) && self.topology.numa_nodes.len() > 1 {
            add(
                "numa_balancing",
                "automatic NUMA balancing is on: the kernel may migrate pages during a run; memsight binds memory explicitly, but unbound runs can move (echo 0 > /proc/sys/kernel/numa_balancing)".to_string(),
            );
        }
        if self.damon_active == Some(true) {
            add(
                "damon",
                "DAMON is monitoring memory (a kdamond thread is running): it periodically clears page-table accessed bits, adding page walks and TLB flushes to measurements; expect outlier samples (the medians stay usable)".to_string(),
            );
        }
        if self.topology.smt > 1 {
            add(
                "smt",
                format!(
                    "SMT is on ({} threads per core): memsight places one thread per core before using siblings; siblings share L1/L2 and halve per-thread figures",
                    self.topology.smt
                ),
            );
        }
        w
    }

    /// Limits on what can be measured: cgroup memory, cpuset, node memory, cache-size disagreements.
    fn limit_warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        let mut add = |code: &str, message: String| {
            w.push(Warning {
                code: code.to_string(),
                message,
            })
        };
        if let (Some(limit), Some(total)) =
            (self.memory.cgroup_limit_bytes, self.memory.total_bytes)
            && limit < total
        {
            add(
                "cgroup_memory",
                format!(
                    "a cgroup limits this process to {} of {} RAM: large buffers are refused before allocating",
                    format_bytes(limit),
                    format_bytes(total)
                ),
            );
        }
        if self.allowed_cpus.len() < self.topology.threads {
            add(
                "cpuset",
                format!(
                    "this process may use {} of {} CPUs ({}): figures describe that subset",
                    self.allowed_cpus.len(),
                    self.topology.threads,
                    format_list(&self.allowed_cpus)
                ),
            );
        }
        let node_sum: u64 = self
            .topology
            .numa_nodes
            .iter()
            .map(|n| n.memory_bytes)
            .sum();
        if let Some(total) = self
            .memory
            .total_bytes
            .filter(|&t| node_sum > 0 && (node_sum as f64) < 0.9 * t as f64)
        {
            add(
                "node_memory",
                format!(
                    "the NUMA nodes account for {} of the {} the kernel manages: the rest was hot-plugged (virtio-mem, ZONE_MOVABLE) or is not attributed to a node; binding to a node may find less memory than MemTotal suggests",
                    format_bytes(node_sum),
                    format_bytes(total)
                ),
            );
        }
        for m in self.cache_mismatches() {
            add("cache_mismatch", m);
        }
        w
    }

    /// Disagreements between cache sizes from CPUID, sysfs and hwloc. Inside a VM on AMD, the
    /// legacy leaf 0x80000006 reports the host's L3; the deterministic leaf and sysfs are what the
    /// guest was given. Neither says how much L3 one core can actually use: the latency ladder does.
    pub fn cache_mismatches(&self) -> Vec<String> {
        let mut out = Vec::new();
        let sysfs_l3 = self
            .sysfs_caches
            .iter()
            .filter(|c| c.level == 3)
            .map(|c| c.size_bytes)
            .max();
        if let (Some(legacy), Some(l3)) = (self.cpu.cpuid_legacy_l3_bytes, sysfs_l3)
            && legacy != l3
        {
            out.push(format!(
                    "CPUID leaf 0x80000006 reports an L3 of {} but sysfs reports {}: the legacy leaf describes the host (or the whole package); memsight uses sysfs/hwloc",
                    format_bytes(legacy),
                    format_bytes(l3)
                ));
        }
        for s in &self.sysfs_caches {
            if let Some(c) = self
                .cpu
                .cpuid_caches
                .iter()
                .find(|c| c.level == s.level && c.kind == s.kind)
                && c.size_bytes != s.size_bytes
            {
                out.push(format!(
                    "L{} {} cache: CPUID's cache leaf says {}, sysfs says {}",
                    s.level,
                    s.kind,
                    format_bytes(c.size_bytes),
                    format_bytes(s.size_bytes)
                ));
            }
            if let Some(h) = self.topology.cache(s.level)
                && s.kind != "instruction"
                && h.size_bytes != s.size_bytes
            {
                out.push(format!(
                    "L{} cache: hwloc says {}, sysfs of CPU0 says {}",
                    s.level,
                    format_bytes(h.size_bytes),
                    format_bytes(s.size_bytes)
                ));
            }
        }
        out
    }
}

/// The CPU frequency governors in use, each once.
fn governors(fs: &FsRoot) -> Vec<String> {
    let mut governors: Vec<String> = fs
        .list("/sys/devices/system/cpu")
        .iter()
        .filter(|n| n.starts_with("cpu") && n[3..].parse::<u32>().is_ok())
        .filter_map(|n| {
            fs.read(&format!(
                "/sys/devices/system/cpu/{n}/cpufreq/scaling_governor"
            ))
        })
        .collect();
    governors.sort();
    governors.dedup();
    governors
}

/// Every huge-page size the kernel offers, with its pool's counts.
fn huge_page_pools(fs: &FsRoot) -> Vec<HugePagePool> {
    fs.list("/sys/kernel/mm/hugepages")
        .iter()
        .filter_map(|d| {
            let kb: u64 = d
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            let p = |f: &str| fs.read_u64(&format!("/sys/kernel/mm/hugepages/{d}/{f}"));
            Some(HugePagePool {
                page_bytes: kb * 1024,
                total: p("nr_hugepages").unwrap_or(0),
                free: p("free_hugepages").unwrap_or(0),
                reserved: p("resv_hugepages").unwrap_or(0),
                surplus: p("surplus_hugepages").unwrap_or(0),
            })
        })
        .collect()
}

/// The CPUs the topology allows, narrowed on a live machine to this process's affinity.
fn allowed_cpus(fs: &FsRoot, topology: &Topology) -> Vec<usize> {
    let mut allowed_cpus = topology.allowed_cpus();
    if fs.is_live()
        && topology.source == crate::topology::TopologySource::Live
        && let Ok(aff) = crate::pin::current_affinity()
    {
        allowed_cpus.retain(|c| aff.contains(c));
    }
    allowed_cpus
}

fn read_memory(fs: &FsRoot) -> MemoryState {
    let meminfo = fs.read("/proc/meminfo").unwrap_or_default();
    let mut m = MemoryState {
        total_bytes: kv_field(&meminfo, "MemTotal"),
        available_bytes: kv_field(&meminfo, "MemAvailable"),
        ..Default::default()
    };
    if let Some(l) = crate::cgroup::memory_limit(fs) {
        m.cgroup_limit_bytes = Some(l.bytes);
        m.cgroup_usage_bytes = l.usage_bytes;
        m.cgroup_path = Some(l.group);
        m.cgroup_limit_file = Some(l.file);
    }
    m
}

/// True when a DAMON context is on (sysfs interface) or, live, when a `kdamond` thread exists
/// (DAMON_RECLAIM and DAMON_LRU_SORT start theirs without the sysfs interface).
fn damon_active(fs: &FsRoot) -> Option<bool> {
    let base = "/sys/kernel/mm/damon/admin/kdamonds";
    let sysfs_on = fs
        .list(base)
        .iter()
        .any(|k| fs.read(&format!("{base}/{k}/state")).as_deref() == Some("on"));
    if sysfs_on {
        return Some(true);
    }
    if fs.is_live() {
        let thread = std::fs::read_dir("/proc")
            .ok()?
            .filter_map(|e| e.ok())
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    && std::fs::read_to_string(e.path().join("comm"))
                        .is_ok_and(|c| c.starts_with("kdamond"))
            });
        return Some(thread);
    }
    fs.path(base).exists().then_some(false)
}

/// Past this share of busy CPU time just before measuring, other work competes with the run
/// (`LoadState::busy_percent`), percent of all CPUs.
pub const BUSY_PERCENT: f64 = 25.0;

/// `/proc/stat` first line: user nice system idle iowait irq softirq steal …
fn cpu_times(fs: &FsRoot) -> Option<Vec<u64>> {
    let stat = fs.read("/proc/stat")?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    Some(
        line.split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect(),
    )
}

fn read_load(fs: &FsRoot, sample: bool) -> LoadState {
    let mut l = LoadState::default();
    if let Some(avg) = fs.read("/proc/loadavg") {
        let v: Vec<f64> = avg
            .split_whitespace()
            .take(3)
            .filter_map(|x| x.parse().ok())
            .collect();
        if v.len() == 3 {
            (l.load_avg_1m, l.load_avg_5m, l.load_avg_15m) = (Some(v[0]), Some(v[1]), Some(v[2]));
        }
    }
    if sample {
        let ms = 200;
        if let Some(a) = cpu_times(fs) {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            if let Some(b) = cpu_times(fs) {
                let d: Vec<u64> = b
                    .iter()
                    .zip(&a)
                    .map(|(b, a)| b.saturating_sub(*a))
                    .collect();
                let total: u64 = d.iter().take(8).sum();
                if total > 0 && d.len() >= 8 {
                    let idle = d[3] + d[4];
                    l.steal_percent = Some(100.0 * d[7] as f64 / total as f64);
                    l.busy_percent = Some(100.0 * (total - idle - d[7]) as f64 / total as f64);
                    l.sample_ms = Some(ms);
                }
            }
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_memory_respects_cgroup_headroom() {
        let m = MemoryState {
            available_bytes: Some(10 << 30),
            cgroup_limit_bytes: Some(4 << 30),
            cgroup_usage_bytes: Some(1 << 30),
            ..Default::default()
        };
        assert_eq!(m.usable_bytes(), Some(3 << 30));
        let m = MemoryState {
            available_bytes: Some(2 << 30),
            ..Default::default()
        };
        assert_eq!(m.usable_bytes(), Some(2 << 30));
    }

    #[test]
    fn live_environment_is_consistent() {
        let fs = FsRoot::live();
        let topo = Topology::load().unwrap();
        let env = Environment::collect(&fs, topo, false);
        assert!(!env.allowed_cpus.is_empty());
        assert!(env.memory.total_bytes.unwrap() > 0);
        assert!(env.llc_bytes() > 0);
    }
}
