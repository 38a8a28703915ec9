//! The environment report as text.

use memsight_core::env::Environment;
use memsight_core::topology::TopologySource;
use memsight_core::units::{format_bytes, format_list};

use super::{heading, table};

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "unknown".to_string(), |x| x.to_string())
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The machine in key/value lines: host, CPU, features, memory, page sizes, state.
fn facts(env: &Environment) {
    let t = &env.topology;
    heading("Environment");
    if t.source != TopologySource::Live {
        say!(
            "source          {} (recorded machine; live-only facts omitted)",
            match &t.source {
                TopologySource::Xml(p) => format!("hwloc XML {p}"),
                TopologySource::FsRoot(p) => format!("sysfs tree {p}"),
                TopologySource::Live => "this machine".to_string(),
            }
        );
    }
    say!(
        "host            {} ({}; kernel {})",
        opt(&env.hostname),
        opt(&env.os),
        opt(&env.kernel)
    );
    say!(
        "cpu             {} [{}; family {} model {} stepping {}; {}]",
        opt(&env.cpu.model_name),
        opt(&env.cpu.vendor),
        opt(&env.cpu.family),
        opt(&env.cpu.model),
        opt(&env.cpu.stepping),
        env.cpu.architecture
    );
    say!("core            {}", env.cpu.core_name());
    let f = &env.cpu.features;
    let mut isa: Vec<&str> = Vec::new();
    for (on, name) in [
        (f.sse2, "SSE2"),
        (f.avx2, "AVX2"),
        (f.avx512f, "AVX-512F"),
        (f.nt_stores, "NT-stores"),
        (f.clzero, "CLZERO"),
        (f.clflushopt, "CLFLUSHOPT"),
        (f.clwb, "CLWB"),
        (f.neon, "NEON"),
        (f.sve, "SVE"),
    ] {
        if on {
            isa.push(name);
        }
    }
    say!(
        "isa             {}",
        if isa.is_empty() {
            "unknown".into()
        } else {
            isa.join(" ")
        }
    );
    say!(
        "hypervisor      {}",
        env.cpu.hypervisor.as_deref().unwrap_or("none detected")
    );
    say!(
        "topology        {} package(s), {} core(s), {} thread(s) (SMT {}), {} NUMA node(s)",
        t.packages,
        t.cores,
        t.threads,
        t.smt,
        t.numa_nodes.len()
    );
    say!(
        "allowed         CPUs {} · nodes {}",
        format_list(&env.allowed_cpus),
        format_list(&env.allowed_nodes)
    );
    state(env);
}

/// What the machine is doing: memory, frequency policy, page settings, NUMA balancing, load.
fn state(env: &Environment) {
    say!(
        "memory          total {} · available {} · cgroup limit {}",
        env.memory
            .total_bytes
            .map_or("unknown".into(), format_bytes),
        env.memory
            .available_bytes
            .map_or("unknown".into(), format_bytes),
        match (env.memory.cgroup_limit_bytes, env.memory.cgroup_limit_file) {
            (Some(b), Some(f)) => format!("{} ({})", format_bytes(b), f.describe()),
            (Some(b), None) => format_bytes(b),
            _ => "none".into(),
        }
    );
    say!(
        "governor        {}{}",
        if env.governors.is_empty() {
            "not exposed (no cpufreq)".into()
        } else {
            env.governors.join(",")
        },
        env.boost
            .map_or(String::new(), |b| format!(" · boost {}", yes(b)))
    );
    say!(
        "THP             enabled {} · defrag {}",
        opt(&env.thp_enabled),
        opt(&env.thp_defrag)
    );
    let pools: Vec<String> = env
        .huge_pages
        .iter()
        .map(|p| {
            format!(
                "{}: {} reserved, {} free",
                format_bytes(p.page_bytes),
                p.total,
                p.free
            )
        })
        .collect();
    say!(
        "huge pages      {}",
        if pools.is_empty() {
            "none".into()
        } else {
            pools.join(" · ")
        }
    );
    say!(
        "NUMA balancing  {}",
        env.numa_balancing.map_or("unknown", yes)
    );
    say!(
        "DAMON           {}",
        env.damon_active
            .map_or("unknown", |d| if d { "active" } else { "off" })
    );
    let l = &env.load;
    say!(
        "load            {} / {} / {} (1/5/15 min){}",
        opt(&l.load_avg_1m),
        opt(&l.load_avg_5m),
        opt(&l.load_avg_15m),
        match (l.steal_percent, l.busy_percent, l.sample_ms) {
            (Some(s), Some(b), Some(ms)) => format!(" · steal {s:.1}% · busy {b:.1}% over {ms} ms"),
            _ => String::new(),
        }
    );
}

/// Caches, CPU-side and memory-side.
fn caches(t: &memsight_core::topology::Topology) {
    let mut caches = table(&[
        "level",
        "kind",
        "size",
        "line",
        "ways",
        "instances",
        "threads each",
    ]);
    for c in &t.caches {
        caches.add_row(vec![
            format!("L{}", c.level),
            c.kind.clone(),
            format_bytes(c.size_bytes),
            c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
            c.ways.map_or("?".into(), |w| {
                if w == 0 { "full".into() } else { w.to_string() }
            }),
            c.instances.to_string(),
            c.threads_per_instance.to_string(),
        ]);
    }
    for c in &t.memory_side_caches {
        caches.add_row(vec![
            "memory-side".into(),
            c.kind.clone(),
            format_bytes(c.size_bytes),
            c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
            "".into(),
            c.instances.to_string(),
            c.threads_per_instance.to_string(),
        ]);
    }
    say!("\nCaches (hwloc; cross-checked with sysfs and CPUID)\n{caches}");
}

/// NUMA nodes, CPU-less ones included.
fn nodes(t: &memsight_core::topology::Topology) {
    let mut nodes = table(&[
        "node",
        "memory",
        "CPUs",
        "near CPUs",
        "kind",
        "tier",
        "allowed",
    ]);
    for n in &t.numa_nodes {
        nodes.add_row(vec![
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
            yes(n.allowed).into(),
        ]);
    }
    say!("\nNUMA nodes\n{nodes}");
}

/// Memory devices the OS lists (DAX, CXL, PMEM).
fn devices(t: &memsight_core::topology::Topology) {
    if !t.memory_devices.is_empty() {
        let mut devs = table(&["device", "kind", "details"]);
        for d in &t.memory_devices {
            devs.add_row(vec![
                d.name.clone(),
                d.subtype.clone().unwrap_or_default(),
                d.info
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            ]);
        }
        say!("\nMemory devices\n{devs}");
    }
}

/// Prints the environment report.
pub fn print(env: &Environment) {
    facts(env);
    caches(&env.topology);
    nodes(&env.topology);
    devices(&env.topology);
    print_warnings(env);
}

/// Prints the environment's warnings.
pub fn print_warnings(env: &Environment) {
    if env.warnings.is_empty() {
        return;
    }
    say!("\nWarnings");
    for w in &env.warnings {
        say!("  ! [{}] {}", w.code, w.message);
    }
}
