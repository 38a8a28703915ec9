//! `memsight c2c`: the flags, and the matrix as a command and as a step of `memsight run`.

use memsight_core::env::Environment;
use memsight_suites::c2c::{self, C2cSettings};

use super::sampling::SamplingArgs;

use super::in_run::InRun;
use crate::suite::{Outcome, Suite, Ui};

/// Core-to-core latency: cache-line transfers between pairs of CPUs (modified and clean).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// CPUs of the matrix (default: one per last-level-cache domain, or one per core up to 16); or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Only the modified-line ping-pong (skip the clean-line probe).
    #[arg(long)]
    pub modified_only: bool,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

impl Args {
    /// The suite's config: its defaults, with the flags given.
    pub fn config(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<C2cSettings> {
        Ok(C2cSettings {
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            modified_only: self.modified_only,
            sampling: self.sampling.over(C2cSettings::default().sampling),
        })
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<c2c::C2c>(self.config(&env.topology)?, env, ui)
    }
}

impl InRun for Args {
    type Suite = c2c::C2c;
}
