//! The L1-resident read in bytes per core cycle, against what the load ports carry: the
//! check that the kernels run as fast as the core allows.

use super::{Isa, Point};
use memsight_core::Result;
use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::stats::Summary;
use memsight_core::units::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An L1-resident read in bytes per core cycle.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct L1Read {
    pub cpu: usize,
    pub bytes: u64,
    /// Median GB/s of the read point.
    pub gbs: f64,
    /// Core clock measured on the same CPU right after (`crate::measure::clock`, cross-checked).
    pub core_ghz: Summary,
    pub bytes_per_cycle: f64,
    /// What the L1 load ports carry per cycle at the kernel's vector width on this core
    /// ([`memsight_core::cpu::CoreClass::l1_load_bytes_per_cycle`]); absent for a core not in
    /// the table.
    pub limit_bytes_per_cycle: Option<f64>,
    /// bytes_per_cycle ÷ limit.
    pub fraction: Option<f64>,
    /// The core design the limit is for.
    #[serde(default)]
    pub core: memsight_core::cpu::CoreClass,
    /// That design as reports name it, with what named it
    /// ([`memsight_core::cpu::CpuInfo::core_name`]).
    #[serde(default)]
    pub core_name: String,
}

/// Bytes per cycle the load ports carry for `isa` on this core (an efficiency core of a hybrid
/// Intel CPU: two 16-byte loads).
fn load_limit(isa: Isa, env: &Environment, core_type: Option<&str>) -> Option<f64> {
    let class = env.cpu.core_class;
    if class == memsight_core::cpu::CoreClass::IntelHybrid && core_type == Some("efficiency") {
        return Some(2.0 * (isa.vector_bytes() as f64).min(16.0));
    }
    class.l1_load_bytes_per_cycle(isa.vector_bytes() as u64)
}

/// Measures the core clock on the CPU of the first single-thread L1-resident read point and
/// gives that read in bytes per cycle with its finding; when the clock is disputed, the reason
/// instead.
pub(super) fn l1_read(
    points: &[Point],
    sweep: &[Point],
    env: &Environment,
) -> Result<(Option<L1Read>, Option<Finding>)> {
    let Some(l1) = env.topology.cache(1).map(|c| c.size_bytes) else {
        return Ok((None, None));
    };
    let Some(p) = points
        .iter()
        .chain(sweep)
        .find(|p| p.test.name == "read" && p.threads == 1 && p.bytes_per_thread <= l1)
    else {
        return Ok((None, None));
    };
    let cpu = p.cpus[0];
    let clock =
        memsight_core::pin::run_team(&[cpu], |_, cpu, _| crate::measure::clock::measure(cpu))?
            .remove(0);
    let Some(core_ghz) = clock.ghz else {
        return Ok((None, clock.disputed.map(Finding::unsampled)));
    };
    let limit = load_limit(p.isa, env, clock.core_type.as_deref());
    let per_cycle = p.program_gbs.median / core_ghz.median;
    let read = L1Read {
        cpu,
        bytes: p.bytes_per_thread,
        gbs: p.program_gbs.median,
        core_ghz,
        bytes_per_cycle: per_cycle,
        limit_bytes_per_cycle: limit,
        fraction: limit.map(|l| per_cycle / l),
        core: env.cpu.core_class,
        core_name: env.cpu.core_name(),
    };
    let cites = vec![
        Cited::of("L1 read", "GB/s", &p.program_gbs),
        Cited::of("core clock", "GHz", &read.core_ghz),
    ];
    let finding = Finding::citing(l1_finding(&read), cites);
    Ok((Some(read), Some(finding)))
}

/// The L1 read in bytes per cycle, against the load ports where the core is in the table.
fn l1_finding(l: &L1Read) -> String {
    let head = format!(
        "L1 read ({} on CPU {}): {:.1} GB/s = {:.1} B per core cycle at {:.2} GHz",
        format_bytes(l.bytes),
        l.cpu,
        l.gbs,
        l.bytes_per_cycle,
        l.core_ghz.median,
    );
    let core = if l.core_name.is_empty() {
        l.core.describe().to_string()
    } else {
        l.core_name.clone()
    };
    match (l.limit_bytes_per_cycle, l.fraction) {
        (Some(limit), Some(f)) => format!(
            "{head}, {:.0}% of the {:.0} B/cycle the load ports carry (this core: {core})",
            100.0 * f,
            limit,
        ),
        _ => format!("{head} (this core: {core}; no load-port limit to compare with)"),
    }
}
