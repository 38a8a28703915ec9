//! The tier study's predicted time in `memsight run` ([`crate::measure::timing`]). The study
//! has many parts; the prediction counts each part's points and working sets, no closer.

use memsight_core::Result;
use memsight_core::env::Environment;

use super::{TierPlan, TiersSettings};
use crate::measure::machine::Machine;
use crate::measure::timing::{Estimate, chain_s, fill_s, point_s};

/// The loaded-latency curve per node (5 points of 0.1 s settle, 3 delay searches of 0.28 s, the
/// load threads' buffers), seconds beside its sampling.
const LOADED_CURVE_S: f64 = 5.0 * 0.1 + 3.0 * 0.28 + 0.2;
/// Chase samples of the latency points, ns.
const CHASE_SAMPLE_NS: f64 = 2e6;

/// Per node measured: the chase points (a chain each), the bandwidth points, the loaded curve
/// and the granularity grid; then the near-memory sweep and the weighted-interleave sweep.
pub fn estimate(
    a: &TiersSettings,
    plan: &TierPlan,
    env: &Environment,
    machine: &Machine,
) -> Result<Estimate> {
    let (rule, sample_ns) = a.sampling.rule()?;
    let (ws, _) = machine.working_set(a.latency_bytes, env)?;
    let n = env.allowed_cpus.len().max(1);
    let chase = chain_s(ws, 64, false) + point_s(&rule, CHASE_SAMPLE_NS);
    let bandwidth =
        2.0 * fill_s(a.bandwidth_bytes.unwrap_or(128 << 20), n, 1) + point_s(&rule, sample_ns);
    let threads = if n > 1 { 2 } else { 1 };
    let grid = threads * a.accesses.len() * a.blocks.len();
    let loaded = if n > 1 {
        LOADED_CURVE_S + 5.0 * point_s(&rule, CHASE_SAMPLE_NS)
    } else {
        0.0
    };
    let per_node = (2 + a.latency_blocks.len()) as f64 * chase
        + 3.0 * bandwidth
        + loaded
        + grid as f64 * (fill_s(ws / n as u64, n, 1) + point_s(&rule, sample_ns));
    let nodes = if a.one_per_tier {
        plan.tiers.len()
    } else {
        plan.nodes().count()
    };
    let near = plan.near.as_ref().map_or(0.0, |m| {
        m.sizes
            .iter()
            .map(|&b| chain_s(b, 64, false) + point_s(&rule, CHASE_SAMPLE_NS) + 3.0 * bandwidth)
            .sum()
    });
    let weighted = plan
        .weighted
        .as_ref()
        .map_or(0.0, |w| w.ratios.len() as f64 * 2.0 * bandwidth);
    Ok(Estimate::new(
        nodes as f64 * per_node + near + weighted,
        format!(
            "{nodes} node(s), {} granularity points each{}{}",
            grid,
            if plan.near.is_some() {
                ", the near-memory sweep"
            } else {
                ""
            },
            if plan.weighted.is_some() {
                ", the weighted sweep"
            } else {
                ""
            }
        ),
    ))
}
