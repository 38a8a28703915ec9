//! Bandwidth under the suites' contract.

use memsight_core::Result;

use super::{BandwidthConfig, BandwidthResults, BandwidthSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// Bandwidth by read/write mix and store kind.
pub struct Bandwidth;

impl SuiteContract for Bandwidth {
    const ID: SuiteId = SuiteId::Bandwidth;
    const WHAT: &'static str = "bandwidth";
    type Settings = BandwidthSettings;
    type Plan = BandwidthConfig;
    type Results = BandwidthResults;

    fn at_level(settings: BandwidthSettings, level: Level) -> Option<BandwidthSettings> {
        settings.at_level(level)
    }

    /// Every flag checked, then the default sizes found from the machine (which may run the
    /// latency probe and the streaming check, outside a prediction).
    fn plan(settings: BandwidthSettings, at: &At) -> Result<Planned<BandwidthConfig>> {
        Ok(Planned::Runs(settings.resolve(at.env, at.machine)?))
    }

    /// With the streaming check where this suite is the first to need it.
    fn estimate(plan: &BandwidthConfig, at: &At) -> Result<Estimate> {
        let nodes = crate::measure::timing::nodes_of(&at.env.topology, &plan.cpus);
        Ok(super::estimate(plan, nodes, at.streaming_s))
    }

    fn steps(plan: &BandwidthConfig) -> Option<u64> {
        Some(plan.total_points())
    }

    fn measure(plan: &BandwidthConfig, at: &At, tick: Tick) -> Result<Completed<BandwidthResults>> {
        super::run(plan, at.env, tick)
    }
}
