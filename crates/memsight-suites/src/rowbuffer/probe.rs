//! Row-conflict latency probe (DRAMA-style): time rounds of "load x, load y, flush both" for
//! address pairs that differ in one physical address bit, inside one huge page (so virtual and
//! physical address bits below the page size are the same, root or not), and, as root, for pairs
//! of 4 KiB pages whose frame numbers (pagemap) differ in one bit above the huge page.
//!
//! Pairs in different rows of the same bank take longer per round (precharge + activate) than
//! pairs in the same row or in different banks. The round times of all pairs are split into two
//! clusters (Otsu's threshold); the signal is called clear only when the slow cluster sits well
//! above the fast one (at least 5 ns and 4 robust spreads) and both hold a real share of the
//! pairs. Then each bit is classed by how many of its pairs are slow: a bit whose flip always
//! conflicts is a row bit outside every bank function; flipping it together with a bit that
//! selects the bank (or channel) makes the pair fast again, which finds the bank bits; and a
//! fast high bit that turns slow when flipped together with a bank bit is XORed with it in a
//! bank-address function.
//!
//! Every pair is accessed at most [`MAX_ROUNDS_PER_PAIR`] times, spread over the whole probe —
//! far below published RowHammer thresholds (≥ ~4.8 k activations in a 64 ms window).

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};

use super::crosspage::CrossPage;
use memsight_core::env::Environment;
use memsight_core::stats::{mad_sigma, median};
use memsight_core::{Result, cancel};
use memsight_kernels::rowconflict;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Upper bound on rounds per address pair over a whole probe.
pub const MAX_ROUNDS_PER_PAIR: u64 = 1000;
const SAMPLES: u64 = 5;
const ROUNDS: u64 = MAX_ROUNDS_PER_PAIR / SAMPLES;

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

/// Times pairs `(base, base ^ mask)` for every base and mask; returns ns per round, indexed
/// `[mask][base]`.
fn time_pairs(
    buf: &[u8],
    bases: &[usize],
    masks: &[usize],
    rng: &mut Xoshiro256PlusPlus,
) -> Option<Vec<Vec<f64>>> {
    let sets: Vec<PairSet> = masks
        .iter()
        .map(|&m| bases.iter().map(|&b| (b, b ^ m)).collect())
        .collect();
    time_pair_sets(buf, &sets, rng)
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

/// Runs the probe with `bases` base addresses.
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

/// Two-bit flips: a fast bit flipped together with the lowest row bit that is fast again
/// selects the bank or channel; pairs of bank bits above and below it that turn slow together
/// share an XOR bank function. Returns the row bits.
fn two_bit_flips(
    out: &mut ProbeResults,
    bytes: &[u8],
    base_offsets: &[usize],
    rng: &mut Xoshiro256PlusPlus,
    c: &Clusters,
) -> Vec<u32> {
    // Two-bit flips: (fast bit j, lowest row bit r): fast again ⇒ j selects the bank/channel.
    let row_bits: Vec<u32> = out
        .bits
        .iter()
        .filter(|b| b.class == "row")
        .map(|b| b.bit)
        .collect();
    let fast_bits: Vec<u32> = out
        .bits
        .iter()
        .filter(|b| b.class == "fast")
        .map(|b| b.bit)
        .collect();
    if let Some(&r) = row_bits.first() {
        let masks: Vec<usize> = fast_bits
            .iter()
            .map(|&j| (1usize << j) | (1usize << r))
            .collect();
        if let Some(t) = time_pairs(bytes, base_offsets, &masks, rng) {
            out.pairs_timed += masks.len() * base_offsets.len();
            for (k, &j) in fast_bits.iter().enumerate() {
                let slow =
                    t[k].iter().filter(|v| **v > c.threshold).count() as f64 / t[k].len() as f64;
                if let Some(b) = out.bits.iter_mut().find(|b| b.bit == j) {
                    b.class = if slow <= 0.25 {
                        "bank"
                    } else if slow >= 0.75 {
                        "column"
                    } else {
                        "mixed"
                    }
                    .into();
                }
            }
        }
        // Fast bits above the lowest row bit that turn slow together with a bank bit share a
        // bank function with it.
        let bank: Vec<u32> = out
            .bits
            .iter()
            .filter(|b| b.class == "bank")
            .map(|b| b.bit)
            .collect();
        let high: Vec<u32> = bank.iter().copied().filter(|&h| h > r).collect();
        let low: Vec<u32> = bank.iter().copied().filter(|&l| l < r).collect();
        let pairs: Vec<(u32, u32)> = high
            .iter()
            .flat_map(|&h| low.iter().map(move |&l| (h, l)))
            .collect();
        if !pairs.is_empty() {
            let masks: Vec<usize> = pairs
                .iter()
                .map(|&(h, l)| (1usize << h) | (1usize << l))
                .collect();
            if let Some(t) = time_pairs(bytes, base_offsets, &masks, rng) {
                out.pairs_timed += masks.len() * base_offsets.len();
                for (k, &(h, l)) in pairs.iter().enumerate() {
                    let slow = t[k].iter().filter(|v| **v > c.threshold).count() as f64
                        / t[k].len() as f64;
                    if slow >= 0.75 {
                        out.bank_functions.push(vec![l, h]);
                    }
                }
            }
        }
    }
    row_bits
}

impl ProbeResults {
    /// Results with nothing measured yet.
    fn empty(method: String, page_kind: PageKind) -> Self {
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

pub fn run(env: &Environment, bases: usize, seed: u64) -> Result<ProbeResults> {
    let method = format!(
        "pairs of addresses differing in one (then two) address bits inside one huge page, and as root pairs of 4 KiB pages whose frames (pagemap) differ in one bit above it; per pair {SAMPLES} samples of {ROUNDS} rounds of load-load-clflush-clflush-mfence (≤ {MAX_ROUNDS_PER_PAIR} activations per pair, shuffled), median ns per round; fast/slow split by Otsu's threshold"
    );
    if !rowconflict::supported() {
        return Ok(ProbeResults {
            message: "the probe needs an unprivileged cache-line flush (x86_64 clflush): skipped on this architecture".into(),
            ..ProbeResults::empty(method, PageKind::Base4K)
        });
    }
    // One huge page is enough: the flipped bits must stay inside it.
    let mut buf = Buffer::allocate_preferring(
        BufferRequest {
            bytes: 4 << 20,
            kind: PageKind::Huge1G,
            node: None,
            dax: None,
        },
        env,
    )?;
    buf.touch();
    let report = buf.report().clone();
    // hugetlb pages always are huge; THP only where the kernel backed the whole buffer.
    let huge = match report.kind {
        PageKind::Huge2M | PageKind::Huge1G => true,
        PageKind::Thp => report.huge_fraction.unwrap_or(0.0) > 0.99,
        PageKind::Base4K => false,
    };
    let page = if huge { report.kind.page_bytes() } else { 4096 };
    let max_bit = page.trailing_zeros();
    let region = (page as usize).min(buf.len());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let base_offsets: Vec<usize> = (0..bases.max(2))
        .map(|_| rng.random_range(0..region / 64) * 64)
        .collect();
    let bytes: &[u8] = buf.as_mut_slice();
    let bits: Vec<u32> = (6..max_bit).collect();
    let masks: Vec<usize> = bits.iter().map(|b| 1usize << b).collect();
    let mut out = ProbeResults {
        max_bit,
        bases: base_offsets.len(),
        ..ProbeResults::empty(method, report.kind)
    };
    if !huge {
        out.message = "no huge page could be had (hugetlb pool empty and THP unavailable): a 4 KiB page holds no row or bank bits, so the probe did not run; reserve huge pages (--reserve-huge as root)".into();
        return Ok(out);
    }
    let Some(single) = time_pairs(bytes, &base_offsets, &masks, &mut rng) else {
        out.message = "interrupted".into();
        return Ok(out);
    };
    out.pairs_timed = masks.len() * base_offsets.len();
    let all: Vec<f64> = single.iter().flatten().copied().collect();
    let Some(c) = clusters(&all) else {
        out.message = "the round times do not split into two groups: no row-conflict signal".into();
        return Ok(out);
    };
    out.fast_ns = Some(c.fast);
    out.slow_ns = Some(c.slow);
    out.fast_spread_ns = Some(c.fast_spread);
    out.slow_spread_ns = Some(c.slow_spread);
    out.clear = c.clear;
    out.bits = single_bits(&bits, &single, &c);
    // As root, the bits above the huge page, across pages.
    let mut cross = match CrossPage::new(env)? {
        Ok(x) => Some(x),
        Err(why) => {
            out.high_bits_skipped = Some(why);
            None
        }
    };
    if let Some(x) = &mut cross {
        x.single_bits(&mut out, &c, base_offsets.len(), &mut rng);
    }
    if !c.clear {
        out.message = format!(
            "signal too weak to call: fast {:.0} ns vs slow {:.0} ns per round (spreads {:.1} / {:.1} ns, {:.0}% slow). Typical in a VM (guest-physical is not host-physical beyond the host's page, and other guests share the banks) or under a controller that hashes bank bits with many address bits; no bank bits are claimed",
            c.fast,
            c.slow,
            c.fast_spread,
            c.slow_spread,
            100.0 * c.slow_share
        );
        return Ok(out);
    }
    let row_bits = two_bit_flips(&mut out, bytes, &base_offsets, &mut rng, &c);
    if let Some(x) = &mut cross {
        x.bank_functions(&mut out, &c, base_offsets.len(), &mut rng);
    }
    out.message = format!(
        "row hit or other bank {:.0} ns, row conflict {:.0} ns per round (+{:.0} ns: precharge + activate); {} row bit(s) {:?}, bank/channel bits {:?}{}",
        c.fast,
        c.slow,
        c.slow - c.fast,
        row_bits.len(),
        row_bits,
        out.bits
            .iter()
            .filter(|b| b.class == "bank")
            .map(|b| b.bit)
            .collect::<Vec<_>>(),
        if out.bank_functions.is_empty() {
            String::new()
        } else {
            format!(", XOR functions {:?}", out.bank_functions)
        }
    );
    Ok(out)
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
