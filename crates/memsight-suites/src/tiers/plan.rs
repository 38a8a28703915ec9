//! Which memory tiers and nodes the tier study measures, from where, and against what: tiers from
//! the kernel's `memory_tiering` (else from node kinds), the CPUs nearest each node, the
//! firmware's claims, the near memory in front of far memory, and the weighted-interleave pair.
//! Pure functions of the topology and a sysfs root, so they are tested on recorded machines.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::env::Environment;
use memsight_core::sysfs::FsRoot;
use memsight_core::topology::{NumaNode, Topology};

use crate::numa::{Claim, read_claim};

/// One NUMA node of a tier, with the CPUs that measure it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TierNode {
    pub node: usize,
    /// DRAM, HBM, NVM, CXL … when the system says.
    pub kind: Option<String>,
    pub cpu_less: bool,
    pub memory_bytes: u64,
    /// The node whose CPUs measure it (itself, or the nearest node with CPUs).
    pub initiator: usize,
    /// Allowed CPUs of the initiator; latency runs on the first, bandwidth on all.
    pub cpus: Vec<usize>,
    /// What the firmware claims for it (ACPI HMAT through sysfs), if anything.
    pub claim: Option<Claim>,
}

/// A memory tier: nodes the kernel treats alike for demotion (lower id is faster).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tier {
    /// Kernel tier id (`memory_tierN`), when the kernel publishes tiers.
    pub id: Option<u32>,
    pub label: String,
    pub nodes: Vec<TierNode>,
}

/// Where the near-memory size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NearSource {
    /// `/sys/devices/system/node/nodeN/memory_side_cache` (ACPI HMAT).
    Sysfs,
    /// hwloc's memory-side cache objects.
    Hwloc,
    /// SMBIOS: persistent memory and DRAM marked as cache (Optane Memory Mode).
    MemoryMode,
    /// `--near-size`.
    Given,
}

impl NearSource {
    /// Where the near-memory size came from, in words.
    pub fn describe(self) -> &'static str {
        match self {
            NearSource::Sysfs => "from the kernel's memory-side cache (ACPI HMAT)",
            NearSource::Hwloc => "from hwloc's memory-side cache",
            NearSource::MemoryMode => {
                "from SMBIOS: DRAM as a cache of persistent memory (Memory Mode)"
            }
            NearSource::Given => "as given with --near-size",
        }
    }
}

/// A memory-side cache (near memory) in front of a node's far memory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NearMemory {
    /// The node whose memory it caches.
    pub node: usize,
    pub bytes: u64,
    pub source: NearSource,
    /// Working sets the sweep visits, smallest first.
    pub sizes: Vec<u64>,
    /// Why the sweep stops short of 4 × the near size, if it does.
    pub capped: Option<String>,
}

/// How a weighted-interleave placement is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// `MPOL_WEIGHTED_INTERLEAVE` with weights in `/sys/kernel/mm/mempolicy/weighted_interleave`
    /// (Linux 6.9+); the weights are restored afterwards.
    Kernel,
    /// Older kernels: the buffer is bound range by range (`mbind`), `a` pages to one node then `b`
    /// to the other.
    Mbind,
}

impl Mechanism {
    /// How the pages were placed, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Mechanism::Kernel => "the kernel's weighted interleave policy",
            Mechanism::Mbind => "mbind range by range",
        }
    }
}

/// A DRAM:far page ratio to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ratio {
    pub near: u32,
    pub far: u32,
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.near, self.far)
    }
}

/// The weighted-interleave sweep: a fast node and a slower one the same CPUs reach.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WeightedPlan {
    pub fast: usize,
    pub slow: usize,
    pub cpus: Vec<usize>,
    pub mechanism: Mechanism,
    pub ratios: Vec<Ratio>,
    /// The ratio the firmware's bandwidth claims suggest, if they exist.
    pub claimed: Option<Ratio>,
}

/// The whole plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TierPlan {
    /// Fastest first.
    pub tiers: Vec<Tier>,
    pub near: Option<NearMemory>,
    pub weighted: Option<WeightedPlan>,
    /// Why parts of the study do not apply here, in words.
    pub notes: Vec<String>,
    /// Persistent-memory regions and their persistence domains (`/sys/bus/nd`).
    #[serde(default)]
    pub persistence: Vec<memsight_core::nvdimm::Region>,
}

impl TierPlan {
    /// Every node of every tier, fastest tier first.
    pub fn nodes(&self) -> impl Iterator<Item = &TierNode> {
        self.tiers.iter().flat_map(|t| t.nodes.iter())
    }
}

/// The fixed ratios of the sweep, DRAM:far.
pub const RATIOS: [Ratio; 5] = [
    Ratio { near: 1, far: 0 },
    Ratio { near: 4, far: 1 },
    Ratio { near: 3, far: 1 },
    Ratio { near: 2, far: 1 },
    Ratio { near: 1, far: 1 },
];

/// Rank of a node kind when the kernel publishes no tiers: HBM, DRAM, CXL, persistent, other.
fn kind_rank(kind: Option<&str>) -> u32 {
    match kind.map(|k| k.to_ascii_uppercase()) {
        Some(k) if k.contains("HBM") || k.contains("MCDRAM") => 0,
        None => 1,
        Some(k) if k == "DRAM" => 1,
        Some(k) if k.contains("CXL") => 2,
        Some(k) if k.contains("NVM") || k.contains("SPM") || k.contains("PMEM") => 3,
        Some(_) => 4,
    }
}

/// The allowed CPUs nearest a node: its own, else those hwloc places it beside, else every CPU
/// of the first node with CPUs. Returns (initiator node, CPUs).
fn nearest_cpus(topo: &Topology, n: &NumaNode, allowed: &[usize]) -> Option<(usize, Vec<usize>)> {
    let keep =
        |v: &[usize]| -> Vec<usize> { v.iter().copied().filter(|c| allowed.contains(c)).collect() };
    let own = keep(&n.cpus);
    if !own.is_empty() {
        return Some((n.os_index, own));
    }
    let near = keep(&n.near_cpus);
    if let Some(node) = near.first().and_then(|&c| topo.node_of_cpu(c)) {
        let cpus = topo
            .numa_nodes
            .iter()
            .find(|x| x.os_index == node)
            .map(|x| keep(&x.cpus))
            .filter(|v| !v.is_empty())
            .unwrap_or(near);
        return Some((node, cpus));
    }
    topo.numa_nodes
        .iter()
        .find(|x| !keep(&x.cpus).is_empty())
        .map(|x| (x.os_index, keep(&x.cpus)))
}

/// Groups the allowed memory nodes into tiers, fastest first.
pub fn tiers(topo: &Topology, env: &Environment, fs: &FsRoot) -> Vec<Tier> {
    let by_kernel = topo.numa_nodes.iter().any(|n| n.memory_tier.is_some());
    let mut out: Vec<(u32, Tier)> = Vec::new();
    for n in topo
        .numa_nodes
        .iter()
        .filter(|n| n.memory_bytes > 0 && env.allowed_nodes.contains(&n.os_index))
    {
        let Some((initiator, cpus)) = nearest_cpus(topo, n, &env.allowed_cpus) else {
            continue;
        };
        let kind = n.kind.clone().or_else(|| n.dax_type.clone());
        let (rank, id, label) = match (by_kernel, n.memory_tier) {
            (true, Some(t)) => (t, Some(t), format!("memory_tier{t}")),
            (true, None) => (u32::MAX, None, "no kernel tier".to_string()),
            (false, _) => {
                let r = kind_rank(kind.as_deref());
                (
                    r,
                    None,
                    kind.clone().unwrap_or_else(|| "DRAM (assumed)".into()),
                )
            }
        };
        let node = TierNode {
            node: n.os_index,
            kind,
            cpu_less: n.cpu_less,
            memory_bytes: n.memory_bytes,
            initiator,
            cpus,
            claim: read_claim(fs, n.os_index).filter(|c| c.read_latency_ns.unwrap_or(0) > 0),
        };
        match out.iter_mut().find(|(r, t)| *r == rank && t.label == label) {
            Some((_, t)) => t.nodes.push(node),
            None => out.push((
                rank,
                Tier {
                    id,
                    label,
                    nodes: vec![node],
                },
            )),
        }
    }
    out.sort_by_key(|(r, _)| *r);
    out.into_iter().map(|(_, t)| t).collect()
}

/// DRAM that SMBIOS says caches persistent memory (Intel Memory Mode), and how many sockets
/// the inventory spreads it over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryModeDram {
    pub bytes: u64,
    /// Sockets the inventory describes (1 when the size was given by hand).
    pub sockets: usize,
}

impl MemoryModeDram {
    /// The near memory of one node: each socket's DRAM caches its own far memory, and a
    /// socket split into nodes (SNC) splits its DRAM too.
    pub fn per_node(self, nodes: usize) -> u64 {
        self.bytes / nodes.max(self.sockets).max(1) as u64
    }

    /// How the near size was found, for the plan's notes.
    pub fn describe(self, near: u64, nodes: usize) -> String {
        let b = memsight_core::units::format_bytes;
        let mut s = format!(
            "near memory {} per node: the DIMM inventory's {} of DRAM in Memory Mode over {} socket(s) and {} memory node(s)",
            b(near),
            b(self.bytes),
            self.sockets,
            nodes
        );
        if self.sockets > nodes {
            s += &format!(
                "; the inventory describes more sockets than this machine has memory nodes, so each node is taken to have one socket's DRAM ({})",
                b(near)
            );
        }
        s
    }
}

/// The near memory in front of `node`, from the first source that knows: `--near-size`, sysfs,
/// hwloc, SMBIOS Memory Mode (the installed DRAM, one socket's or node's share).
pub fn near_memory(
    topo: &Topology,
    fs: &FsRoot,
    node: usize,
    given: Option<u64>,
    memory_mode: Option<MemoryModeDram>,
) -> Option<(u64, NearSource)> {
    if let Some(b) = given {
        return Some((b, NearSource::Given));
    }
    let base = format!("/sys/devices/system/node/node{node}/memory_side_cache");
    let sysfs = fs
        .list(&base)
        .iter()
        .filter(|i| i.starts_with("index"))
        .filter_map(|i| fs.read_u64(&format!("{base}/{i}/size")))
        .max();
    if let Some(b) = sysfs.filter(|&b| b > 0) {
        return Some((b, NearSource::Sysfs));
    }
    if let Some(c) = topo.memory_side_caches.iter().max_by_key(|c| c.size_bytes)
        && c.size_bytes > 0
    {
        return Some((c.size_bytes, NearSource::Hwloc));
    }
    let nodes = topo
        .numa_nodes
        .iter()
        .filter(|n| n.memory_bytes > 0)
        .count();
    memory_mode
        .map(|m| m.per_node(nodes))
        .filter(|&b| b > 0)
        .map(|b| (b, NearSource::MemoryMode))
}

/// Working sets for the near-memory sweep: from an eighth of the near size to four times it,
/// three per doubling, capped at what the node and this process can hold. Where that cap is
/// below the near size, every size fits near memory: the sweep still shows the near plateau,
/// from an eighth of the cap, and says it cannot reach misses.
pub fn near_sizes(near: u64, node_bytes: u64, usable: Option<u64>) -> (Vec<u64>, Option<String>) {
    let b = memsight_core::units::format_bytes;
    let want = near.saturating_mul(4);
    let node_cap = node_bytes / 10 * 9;
    let cap = usable.map_or(node_cap, |u| node_cap.min(u / 10 * 9));
    let top = want.min(cap).max(1 << 20);
    let capped = if top <= near {
        Some(format!(
            "the node and this process can hold {} at most (90%), no more than the near memory ({}): every size fits it, so the sweep shows hits only",
            b(top),
            b(near)
        ))
    } else {
        (top < want).then(|| {
            format!(
                "the sweep stops at {} (90% of what the node and this process can hold), not at 4 × the near size ({}): the far plateau may not be reached",
                b(top),
                b(want)
            )
        })
    };
    let lo = (near / 8).min(top / 8).max(1 << 20);
    let sizes = crate::measure::sizes::log_sizes(lo, top.max(lo), 3, 1 << 20);
    (sizes, capped)
}

/// The DRAM:far ratio closest to `fast ÷ slow` bandwidth, with at most 8 pages on either side.
pub fn proportional(fast_bw: f64, slow_bw: f64) -> Option<Ratio> {
    if !(fast_bw > 0.0 && slow_bw > 0.0) {
        return None;
    }
    let target = fast_bw / slow_bw;
    let mut best = (f64::MAX, Ratio { near: 1, far: 1 });
    for far in 1..=8u32 {
        for near in 1..=8u32 {
            let err = (near as f64 / far as f64 / target).ln().abs();
            if err < best.0 - 1e-9 {
                best = (err, Ratio { near, far });
            }
        }
    }
    Some(best.1)
}

/// The weighted-interleave pair: the fastest tier's node local to the measuring CPUs and the
/// first node of a slower tier they reach.
pub fn weighted(tiers: &[Tier], fs: &FsRoot) -> Result<WeightedPlan, String> {
    if tiers.len() < 2 {
        return Err(
            "one memory tier here: there is no slower node to interleave pages with".to_string(),
        );
    }
    let fast = tiers[0]
        .nodes
        .iter()
        .find(|n| !n.cpu_less)
        .or_else(|| tiers[0].nodes.first())
        .ok_or("the fastest tier has no node")?;
    let slow = tiers[1..]
        .iter()
        .flat_map(|t| t.nodes.iter())
        .find(|n| n.initiator == fast.initiator)
        .or_else(|| tiers[1].nodes.first())
        .ok_or("the slower tiers have no node")?;
    let mechanism = if fs.path(crate::tiers::weights::SYSFS).is_dir() {
        Mechanism::Kernel
    } else {
        Mechanism::Mbind
    };
    let claimed = match (&fast.claim, &slow.claim) {
        (Some(f), Some(s)) => proportional(
            f.read_bandwidth_mbs.unwrap_or(0) as f64,
            s.read_bandwidth_mbs.unwrap_or(0) as f64,
        ),
        _ => None,
    };
    let mut ratios = RATIOS.to_vec();
    if let Some(c) = claimed
        && !ratios.contains(&c)
    {
        ratios.push(c);
    }
    Ok(WeightedPlan {
        fast: fast.node,
        slow: slow.node,
        cpus: fast.cpus.clone(),
        mechanism,
        ratios,
        claimed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_ratios_are_small_and_close() {
        assert_eq!(proportional(300.0, 100.0), Some(Ratio { near: 3, far: 1 }));
        assert_eq!(proportional(250.0, 100.0), Some(Ratio { near: 5, far: 2 }));
        assert_eq!(proportional(100.0, 100.0), Some(Ratio { near: 1, far: 1 }));
        assert_eq!(proportional(0.0, 100.0), None);
    }

    #[test]
    fn near_sweep_spans_an_eighth_to_four_times_unless_capped() {
        let g = 1u64 << 30;
        let (s, capped) = near_sizes(8 * g, 372 * g, None);
        assert_eq!(*s.first().unwrap(), g);
        assert_eq!(*s.last().unwrap(), 32 * g);
        assert!(capped.is_none());
        assert!(s.contains(&(8 * g)), "the near size itself is a point");
        let (s, capped) = near_sizes(96 * g, 372 * g, None);
        assert!(*s.last().unwrap() <= 372 * g / 10 * 9);
        assert!(capped.unwrap().contains("far plateau may not be reached"));
        // A node smaller than its near memory: no size beyond what it holds, and the plan says
        // the sweep sees hits only.
        let (s, capped) = near_sizes(96 * g, 10 * g, None);
        assert!(s.iter().all(|&x| x <= 9 * g), "{s:?}");
        assert!(s.len() > 3, "{s:?}");
        assert!(capped.unwrap().contains("hits only"));
    }

    /// Memory Mode DRAM from an inventory is one socket's per node, whatever this machine has.
    #[test]
    fn memory_mode_near_is_one_sockets_dram_per_node() {
        let g = 1u64 << 30;
        let two = MemoryModeDram {
            bytes: 192 * g,
            sockets: 2,
        };
        assert_eq!(
            two.per_node(1),
            96 * g,
            "a one-node machine reading a 2-socket dump"
        );
        assert_eq!(two.per_node(2), 96 * g);
        assert_eq!(
            two.per_node(4),
            48 * g,
            "sub-NUMA clustering splits a socket's DRAM"
        );
        assert!(two.describe(96 * g, 1).contains("more sockets than"));
        let given = MemoryModeDram {
            bytes: 64 * g,
            sockets: 1,
        };
        assert_eq!(given.per_node(2), 32 * g);
    }

    #[test]
    fn kinds_rank_hbm_dram_cxl_pmem() {
        let r: Vec<u32> = [
            Some("HBM"),
            Some("DRAM"),
            None,
            Some("CXL-DRAM"),
            Some("NVM"),
        ]
        .iter()
        .map(|k| kind_rank(*k))
        .collect();
        assert_eq!(r, vec![0, 1, 1, 2, 3]);
    }
}
