//! `memsight loaded-latency`: the flags, and the suite as a command and as a step of
//! `memsight run`.

use memsight_core::env::Environment;
use memsight_kernels::loadgen::TrafficMix;
use memsight_suites::loaded::{self, LoadedSettings};

use super::in_run::InRun;
use super::sampling::SamplingArgs;
use super::values::{PageKind, size};
use crate::suite::{Outcome, Suite, Ui};

/// Loaded latency: latency vs bandwidth curves, one per read:write mix (the read-share family
/// and the non-temporal mixes), with the knee and saturation bandwidth.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Traffic mixes, comma-separated (default: all: the read-share family from 100% to 50% of
    /// DRAM bytes read, then the two non-temporal mixes).
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub mix: Vec<TrafficMix>,
    /// Points per curve, idle and saturation included (spread evenly in bandwidth).
    #[arg(long, value_name = "N", default_value_t = LoadedSettings::default().points, value_parser = clap::value_parser!(u32).range(2..=64))]
    pub points: u32,
    /// The knee is where latency first reaches this multiple of idle latency.
    #[arg(long, value_name = "FACTOR", default_value_t = LoadedSettings::default().knee)]
    pub knee: f64,
    /// CPUs to use: the first chases, the others load (default: all allowed); or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Bind the chase and load buffers to this node (default: the chasing CPU's node).
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
    /// Chase working set (default: in memory by the core's latency curve, at least 256 MiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub size: Option<u64>,
    /// Buffer per load thread.
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = crate::cli::values::size_text(LoadedSettings::default().load_bytes))]
    pub load_size: u64,
    /// Page kind of the buffers.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = LoadedSettings::default().page_kind)]
    pub page_kind: PageKind,
    /// Time the traffic runs before each point is sampled, ms.
    #[arg(long, value_name = "MS", default_value_t = LoadedSettings::default().settle_ms)]
    pub settle_ms: u64,
    /// Measure the mixes in this many alternating rounds (A B C A B C …; delays found in the
    /// first), each with its share of the samples, so that a change in the machine touches every
    /// curve alike; the spread between rounds is reported. 1: one mix after another.
    #[arg(long, value_name = "N", default_value_t = LoadedSettings::default().rounds)]
    pub rounds: usize,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub dax: super::DaxArg,
}

impl Args {
    /// The suite's config: its defaults, with the flags given.
    pub fn config(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<LoadedSettings> {
        Ok(LoadedSettings {
            mixes: self.mix.to_vec(),
            points: self.points,
            knee: self.knee,
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            node: self.node,
            chase_bytes: self.size,
            load_bytes: self.load_size,
            page_kind: self.page_kind,
            settle_ms: self.settle_ms,
            rounds: self.rounds,
            sampling: self.sampling.over(LoadedSettings::default().sampling),
            dax: self.dax.target()?,
        })
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<loaded::Loaded>(self.config(&env.topology)?, env, ui)
    }
}

impl InRun for Args {
    type Suite = loaded::Loaded;
}
