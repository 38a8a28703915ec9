//! What the row-conflict probe times and how it judges it: address-pair sets timed in shuffled
//! rounds, the two clusters of round times (Otsu's threshold) and the per-bit classes, shared by
//! the probe inside one huge page ([`super::probe`]) and the one across 4 KiB pages
//! ([`super::crosspage`]).

use memsight_core::buffer::PageKind;
use memsight_core::cancel;
use memsight_core::stats::{mad_sigma, median};
use memsight_kernels::rowconflict;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Upper bound on rounds per address pair over a whole probe.
pub const MAX_ROUNDS_PER_PAIR: u64 = 1000;
pub(super) const SAMPLES: u64 = 5;
pub(super) const ROUNDS: u64 = MAX_ROUNDS_PER_PAIR / SAMPLES;

/// How one address bit behaves.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BitResult {
    pub bit: u32,
    /// Median ns per round over the bit's pairs.
    pub ns: f64,
    /// Share of its pairs in the slow cluster.
    pub slow_share: f64,
    /// `row` (always conflicts: a row bit outside the bank functions), `bank` (a bank or channel
    /// selector), `column` (same bank and row: a row hit), `fast` (not classified further),
    /// `mixed` (depends on the base address: hashed).
    pub class: String,
}

/// The probe's outcome.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProbeResults {
    pub method: String,
    /// Page kind of the probe buffer and the bits it could flip (below its page size).
    pub page_kind: PageKind,
    pub max_bit: u32,
    pub bases: usize,
    pub pairs_timed: usize,
    /// Median ns per round of the fast cluster (row hit or different bank).
    pub fast_ns: Option<f64>,
    /// Median ns per round of the slow cluster (row conflict).
    pub slow_ns: Option<f64>,
    /// Robust spreads (1.4826 × MAD) of the clusters, ns.
    pub fast_spread_ns: Option<f64>,
    pub slow_spread_ns: Option<f64>,
    pub clear: bool,
    /// The verdict in words (what was found, or why nothing can be said).
    pub message: String,
    /// The highest address bit tested with pairs across pages (root, pagemap), when any.
    #[serde(default)]
    pub high_bit: Option<u32>,
    /// Why bits above the huge page were not tested, when they were not.
    #[serde(default)]
    pub high_bits_skipped: Option<String>,
    pub bits: Vec<BitResult>,
    /// Bank-address functions found: each a set of bits XORed together.
    pub bank_functions: Vec<Vec<u32>>,
}

/// Otsu's threshold for a 1-D sample: the cut maximising the between-class variance.
pub fn otsu(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n < 4 {
        return None;
    }
    let total: f64 = v.iter().sum();
    let mut left = 0.0;
    let mut best = (f64::NEG_INFINITY, None);
    for i in 1..n {
        left += v[i - 1];
        if v[i] == v[i - 1] {
            continue;
        }
        let (w0, w1) = (i as f64, (n - i) as f64);
        let (m0, m1) = (left / w0, (total - left) / w1);
        let between = w0 * w1 * (m0 - m1).powi(2);
        if between > best.0 {
            best = (between, Some(0.5 * (v[i - 1] + v[i])));
        }
    }
    best.1
}

/// The two clusters of round times and whether they are clearly apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Clusters {
    pub threshold: f64,
    pub fast: f64,
    pub slow: f64,
    pub fast_spread: f64,
    pub slow_spread: f64,
    pub slow_share: f64,
    pub clear: bool,
}

/// Splits round times into fast and slow and judges the separation.
pub fn clusters(values: &[f64]) -> Option<Clusters> {
    let t = otsu(values)?;
    let fast: Vec<f64> = values.iter().copied().filter(|v| *v <= t).collect();
    let slow: Vec<f64> = values.iter().copied().filter(|v| *v > t).collect();
    if fast.is_empty() || slow.is_empty() {
        return None;
    }
    let (f, s) = (median(&fast), median(&slow));
    let (fs, ss) = (mad_sigma(&fast), mad_sigma(&slow));
    let share = slow.len() as f64 / values.len() as f64;
    let gap = s - f;
    let clear = gap >= 5.0 && gap >= 4.0 * fs.max(ss).max(0.5) && (0.03..=0.97).contains(&share);
    Some(Clusters {
        threshold: t,
        fast: f,
        slow: s,
        fast_spread: fs,
        slow_spread: ss,
        slow_share: share,
        clear,
    })
}

/// Offsets of line pairs into one buffer.
pub(super) type PairSet = Vec<(usize, usize)>;

/// Times every pair of every set; returns ns per round indexed `[set][pair]`. Pairs are visited
/// in a shuffled order, sample by sample, so no pair is hammered in a burst.
pub(super) fn time_pair_sets(
    buf: &[u8],
    sets: &[PairSet],
    rng: &mut Xoshiro256PlusPlus,
) -> Option<Vec<Vec<f64>>> {
    let mut order: Vec<(usize, usize)> = sets
        .iter()
        .enumerate()
        .flat_map(|(s, pairs)| (0..pairs.len()).map(move |p| (s, p)))
        .collect();
    let mut samples: Vec<Vec<Vec<f64>>> = sets
        .iter()
        .map(|p| vec![Vec::with_capacity(SAMPLES as usize); p.len()])
        .collect();
    for _ in 0..SAMPLES {
        order.shuffle(rng);
        for &(s, p) in &order {
            if cancel::requested() {
                return None;
            }
            let (x, y) = sets[s][p];
            let t = std::time::Instant::now();
            rowconflict::pair_rounds_in(buf, x, y, ROUNDS);
            samples[s][p].push(t.elapsed().as_nanos() as f64 / ROUNDS as f64);
        }
    }
    Some(
        samples
            .into_iter()
            .map(|per_pair| per_pair.iter().map(|s| median(s)).collect())
            .collect(),
    )
}

/// Each single-bit flip's share of slow rounds: `row` (conflicts), `fast` or `mixed`.
pub(super) fn single_bits(bits: &[u32], single: &[Vec<f64>], c: &Clusters) -> Vec<BitResult> {
    let mut out = Vec::new();
    for (i, &bit) in bits.iter().enumerate() {
        let share =
            single[i].iter().filter(|v| **v > c.threshold).count() as f64 / single[i].len() as f64;
        out.push(BitResult {
            bit,
            ns: median(&single[i]),
            slow_share: share,
            class: if share >= 0.75 {
                "row"
            } else if share <= 0.25 {
                "fast"
            } else {
                "mixed"
            }
            .into(),
        });
    }
    out
}

impl ProbeResults {
    /// Results with nothing measured yet.
    pub(super) fn empty(method: String, page_kind: PageKind) -> Self {
        ProbeResults {
            method,
            page_kind,
            max_bit: 0,
            bases: 0,
            pairs_timed: 0,
            fast_ns: None,
            slow_ns: None,
            fast_spread_ns: None,
            slow_spread_ns: None,
            clear: false,
            message: String::new(),
            high_bit: None,
            // Until the single-bit probe gives a fast/slow threshold to class them by.
            high_bits_skipped: Some("the probe ended before them".into()),
            bits: Vec::new(),
            bank_functions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn otsu_splits_two_groups() {
        let mut v: Vec<f64> = (0..50).map(|i| 200.0 + (i % 5) as f64).collect();
        v.extend((0..20).map(|i| 260.0 + (i % 4) as f64));
        let c = clusters(&v).unwrap();
        assert!(c.threshold > 204.0 && c.threshold < 260.0);
        assert_eq!(c.fast, 202.0);
        assert!((c.slow - 261.5).abs() < 1.0);
        assert!(c.clear);
        assert!((c.slow_share - 20.0 / 70.0).abs() < 1e-9);
    }

    #[test]
    fn one_noisy_group_is_not_clear() {
        // A unimodal spread (a VM): Otsu still cuts somewhere, but the groups are not apart.
        let v: Vec<f64> = (0..200).map(|i| 300.0 + ((i * 37) % 41) as f64).collect();
        let c = clusters(&v).unwrap();
        assert!(!c.clear, "{c:?}");
    }
}
