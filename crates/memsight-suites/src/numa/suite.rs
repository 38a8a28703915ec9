//! The NUMA matrices under the suites' contract.

use memsight_core::Result;

use super::{NumaResults, NumaSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// Latency and bandwidth between NUMA nodes.
pub struct Numa;

impl SuiteContract for Numa {
    const ID: SuiteId = SuiteId::Numa;
    const WHAT: &'static str = "NUMA matrices";
    type Settings = NumaSettings;
    type Plan = NumaSettings;
    type Results = NumaResults;

    fn at_level(settings: NumaSettings, level: Level) -> Option<NumaSettings> {
        settings.at_level(level)
    }

    fn plan(settings: NumaSettings, _at: &At) -> Result<Planned<NumaSettings>> {
        Ok(Planned::Runs(settings))
    }

    fn estimate(plan: &NumaSettings, at: &At) -> Result<Estimate> {
        super::estimate(plan, at.env, at.machine)
    }

    fn measure(plan: &NumaSettings, at: &At, tick: Tick) -> Result<Completed<NumaResults>> {
        super::run(plan, at.env, at.machine, tick)
    }
}
