//! Core-to-core latency under the suites' contract.

use memsight_core::Result;

use super::{C2cResults, C2cSettings};
use crate::contract::{At, Planned, SuiteContract, needs_two_cpus};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// The core-to-core matrix.
pub struct C2c;

impl SuiteContract for C2c {
    const ID: SuiteId = SuiteId::C2c;
    const WHAT: &'static str = "core-to-core latency";
    type Settings = C2cSettings;
    type Plan = C2cSettings;
    type Results = C2cResults;

    fn at_level(settings: C2cSettings, level: Level) -> Option<C2cSettings> {
        settings.at_level(level)
    }

    /// Needs two CPUs; the sampling and the CPUs given are checked here.
    fn plan(settings: C2cSettings, at: &At) -> Result<Planned<C2cSettings>> {
        if let Some(why) = needs_two_cpus(at.env, Self::WHAT) {
            return Ok(Planned::Skips(why));
        }
        super::check(&settings, at.env)?;
        Ok(Planned::Runs(settings))
    }

    fn estimate(plan: &C2cSettings, at: &At) -> Result<Estimate> {
        super::estimate(plan, at.env)
    }

    fn measure(plan: &C2cSettings, at: &At, tick: Tick) -> Result<Completed<C2cResults>> {
        super::run(plan, at.env, tick)
    }
}
