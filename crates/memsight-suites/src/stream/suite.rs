//! STREAM 5.10's four kernels under the suites' contract: a command, in no `memsight run`.

use memsight_core::Result;

use super::{StreamConfig, StreamResults, StreamSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::progress::{Completed, Tick};
use crate::suite_id::SuiteId;

/// STREAM 5.10's four kernels.
pub struct Stream;

impl SuiteContract for Stream {
    const ID: SuiteId = SuiteId::Stream;
    const WHAT: &'static str = "STREAM";
    type Settings = StreamSettings;
    type Plan = StreamConfig;
    type Results = StreamResults;

    fn plan(settings: StreamSettings, at: &At) -> Result<Planned<StreamConfig>> {
        Ok(Planned::Runs(settings.resolve(at.env, at.machine)?))
    }

    fn steps(plan: &StreamConfig) -> Option<u64> {
        Some(plan.ntimes as u64)
    }

    fn measure(plan: &StreamConfig, at: &At, tick: Tick) -> Result<Completed<StreamResults>> {
        let clock = memsight_core::timer::calibrate();
        super::run(plan, at.env, &clock, tick)
    }
}
