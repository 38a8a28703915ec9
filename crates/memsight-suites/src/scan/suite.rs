//! Which physical ranges of memory are slow under the suites' contract: a command, in no `memsight run`.

use memsight_core::Result;

use super::{ScanResults, ScanSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::progress::{Completed, Tick};
use crate::suite_id::SuiteId;

/// Which physical ranges of memory are slow.
pub struct Scan;

impl SuiteContract for Scan {
    const ID: SuiteId = SuiteId::Scan;
    const WHAT: &'static str = "physical-range scan";
    type Settings = ScanSettings;
    type Plan = ScanSettings;
    type Results = ScanResults;

    fn plan(settings: ScanSettings, _at: &At) -> Result<Planned<ScanSettings>> {
        Ok(Planned::Runs(settings))
    }

    fn measure(plan: &ScanSettings, at: &At, tick: Tick) -> Result<Completed<ScanResults>> {
        super::run(plan, at.env, tick)
    }
}
