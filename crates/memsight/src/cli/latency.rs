//! `memsight latency`: the flags, and the ladder as a command and as `memsight run`'s first step.

use memsight_core::env::Environment;
use memsight_suites::latency::{self, LatencySettings, Order};

use super::in_run::{Given, InRun};
use super::sampling::SamplingArgs;
use super::values::{PageKind, size};
use crate::suite::{Outcome, Suite, Ui};

/// Latency ladder: pointer-chase latency from L1 to memory, cache levels, TLB cost and
/// memory-level parallelism.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Smallest working set (e.g. 4K).
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = crate::cli::values::size_text(LatencySettings::default().min_size))]
    pub min_size: u64,
    /// Largest working set. Default: the ladder ends once its memory plateau has held for two
    /// octaves, at most at 4 × the largest cache the OS reports (at least 64 MiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub max_size: Option<u64>,
    /// Working-set sizes per doubling.
    #[arg(long, value_name = "N", default_value_t = LatencySettings::default().points_per_octave, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub points_per_octave: u32,
    /// Distance between chased elements in bytes (≥ 64; 128 avoids adjacent-line prefetch).
    #[arg(long, value_name = "BYTES", value_parser = size, default_value = crate::cli::values::size_text(LatencySettings::default().stride))]
    pub stride: u64,
    /// Visit order.
    #[arg(long, value_enum, default_value_t = LatencySettings::default().order)]
    pub pattern: Order,
    /// Window size for the window pattern, in 4 KiB pages.
    #[arg(long, value_name = "PAGES", default_value_t = LatencySettings::default().window_pages, value_parser = clap::value_parser!(u32).range(1..=262144))]
    pub window_pages: u32,
    /// Page kind of the main ladder.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = LatencySettings::default().page_kind)]
    pub page_kind: PageKind,
    /// Skip the second ladder on huge pages (TLB cost).
    #[arg(long)]
    pub no_tlb: bool,
    /// Largest number of parallel chases for the memory-level-parallelism sweep (1 = none).
    #[arg(long, value_name = "K", default_value_t = LatencySettings::default().parallel, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub parallel: u32,
    /// CPUs to measure from, one ladder each (default: the first allowed CPU), e.g. 0 or 0,8; or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpu: Option<memsight_core::cpuset::CpuSet>,
    /// Bind the buffers to this NUMA node (default: first touch, i.e. the CPU's local node).
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Seed of the chain permutations (runs are reproducible for a seed).
    #[arg(long, default_value_t = LatencySettings::default().seed)]
    pub seed: u64,
    /// Every step also writes the line it visits (multichase's incr chase): the latency of a
    /// dependent read-modify-write, whose dirty lines cost a write-back each.
    #[arg(long)]
    pub write: bool,
    #[command(flatten)]
    pub dax: super::DaxArg,
}

impl Args {
    /// The suite's settings: its defaults, with the flags given.
    pub fn settings(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<LatencySettings> {
        Ok(LatencySettings {
            min_size: self.min_size,
            max_size: self.max_size,
            points_per_octave: self.points_per_octave,
            stride: self.stride,
            order: self.pattern,
            window_pages: self.window_pages,
            page_kind: self.page_kind,
            tlb: !self.no_tlb,
            parallel: self.parallel,
            cpus: crate::cli::values::resolve_cpus(&self.cpu, topo)?,
            node: self.node,
            sampling: self.sampling.over(LatencySettings::default().sampling),
            seed: self.seed,
            write: self.write,
            dax: self.dax.target()?,
            dense_below_llc: false,
        })
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<latency::Latency>(self.settings(&env.topology)?, env, ui)
    }
}

impl InRun for Args {
    type Suite = latency::Latency;

    /// The run's latency flags.
    fn settings(given: &Given) -> anyhow::Result<LatencySettings> {
        Ok(given.args.latency.settings(&given.env.topology)?)
    }
}
