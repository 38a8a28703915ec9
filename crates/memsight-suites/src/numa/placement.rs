//! The NUMA matrix's rows and columns, from the topology and the allowed CPUs and nodes: a pure
//! function, tested on recorded machines (2- and 4-socket, 24 nodes, CXL, cgroup-limited) in
//! `placement_tests.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::topology::Topology;

/// A CPU node that runs measurements, with the CPU that represents it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Initiator {
    pub node: usize,
    pub cpu: usize,
    /// Every allowed CPU of the node (bandwidth uses them all).
    pub cpus: Vec<usize>,
}

/// A memory node buffers can be bound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    pub node: usize,
    pub memory_bytes: u64,
    pub cpu_less: bool,
    /// DRAM, HBM, NVM, CXL … when the system says.
    pub kind: Option<String>,
    /// Kernel memory tier (lower is faster), when the system says.
    pub tier: Option<u32>,
}

/// The NUMA matrix plan: rows are CPU nodes, columns memory nodes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NumaPlan {
    pub initiators: Vec<Initiator>,
    pub targets: Vec<Target>,
}

/// Rows: every node with allowed CPUs; columns: every allowed node with memory, CPU-less included.
pub fn numa_plan(topo: &Topology, allowed_cpus: &[usize], allowed_nodes: &[usize]) -> NumaPlan {
    let initiators = topo
        .numa_nodes
        .iter()
        .filter_map(|n| {
            let cpus: Vec<usize> = n
                .cpus
                .iter()
                .copied()
                .filter(|c| allowed_cpus.contains(c))
                .collect();
            Some(Initiator {
                node: n.os_index,
                cpu: *cpus.first()?,
                cpus,
            })
        })
        .collect();
    let targets = topo
        .numa_nodes
        .iter()
        .filter(|n| allowed_nodes.contains(&n.os_index) && n.memory_bytes > 0)
        .map(|n| Target {
            node: n.os_index,
            memory_bytes: n.memory_bytes,
            cpu_less: n.cpu_less,
            kind: n.kind.clone().or_else(|| n.dax_type.clone()),
            tier: n.memory_tier,
        })
        .collect();
    NumaPlan {
        initiators,
        targets,
    }
}
