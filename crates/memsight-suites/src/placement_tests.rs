//! Placement on recorded machines, across the suites that place threads and buffers (c2c,
//! NUMA, loaded latency): test code, so it may name all three.

use crate::c2c::placement::*;
use crate::loaded::placement::*;
use crate::numa::placement::*;

use crate::testdata::fixture;
use memsight_core::Error;

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
