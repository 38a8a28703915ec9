//! The probe above the huge page, as root: a buffer of scattered 4 KiB pages whose frame numbers
//! (pagemap) give pairs of lines that differ in any chosen set of physical address bits — one
//! bit to class it, a high bit with a bank bit to find the XOR bank functions that use bits a
//! single huge page cannot reach.

use std::collections::HashMap;

use memsight_core::Result;
use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::pairs::{Clusters, PairSet, ProbeResults, single_bits, time_pair_sets};

/// Scattered 4 KiB pages searched for frame pairs.
const BYTES: u64 = 256 << 20;
const PAGE: usize = 4096;

/// The buffer and where each of its frames sits.
pub(super) struct CrossPage {
    buf: Buffer,
    by_frame: HashMap<u64, usize>,
    /// One past the highest physical address bit the frames reach.
    top: u32,
}

impl CrossPage {
    /// Allocates and maps the buffer; `Err(why)` when the frames are hidden (not root).
    pub(super) fn new(env: &Environment) -> Result<std::result::Result<CrossPage, String>> {
        let mut buf = Buffer::allocate(
            BufferRequest {
                bytes: BYTES,
                kind: PageKind::Base4K,
                node: None,
                dax: None,
            },
            env,
        )?;
        buf.touch();
        let frames = memsight_core::pagemap::frames(buf.as_ptr() as usize, buf.len());
        let Ok((frames, true)) = frames else {
            return Ok(Err(
                "frame numbers are hidden (not root): pairs across pages cannot be built".into(),
            ));
        };
        let by_frame: HashMap<u64, usize> = frames
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.map(|f| (f, i)))
            .collect();
        let top = by_frame.keys().max().map_or(0, |f| 64 - f.leading_zeros()) + 12;
        Ok(Ok(CrossPage { buf, by_frame, top }))
    }

    fn pairs(&self, mask: u64, per: usize, rng: &mut Xoshiro256PlusPlus) -> PairSet {
        pairs_for(&self.by_frame, mask, per, rng)
    }

    /// Classes every bit from the probe's huge page up to the frames' top with one-bit pairs.
    pub(super) fn single_bits(
        &mut self,
        out: &mut ProbeResults,
        c: &Clusters,
        per: usize,
        rng: &mut Xoshiro256PlusPlus,
    ) {
        let (bits, sets): (Vec<u32>, Vec<PairSet>) = (out.max_bit..self.top)
            .map(|b| (b, self.pairs(1 << b, per, rng)))
            .filter(|(_, p)| !p.is_empty())
            .unzip();
        if bits.is_empty() {
            out.high_bits_skipped =
                Some("no two frames of the buffer differ in one high bit".into());
            return;
        }
        let Some(t) = time_pair_sets(self.buf.as_mut_slice(), &sets, rng) else {
            out.high_bits_skipped = Some("interrupted".into());
            return;
        };
        out.pairs_timed += sets.iter().map(Vec::len).sum::<usize>();
        out.bits.extend(single_bits(&bits, &t, c));
        out.high_bit = bits.last().copied();
        out.high_bits_skipped = None;
    }

    /// With a clear signal: a high bit that is fast alone but slow together with a bank bit
    /// shares a bank (XOR) function with it.
    pub(super) fn bank_functions(
        &mut self,
        out: &mut ProbeResults,
        c: &Clusters,
        per: usize,
        rng: &mut Xoshiro256PlusPlus,
    ) {
        let class_of = |class: &str, high: bool| -> Vec<u32> {
            out.bits
                .iter()
                .filter(|b| b.class == class && (b.bit >= out.max_bit) == high)
                .map(|b| b.bit)
                .collect()
        };
        let (high, bank) = (class_of("fast", true), class_of("bank", false));
        let combos: Vec<(u32, u32)> = high
            .iter()
            .flat_map(|&h| bank.iter().map(move |&l| (l, h)))
            .collect();
        let sets: Vec<PairSet> = combos
            .iter()
            .map(|&(l, h)| self.pairs((1 << h) | (1 << l), per, rng))
            .collect();
        if sets.iter().all(Vec::is_empty) {
            return;
        }
        let Some(t) = time_pair_sets(self.buf.as_mut_slice(), &sets, rng) else {
            return;
        };
        out.pairs_timed += sets.iter().map(Vec::len).sum::<usize>();
        for (k, &(l, h)) in combos.iter().enumerate() {
            let n = t[k].len().max(1) as f64;
            let slow = t[k].iter().filter(|v| **v > c.threshold).count() as f64 / n;
            if !t[k].is_empty() && slow >= 0.75 {
                out.bank_functions.push(vec![l, h]);
            }
        }
    }
}

/// Up to `per` pairs of lines (offsets into the buffer whose page `i` holds frame `by_frame`'s
/// key) whose physical addresses differ exactly in `mask` (bits ≥ 6).
fn pairs_for(
    by_frame: &HashMap<u64, usize>,
    mask: u64,
    per: usize,
    rng: &mut Xoshiro256PlusPlus,
) -> PairSet {
    let (frame_mask, line_mask) = (mask >> 12, (mask & 0xfff) as usize);
    let mut found: Vec<(usize, usize)> = by_frame
        .iter()
        .filter_map(|(&f, &i)| by_frame.get(&(f ^ frame_mask)).map(|&j| (i, j)))
        .filter(|(i, j)| i < j || frame_mask == 0)
        .collect();
    // Sorted first: the hash map's order must not make the choice depend on the run.
    found.sort_unstable();
    found.shuffle(rng);
    found.truncate(per);
    found
        .into_iter()
        .map(|(i, j)| {
            let line = rng.random_range(0..PAGE / 64) * 64;
            (i * PAGE + line, j * PAGE + (line ^ line_mask))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::rand_core::SeedableRng;

    #[test]
    fn pairs_differ_in_exactly_the_mask() {
        // Pages 0..64 hold frames 64..128 in a scattered order.
        let frames: Vec<u64> = (0..64u64).map(|i| 64 + (i * 37) % 64).collect();
        let by_frame: HashMap<u64, usize> =
            frames.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        let phys = |off: usize| (frames[off / PAGE] << 12) | (off % PAGE) as u64;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for mask in [
            1u64 << 13,
            1 << 17,
            (1 << 17) | (1 << 8),
            (1 << 14) | (1 << 12),
        ] {
            let pairs = pairs_for(&by_frame, mask, 8, &mut rng);
            assert_eq!(pairs.len(), 8, "mask {mask:#x}");
            for (x, y) in pairs {
                assert_eq!(phys(x) ^ phys(y), mask, "mask {mask:#x}");
                assert_eq!(x % 64, 0);
            }
        }
        // A bit no two frames differ in gives no pairs.
        assert!(pairs_for(&by_frame, 1 << 19, 8, &mut rng).is_empty());
    }
}
