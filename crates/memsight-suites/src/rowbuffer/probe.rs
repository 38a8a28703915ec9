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
pub use super::pairs::{BitResult, MAX_ROUNDS_PER_PAIR, ProbeResults};
use super::pairs::{Clusters, PairSet, ROUNDS, SAMPLES, clusters, single_bits, time_pair_sets};
use memsight_core::Result;
use memsight_core::env::Environment;
use memsight_kernels::rowconflict;
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

/// Times pairs `(base, base ^ mask)` for every base and mask; returns ns per round, indexed
/// `[mask][base]`.
fn time_pairs(
    buf: &[u8],
    bases: &[usize],
    masks: &[usize],
    rng: &mut Xoshiro256PlusPlus,
) -> Option<Vec<Vec<f64>>> {
    // Every pair lies inside the buffer: callers flip only bits below the probe's span.
    debug_assert!(
        masks
            .iter()
            .all(|&m| bases.iter().all(|&b| (b ^ m) < buf.len())),
        "probe pairs inside the buffer"
    );
    let sets: Vec<PairSet> = masks
        .iter()
        .map(|&m| bases.iter().map(|&b| (b, b ^ m)).collect())
        .collect();
    time_pair_sets(buf, &sets, rng)
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
    // Only bits inside the page: those above it were classed across pages, and flipping them
    // here would leave the buffer (the cross-page probe pairs them itself).
    let row_bits = in_page_bits(out, "row");
    let fast_bits = in_page_bits(out, "fast");
    if let Some(&r) = row_bits.first() {
        class_fast_bits(out, &fast_bits, r, bytes, base_offsets, rng, c);
        xor_functions(out, r, bytes, base_offsets, rng, c);
    }
    row_bits
}

/// The bits below the probe's page classed `class`.
fn in_page_bits(out: &ProbeResults, class: &str) -> Vec<u32> {
    out.bits
        .iter()
        .filter(|b| b.bit < out.max_bit && b.class == class)
        .map(|b| b.bit)
        .collect()
}

/// The share of a pair set's round times above the clusters' threshold.
fn slow_share(times: &[f64], c: &Clusters) -> f64 {
    times.iter().filter(|v| **v > c.threshold).count() as f64 / times.len() as f64
}

/// Each fast bit flipped together with row bit `r`: fast again ⇒ a bank (or channel) bit,
/// slow ⇒ a column bit.
fn class_fast_bits(
    out: &mut ProbeResults,
    fast_bits: &[u32],
    r: u32,
    bytes: &[u8],
    base_offsets: &[usize],
    rng: &mut Xoshiro256PlusPlus,
    c: &Clusters,
) {
    let masks: Vec<usize> = fast_bits
        .iter()
        .map(|&j| (1usize << j) | (1usize << r))
        .collect();
    let Some(t) = time_pairs(bytes, base_offsets, &masks, rng) else {
        return;
    };
    out.pairs_timed += masks.len() * base_offsets.len();
    for (k, &j) in fast_bits.iter().enumerate() {
        let slow = slow_share(&t[k], c);
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

/// Fast bits above the lowest row bit `r` that turn slow together with a bank bit below it
/// share a bank function with it.
fn xor_functions(
    out: &mut ProbeResults,
    r: u32,
    bytes: &[u8],
    base_offsets: &[usize],
    rng: &mut Xoshiro256PlusPlus,
    c: &Clusters,
) {
    let bank = in_page_bits(out, "bank");
    let high: Vec<u32> = bank.iter().copied().filter(|&h| h > r).collect();
    let low: Vec<u32> = bank.iter().copied().filter(|&l| l < r).collect();
    let pairs: Vec<(u32, u32)> = high
        .iter()
        .flat_map(|&h| low.iter().map(move |&l| (h, l)))
        .collect();
    if pairs.is_empty() {
        return;
    }
    let masks: Vec<usize> = pairs
        .iter()
        .map(|&(h, l)| (1usize << h) | (1usize << l))
        .collect();
    let Some(t) = time_pairs(bytes, base_offsets, &masks, rng) else {
        return;
    };
    out.pairs_timed += masks.len() * base_offsets.len();
    for (k, &(h, l)) in pairs.iter().enumerate() {
        if slow_share(&t[k], c) >= 0.75 {
            out.bank_functions.push(vec![l, h]);
        }
    }
}

/// The probe's buffer: 4 MiB on the largest page kind the system gives, grown to the whole page
/// when that is a 1 GiB hugetlb page (the flipped bits must stay inside one page, and a 1 GiB
/// page holds the row bits a 4 MiB slice of it would cut off). Returns the buffer and whether
/// its pages are huge.
fn probe_buffer(env: &Environment) -> Result<(Buffer, bool)> {
    let request = |bytes, kind| BufferRequest {
        bytes,
        kind,
        node: None,
        dax: None,
    };
    let mut buf = Buffer::allocate_preferring(request(4 << 20, PageKind::Huge1G), env)?;
    if buf.report().kind == PageKind::Huge1G {
        let whole = PageKind::Huge1G.page_bytes();
        // A reservation that holds one page for 4 MiB may not hold a second: free the first.
        drop(buf);
        buf = Buffer::allocate(request(whole, PageKind::Huge1G), env)
            .or_else(|_| Buffer::allocate_preferring(request(4 << 20, PageKind::Huge2M), env))?;
    }
    buf.touch();
    let report = buf.report();
    // hugetlb pages always are huge; THP only where the kernel backed the whole buffer.
    let huge = match report.kind {
        PageKind::Huge2M | PageKind::Huge1G => true,
        PageKind::Thp => report.huge_fraction.unwrap_or(0.0) > 0.99,
        PageKind::Base4K => false,
    };
    Ok((buf, huge))
}

/// The bytes the probe's pairs may span and the highest address bit it may flip (exclusive):
/// both within one page (so virtual bits are physical bits) and within the buffer.
pub(super) fn probe_span(kind: PageKind, huge: bool, len: usize) -> (usize, u32) {
    let page = if huge {
        kind.page_bytes() as usize
    } else {
        4096
    };
    // A power of two, so that base ^ (1 << bit) stays below it for every bit below max_bit.
    let span = page.min(len.max(64));
    let span = 1usize << (usize::BITS - 1 - span.leading_zeros());
    (span, span.trailing_zeros())
}

/// Runs the probe with `bases` base addresses.
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
    let (mut buf, huge) = probe_buffer(env)?;
    let report = buf.report().clone();
    let (region, max_bit) = probe_span(report.kind, huge, buf.len());
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
        out.message = weak_signal(&c);
        return Ok(out);
    }
    let row_bits = two_bit_flips(&mut out, bytes, &base_offsets, &mut rng, &c);
    if let Some(x) = &mut cross {
        x.bank_functions(&mut out, &c, base_offsets.len(), &mut rng);
    }
    out.message = found(&out, &c, &row_bits);
    Ok(out)
}

/// Why no bits are claimed when the two clusters are too close to call.
fn weak_signal(c: &Clusters) -> String {
    format!(
        "signal too weak to call: fast {:.0} ns vs slow {:.0} ns per round (spreads {:.1} / {:.1} ns, {:.0}% slow). Typical in a VM (guest-physical is not host-physical beyond the host's page, and other guests share the banks) or under a controller that hashes bank bits with many address bits; no bank bits are claimed",
        c.fast,
        c.slow,
        c.fast_spread,
        c.slow_spread,
        100.0 * c.slow_share
    )
}

/// What a clear signal found: the latencies, the row and bank bits and the bank functions.
fn found(out: &ProbeResults, c: &Clusters, row_bits: &[u32]) -> String {
    let list = |bits: &[u32]| {
        let v: Vec<String> = bits.iter().map(u32::to_string).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let bank_bits: Vec<u32> = out
        .bits
        .iter()
        .filter(|b| b.class == "bank")
        .map(|b| b.bit)
        .collect();
    let functions: Vec<String> = out
        .bank_functions
        .iter()
        .map(|f| {
            let bits: Vec<String> = f.iter().map(|b| format!("bit {b}")).collect();
            bits.join(" XOR ")
        })
        .collect();
    format!(
        "row hit or other bank {:.0} ns, row conflict {:.0} ns per round (+{:.0} ns: precharge + activate); row bits: {}; bank/channel bits: {}{}",
        c.fast,
        c.slow,
        c.slow - c.fast,
        list(row_bits),
        list(&bank_bits),
        if functions.is_empty() {
            String::new()
        } else {
            format!("; bank functions: {}", functions.join("; "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair the probe forms stays inside its buffer, whatever page the buffer got: a
    /// 4 MiB slice of a 1 GiB page flipped bits up to 29 and panicked.
    #[test]
    fn pairs_stay_inside_the_buffer_on_every_page_kind() {
        let mib = 1usize << 20;
        for (kind, huge, len, want) in [
            (PageKind::Huge1G, true, 4 * mib, (4 * mib, 22)),
            (PageKind::Huge1G, true, 1024 * mib, (1024 * mib, 30)),
            (PageKind::Huge2M, true, 4 * mib, (2 * mib, 21)),
            (PageKind::Thp, true, 4 * mib, (2 * mib, 21)),
            (PageKind::Base4K, false, 4 * mib, (4096, 12)),
            (PageKind::Huge1G, true, 3 * mib, (2 * mib, 21)),
        ] {
            let (span, max_bit) = probe_span(kind, huge, len);
            assert_eq!((span, max_bit), want, "{kind:?} {len}");
            for bit in 6..max_bit {
                for base in [0, 64, span / 2, span - 64] {
                    assert!((base ^ (1 << bit)) < len, "{kind:?} bit {bit} base {base}");
                }
            }
        }
    }

    /// Bits classed across pages (above the probe's page) are not flipped inside the page: a
    /// clear signal with such bits classed fast or row used to time pairs outside the buffer.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn two_bit_flips_stay_inside_the_page() {
        let buf = vec![1u8; 4096];
        let bit = |bit, class: &str| BitResult {
            bit,
            ns: 100.0,
            slow_share: 0.0,
            class: class.into(),
        };
        let mut out = ProbeResults {
            max_bit: 12,
            bits: vec![
                bit(7, "row"),
                bit(8, "fast"),
                bit(14, "fast"),
                bit(15, "row"),
            ],
            ..ProbeResults::empty(String::new(), PageKind::Thp)
        };
        let c = Clusters {
            threshold: 1e9,
            fast: 100.0,
            slow: 200.0,
            fast_spread: 1.0,
            slow_spread: 1.0,
            slow_share: 0.5,
            clear: true,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let rows = two_bit_flips(&mut out, &buf, &[0, 64, 4032], &mut rng, &c);
        assert_eq!(rows, vec![7]);
        // Bit 8 paired with row bit 7 came out fast (every round below the threshold): a bank
        // bit; bit 14 was left as the cross-page probe classed it.
        assert_eq!(out.bits[1].class, "bank");
        assert_eq!(out.bits[2].class, "fast");
    }
}
