//! `memsight scan`: the flags, and the scan as a command.

use memsight_core::env::Environment;
use memsight_suites::scan::{self, ScanSettings};

use super::sampling::SamplingArgs;
use super::values::{PageKind, size};
use crate::suite::{Outcome, Suite, Ui};

/// Find the slow memory: read bandwidth and idle latency of every physical address range (1 GiB
/// by default) of most of the free memory, mapped to nodes, memory blocks, zones, hot-plug and
/// CXL regions, beside the EDAC error counts; ranges that stand out within their node are named
/// with what to do. As root (frames are hidden otherwise: the scan then goes by virtual range).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Memory to scan (default: 90% of what this process may use, leaving at least 1 GiB, at
    /// most 64 GiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub size: Option<u64>,
    /// Address range per figure, a power of two of at least 2 MiB.
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = crate::cli::values::size_text(ScanSettings::default().granule))]
    pub granule: u64,
    /// CPUs streaming each range (default: every allowed CPU), e.g. 0-15; or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Bandwidth only: skip the latency chase (about twice as fast).
    #[arg(long)]
    pub no_latency: bool,
    /// Page kind of the scanned memory.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = ScanSettings::default().page_kind)]
    pub page_kind: PageKind,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Also write the scan as an HTML page (heat strip per node, table, findings).
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
}

impl Args {
    pub fn config(&self, env: &Environment) -> anyhow::Result<ScanSettings> {
        let d = ScanSettings::default();
        let cpus = crate::cli::values::resolve_cpus(&self.cpus, &env.topology)?;
        if let Some(c) = &cpus
            && let Some(bad) = c.iter().find(|x| !env.allowed_cpus.contains(x))
        {
            anyhow::bail!(memsight_core::Error::input(format!(
                "--cpus: CPU {bad} is not one this process may run on"
            )));
        }
        if let Some(s) = self.size {
            let usable = env.memory.usable_bytes().unwrap_or(u64::MAX);
            if s > usable / 10 * 9 {
                anyhow::bail!(memsight_core::Error::input(format!(
                    "--size {}: more than 90% of what this process may use ({})",
                    memsight_core::units::format_bytes(s),
                    memsight_core::units::format_bytes(usable)
                )));
            }
            if s < self.granule {
                anyhow::bail!(memsight_core::Error::input(
                    "--size must hold at least one --granule"
                ));
            }
        }
        Ok(ScanSettings {
            size: self.size,
            granule: self.granule,
            cpus,
            no_latency: self.no_latency,
            page_kind: self.page_kind,
            sampling: self.sampling.over(d.sampling),
        })
    }
}

impl Suite for Args {
    fn html(&self) -> Option<&std::path::Path> {
        self.html.as_deref()
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<scan::Scan>(self.config(env)?, env, ui)
    }
}
