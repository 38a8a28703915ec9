//! Loaded latency's roles, from the topology and the CPUs: one chases, the others load (a pure
//! function, tested on recorded machines in `placement_tests.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::topology::Topology;
use memsight_core::{Error, Result};

/// Roles for a loaded-latency run: one CPU chases, the others generate traffic, memory on the
/// chasing CPU's node unless a node is given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoadedPlan {
    pub chase_cpu: usize,
    pub load_cpus: Vec<usize>,
    pub node: Option<usize>,
}

/// Chooses the chasing CPU (the first of `cpus`) and load CPUs (the rest, one per core first).
/// Needs at least two CPUs.
pub fn loaded_plan(topo: &Topology, cpus: &[usize], node: Option<usize>) -> Result<LoadedPlan> {
    if cpus.len() < 2 {
        return Err(Error::input(format!(
            "loaded latency needs at least 2 CPUs (1 to chase, 1 or more to load) but {} allowed: run it on a larger cpuset",
            cpus.len()
        )));
    }
    if let Some(n) = node {
        match topo.numa_nodes.iter().find(|x| x.os_index == n) {
            None => {
                return Err(Error::input(format!(
                    "NUMA node {n} does not exist on this machine"
                )));
            }
            Some(x) if x.memory_bytes == 0 => {
                return Err(Error::input(format!(
                    "NUMA node {n} has no memory to bind buffers to; choose a node with memory"
                )));
            }
            _ => {}
        }
    }
    let core_of = |c: usize| {
        topo.cpus
            .iter()
            .find(|x| x.os_index == c)
            .map_or(c, |x| x.core)
    };
    let chase = cpus[0];
    let ordered = memsight_core::pin::choose_cpus(cpus.len(), cpus, core_of)?;
    let load_cpus = ordered
        .into_iter()
        .filter(|&c| c != chase && core_of(c) != core_of(chase))
        .collect::<Vec<_>>();
    let load_cpus = if load_cpus.is_empty() {
        cpus[1..].to_vec()
    } else {
        load_cpus
    };
    Ok(LoadedPlan {
        chase_cpu: chase,
        load_cpus,
        node: node.or_else(|| topo.node_of_cpu(chase)),
    })
}
