//! `memsight coherence`: the flags, and cache-line contention as a command.

use memsight_core::env::Environment;
use memsight_suites::coherence::{self, CoherenceSettings};

use super::sampling::SamplingArgs;
use crate::suite::{Outcome, Suite, Ui};

/// Cache-line contention: one counter incremented by 1 to N cores, false sharing (adjacent
/// against padded words) and a line-sized message ring between two cores.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The team, in the order threads join it (the first two are the false-sharing and ring
    /// pair); default: one CPU per core. A list, or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Lines in the message ring (a power of two, 4 to 65536).
    #[arg(long, value_name = "N", default_value_t = CoherenceSettings::default().ring_slots)]
    pub ring_slots: usize,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

impl Args {
    /// The suite's settings: its defaults, with the flags given.
    pub fn settings(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<CoherenceSettings> {
        Ok(CoherenceSettings {
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            ring_slots: self.ring_slots,
            sampling: self.sampling.over(CoherenceSettings::default().sampling),
        })
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<coherence::Coherence>(self.settings(&env.topology)?, env, ui)
    }
}
