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

/// Caches, CPU-side and memory-side; NUMA nodes, CPU-less ones included; memory devices the
/// OS lists (DAX, CXL, PMEM): tables whose rows the results crate makes.
fn topology_tables(t: &memsight_core::topology::Topology) {
    use memsight_results::present::env as rows;
    let mut caches = table(&rows::CACHE_COLUMNS);
    caches.add_rows(rows::caches(t));
    say!("\nCaches (hwloc; cross-checked with sysfs and CPUID)\n{caches}");
    let mut nodes = table(&rows::NODE_COLUMNS);
    nodes.add_rows(rows::nodes(t));
    say!("\nNUMA nodes\n{nodes}");
    if !t.memory_devices.is_empty() {
        let mut devs = table(&rows::DEVICE_COLUMNS);
        devs.add_rows(rows::devices(t));
        say!("\nMemory devices\n{devs}");
    }
}

/// Prints the environment report.
pub fn print(env: &Environment) {
    facts(env);
    topology_tables(&env.topology);
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
