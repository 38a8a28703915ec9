//! `memsight loaded-latency` flags, and their conversion into the suite's config.

use clap::Args;
use memsight_core::Result;
use memsight_core::env::Environment;
use memsight_core::units::parse_size;

use crate::loaded::{Config, parse_mix};

#[derive(Debug, Clone, Args)]
pub struct LoadedArgs {
    /// Traffic mixes, comma-separated: reads, 3:1, 2:1, 1:1-nt, nt-writes (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub mix: Vec<String>,
    /// Points per curve, idle and saturation included (spread evenly in bandwidth).
    #[arg(long, value_name = "N", default_value_t = Config::default().points, value_parser = clap::value_parser!(u32).range(2..=64))]
    pub points: u32,
    /// The knee is where latency first reaches this multiple of idle latency.
    #[arg(long, value_name = "FACTOR", default_value_t = Config::default().knee)]
    pub knee: f64,
    /// CPUs to use: the first chases, the others load (default: all allowed).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Bind the chase and load buffers to this node (default: the chasing CPU's node).
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
    /// Chase working set (default: max(4 × LLC, 256 MiB)).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Buffer per load thread.
    #[arg(long, value_name = "SIZE", default_value = "96M")]
    pub load_size: String,
    /// Page kind of the buffers: 4k, thp, 2m or 1g.
    #[arg(long, value_name = "KIND", default_value = "thp")]
    pub page_kind: String,
    /// Time the traffic runs before each point is sampled, ms.
    #[arg(long, value_name = "MS", default_value_t = Config::default().settle_ms)]
    pub settle_ms: u64,
    /// Minimum latency samples per point.
    #[arg(long, value_name = "N", default_value_t = Config::default().min_samples, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: u32,
    /// Time budget per point in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = Config::default().point_budget)]
    pub point_budget: f64,
    #[command(flatten)]
    pub dax: super::DaxArg,
}

impl LoadedArgs {
    /// The suite's config: mixes, sizes, CPUs and page kind parsed.
    pub fn config(&self, env: &Environment) -> Result<Config> {
        Ok(Config {
            mixes: self
                .mix
                .iter()
                .map(|m| parse_mix(m))
                .collect::<Result<_>>()?,
            points: self.points,
            knee: self.knee,
            cpus: self
                .cpus
                .as_deref()
                .map(|l| memsight_core::pin::parse_cpus(l, &env.allowed_cpus))
                .transpose()?,
            node: self.node,
            chase_bytes: self.size.as_deref().map(parse_size).transpose()?,
            load_bytes: parse_size(&self.load_size)?,
            page_kind: self.page_kind.parse()?,
            settle_ms: self.settle_ms,
            min_samples: self.min_samples,
            point_budget: self.point_budget,
            dax: self.dax.target()?,
        })
    }
}
