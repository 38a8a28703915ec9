//! `memsight tiers`: the flags, and the study as a command and as a step of `memsight run`.

use memsight_core::env::Environment;
use memsight_kernels::granular::Access;
use memsight_suites::tiers::{self, Part, TiersSettings};

use super::in_run::{Given, InRun};
use super::sampling::SamplingArgs;
use super::values::{List, PageKind, list, numbers, size};
use crate::suite::{Outcome, Suite, Ui};

/// Memory tiers (DRAM, HBM, CXL, persistent memory, DAX): idle read and write latency,
/// bandwidth, loaded-latency knee and access granularity per node, the working set against near
/// memory, weighted interleave, and the firmware's claims beside the measured figures.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Measure only these NUMA nodes (default: every allowed node with memory), e.g. 0,2.
    #[arg(long, value_name = "LIST", value_parser = list)]
    pub node: Option<List>,
    #[command(flatten)]
    pub dax: super::DaxArg,
    /// With --dax: measure only the DAX memory, no NUMA node.
    #[arg(long, requires = "dax")]
    pub dax_only: bool,
    /// Measure one node per tier (the one nearest the first CPUs) instead of every node.
    #[arg(long)]
    pub one_per_tier: bool,
    /// Size of the near memory (memory-side cache) to sweep the working set against, overriding
    /// what sysfs, hwloc or SMBIOS say (e.g. 96G; the L3 size shows the method on any machine).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub near_size: Option<u64>,
    /// A dmidecode text or binary dump, for SMBIOS Memory Mode (DRAM caching persistent memory).
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<std::path::PathBuf>,
    /// Parts to skip, comma-separated.
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub skip: Vec<Part>,
    /// Block sizes of the granularity sweep, bytes, powers of two from 64 (default: 64, 128,
    /// 256, 512, 4096).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size)]
    pub blocks: Vec<u64>,
    /// Access sizes of the idle latency by size (each chase step reads a whole block), bytes,
    /// powers of two from 64 to 4096 (default: 64, 128, 256, 512).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size)]
    pub latency_blocks: Vec<u64>,
    /// Accesses of the granularity sweep (default: all).
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub access: Vec<Access>,
    /// Working set of the latency points (default: in memory by the core's latency curve, at
    /// least 256 MiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub latency_size: Option<u64>,
    /// Working set per thread of the bandwidth points (default: 128 MiB, more where the CPUs
    /// together would not reach the size from which one core streams from memory).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub bandwidth_size: Option<u64>,
    /// Working set of all threads of a granularity point (default: as latency).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub granularity_size: Option<u64>,
    /// Page kind of anonymous buffers.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = TiersSettings::default().page_kind)]
    pub page_kind: PageKind,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Print the plan (tiers, CPUs, near memory, interleave pair) and stop.
    #[arg(long)]
    pub plan: bool,
}

impl Args {
    /// The suite's config: its defaults, with the flags given.
    pub fn config(&self) -> memsight_core::Result<TiersSettings> {
        let d = TiersSettings::default();
        let skip: Vec<Part> = self.skip.to_vec();
        Ok(TiersSettings {
            nodes: numbers(&self.node),
            dax: self.dax.target()?,
            dax_only: self.dax_only,
            one_per_tier: self.one_per_tier,
            near_size: self.near_size,
            dmidecode: self.dmidecode.clone(),
            parts: d
                .parts
                .iter()
                .copied()
                .filter(|p| !skip.contains(p))
                .collect(),
            blocks: if self.blocks.is_empty() {
                d.blocks.clone()
            } else {
                self.blocks.iter().map(|&b| b as usize).collect()
            },
            latency_blocks: if self.latency_blocks.is_empty() {
                d.latency_blocks.clone()
            } else {
                self.latency_blocks.iter().map(|&b| b as usize).collect()
            },
            accesses: if self.access.is_empty() {
                d.accesses.clone()
            } else {
                self.access.to_vec()
            },
            latency_bytes: self.latency_size,
            bandwidth_bytes: self.bandwidth_size,
            granularity_bytes: self.granularity_size,
            page_kind: self.page_kind,
            sampling: self.sampling.over(d.sampling),
            ..d
        })
    }
}

impl Suite for Args {
    fn live(&self) -> bool {
        !self.plan
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        let cfg = self.config()?;
        if self.plan {
            return Ok(Outcome::of(tiers::planned(&cfg, env)?, true));
        }
        crate::suite::command::<tiers::Tiers>(cfg, env, ui)
    }
}

impl InRun for Args {
    type Suite = tiers::Tiers;

    /// Memory Mode's DRAM from the run's inventory, once it was read.
    fn settings(given: &Given) -> anyhow::Result<TiersSettings> {
        let dimms = given.run.and_then(|r| r.dimms.as_ref());
        Ok(TiersSettings {
            memory_mode_dram: dimms.filter(|d| d.memory_mode).map(|d| d.dram_bytes),
            ..Default::default()
        })
    }
}
