//! Where a program's memory is against where its threads ran: the share on nodes none of its
//! threads ran on (remote), the share on a slower tier (CPU-less CXL or PMEM nodes, or a higher
//! kernel memory tier), and the changes that would move it.

use memsight_core::topology::Topology;
use memsight_core::units::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::procfs::NodePages;

/// One node's share of the program's memory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NodeShare {
    pub node: usize,
    pub bytes: u64,
    pub anon_bytes: u64,
    /// Bytes in mappings with a non-default policy (numactl, mbind, set_mempolicy).
    pub policy_bytes: u64,
    /// Thread samples that found a thread on one of this node's CPUs.
    pub thread_samples: u64,
    /// No CPU has it as its local node (CXL expander, PMEM in system-RAM mode, HBM).
    pub cpu_less: bool,
    /// Its kind (DRAM, HBM, NVM, CXL-DRAM …) where the system says.
    pub kind: Option<String>,
    /// Its kernel memory tier (lower is faster) where the system says.
    pub memory_tier: Option<u32>,
}

/// The program's placement, from one reading of its pages and every reading of its threads.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Placement {
    pub nodes: Vec<NodeShare>,
    /// Nodes its threads ran on (by their CPUs' local node).
    pub thread_nodes: Vec<usize>,
    /// Share of its pages on nodes none of its threads ran on.
    pub remote_share: Option<f64>,
    /// Share of its pages on a slower tier than the fastest node its threads ran on.
    pub slow_tier_share: Option<f64>,
}

/// Is `n` slower memory than the threads' own: a higher kernel memory tier where the system
/// ranks them, else a CPU-less node that is not HBM (CXL expanders and PMEM are further away;
/// HBM trades latency for bandwidth and is placed there on purpose).
fn slower(n: &NodeShare, home_tier: Option<u32>) -> bool {
    match (n.memory_tier, home_tier) {
        (Some(t), Some(h)) => t > h,
        _ => n.cpu_less && n.kind.as_deref() != Some("HBM"),
    }
}

/// Places `pages` (one reading) against the CPUs the threads were seen on (every reading).
pub fn assess(pages: &[NodePages], cpu_samples: &[(usize, u64)], topo: &Topology) -> Placement {
    let mut nodes: Vec<NodeShare> = pages
        .iter()
        .map(|p| {
            let info = topo.numa_nodes.iter().find(|n| n.os_index == p.node);
            NodeShare {
                node: p.node,
                bytes: p.bytes,
                anon_bytes: p.anon,
                policy_bytes: p.by_policy,
                thread_samples: 0,
                cpu_less: info.is_some_and(|n| n.cpu_less),
                kind: info.and_then(|n| n.kind.clone()),
                memory_tier: info.and_then(|n| n.memory_tier),
            }
        })
        .collect();
    let mut thread_nodes: Vec<usize> = Vec::new();
    for &(cpu, count) in cpu_samples {
        let Some(node) = topo.node_of_cpu(cpu) else {
            continue;
        };
        if !thread_nodes.contains(&node) {
            thread_nodes.push(node);
        }
        match nodes.iter_mut().find(|n| n.node == node) {
            Some(n) => n.thread_samples += count,
            None => nodes.push(NodeShare {
                node,
                bytes: 0,
                anon_bytes: 0,
                policy_bytes: 0,
                thread_samples: count,
                cpu_less: false,
                kind: None,
                memory_tier: None,
            }),
        }
    }
    thread_nodes.sort_unstable();
    nodes.sort_by_key(|n| n.node);
    let total: u64 = nodes.iter().map(|n| n.bytes).sum();
    let share = |f: &dyn Fn(&NodeShare) -> bool| {
        (total > 0 && !thread_nodes.is_empty()).then(|| {
            nodes.iter().filter(|n| f(n)).map(|n| n.bytes).sum::<u64>() as f64 / total as f64
        })
    };
    let home_tier = nodes
        .iter()
        .filter(|n| thread_nodes.contains(&n.node))
        .filter_map(|n| n.memory_tier)
        .min();
    Placement {
        remote_share: share(&|n| !thread_nodes.contains(&n.node)),
        slow_tier_share: share(&|n| slower(n, home_tier)),
        thread_nodes,
        nodes,
    }
}

/// Shares below this are not worth a change.
const WORTH: f64 = 0.1;

/// The placement in words, with the change to make.
pub fn findings(p: &Placement) -> Vec<String> {
    let mut out = Vec::new();
    let total: u64 = p.nodes.iter().map(|n| n.bytes).sum();
    let with_pages = p.nodes.iter().filter(|n| n.bytes > 0).count();
    if p.nodes.len() <= 1 && with_pages <= 1 {
        out.push(format!(
            "placement: all {} of its pages on one NUMA node: placement cannot cost it here",
            format_bytes(total)
        ));
        return out;
    }
    let list = |nodes: &[usize]| {
        nodes
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    if let Some(r) = p.remote_share.filter(|&r| r >= WORTH) {
        let policy: u64 = p.nodes.iter().map(|n| n.policy_bytes).sum();
        let why = if policy as f64 >= 0.5 * total as f64 {
            "most of its pages were placed by a memory policy (numactl or mbind): check that the policy names the nodes its threads run on"
        } else {
            "its pages were first touched by threads elsewhere, or memory ran out on its own nodes"
        };
        let home = list(&p.thread_nodes);
        out.push(format!(
            "placement: {:.0}% of its pages are on nodes none of its threads ran on (threads on node {home}): {why}; run it with `numactl --cpunodebind={home} --membind={home}`, or let each thread first-touch the memory it works on (initialise arrays in the parallel loop that uses them), or `numactl --interleave=all` when every thread reads all of the data",
            r * 100.0
        ));
    }
    if let Some(s) = p.slow_tier_share.filter(|&s| s >= WORTH) {
        let slow: Vec<String> = p
            .nodes
            .iter()
            .filter(|n| n.bytes > 0 && n.cpu_less)
            .map(|n| {
                format!(
                    "node {} ({}{})",
                    n.node,
                    n.kind.as_deref().unwrap_or("CPU-less"),
                    n.memory_tier
                        .map_or(String::new(), |t| format!(", tier {t}"))
                )
            })
            .collect();
        out.push(format!(
            "placement: {:.0}% of its pages are on slower memory{}: a latency-bound program pays the far tier's latency on every miss there; `numactl --membind` to the DRAM nodes (or `--preferred`) keeps its hot data near, and `memsight tiers` measures how much slower that memory is",
            s * 100.0,
            if slow.is_empty() {
                String::new()
            } else {
                format!(" ({})", slow.join(", "))
            }
        ));
    }
    if out.is_empty() {
        out.push(format!(
            "placement: its pages are on the nodes its threads ran on ({}; {} in all)",
            list(&p.thread_nodes),
            format_bytes(total)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testdata::fixture as topo;

    const TWO_SOCKETS: &str = "24em64t-2n6c2t-pci.xml";
    const HBM: &str = "64intel64-heteromem.xml";

    fn pages(list: &[(usize, u64)]) -> Vec<NodePages> {
        list.iter()
            .map(|&(node, bytes)| NodePages {
                node,
                bytes,
                anon: bytes,
                by_policy: 0,
            })
            .collect()
    }

    fn cpu_on(t: &Topology, node: usize) -> usize {
        t.numa_nodes
            .iter()
            .find(|n| n.os_index == node)
            .unwrap()
            .cpus[0]
    }

    #[test]
    fn memory_on_the_other_socket_is_remote_with_the_numactl_line() {
        let t = topo(TWO_SOCKETS);
        let p = assess(
            &pages(&[(0, 1 << 30), (1, 3 << 30)]),
            &[(cpu_on(&t, 0), 40)],
            &t,
        );
        assert_eq!(p.thread_nodes, [0]);
        assert!((p.remote_share.unwrap() - 0.75).abs() < 1e-9);
        assert_eq!(p.slow_tier_share, Some(0.0));
        let f = findings(&p);
        assert!(
            f[0].contains("75% of its pages are on nodes none of its threads ran on")
                && f[0].contains("--cpunodebind=0 --membind=0"),
            "{f:?}"
        );
        // Threads on both nodes, pages on both: nothing to change.
        let p = assess(
            &pages(&[(0, 1 << 30), (1, 1 << 30)]),
            &[(cpu_on(&t, 0), 10), (cpu_on(&t, 1), 10)],
            &t,
        );
        assert_eq!(p.remote_share, Some(0.0));
        assert!(findings(&p)[0].contains("on the nodes its threads ran on (0,1"));
    }

    #[test]
    fn pages_on_a_cpu_less_node_are_on_a_slower_tier() {
        // The two-socket machine with its second node made a CPU-less CXL expander.
        let mut t = topo(TWO_SOCKETS);
        let far = &mut t.numa_nodes[1];
        let (far_node, cpus) = (far.os_index, std::mem::take(&mut far.cpus));
        far.cpu_less = true;
        far.kind = Some("CXL-DRAM".into());
        t.cpus
            .iter_mut()
            .filter(|c| cpus.contains(&c.os_index))
            .for_each(|c| c.node = Some(0));
        let p = assess(
            &pages(&[(0, 1 << 30), (far_node, 1 << 30)]),
            &[(cpu_on(&t, 0), 5)],
            &t,
        );
        assert!((p.slow_tier_share.unwrap() - 0.5).abs() < 1e-9, "{p:?}");
        let f = findings(&p);
        assert!(
            f.iter().any(|x| x.contains(&format!(
                "50% of its pages are on slower memory (node {far_node} (CXL-DRAM))"
            ))),
            "{f:?}"
        );
        // HBM, CPU-less too, is not called slower.
        let t = topo(HBM);
        let hbm = t.numa_nodes.iter().find(|n| n.cpu_less).unwrap().os_index;
        let home = t.numa_nodes.iter().find(|n| !n.cpu_less).unwrap().os_index;
        let p = assess(&pages(&[(hbm, 1 << 30)]), &[(cpu_on(&t, home), 5)], &t);
        assert_eq!(p.slow_tier_share, Some(0.0), "{p:?}");
    }

    #[test]
    fn one_node_says_placement_cannot_cost() {
        let t = topo(TWO_SOCKETS);
        let p = assess(&pages(&[(0, 1 << 20)]), &[(cpu_on(&t, 0), 1)], &t);
        assert!(findings(&p)[0].contains("one NUMA node"));
    }
}
