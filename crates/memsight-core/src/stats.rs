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

pub use crate::cpuclock::Disturbance;
use crate::cpuclock::{Lap, TeamSpan};

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
    /// Samples taken but left out of this figure because the measurement was disturbed (a
    /// measuring thread lost its CPU, or a team did not start together; see `cpuclock`).
    /// Zero in files written before this field existed.
    #[serde(default)]
    pub dropped: usize,
    /// Set when the figure rests on fewer clean samples than the stop rule asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<Shortfall>,
}

/// A figure with too few clean samples, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Shortfall {
    /// Clean samples taken.
    pub clean: usize,
    /// Clean samples the stop rule wanted at least.
    pub wanted: usize,
    /// Disturbed samples kept in the figure because there were too few clean ones (they are
    /// never faster than clean ones: disturbance only adds time).
    pub disturbed_kept: usize,
    /// What disturbed the most samples.
    pub cause: Disturbance,
}

impl Shortfall {
    pub fn describe(&self) -> String {
        if self.disturbed_kept > 0 {
            format!(
                "{} clean of {} wanted ({}); {} disturbed samples kept",
                self.clean,
                self.wanted,
                self.cause.describe(),
                self.disturbed_kept
            )
        } else {
            format!(
                "only {} clean samples of {} wanted ({})",
                self.clean,
                self.wanted,
                self.cause.describe()
            )
        }
    }
}

/// One sample as a measurement returns it: the value and, when it was disturbed, how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    pub value: f64,
    pub disturbed: Option<Disturbance>,
}

impl Taken {
    /// A sample nothing is known to have disturbed (values that are not timings).
    pub fn clean(value: f64) -> Self {
        Taken {
            value,
            disturbed: None,
        }
    }

    /// A value timed by `lap` on one thread.
    pub fn timed(value: f64, lap: &Lap) -> Self {
        Taken {
            value,
            disturbed: lap.disturbance(),
        }
    }

    /// A value timed by a team over `span`.
    pub fn spanned(value: f64, span: &TeamSpan) -> Self {
        Taken {
            value,
            disturbed: span.disturbance(),
        }
    }
}

impl Summary {
    /// Half-width of the median's CI relative to the median (the larger side).
    pub fn rel_ci(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.median - self.ci_low).max(self.ci_high - self.median) / self.median.abs()
    }

    /// Whether the figure rests on disturbed samples: so few clean ones were left (under 3)
    /// that the disturbed ones were kept, which makes it slower than the machine. Marked
    /// wherever it is shown and never judged by `compare` or `fleet`. (A figure with fewer
    /// clean samples than wanted but all of them clean is unbiased: its sample count is
    /// marked, its value is judged with its wider interval.)
    pub fn rests_on_disturbed(&self) -> bool {
        self.shortfall
            .as_ref()
            .is_some_and(|s| s.disturbed_kept > 0)
    }

    /// The mark a figure resting on disturbed samples carries after its value (` ⚠`), else
    /// nothing.
    pub fn mark(&self) -> &'static str {
        if self.rests_on_disturbed() {
            " ⚠"
        } else {
            ""
        }
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
        dropped: 0,
        shortfall: None,
    }
}

/// Samples behind every figure of one result, added up: what was kept, what was dropped as
/// disturbed, and which figures rest on too few clean samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SampleTally {
    /// Figures (sample summaries) in the result.
    pub figures: usize,
    /// Samples those figures are computed from.
    pub kept: usize,
    /// Samples taken but dropped as disturbed.
    pub dropped: usize,
    /// Figures marked with a shortfall of clean samples.
    pub short: usize,
    /// Figures that rest on disturbed samples (under 3 clean ones were left).
    #[serde(default)]
    pub disturbed_figures: usize,
    /// Disturbed samples kept in those figures.
    #[serde(default)]
    pub disturbed_kept: usize,
}

impl SampleTally {
    /// Walks any serialised result and adds up every [`Summary`] in it (an object with `median`,
    /// `n` and `ci_level`). A scaled copy of a measurement (DRAM bytes beside program bytes,
    /// [`SCALED_COPIES`]) holds the same samples and is not counted again.
    pub fn of(value: &serde_json::Value) -> Self {
        let mut t = SampleTally::default();
        t.walk(value);
        t
    }

    /// [`SampleTally::of`] any serialisable result (an empty tally if it cannot be serialised).
    pub fn of_result<T: Serialize>(result: &T) -> Self {
        serde_json::to_value(result)
            .map(|v| Self::of(&v))
            .unwrap_or_default()
    }

    fn walk(&mut self, v: &serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::Object(m) => {
                if m.contains_key("median") && m.contains_key("ci_level") {
                    self.figures += 1;
                    self.kept += m.get("n").and_then(Value::as_u64).unwrap_or(0) as usize;
                    self.dropped += m.get("dropped").and_then(Value::as_u64).unwrap_or(0) as usize;
                    if let Some(short) = m.get("shortfall").filter(|s| !s.is_null()) {
                        self.short += 1;
                        let kept = short
                            .get("disturbed_kept")
                            .and_then(Value::as_u64)
                            .unwrap_or(0) as usize;
                        self.disturbed_figures += usize::from(kept > 0);
                        self.disturbed_kept += kept;
                    }
                    return;
                }
                // A scaled copy of a figure (DRAM bytes from program bytes) holds the same
                // samples: counted once, under the figure it copies.
                m.iter()
                    .filter(|(k, _)| !SCALED_COPIES.contains(&k.as_str()))
                    .for_each(|(_, x)| self.walk(x));
            }
            Value::Array(a) => a.iter().for_each(|x| self.walk(x)),
            _ => {}
        }
    }

    /// One line for people, e.g. under a command's tables: every sample taken, clean or
    /// disturbed, and what became of the disturbed ones.
    pub fn describe(&self) -> String {
        let taken = self.kept + self.dropped;
        let clean = self.kept - self.disturbed_kept.min(self.kept);
        let disturbed = self.dropped + self.disturbed_kept;
        let mut s = format!(
            "{taken} samples taken for {} figures: {clean} clean, {disturbed} disturbed (a measuring thread lost its CPU, or a team did not start together), of which {} dropped",
            self.figures, self.dropped
        );
        if self.disturbed_figures > 0 {
            s.push_str(&format!(
                " and {} kept in the {} figure(s) left with under 3 clean samples (marked ⚠: slower than the machine; compare and fleet do not judge them)",
                self.disturbed_kept, self.disturbed_figures
            ));
        }
        if self.short > self.disturbed_figures {
            s.push_str(&format!(
                "; {} figure(s) have fewer clean samples than wanted (their sample count is marked)",
                self.short - self.disturbed_figures
            ));
        }
        s
    }
}

/// Keys under which results keep a scaled copy of a figure they hold beside it.
const SCALED_COPIES: &[&str] = &["dram_gbs"];

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

impl StopRule {
    /// One round's share of the rule when a suite measures its tests in `rounds` alternating
    /// rounds: its part of the samples and budget, the same precision. At least three samples
    /// a round, so that a round rarely falls back on disturbed ones.
    pub fn per_round(&self, rounds: usize) -> StopRule {
        let rounds = rounds.max(1);
        if rounds == 1 {
            return *self;
        }
        let min_samples = self.min_samples.div_ceil(rounds).max(3);
        StopRule {
            min_samples,
            max_samples: self.max_samples.div_ceil(rounds).max(min_samples),
            budget_s: self.budget_s / rounds as f64,
            ..*self
        }
    }
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

/// Runs `warmup` unrecorded calls of `sample`, then records calls until `rule` says stop.
/// Disturbed samples are dropped and counted; the rule is applied to clean samples only. When
/// disturbance leaves too few clean samples, sampling goes on for up to twice the budget (and
/// twice the sample cap), then the figure is marked with a [`Shortfall`]; with fewer than 3 clean
/// samples the disturbed ones are kept in it (disturbance only ever adds time, so they can make a
/// figure look worse, never better). Returns `None` only when interrupted before a single sample
/// was taken.
pub fn sample_until(rule: &StopRule, mut sample: impl FnMut() -> Taken) -> Option<Sampled> {
    let start = Instant::now();
    let budget = Duration::from_secs_f64(rule.budget_s.max(0.0));
    for _ in 0..rule.warmup {
        if crate::cancel::requested() {
            return None;
        }
        sample();
    }
    let want = rule.min_samples.max(1);
    let mut clean = Vec::with_capacity(want.max(8));
    let mut dropped: Vec<(f64, Disturbance)> = Vec::new();
    let stop = loop {
        if crate::cancel::requested() {
            break StopReason::Interrupted;
        }
        let t = sample();
        match t.disturbed {
            None => clean.push(t.value),
            Some(d) => dropped.push((t.value, d)),
        }
        let taken = clean.len() + dropped.len();
        let elapsed = start.elapsed();
        if clean.len() >= want {
            if summarize(&clean).rel_ci() <= rule.target_rel_ci {
                break StopReason::Converged;
            }
            if clean.len() >= rule.max_samples {
                break StopReason::MaxSamples;
            }
            if elapsed >= budget {
                break StopReason::Budget;
            }
        } else if taken >= 2 * rule.max_samples.max(want) {
            break StopReason::MaxSamples;
        } else if elapsed >= 2 * budget {
            break StopReason::Budget;
        }
    };
    if clean.is_empty() && dropped.is_empty() {
        return None;
    }
    Some(finish(clean, dropped, want, stop))
}

/// One figure from the same quantity sampled in several rounds (alternating with other tests,
/// so that a drift of the machine touches every test alike): every round's samples together,
/// the dropped counts added. A round that kept disturbed samples (fewer than 3 clean ones in
/// it) is left out, its disturbed samples counted as dropped, when the other rounds hold 3
/// clean samples or more: disturbed samples stand in a figure only when the whole figure has
/// too few clean ones, as within one round ([`sample_until`]).
pub fn merge_rounds(rounds: &[Summary]) -> Option<Summary> {
    let used = merged_rounds(rounds);
    let values: Vec<f64> = rounds
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .flat_map(|(r, _)| r.samples.iter().copied())
        .collect();
    if values.is_empty() {
        return None;
    }
    let mut s = summarize(&values);
    s.dropped = rounds
        .iter()
        .zip(&used)
        .map(|(r, u)| match &r.shortfall {
            Some(sf) if !u => r.dropped + sf.disturbed_kept,
            _ => r.dropped,
        })
        .sum();
    let short: Vec<&Shortfall> = rounds
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .filter_map(|(r, _)| r.shortfall.as_ref())
        .collect();
    s.shortfall = short.first().map(|first| Shortfall {
        clean: short.iter().map(|x| x.clean).sum(),
        wanted: short.iter().map(|x| x.wanted).sum(),
        disturbed_kept: short.iter().map(|x| x.disturbed_kept).sum(),
        cause: first.cause,
    });
    Some(s)
}

/// Which of `rounds` [`merge_rounds`] takes into the figure: a round that kept disturbed
/// samples is left out while the others hold 3 clean samples or more.
pub fn merged_rounds(rounds: &[Summary]) -> Vec<bool> {
    let kept_disturbed = |r: &Summary| r.shortfall.as_ref().is_some_and(|s| s.disturbed_kept > 0);
    let clean: usize = rounds
        .iter()
        .filter(|r| !kept_disturbed(r))
        .map(|r| r.n)
        .sum();
    rounds
        .iter()
        .map(|r| clean < 3 || !kept_disturbed(r))
        .collect()
}

/// The spread between the rounds [`merge_rounds`] took: (highest − lowest round median) ÷ the
/// merged median. A round left out is not in the figure, so it is not in its spread either (a
/// spread wider than the figure's own min–max would contradict it).
pub fn between_rounds(rounds: &[Summary], merged: &Summary) -> f64 {
    let used: Vec<&Summary> = rounds
        .iter()
        .zip(merged_rounds(rounds))
        .filter_map(|(r, u)| u.then_some(r))
        .collect();
    let medians = used.iter().map(|r| r.median);
    let hi = medians.clone().fold(f64::MIN, f64::max);
    let lo = medians.fold(f64::MAX, f64::min);
    if used.len() < 2 || merged.median == 0.0 {
        0.0
    } else {
        (hi - lo) / merged.median
    }
}

/// Summarises samples taken outside [`sample_until`] (a fixed number of them, e.g. STREAM's
/// NTIMES): disturbed ones are dropped and counted as there, `want` is the clean count hoped for.
pub fn summarize_taken(taken: &[Taken], want: usize) -> Summary {
    assert!(!taken.is_empty(), "summarize needs at least one sample");
    let clean = taken
        .iter()
        .filter(|t| t.disturbed.is_none())
        .map(|t| t.value)
        .collect();
    let dropped = taken
        .iter()
        .filter_map(|t| t.disturbed.map(|d| (t.value, d)))
        .collect();
    finish(clean, dropped, want, StopReason::MaxSamples).summary
}

fn finish(
    clean: Vec<f64>,
    dropped: Vec<(f64, Disturbance)>,
    want: usize,
    stop: StopReason,
) -> Sampled {
    let cause = {
        let lost = dropped
            .iter()
            .filter(|d| d.1 == Disturbance::LostCpu)
            .count();
        if 2 * lost >= dropped.len() {
            Disturbance::LostCpu
        } else {
            Disturbance::Staggered
        }
    };
    // Below 3 clean samples a median says little: keep the disturbed ones too.
    let keep_disturbed = clean.len() < 3;
    let values: Vec<f64> = if keep_disturbed {
        clean
            .iter()
            .copied()
            .chain(dropped.iter().map(|d| d.0))
            .collect()
    } else {
        clean.clone()
    };
    let mut summary = summarize(&values);
    summary.dropped = if keep_disturbed { 0 } else { dropped.len() };
    if clean.len() < want && stop != StopReason::Interrupted && !dropped.is_empty() {
        summary.shortfall = Some(Shortfall {
            clean: clean.len(),
            wanted: want,
            disturbed_kept: if keep_disturbed { dropped.len() } else { 0 },
            cause,
        });
    }
    Sampled {
        samples: values,
        summary,
        stop,
    }
}

#[cfg(test)]
mod tests;
