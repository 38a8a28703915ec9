//! The row-buffer study's predicted time in `memsight run` ([`crate::measure::timing`]).

use memsight_core::env::Environment;

use super::RowbufferConfig;
use crate::measure::timing::{Estimate, fill_s, nodes_of};

/// The row-conflict probe (address bits × bases × rounds of timed pairs), seconds.
const PROBE_S: f64 = 2.0;

/// Every layout × repetition × kernel × offset: a team fills the three arrays and runs one warm
/// and three timed passes over them (no stop rule: the work is fixed); the layouts' buffers
/// touched once each; then the row-conflict probe.
pub fn estimate(cfg: &RowbufferConfig, env: &Environment) -> Estimate {
    let n = cfg.cpus.len().max(1);
    let nodes = nodes_of(&env.topology, &cfg.cpus);
    let steps = cfg.total_steps();
    // Fill 3 arrays, then 4 passes that each read two and write one.
    let per_step = fill_s(3 * cfg.array_bytes / n as u64, n, nodes) * (1.0 + 4.0);
    let buffers = 4.0 * fill_s(cfg.buffer_bytes() / n as u64, n, nodes);
    Estimate::new(
        steps as f64 * per_step + buffers + PROBE_S,
        format!("{steps} offsets and repetitions, the row-conflict probe"),
    )
}
