//! The ladder's predicted time in `memsight run` ([`crate::measure::timing`]).

use memsight_core::units::format_bytes;

use memsight_kernels::chain::Pattern;

use crate::measure::chase::LadderConfig;
use crate::measure::timing::{Estimate, chain_s, point_s};

/// The core clock's measurement before each CPU's ladder (a settle of up to 0.5 s, then
/// sampling), seconds.
const CLOCK_S: f64 = 0.4;
/// The MLP sweep's working set, at least (it takes the ladder's memory working set).
const MLP_BYTES: u64 = 256 << 20;

/// Per CPU: the clock, then every size (and its huge-page twin) sampled over a chain built for
/// it, then the MLP sweep (a chain per parallel count). A ladder that may stop once memory has
/// held for two octaves is predicted to stop there: at 4× where `memory_from` says memory begins.
pub fn estimate(cfg: &LadderConfig, memory_from: u64) -> Estimate {
    let stop = if cfg.stop_at_memory {
        memory_from.saturating_mul(4)
    } else {
        u64::MAX
    };
    let sizes: Vec<u64> = cfg.sizes.iter().copied().filter(|&b| b <= stop).collect();
    let stride = cfg.stride as u64;
    let random = matches!(cfg.pattern, Pattern::Random);
    let point = point_s(&cfg.rule, cfg.sample_ns);
    let twins = if cfg.tlb_compare { 2.0 } else { 1.0 };
    let chains: f64 = sizes.iter().map(|&b| chain_s(b, stride, random)).sum();
    let top = sizes.last().copied().unwrap_or(0);
    let mlp = if cfg.max_parallel > 1 {
        cfg.max_parallel as f64 * (point + chain_s(top.max(MLP_BYTES), stride, random))
    } else {
        0.0
    };
    let per_cpu = CLOCK_S + twins * (sizes.len() as f64 * point + chains) + mlp;
    Estimate::new(
        per_cpu * cfg.cpus.len() as f64,
        format!(
            "{} sizes to {}{}{} on {} CPU(s)",
            sizes.len(),
            format_bytes(top),
            if cfg.tlb_compare {
                ", each on huge pages too"
            } else {
                ""
            },
            if mlp > 0.0 { ", MLP sweep" } else { "" },
            cfg.cpus.len()
        ),
    )
}
