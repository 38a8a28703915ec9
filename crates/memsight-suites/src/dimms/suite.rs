//! The DIMM inventory under the suites' contract: it reads a table and measures nothing, so
//! its plan is the inventory read and its measurement hands it over.

use memsight_core::Result;

use super::{DimmsResults, DimmsSettings};
use crate::contract::{At, Planned, SuiteContract};
use crate::measure::level::Level;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// The DIMM inventory and its ceilings.
pub struct Dimms;

impl SuiteContract for Dimms {
    const ID: SuiteId = SuiteId::Dimms;
    const WHAT: &'static str = "DIMM inventory";
    type Settings = DimmsSettings;
    type Plan = DimmsResults;
    type Results = DimmsResults;

    fn at_level(settings: DimmsSettings, level: Level) -> Option<DimmsSettings> {
        settings.at_level(level)
    }

    /// A file given that cannot be read is the user's error; this machine's tables that cannot
    /// be read (no SMBIOS, not root) are why the suite cannot run here.
    fn plan(settings: DimmsSettings, _at: &At) -> Result<Planned<DimmsResults>> {
        match super::run(&settings) {
            Ok(r) => Ok(Planned::Runs(r)),
            Err(e) if settings.dmidecode.is_none() => {
                Ok(Planned::Skips(format!("{}: {e}", Self::WHAT)))
            }
            Err(e) => Err(e),
        }
    }

    /// Reading a table takes no time worth predicting.
    fn estimate(_plan: &DimmsResults, _at: &At) -> Result<Estimate> {
        Ok(Estimate::new(0.0, "the DIMM inventory read"))
    }

    fn measure(plan: &DimmsResults, _at: &At, _tick: Tick) -> Result<Completed<DimmsResults>> {
        Ok(Completed::new(plan.clone(), true))
    }
}
