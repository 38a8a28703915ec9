//! `memsight stream`: the flags, and STREAM as a command.

use memsight_core::env::Environment;
use memsight_suites::bandwidth::Threads;
use memsight_suites::measure::progress::Completed;
use memsight_suites::stream::{self, StreamSettings};

use super::values::{Isa, PageKind, Store, threads};
use crate::suite::{Outcome, Suite, Ui};

/// STREAM-compatible kernels (Copy, Scale, Add, Triad) under STREAM's rules, validated.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Elements per array (default: max(10 M, 4 × the caches the threads hold between them,
    /// measured on the latency curve, ÷ 8 B)).
    #[arg(long, value_name = "N")]
    pub elements: Option<usize>,
    /// Times each kernel runs; the first is excluded from the statistics (STREAM's NTIMES).
    #[arg(long, value_name = "N", default_value_t = StreamSettings::default().ntimes, value_parser = clap::value_parser!(u32).range(2..=100000))]
    pub ntimes: u32,
    /// Padding between the arrays in elements (STREAM's OFFSET); a multiple of 8 (64 bytes).
    #[arg(long, value_name = "ELEMENTS", default_value_t = StreamSettings::default().offset)]
    pub offset: usize,
    /// Threads: a count or `all`.
    #[arg(long, value_name = "N|all", value_parser = threads, default_value = "all")]
    pub threads: Threads,
    /// Run on exactly these CPUs (overrides --threads); or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Vector width (default: the widest).
    #[arg(long, value_enum)]
    pub isa: Option<Isa>,
    /// Store kind (default: regular, STREAM's).
    #[arg(long, value_name = "KIND", value_enum)]
    pub store: Option<Store>,
    /// Page kind of the arrays.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = StreamSettings::default().page_kind)]
    pub page_kind: PageKind,
    /// Bind the arrays to this NUMA node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
}

impl Args {
    /// The suite's settings: its defaults, with the flags given.
    pub fn settings(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<StreamSettings> {
        Ok(StreamSettings {
            elements: self.elements,
            ntimes: self.ntimes,
            offset: self.offset,
            threads: self.threads,
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            isa: self.isa,
            store: self
                .store
                .map_or(StreamSettings::default().store, Into::into),
            page_kind: self.page_kind,
            node: self.node,
        })
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        let Completed { results, complete } =
            crate::suite::measured::<stream::Stream>(self.settings(&env.topology)?, env, ui)?;
        let failed = results.validation.as_ref().is_some_and(|v| !v.passed);
        Ok(Outcome {
            failure: failed.then(|| {
                "STREAM validation failed: the kernels computed wrong results (see above)".into()
            }),
            ..Outcome::of(results, complete)
        })
    }
}
