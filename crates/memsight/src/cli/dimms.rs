//! `memsight dimms`: the flags, and the inventory (or the plan) as a command and as a step of
//! `memsight run`.

use std::path::PathBuf;

use memsight_core::env::Environment;
use memsight_suites::dimms::{self, DimmsSettings};

use super::in_run::{Given, InRun};
use crate::suite::{Outcome, Suite, Ui};

/// DIMM inventory from SMBIOS (dmidecode): slots, sizes, types, speeds, ranks, widths, vendors;
/// or, with --plan, a what-if for memory you have not bought yet.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Read this `dmidecode` text or `dmidecode --dump-bin` file instead of this machine's
    /// /sys/firmware/dmi/tables (root).
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
    /// A `memsight bandwidth --json` result measured on this machine: efficiency = measured ÷
    /// ceiling per test.
    #[arg(long, value_name = "FILE")]
    pub bandwidth: Option<PathBuf>,
    /// AMD chiplet parts: CCDs per socket, for the CCD→IOD fabric limit.
    #[arg(long, value_name = "N")]
    pub ccds: Option<u32>,
    /// AMD chiplet parts: fabric clock (FCLK) in MHz (default: half the memory transfer rate,
    /// i.e. coupled mode).
    #[arg(long, value_name = "MHZ")]
    pub fclk: Option<u32>,
    /// What-if without hardware: a CPU model as /proc/cpuinfo or SMBIOS prints it, optionally
    /// with a socket count ("2x Xeon Gold 6248"). Repeat for alternatives shown side by side;
    /// the --dimm options after each --plan belong to it.
    #[arg(long, value_name = "PLATFORM", conflicts_with_all = ["dmidecode", "bandwidth"])]
    pub plan: Vec<String>,
    /// A DIMM for the preceding --plan: part number and count (M393A4K40EB3-CWE=8).
    #[arg(long, value_name = "PART=COUNT", requires = "plan", value_parser = parse_dimm)]
    pub dimm: Vec<(String, u32)>,
    /// The --plan alternatives with their --dimm options, grouped in command-line order (filled
    /// in by main from the parser's argument positions).
    #[arg(skip)]
    pub plans: Vec<memsight_model::plan::PlanRequest>,
}

/// `PART=COUNT` with a count from 1 to 1024.
fn parse_dimm(s: &str) -> Result<(String, u32), String> {
    let (part, count) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("'{s}': expected PART=COUNT, e.g. M393A4K40EB3-CWE=8"))?;
    let n: u32 = count
        .trim()
        .parse()
        .map_err(|_| format!("'{s}': the count must be a whole number"))?;
    if part.trim().is_empty() || !(1..=1024).contains(&n) {
        return Err(format!("'{s}': a part number and a count from 1 to 1024"));
    }
    Ok((part.trim().to_string(), n))
}

impl Args {
    /// Pairs each --dimm with the --plan before it, from the positions clap recorded.
    pub fn group_plans(&mut self, m: &clap::ArgMatches) -> Result<(), String> {
        let plan_at: Vec<usize> = m
            .indices_of("plan")
            .map(|i| i.collect())
            .unwrap_or_default();
        let dimm_at: Vec<usize> = m
            .indices_of("dimm")
            .map(|i| i.collect())
            .unwrap_or_default();
        let mut plans: Vec<memsight_model::plan::PlanRequest> = self
            .plan
            .iter()
            .map(|p| memsight_model::plan::PlanRequest {
                platform: p.clone(),
                dimms: Vec::new(),
                ccds: self.ccds,
                fclk_mhz: self.fclk,
            })
            .collect();
        for (d, at) in self.dimm.iter().zip(dimm_at) {
            let owner = plan_at
                .iter()
                .rposition(|&p| p < at)
                .ok_or_else(|| format!("--dimm {}={} comes before any --plan", d.0, d.1))?;
            plans[owner].dimms.push(d.clone());
        }
        self.plans = plans;
        Ok(())
    }
}

impl Args {
    /// The inventory study's config.
    pub fn config(&self) -> DimmsSettings {
        DimmsSettings {
            dmidecode: self.dmidecode.clone(),
            bandwidth: self.bandwidth.clone(),
            ccds: self.ccds,
            fclk: self.fclk,
        }
    }
}

impl Suite for Args {
    /// The inventory is read from SMBIOS or a file, the plan from tables: nothing is measured.
    fn live(&self) -> bool {
        false
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        if !self.plans.is_empty() {
            return Ok(Outcome::of(dimms::plans(&self.plans)?, true));
        }
        crate::suite::command::<dimms::Dimms>(self.config(), env, ui)
    }
}

impl InRun for Args {
    type Suite = dimms::Dimms;

    /// The run's `--dmidecode`, else this machine's SMBIOS tables.
    fn settings(given: &Given) -> anyhow::Result<DimmsSettings> {
        Ok(DimmsSettings {
            dmidecode: given.args.dmidecode.clone(),
            ..Default::default()
        })
    }
}
