//! Which CPUs a core-to-core matrix measures, from the topology and the allowed CPUs: a pure
//! function, tested on recorded machines (`placement_tests.rs`) a small test machine cannot be.

use std::collections::BTreeMap;

use memsight_core::topology::Topology;

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
