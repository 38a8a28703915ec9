//! Loaded latency under the suites' contract.

use memsight_core::Result;

use super::{LoadedResults, LoadedSettings};
use crate::contract::{At, Planned, SuiteContract, needs_two_cpus};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// Latency under load, one curve per traffic mix.
pub struct Loaded;

impl SuiteContract for Loaded {
    const ID: SuiteId = SuiteId::LoadedLatency;
    const WHAT: &'static str = "loaded latency";
    type Settings = LoadedSettings;
    type Plan = LoadedSettings;
    type Results = LoadedResults;

    fn at_level(settings: LoadedSettings, level: Level) -> Option<LoadedSettings> {
        settings.at_level(level)
    }

    /// Needs a second CPU for the load.
    fn plan(settings: LoadedSettings, at: &At) -> Result<Planned<LoadedSettings>> {
        if let Some(why) = needs_two_cpus(at.env, Self::WHAT) {
            return Ok(Planned::Skips(why));
        }
        Ok(Planned::Runs(settings))
    }

    fn estimate(plan: &LoadedSettings, at: &At) -> Result<Estimate> {
        super::estimate(plan, at.env, at.machine)
    }

    fn measure(plan: &LoadedSettings, at: &At, tick: Tick) -> Result<Completed<LoadedResults>> {
        super::run(plan, at.env, at.machine, tick)
    }
}
