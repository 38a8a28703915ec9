//! `memsight numa` flags, and their conversion into the suite's config.

use clap::Args;
use memsight_core::Result;
use memsight_core::units::parse_size;

use crate::numa::Config;

#[derive(Debug, Clone, Args)]
pub struct NumaArgs {
    /// Working set of each latency cell (default: max(4 × LLC, 256 MiB)).
    #[arg(long, value_name = "SIZE")]
    pub latency_size: Option<String>,
    /// Working set per thread of each bandwidth cell.
    #[arg(long, value_name = "SIZE", default_value = "128M")]
    pub bandwidth_size: String,
    /// Skip the bandwidth matrix.
    #[arg(long)]
    pub no_bandwidth: bool,
    /// Page kind of the buffers: 4k, thp, 2m or 1g.
    #[arg(long, value_name = "KIND", default_value = "thp")]
    pub page_kind: String,
    /// Minimum samples per cell.
    #[arg(long, value_name = "N", default_value_t = Config::default().min_samples, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: u32,
    /// Time budget per cell in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = Config::default().point_budget)]
    pub point_budget: f64,
}

impl NumaArgs {
    /// The suite's config: sizes and page kind parsed.
    pub fn config(&self) -> Result<Config> {
        Ok(Config {
            latency_bytes: self.latency_size.as_deref().map(parse_size).transpose()?,
            bandwidth_bytes: parse_size(&self.bandwidth_size)?,
            bandwidth: !self.no_bandwidth,
            page_kind: self.page_kind.parse()?,
            min_samples: self.min_samples,
            point_budget: self.point_budget,
        })
    }
}
