//! The memory tiers under the suites' contract.

use memsight_core::Result;
use memsight_core::sysfs::FsRoot;

use super::plan::TierPlan;
use super::{TiersResults, TiersSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// Memory tiers: latency, bandwidth, granularity, near memory, weighted interleave.
pub struct Tiers;

/// The settings checked and the tiers found.
pub struct TiersPlan {
    pub settings: TiersSettings,
    pub tiers: TierPlan,
}

impl SuiteContract for Tiers {
    const ID: SuiteId = SuiteId::Tiers;
    const WHAT: &'static str = "memory tiers";
    type Settings = TiersSettings;
    type Plan = TiersPlan;
    type Results = TiersResults;

    fn at_level(settings: TiersSettings, level: Level) -> Option<TiersSettings> {
        settings.at_level(level)
    }

    /// The tiers found from the topology and sysfs; in a run, a machine with one tier and no
    /// near memory has nothing to compare (`memsight tiers` measures it anyway).
    fn plan(settings: TiersSettings, at: &At) -> Result<Planned<TiersPlan>> {
        settings.check()?;
        let tiers = super::make_plan(&settings, at.env, &FsRoot::from_env())?;
        if settings.only_if_tiered && tiers.tiers.len() < 2 && tiers.near.is_none() {
            return Ok(Planned::Skips(format!(
                "{}: one memory tier and no near memory here (memsight tiers measures it anyway)",
                Self::WHAT
            )));
        }
        Ok(Planned::Runs(TiersPlan { settings, tiers }))
    }

    fn estimate(plan: &TiersPlan, at: &At) -> Result<Estimate> {
        super::estimate(&plan.settings, &plan.tiers, at.env, at.machine)
    }

    fn measure(plan: &TiersPlan, at: &At, tick: Tick) -> Result<Completed<TiersResults>> {
        super::run(&plan.settings, &plan.tiers, at.env, at.machine, tick)
    }
}
