//! The loaded-latency suite's predicted time in `memsight run` ([`crate::measure::timing`]).

use memsight_core::Result;
use memsight_core::env::Environment;

use super::{LoadedSettings, MIXES};
use crate::measure::machine::Machine;
use crate::measure::timing::{Estimate, chain_s, fill_s, nodes_of, point_s};

/// The search for each point's load-thread delay (8 tries of a 10 ms spin and a 25 ms sample),
/// made in the first round for every point between idle and saturation, seconds.
const DELAY_SEARCH_S: f64 = 0.28;

/// Every mix × point × round: the traffic settles, then the chase samples; the delay searches of
/// the first round; and once, the load threads' buffers filled and the chase's chain built.
pub fn estimate(a: &LoadedSettings, env: &Environment, machine: &Machine) -> Result<Estimate> {
    let mixes = if a.mixes.is_empty() {
        MIXES.len()
    } else {
        a.mixes.len()
    };
    let cpus = a.cpus.clone().unwrap_or_else(|| env.allowed_cpus.clone());
    let plan = super::placement::loaded_plan(&env.topology, &cpus, a.node)?;
    let (chase, _) = machine.working_set(a.chase_bytes, env)?;
    let (rule, sample_ns) = a.sampling.rule()?;
    let rounds = a.rounds.max(1);
    let points = mixes * a.points as usize * rounds;
    let point = a.settle_ms as f64 * 1e-3 + point_s(&rule.per_round(rounds), sample_ns);
    let searches = (mixes * a.points.saturating_sub(2) as usize) as f64 * DELAY_SEARCH_S;
    let loads = plan.load_cpus.len();
    let setup = fill_s(
        a.load_bytes,
        loads,
        nodes_of(&env.topology, &plan.load_cpus),
    ) + chain_s(chase, 64, false);
    Ok(Estimate::new(
        points as f64 * point + searches + setup,
        format!(
            "{points} points ({mixes} mixes × {} points × {rounds} round(s)), {loads} load threads",
            a.points
        ),
    ))
}
