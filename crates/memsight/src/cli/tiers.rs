//! `memsight tiers` flags, and their conversion into the suite's config.

use clap::Args;
use memsight_core::units::parse_size;
use memsight_core::{Error, Result};
use memsight_kernels::granular::Access;

use crate::tiers::{Config, Part};

#[derive(Debug, Clone, Args)]
pub struct TiersArgs {
    /// Measure only these NUMA nodes (default: every allowed node with memory), e.g. 0,2.
    #[arg(long, value_name = "LIST")]
    pub node: Option<String>,
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
    #[arg(long, value_name = "SIZE")]
    pub near_size: Option<String>,
    /// A dmidecode text or binary dump, for SMBIOS Memory Mode (DRAM caching persistent memory).
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<std::path::PathBuf>,
    /// Parts to skip, comma-separated: latency, bandwidth, loaded, granularity, near, weighted.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Block sizes of the granularity sweep, bytes, multiples of 64 and powers of two.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "64,128,256,512,4096"
    )]
    pub blocks: Vec<String>,
    /// Accesses of the granularity sweep: read, write, write-nt, write-persist.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "read,write,write-nt,write-persist"
    )]
    pub access: Vec<String>,
    /// Working set of the latency points (default: max(4 × LLC, 256 MiB)).
    #[arg(long, value_name = "SIZE")]
    pub latency_size: Option<String>,
    /// Working set per thread of the bandwidth points.
    #[arg(long, value_name = "SIZE", default_value = "128M")]
    pub bandwidth_size: String,
    /// Working set of all threads of a granularity point (default: as latency).
    #[arg(long, value_name = "SIZE")]
    pub granularity_size: Option<String>,
    /// Page kind of anonymous buffers: 4k, thp, 2m or 1g.
    #[arg(long, value_name = "KIND", default_value = "thp")]
    pub page_kind: String,
    /// Minimum samples per point.
    #[arg(long, value_name = "N", default_value_t = Config::default().min_samples, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: u32,
    /// Time budget per point in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = Config::default().point_budget)]
    pub point_budget: f64,
    /// Print the plan (tiers, CPUs, near memory, interleave pair) and stop.
    #[arg(long)]
    pub plan: bool,
}

fn part(s: &str) -> Result<Part> {
    Part::ALL
        .into_iter()
        .find(|p| p.name() == s.trim())
        .ok_or_else(|| {
            Error::input(format!(
                "unknown part '{s}' in --skip: use latency, bandwidth, loaded, granularity, near, weighted"
            ))
        })
}

fn access(s: &str) -> Result<Access> {
    Access::ALL
        .into_iter()
        .find(|a| a.name() == s.trim())
        .ok_or_else(|| {
            Error::input(format!(
                "unknown access '{s}': use read, write, write-nt, write-persist"
            ))
        })
}

fn block(s: &str) -> Result<usize> {
    let b = parse_size(s)? as usize;
    if b < 64 || !b.is_power_of_two() || b > 1 << 20 {
        return Err(Error::input(format!(
            "block {s}: use a power of two from 64 B (a line) to 1 MiB"
        )));
    }
    Ok(b)
}

impl TiersArgs {
    /// The suite's config.
    pub fn config(&self) -> Result<Config> {
        let skip: Vec<Part> = self.skip.iter().map(|s| part(s)).collect::<Result<_>>()?;
        let nodes = self
            .node
            .as_deref()
            .map(memsight_core::units::parse_cpu_list)
            .transpose()?;
        let memory_mode_dram = match &self.dmidecode {
            Some(p) => {
                let d = crate::dimms::run(&crate::dimms::Config {
                    dmidecode: Some(p.clone()),
                    bandwidth: None,
                    ccds: None,
                    fclk: None,
                })?;
                d.memory_mode.then_some(d.dram_bytes)
            }
            None => None,
        };
        let accesses: Vec<Access> = self
            .access
            .iter()
            .map(|s| access(s))
            .collect::<Result<_>>()?;
        for a in &accesses {
            a.supported().map_err(Error::input)?;
        }
        Ok(Config {
            nodes,
            dax: self.dax.target()?,
            dax_only: self.dax_only,
            one_per_tier: self.one_per_tier,
            near_size: self.near_size.as_deref().map(parse_size).transpose()?,
            memory_mode_dram,
            parts: Part::ALL
                .into_iter()
                .filter(|p| !skip.contains(p))
                .collect(),
            blocks: self
                .blocks
                .iter()
                .map(|s| block(s))
                .collect::<Result<_>>()?,
            accesses,
            latency_bytes: self.latency_size.as_deref().map(parse_size).transpose()?,
            bandwidth_bytes: parse_size(&self.bandwidth_size)?,
            granularity_bytes: self
                .granularity_size
                .as_deref()
                .map(parse_size)
                .transpose()?,
            page_kind: self.page_kind.parse()?,
            min_samples: self.min_samples,
            point_budget: self.point_budget,
        })
    }
}
