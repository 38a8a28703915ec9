//! One statistics scheme for every measurement (METHODS.md §1).
//!
//! Warm up, then take samples until the 95% confidence interval of the median lies within a target
//! fraction of the median (default 1%), with a minimum and maximum count and a time budget. The
//! interval is distribution-free: the order statistics x(j), x(n+1-j) bracket the median with
//! coverage 1 − 2·P(B ≤ j−1), B ~ Binomial(n, ½) (Conover, *Practical Nonparametric Statistics*,
//! 3rd ed., §3.2), so no normality is assumed; timings are skewed and that matters.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A sample set summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    /// Lower end of the confidence interval of the median.
    pub ci_low: f64,
    /// Upper end of the confidence interval of the median.
    pub ci_high: f64,
    /// Coverage of that interval (0.95, or less when there are too few samples for 95%).
    pub ci_level: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Coefficient of variation: standard deviation ÷ mean.
    pub cv: f64,
    /// Robust spread: 1.4826 × median absolute deviation ÷ median (equals the CV for normal data,
    /// ignores the rare preempted or interrupted sample).
    pub robust_cv: f64,
    /// Samples with a modified Z-score above 3.5 (Iglewicz & Hoaglin, 1993): interrupted,
    /// preempted or otherwise disturbed. They stay in the statistics; the median is robust to them.
    pub outliers: usize,
    /// The samples themselves, in the order taken, so that two runs can be compared with a
    /// rank test (`memsight compare`). Absent from files written before schema version 2.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
}

impl Summary {
    /// Half-width of the median's CI relative to the median (the larger side).
    pub fn rel_ci(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.median - self.ci_low).max(self.ci_high - self.median) / self.median.abs()
    }
}

/// P(B ≤ k) for B ~ Binomial(n, ½), computed in log space so large n cannot underflow.
fn binom_half_cdf(n: usize, k: usize) -> f64 {
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_c = 0.0f64; // ln C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (ln_c + ln_half_n).exp();
    }
    sum.min(1.0)
}

/// 0-based ranks (lo, hi) of the order statistics bracketing the median with at least `conf`
/// coverage, and the exact coverage. With fewer than 6 samples 95% is out of reach: the full range
/// is returned with its (lower) coverage.
pub fn median_ci_ranks(n: usize, conf: f64) -> (usize, usize, f64) {
    assert!(n > 0);
    let mut lo = 0;
    let mut coverage = 1.0 - 2.0 * binom_half_cdf(n, 0);
    while lo + 1 < n / 2 {
        let c = 1.0 - 2.0 * binom_half_cdf(n, lo + 1);
        if c < conf {
            break;
        }
        lo += 1;
        coverage = c;
    }
    (lo, n - 1 - lo, coverage.max(0.0))
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// Median of values in any order (NaN for none).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    median_sorted(&s)
}

/// Robust standard deviation: 1.4826 × the median absolute deviation from the median (equals
/// the standard deviation for normal data, ignores rare outliers). NaN for no values.
pub fn mad_sigma(values: &[f64]) -> f64 {
    let m = median(values);
    let dev: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    1.4826 * median(&dev)
}

/// Summarises samples (any order). Panics on an empty slice: callers always have a sample.
pub fn summarize(samples: &[f64]) -> Summary {
    assert!(!samples.is_empty(), "summarize needs at least one sample");
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let mean = s.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    let (lo, hi, level) = median_ci_ranks(n, 0.95);
    let median = median_sorted(&s);
    let mut dev: Vec<f64> = s.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = median_sorted(&dev);
    let outliers = if mad > 0.0 {
        s.iter()
            .filter(|x| 0.6745 * (*x - median).abs() / mad > 3.5)
            .count()
    } else {
        0
    };
    Summary {
        n,
        median,
        ci_low: s[lo],
        ci_high: s[hi],
        ci_level: level,
        min: s[0],
        max: s[n - 1],
        mean,
        cv: if mean != 0.0 {
            var.sqrt() / mean.abs()
        } else {
            0.0
        },
        robust_cv: if median != 0.0 {
            1.4826 * mad / median.abs()
        } else {
            0.0
        },
        outliers,
        samples: samples.to_vec(),
    }
}

/// When to stop sampling.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct StopRule {
    /// Samples thrown away first (caches, TLB, frequency settle).
    pub warmup: usize,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Stop once the median's 95% CI is within this fraction of the median.
    pub target_rel_ci: f64,
    /// Stop after this long even if not converged (seconds).
    pub budget_s: f64,
}

impl Default for StopRule {
    fn default() -> Self {
        StopRule {
            warmup: 1,
            min_samples: 7,
            max_samples: 101,
            target_rel_ci: 0.01,
            budget_s: 1.0,
        }
    }
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Converged,
    MaxSamples,
    Budget,
    Interrupted,
}

/// The outcome of sampling.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Sampled {
    pub summary: Summary,
    pub stop: StopReason,
    pub samples: Vec<f64>,
}

impl Sampled {
    /// A figure whose CI did not converge, or whose spread is large, is noise and says so.
    pub fn is_noisy(&self) -> bool {
        self.stop != StopReason::Converged && self.summary.rel_ci() > 0.05
    }
}

/// Runs `warmup` unrecorded calls of `sample`, then records calls until `rule` says stop. Returns
/// `None` only when interrupted before a single sample was recorded.
pub fn sample_until(rule: &StopRule, mut sample: impl FnMut() -> f64) -> Option<Sampled> {
    let start = Instant::now();
    let budget = Duration::from_secs_f64(rule.budget_s.max(0.0));
    for _ in 0..rule.warmup {
        if crate::cancel::requested() {
            return None;
        }
        sample();
    }
    let mut samples = Vec::with_capacity(rule.min_samples.max(8));
    let stop = loop {
        if crate::cancel::requested() {
            break StopReason::Interrupted;
        }
        samples.push(sample());
        let n = samples.len();
        if n >= rule.min_samples.max(1) {
            if summarize(&samples).rel_ci() <= rule.target_rel_ci {
                break StopReason::Converged;
            }
            if n >= rule.max_samples {
                break StopReason::MaxSamples;
            }
            if start.elapsed() >= budget {
                break StopReason::Budget;
            }
        }
    };
    if samples.is_empty() {
        return None;
    }
    Some(Sampled {
        summary: summarize(&samples),
        stop,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_coverages() {
        // n = 5: only the full range, coverage 1 − 2/32.
        let (lo, hi, c) = median_ci_ranks(5, 0.95);
        assert_eq!((lo, hi), (0, 4));
        assert!((c - 0.9375).abs() < 1e-12);
        // n = 10: x(2)..x(9) has coverage 0.9785 (tables give j = 2).
        let (lo, hi, c) = median_ci_ranks(10, 0.95);
        assert_eq!((lo, hi), (1, 8));
        assert!((c - 0.978515625).abs() < 1e-9);
        // Large n stays finite and near 0.95.
        let (_, _, c) = median_ci_ranks(5000, 0.95);
        assert!((0.95..0.96).contains(&c));
    }

    #[test]
    fn median_and_robust_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        // Deviations from 3 are {2,1,0,1,97}: median 1, whatever the outlier.
        assert!((mad_sigma(&[1.0, 2.0, 3.0, 4.0, 100.0]) - 1.4826).abs() < 1e-12);
    }

    #[test]
    fn summary_of_known_data() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.median, 3.0);
        assert_eq!((s.min, s.max), (1.0, 5.0));
        assert_eq!((s.ci_low, s.ci_high), (1.0, 5.0));
        assert!((s.mean - 3.0).abs() < 1e-12);
        assert!((s.cv - (2.5f64).sqrt() / 3.0).abs() < 1e-12);
        // MAD of {2,1,0,1,2} is 1.
        assert!((s.robust_cv - 1.4826 / 3.0).abs() < 1e-12);
        assert_eq!(s.outliers, 0);
    }

    #[test]
    fn a_preempted_sample_is_an_outlier_not_a_new_median() {
        let mut xs = vec![100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8];
        xs.push(400.0);
        let s = summarize(&xs);
        assert_eq!(s.outliers, 1);
        assert!((s.median - 100.1).abs() < 0.2);
        assert!(s.robust_cv < 0.02 && s.cv > 0.5);
    }

    #[test]
    fn constant_samples_converge_at_the_minimum() {
        let rule = StopRule::default();
        let out = sample_until(&rule, || 42.0).unwrap();
        assert_eq!(out.stop, StopReason::Converged);
        assert_eq!(out.summary.n, rule.min_samples);
        assert_eq!(out.summary.median, 42.0);
    }

    #[test]
    fn noisy_samples_stop_at_the_cap() {
        let rule = StopRule {
            max_samples: 20,
            budget_s: 10.0,
            ..Default::default()
        };
        let mut i = 0u64;
        let out = sample_until(&rule, || {
            i += 1;
            if i.is_multiple_of(2) { 1.0 } else { 100.0 }
        })
        .unwrap();
        assert_eq!(out.stop, StopReason::MaxSamples);
        assert_eq!(out.summary.n, 20);
        assert!(out.is_noisy());
    }

    proptest! {
        #[test]
        fn ci_brackets_the_median(mut xs in proptest::collection::vec(0.0f64..1e6, 1..300)) {
            let s = summarize(&xs);
            xs.sort_by(f64::total_cmp);
            prop_assert!(s.min <= s.ci_low && s.ci_low <= s.median);
            prop_assert!(s.median <= s.ci_high && s.ci_high <= s.max);
            prop_assert!((0.0..=1.0).contains(&s.ci_level));
            if xs.len() >= 6 { prop_assert!(s.ci_level >= 0.95); }
        }
    }
}
