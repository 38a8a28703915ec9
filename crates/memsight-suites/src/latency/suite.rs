//! The latency ladder under the suites' contract.

use memsight_core::Result;

use super::{LadderConfig, LatencyResults, LatencySettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// The latency ladder.
pub struct Latency;

impl SuiteContract for Latency {
    const ID: SuiteId = SuiteId::Latency;
    const WHAT: &'static str = "latency ladder";
    type Settings = LatencySettings;
    type Plan = LadderConfig;
    type Results = LatencyResults;

    fn at_level(settings: LatencySettings, level: Level) -> Option<LatencySettings> {
        settings.at_level(level)
    }

    fn plan(settings: LatencySettings, at: &At) -> Result<Planned<LadderConfig>> {
        Ok(Planned::Runs(settings.resolve(at.env)?))
    }

    /// From where memory begins (the reported caches', in a prediction).
    fn estimate(plan: &LadderConfig, at: &At) -> Result<Estimate> {
        let from = at.machine.memory(at.env)?.memory.from_bytes;
        Ok(super::estimate(plan, from))
    }

    fn steps(plan: &LadderConfig) -> Option<u64> {
        Some(super::ladder::total_steps(plan))
    }

    /// The ladder, timed with a clock calibrated now; the machine learns where memory begins
    /// from it, so that the suites after it in a run size their working sets from this curve.
    fn measure(plan: &LadderConfig, at: &At, tick: Tick) -> Result<Completed<LatencyResults>> {
        let clock = memsight_core::timer::calibrate();
        let done = super::run(plan, at.env, clock, tick)?;
        at.machine
            .learn_from_ladder(done.results.main_ladders(), at.env);
        Ok(done)
    }
}
