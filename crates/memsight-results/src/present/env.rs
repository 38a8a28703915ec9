//! The environment's topology as table rows (caches, NUMA nodes, memory devices), for
//! `memsight env` and every measuring command's header.

use memsight_core::topology::Topology;
use memsight_core::units::{format_bytes, format_list};

pub const CACHE_COLUMNS: [&str; 7] = [
    "level",
    "kind",
    "size",
    "line",
    "ways",
    "instances",
    "threads each",
];

/// Caches, CPU-side then memory-side, under [`CACHE_COLUMNS`].
pub fn caches(t: &Topology) -> Vec<Vec<String>> {
    let line = |l: Option<u64>| l.map_or("?".into(), |l| format!("{l} B"));
    let mut rows: Vec<Vec<String>> = t
        .caches
        .iter()
        .map(|c| {
            vec![
                format!("L{}", c.level),
                c.kind.clone(),
                format_bytes(c.size_bytes),
                line(c.line_bytes),
                c.ways.map_or("?".into(), |w| {
                    if w == 0 { "full".into() } else { w.to_string() }
                }),
                c.instances.to_string(),
                c.threads_per_instance.to_string(),
            ]
        })
        .collect();
    rows.extend(t.memory_side_caches.iter().map(|c| {
        vec![
            "memory-side".into(),
            c.kind.clone(),
            format_bytes(c.size_bytes),
            line(c.line_bytes),
            "".into(),
            c.instances.to_string(),
            c.threads_per_instance.to_string(),
        ]
    }));
    rows
}

pub const NODE_COLUMNS: [&str; 7] = [
    "node",
    "memory",
    "CPUs",
    "near CPUs",
    "kind",
    "tier",
    "allowed",
];

/// NUMA nodes, CPU-less ones included, under [`NODE_COLUMNS`].
pub fn nodes(t: &Topology) -> Vec<Vec<String>> {
    t.numa_nodes
        .iter()
        .map(|n| {
            vec![
                n.os_index.to_string(),
                format_bytes(n.memory_bytes),
                if n.cpu_less {
                    "none (CPU-less)".into()
                } else {
                    format_list(&n.cpus)
                },
                format_list(&n.near_cpus),
                n.kind
                    .clone()
                    .or_else(|| n.dax_type.clone())
                    .unwrap_or_else(|| "-".into()),
                n.memory_tier.map_or("-".into(), |t| t.to_string()),
                if n.allowed { "yes" } else { "no" }.into(),
            ]
        })
        .collect()
}

pub const DEVICE_COLUMNS: [&str; 3] = ["device", "kind", "details"];

/// Memory devices the OS lists (DAX, CXL, PMEM), under [`DEVICE_COLUMNS`].
pub fn devices(t: &Topology) -> Vec<Vec<String>> {
    t.memory_devices
        .iter()
        .map(|d| {
            let details: Vec<String> = d.info.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![
                d.name.clone(),
                d.subtype.clone().unwrap_or_default(),
                details.join(" "),
            ]
        })
        .collect()
}
