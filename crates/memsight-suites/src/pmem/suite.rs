//! PMDK pool utilisation, allocation classes and arenas under the suites' contract: a command, in no `memsight run`.

use memsight_core::Result;

use super::{PmemResults, PmemSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::progress::{Completed, Tick};
use crate::suite_id::SuiteId;

/// PMDK pool utilisation, allocation classes and arenas.
pub struct Pmem;

impl SuiteContract for Pmem {
    const ID: SuiteId = SuiteId::Pmem;
    const WHAT: &'static str = "PMDK pool study";
    type Settings = PmemSettings;
    type Plan = PmemSettings;
    type Results = PmemResults;

    fn plan(settings: PmemSettings, _at: &At) -> Result<Planned<PmemSettings>> {
        Ok(Planned::Runs(settings))
    }

    fn measure(plan: &PmemSettings, at: &At, tick: Tick) -> Result<Completed<PmemResults>> {
        super::run(plan, at.env, tick)
    }
}
