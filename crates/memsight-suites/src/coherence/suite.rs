//! Cache-line contention under the suites' contract: a command, in no `memsight run`.

use memsight_core::Result;

use super::{CoherenceResults, CoherenceSettings};
use crate::contract::{At, Planned, SuiteContract, needs_two_cpus};
use crate::measure::progress::{Completed, Tick};
use crate::suite_id::SuiteId;

/// Contended increments, false sharing and a message ring.
pub struct Coherence;

impl SuiteContract for Coherence {
    const ID: SuiteId = SuiteId::Coherence;
    const WHAT: &'static str = "cache-line contention";
    type Settings = CoherenceSettings;
    type Plan = CoherenceSettings;
    type Results = CoherenceResults;

    /// Needs two CPUs; every setting is checked here.
    fn plan(settings: CoherenceSettings, at: &At) -> Result<Planned<CoherenceSettings>> {
        if settings.cpus.is_none()
            && let Some(why) = needs_two_cpus(at.env, Self::WHAT)
        {
            return Ok(Planned::Skips(why));
        }
        super::check(&settings, at.env)?;
        Ok(Planned::Runs(settings))
    }

    fn steps(plan: &CoherenceSettings) -> Option<u64> {
        let n = plan.cpus.as_ref().map(Vec::len);
        n.map(|n| super::team_sizes(n).len() as u64 + 2)
    }

    fn measure(
        plan: &CoherenceSettings,
        at: &At,
        tick: Tick,
    ) -> Result<Completed<CoherenceResults>> {
        super::run(plan, at.env, tick)
    }
}
