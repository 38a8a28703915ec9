//! `memsight numa`: the flags, and the matrices as a command and as a step of `memsight run`.

use memsight_core::env::Environment;
use memsight_suites::numa::{self, NumaSettings};

use super::in_run::InRun;
use super::sampling::SamplingArgs;
use super::values::{PageKind, size};
use crate::suite::{Outcome, Suite, Ui};

/// Latency and bandwidth matrices: every CPU node × every memory node (CPU-less included),
/// interleaved memory, and what the firmware claims.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Working set of each latency cell (default: in memory by the core's latency curve, at
    /// least 256 MiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub latency_size: Option<u64>,
    /// Working set per thread of each bandwidth cell (default: 128 MiB, more where the row's
    /// CPUs together would not reach the size from which one core streams from memory).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub bandwidth_size: Option<u64>,
    /// Skip the bandwidth matrices.
    #[arg(long)]
    pub no_bandwidth: bool,
    /// Bandwidth kernels, one matrix each, comma-separated: any test of `memsight bandwidth`
    /// (default: read, write, write-nt; read-nta reads with prefetchnta as NUMA benchmarks such
    /// as NCRB do).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = super::bandwidth::test)]
    pub test: Vec<memsight_suites::bandwidth::spec::TestSpec>,
    /// Page kind of the buffers.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = NumaSettings::default().page_kind)]
    pub page_kind: PageKind,
    /// Measure the cells in this many alternating rounds (every cell once a round), each with
    /// its share of the samples, so that a machine that moves meanwhile moves every cell alike;
    /// the spread between rounds is reported. 1: one cell after another.
    #[arg(long, value_name = "N", default_value_t = NumaSettings::default().rounds)]
    pub rounds: usize,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

impl Args {
    /// The suite's config: its defaults, with the flags given.
    pub fn config(&self) -> NumaSettings {
        NumaSettings {
            latency_bytes: self.latency_size,
            bandwidth_bytes: self.bandwidth_size,
            bandwidth: !self.no_bandwidth,
            tests: if self.test.is_empty() {
                NumaSettings::default().tests
            } else {
                self.test.clone()
            },
            skip_unsupported: self.test.is_empty(),
            page_kind: self.page_kind,
            sampling: self.sampling.over(NumaSettings::default().sampling),
            rounds: self.rounds,
        }
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<numa::Numa>(self.config(), env, ui)
    }
}

impl InRun for Args {
    type Suite = numa::Numa;
}
