//! Placement plans: which CPUs measure, which generate load, which node each buffer is bound to.
//! Pure functions of the topology and the allowed sets, so they are tested on recorded machines
//! (2- and 4-socket, 24 nodes, CXL, heterogeneous memory, cgroup-limited) that a small test
//! machine cannot be.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::topology::Topology;
use memsight_core::{Error, Result};

/// At most this many CPUs in a default core-to-core matrix (n·(n−1) pairs).
pub const C2C_MAX_DEFAULT: usize = 16;

/// CPUs for a core-to-core matrix: one per last-level-cache domain (CCX, socket L3) when there
/// are several, otherwise one per core, spread evenly and capped at [`C2C_MAX_DEFAULT`]; where
/// only one core is allowed (a container given one core's two hardware threads), its threads.
pub fn c2c_cpus(topo: &Topology, allowed: &[usize]) -> Vec<usize> {
    let usable: Vec<&memsight_core::topology::Cpu> = topo
        .cpus
        .iter()
        .filter(|c| allowed.contains(&c.os_index))
        .collect();
    let mut per_domain: BTreeMap<usize, usize> = BTreeMap::new();
    for c in &usable {
        if let Some(d) = c.llc_domain {
            per_domain.entry(d).or_insert(c.os_index);
        }
    }
    if per_domain.len() >= 2 {
        return spread(per_domain.into_values().collect(), C2C_MAX_DEFAULT);
    }
    let mut per_core: BTreeMap<(Option<usize>, usize), usize> = BTreeMap::new();
    for c in &usable {
        per_core.entry((c.package, c.core)).or_insert(c.os_index);
    }
    if per_core.len() >= 2 {
        return spread(per_core.into_values().collect(), C2C_MAX_DEFAULT);
    }
    // One core: the pair there is is two of its hardware threads (the line moves within the
    // core), which is still a measurement; refusing it would stop a whole `run` in a 2-CPU pod.
    spread(usable.iter().map(|c| c.os_index).collect(), C2C_MAX_DEFAULT)
}

/// Whether `cpus` are hardware threads of one core (an SMT pair or more).
pub fn one_core(topo: &Topology, cpus: &[usize]) -> bool {
    let cores: std::collections::BTreeSet<(Option<usize>, usize)> = topo
        .cpus
        .iter()
        .filter(|c| cpus.contains(&c.os_index))
        .map(|c| (c.package, c.core))
        .collect();
    cpus.len() >= 2 && cores.len() == 1
}

/// At most `max` items, evenly spaced, first and last kept.
fn spread(mut v: Vec<usize>, max: usize) -> Vec<usize> {
    v.sort_unstable();
    if v.len() <= max || max < 2 {
        return v;
    }
    (0..max).map(|i| v[i * (v.len() - 1) / (max - 1)]).collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testdata::fixture;

    #[test]
    fn four_sockets_give_one_c2c_cpu_per_socket_l3() {
        let t = fixture("16em64t-4s2c2t.xml");
        let cpus = c2c_cpus(&t, &t.allowed_cpus());
        assert_eq!(cpus.len(), 4);
        let packages: std::collections::BTreeSet<_> = cpus
            .iter()
            .map(|c| t.cpus.iter().find(|x| x.os_index == *c).unwrap().package)
            .collect();
        assert_eq!(packages.len(), 4, "one per socket");
    }

    #[test]
    fn one_cores_two_threads_are_still_a_c2c_pair() {
        // A cpuset of one core's two hardware threads (a 2-CPU container on an SMT host).
        let t = fixture("16em64t-4s2c2t.xml");
        let first = &t.cpus[0];
        let pair: Vec<usize> = t
            .cpus
            .iter()
            .filter(|c| c.package == first.package && c.core == first.core)
            .map(|c| c.os_index)
            .collect();
        assert_eq!(pair.len(), 2, "the fixture has two threads a core");
        assert_eq!(c2c_cpus(&t, &pair), pair);
        assert!(one_core(&t, &pair));
        // Two cores of one socket: one thread of each, not a core's two threads.
        let two_cores: Vec<usize> = t
            .cpus
            .iter()
            .filter(|c| c.package == first.package)
            .map(|c| c.os_index)
            .collect();
        let c = c2c_cpus(&t, &two_cores);
        assert_eq!(c.len(), 2);
        assert!(!one_core(&t, &c));
    }

    #[test]
    fn twenty_four_nodes_make_a_24_by_24_plan() {
        let t = fixture("192em64t-24n8c2t.xml");
        let p = numa_plan(&t, &t.allowed_cpus(), &t.allowed_nodes());
        assert_eq!(p.initiators.len(), 24);
        assert_eq!(p.targets.len(), 24);
        // Each initiator's CPU belongs to its node.
        for i in &p.initiators {
            assert_eq!(t.node_of_cpu(i.cpu), Some(i.node));
        }
        // The default c2c matrix is capped and spread.
        assert_eq!(c2c_cpus(&t, &t.allowed_cpus()).len(), C2C_MAX_DEFAULT);
    }

    #[test]
    fn cpu_less_memory_is_a_column_not_a_row() {
        let t = fixture("64intel64-heteromem.xml");
        let p = numa_plan(&t, &t.allowed_cpus(), &t.allowed_nodes());
        let hbm: Vec<&Target> = p
            .targets
            .iter()
            .filter(|x| x.kind.as_deref() == Some("HBM"))
            .collect();
        assert_eq!(hbm.len(), 4);
        assert!(hbm.iter().all(|x| x.cpu_less));
        assert!(
            p.initiators
                .iter()
                .all(|i| !hbm.iter().any(|h| h.node == i.node))
        );
        assert_eq!(p.initiators.len(), 4);
    }

    #[test]
    fn cgroup_limits_shrink_the_plan() {
        // The cpuset this machine's sysfs snapshot records (linux/16amd64-8n2c-cpusets): an XML
        // export does not carry the process's cgroup, so the allowed sets are given as the
        // environment report would give them.
        let t = fixture("16amd64-8n2c-cpusets.xml");
        let allowed_cpus = vec![0, 1, 2, 3, 5, 6, 12, 13, 14, 15];
        let allowed_nodes = vec![1, 2, 3, 4];
        let p = numa_plan(&t, &allowed_cpus, &allowed_nodes);
        assert!(
            p.initiators
                .iter()
                .all(|i| i.cpus.iter().all(|c| allowed_cpus.contains(c)))
        );
        assert!(p.targets.iter().all(|x| allowed_nodes.contains(&x.node)));
        assert_eq!(p.targets.len(), 4);
        assert!(
            c2c_cpus(&t, &allowed_cpus)
                .iter()
                .all(|c| allowed_cpus.contains(c))
        );
    }

    #[test]
    fn loaded_latency_roles() {
        let t = fixture("16em64t-4s2c2t.xml");
        let all = t.allowed_cpus();
        let p = loaded_plan(&t, &all, None).unwrap();
        assert_eq!(p.chase_cpu, all[0]);
        assert!(!p.load_cpus.contains(&p.chase_cpu));
        // Load threads avoid the chasing core's SMT sibling while other cores exist.
        let core = |c: usize| t.cpus.iter().find(|x| x.os_index == c).unwrap().core;
        assert!(p.load_cpus.iter().all(|&c| core(c) != core(p.chase_cpu)));
        assert_eq!(p.node, t.node_of_cpu(all[0]));
        assert!(matches!(
            loaded_plan(&t, &all[..1], None),
            Err(Error::Input(_))
        ));
        assert!(matches!(
            loaded_plan(&t, &all, Some(99)),
            Err(Error::Input(_))
        ));
    }

    #[test]
    fn two_sockets_two_nodes() {
        let t = fixture("24em64t-2n6c2t-pci.xml");
        assert_eq!(t.packages, 2);
        let p = numa_plan(&t, &t.allowed_cpus(), &t.allowed_nodes());
        assert_eq!(p.initiators.len(), 2);
        assert_eq!(p.targets.len(), 2);
        assert_ne!(p.initiators[0].node, p.initiators[1].node);
        // One c2c CPU per socket L3.
        let c = c2c_cpus(&t, &t.allowed_cpus());
        assert_eq!(c.len(), 2);
        let pkg = |x: usize| t.cpus.iter().find(|c| c.os_index == x).unwrap().package;
        assert_ne!(pkg(c[0]), pkg(c[1]));
        // Loaded latency keeps its memory on the chasing CPU's node.
        let l = loaded_plan(&t, &t.allowed_cpus(), None).unwrap();
        assert_eq!(l.node, t.node_of_cpu(l.chase_cpu));
    }

    #[test]
    fn cxl_machine_plans_its_dram_node() {
        let t = fixture("cxlmem+dax.v2.xml");
        let p = numa_plan(&t, &t.allowed_cpus(), &t.allowed_nodes());
        assert_eq!(p.targets.len(), 1);
        assert_eq!(p.initiators.len(), 1);
    }
}
