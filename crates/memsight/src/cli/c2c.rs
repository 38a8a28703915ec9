//! `memsight c2c` flags, and their conversion into the suite's config.

use clap::Args;
use memsight_core::Result;
use memsight_core::env::Environment;

use crate::c2c::{Config, SAMPLING};
use crate::sampling::Sampling;

#[derive(Debug, Clone, Args)]
pub struct C2cArgs {
    /// CPUs of the matrix (default: one per last-level-cache domain, or one per core up to 16).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Only the modified-line ping-pong (skip the clean-line probe).
    #[arg(long)]
    pub modified_only: bool,
    /// Stop a pair once the median's 95% CI is within this fraction of it.
    #[arg(long, value_name = "FRACTION", default_value_t = SAMPLING.target_ci)]
    pub target_ci: f64,
    /// Minimum samples per pair.
    #[arg(long, value_name = "N", default_value_t = SAMPLING.min_samples, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: u32,
    /// Time budget per pair in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = SAMPLING.point_budget)]
    pub point_budget: f64,
    /// Target duration of one timed sample in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = SAMPLING.sample_ms)]
    pub sample_ms: f64,
}

impl C2cArgs {
    /// The suite's config: CPU list checked against the allowed CPUs.
    pub fn config(&self, env: &Environment) -> Result<Config> {
        Ok(Config {
            cpus: self
                .cpus
                .as_deref()
                .map(|l| memsight_core::pin::parse_cpus(l, &env.allowed_cpus))
                .transpose()?,
            modified_only: self.modified_only,
            sampling: Sampling {
                target_ci: self.target_ci,
                min_samples: self.min_samples,
                point_budget: self.point_budget,
                sample_ms: self.sample_ms,
            },
        })
    }
}
