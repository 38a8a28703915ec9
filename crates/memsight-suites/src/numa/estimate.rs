//! The NUMA suite's predicted time in `memsight run` ([`crate::measure::timing`]).

use memsight_core::Result;
use memsight_core::env::Environment;

use super::NumaSettings;
use super::placement::numa_plan;
use crate::measure::machine::Machine;
use crate::measure::reach::stream::cell_bytes;
use crate::measure::timing::{Estimate, chain_s, fill_s, point_s};

/// A latency cell's settle before its chase (the core's clock and the memory going quiet), s.
const SETTLE_S: f64 = 0.1;
/// The latency cells' chase samples (the sampling settings' duration is the bandwidth cells').
const CHASE_SAMPLE_NS: f64 = 2e6;

/// Every row (a node with CPUs) × column (each node with memory, and interleaved) × round: the
/// latency cell (its buffer touched, a chain built, sampled), then each bandwidth test on the
/// row's CPUs (their buffers touched and filled, sampled).
pub fn estimate(a: &NumaSettings, env: &Environment, machine: &Machine) -> Result<Estimate> {
    let plan = numa_plan(&env.topology, &env.allowed_cpus, &env.allowed_nodes);
    let (rule, sample_ns) = a.sampling.rule()?;
    let rounds = a.rounds.max(1);
    let rule = rule.per_round(rounds);
    let (latency_bytes, _) = machine.working_set(a.latency_bytes, env)?;
    let stream = machine.memory(env)?.stream;
    let columns = plan.targets.len() + 1;
    let tests = if a.bandwidth { a.tests.len() } else { 0 };
    let latency_cell = SETTLE_S
        + fill_s(latency_bytes, 1, 1)
        + chain_s(latency_bytes, 64, false)
        + point_s(&rule, CHASE_SAMPLE_NS);
    let mut seconds = 0.0;
    for row in &plan.initiators {
        let n = row.cpus.len();
        let bytes = a.bandwidth_bytes.unwrap_or_else(|| cell_bytes(stream, n));
        let bandwidth_cell = 2.0 * fill_s(bytes, n, 1) + point_s(&rule, sample_ns);
        seconds += columns as f64 * (latency_cell + tests as f64 * bandwidth_cell);
    }
    let cells = plan.initiators.len() * columns;
    Ok(Estimate::new(
        seconds * rounds as f64,
        format!(
            "{cells} cells ({} rows × {columns} columns) × {rounds} round(s), {tests} bandwidth test(s) each",
            plan.initiators.len()
        ),
    ))
}
