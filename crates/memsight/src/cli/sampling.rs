//! The sampling flags every measuring command takes, once: each overrides the command's own
//! default (the suites hold those), and together they are the suite's [`Sampling`].

use clap::Args;
use memsight_suites::measure::sampling::Sampling;

#[derive(Debug, Clone, Default, Args)]
pub struct SamplingArgs {
    /// Stop sampling a point once the median's 95% CI is within this fraction of it (default:
    /// the command's own, which its method states; 0.01 for most).
    #[arg(long, value_name = "FRACTION")]
    pub target_ci: Option<f64>,
    /// Minimum samples per point (default: the command's own).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: Option<u32>,
    /// Time budget per point in seconds (default: the command's own).
    #[arg(long, value_name = "SECONDS")]
    pub point_budget: Option<f64>,
    /// Target duration of one timed sample in milliseconds (default: the command's own).
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<f64>,
}

impl SamplingArgs {
    /// The suite's default sampling `d` with every flag given applied.
    pub fn over(&self, d: Sampling) -> Sampling {
        Sampling {
            target_ci: self.target_ci.unwrap_or(d.target_ci),
            min_samples: self.min_samples.unwrap_or(d.min_samples),
            point_budget: self.point_budget.unwrap_or(d.point_budget),
            sample_ms: self.sample_ms.unwrap_or(d.sample_ms),
        }
    }
}
