//! The row-buffer study under the suites' contract.

use memsight_core::Result;

use super::{RowbufferConfig, RowbufferResults, RowbufferSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// STREAM offset sweeps, page contiguity and the row-conflict probe.
pub struct Rowbuffer;

impl SuiteContract for Rowbuffer {
    const ID: SuiteId = SuiteId::Rowbuffer;
    const WHAT: &'static str = "row-buffer study (memsight rowbuffer)";
    type Settings = RowbufferSettings;
    type Plan = RowbufferConfig;
    type Results = RowbufferResults;

    fn at_level(settings: RowbufferSettings, level: Level) -> Option<RowbufferSettings> {
        settings.at_level(level)
    }

    fn plan(settings: RowbufferSettings, at: &At) -> Result<Planned<RowbufferConfig>> {
        Ok(Planned::Runs(settings.resolve(at.env, at.machine)?))
    }

    fn estimate(plan: &RowbufferConfig, at: &At) -> Result<Estimate> {
        Ok(super::estimate(plan, at.env))
    }

    fn steps(plan: &RowbufferConfig) -> Option<u64> {
        Some(plan.total_steps())
    }

    fn measure(plan: &RowbufferConfig, at: &At, tick: Tick) -> Result<Completed<RowbufferResults>> {
        super::run(plan, at.env, tick)
    }
}
