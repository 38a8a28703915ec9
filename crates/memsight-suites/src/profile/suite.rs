//! Where a program sits on the machine's memory curves under the suites' contract: a command, in no `memsight run`.

use memsight_core::Result;

use super::{ProfileResults, ProfileSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::progress::{Completed, Tick};
use crate::suite_id::SuiteId;

/// Where a program sits on the machine's memory curves.
pub struct Profile;

impl SuiteContract for Profile {
    const ID: SuiteId = SuiteId::Profile;
    const WHAT: &'static str = "program profile";
    type Settings = ProfileSettings;
    type Plan = ProfileSettings;
    type Results = ProfileResults;

    /// Every flag checked before anything is measured.
    fn plan(settings: ProfileSettings, at: &At) -> Result<Planned<ProfileSettings>> {
        super::validate(&settings, at.env)?;
        Ok(Planned::Runs(settings))
    }

    fn measure(plan: &ProfileSettings, at: &At, tick: Tick) -> Result<Completed<ProfileResults>> {
        super::run(plan, at.env, at.machine, tick)
    }
}
