//! Allocator fragmentation per allocator under the suites' contract: a command, in no `memsight run`.

use memsight_core::Result;

use super::{AllocResults, AllocSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::progress::{Completed, Tick};
use crate::suite_id::SuiteId;

/// Allocator fragmentation per allocator.
pub struct Alloc;

impl SuiteContract for Alloc {
    const ID: SuiteId = SuiteId::Alloc;
    const WHAT: &'static str = "allocator fragmentation";
    type Settings = AllocSettings;
    type Plan = AllocSettings;
    type Results = AllocResults;

    /// The workload and the allocators are checked as the run starts them.
    fn plan(settings: AllocSettings, _at: &At) -> Result<Planned<AllocSettings>> {
        Ok(Planned::Runs(settings))
    }

    fn measure(plan: &AllocSettings, at: &At, tick: Tick) -> Result<Completed<AllocResults>> {
        super::run(plan, at.env, tick)
    }
}
