//! The sampling options every measuring command takes, validated into the engine's stop rule.

use memsight_core::stats::StopRule;
use memsight_core::{Error, Result};

/// How long and how often a suite samples each point: the `--target-ci`, `--min-samples`,
/// `--point-budget` and `--sample-ms` options every measuring command takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Stop once the median's 95% CI is within this fraction of it.
    pub target_ci: f64,
    pub min_samples: u32,
    /// Seconds per point.
    pub point_budget: f64,
    /// Target duration of one timed sample, ms.
    pub sample_ms: f64,
}

impl Sampling {
    /// The validated stop rule and the sample duration in ns.
    pub fn rule(&self) -> Result<(StopRule, f64)> {
        stop_rule(
            self.target_ci,
            self.min_samples,
            self.point_budget,
            self.sample_ms,
        )
    }
}

/// `--target-ci`, `--min-samples`, `--point-budget` and `--sample-ms` as a stop rule and a sample
/// duration in ns. One warm-up sample is always taken and thrown away; at most 51 are kept.
pub fn stop_rule(
    target_ci: f64,
    min_samples: u32,
    point_budget: f64,
    sample_ms: f64,
) -> Result<(StopRule, f64)> {
    if !(target_ci > 0.0 && target_ci < 1.0) {
        return Err(Error::input(
            "--target-ci must be a fraction between 0 and 1, e.g. 0.01",
        ));
    }
    if !(point_budget > 0.0 && point_budget.is_finite()) {
        return Err(Error::input(
            "--point-budget must be a positive number of seconds",
        ));
    }
    if !(sample_ms > 0.0 && sample_ms <= 10_000.0) {
        return Err(Error::input("--sample-ms must be between 0 and 10000"));
    }
    let rule = StopRule {
        warmup: 1,
        min_samples: min_samples as usize,
        max_samples: 51.max(min_samples as usize),
        target_rel_ci: target_ci,
        budget_s: point_budget,
    };
    Ok((rule, sample_ms * 1e6))
}

/// The most alternating rounds a suite takes (`--rounds`): beyond it a run only gets longer.
pub const MAX_ROUNDS: usize = 20;

/// `--rounds N` for the suites that measure their tests in alternating rounds (bandwidth,
/// loaded-latency, NUMA): 1 measures one test after another, up to [`MAX_ROUNDS`].
pub fn check_rounds(rounds: usize) -> Result<()> {
    if (1..=MAX_ROUNDS).contains(&rounds) {
        Ok(())
    } else {
        Err(Error::input(format!(
            "--rounds {rounds}: give 1 (one test after another) to {MAX_ROUNDS}"
        )))
    }
}

/// The progress label's suffix for round `r` (from 0) of `n`; nothing when there is one round.
pub fn round_label(r: usize, n: usize) -> String {
    if n > 1 {
        format!(", round {}/{n}", r + 1)
    } else {
        String::new()
    }
}

/// Serde's default for the round count of results written before suites alternated rounds.
pub(crate) fn one_round() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_input_errors() {
        assert!(stop_rule(0.01, 7, 0.3, 2.0).is_ok());
        for (ci, b, ms) in [
            (0.0, 1.0, 1.0),
            (2.0, 1.0, 1.0),
            (f64::NAN, 1.0, 1.0),
            (0.01, 0.0, 1.0),
            (0.01, f64::INFINITY, 1.0),
            (0.01, 1.0, 0.0),
            (0.01, 1.0, 1e6),
        ] {
            assert!(
                matches!(stop_rule(ci, 7, b, ms), Err(Error::Input(_))),
                "{ci} {b} {ms}"
            );
        }
        let (r, ns) = stop_rule(0.02, 100, 1.0, 5.0).unwrap();
        assert_eq!((r.min_samples, r.max_samples, ns), (100, 100, 5e6));
    }

    #[test]
    fn rounds_are_checked_and_labelled() {
        assert!(check_rounds(1).is_ok() && check_rounds(MAX_ROUNDS).is_ok());
        for bad in [0, MAX_ROUNDS + 1] {
            let e = check_rounds(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("--rounds {bad}")), "{e}");
        }
        assert_eq!(round_label(0, 1), "");
        assert_eq!(round_label(1, 3), ", round 2/3");
    }
}
