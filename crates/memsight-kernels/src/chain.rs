//! Pointer-chase chains.
//!
//! A chain is a set of elements, one every `stride` bytes, each holding the address of the next.
//! Walking it is a sequence of dependent loads: no load can start before the previous one returned
//! its address, so the time per step is the load-to-use latency of wherever the element lives.
//!
//! Two properties make the figure trustworthy:
//!
//! 1. **One cycle through every element.** The walk order is a permutation of all elements, and
//!    element i points to element i+1 of that order (the last to the first). This is a single cycle
//!    by construction. A plain random shuffle of "next" pointers instead makes several short cycles
//!    and walks only a fraction of the buffer (X-Mem's bug); `walk_cycle` checks the property.
//! 2. **Prefetchers defeated without measuring the TLB.** Fully random order defeats every
//!    prefetcher but, with 4 KiB pages, also misses the TLB on nearly every load, so "memory
//!    latency" silently includes a page walk. multichase's answer, used by default here: randomise
//!    inside a window of pages (64 × 4 KiB = 256 KiB, within the L1 DTLB's reach on current cores)
//!    and visit the windows in random order. Full-random and fixed-stride orders are options; the
//!    TLB cost is then measured separately, as the difference between 4 KiB and huge-page runs.
//!
//! The default stride is 128 B, not 64 B: the adjacent-line (buddy) prefetcher fetches the other
//! half of a 128 B-aligned pair, which a 64 B chain would later hit and count as a fast load.
//!
//! 3. **No regular offset inside the stride.** Each element sits at a pseudo-random 8-byte slot of
//!    its stride block, the slot chosen from a 64-entry table indexed by the element's number (the
//!    "mixer" of multichase's `permutation.c`, whose figures people trust). With every element at
//!    offset 0 of a 128 B block, every load touches the even line of a 128 B pair at the same
//!    line offset: a pattern regular enough for the L2 prefetchers of recent cores to act on. On
//!    the project's Zen 4 guest that read 149–177 ns at 128 B where multichase read 130–132 ns
//!    (1 GiB, 256 KiB windows); with the mixer the two agree.

use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::Rng as _;
use rand_xoshiro::rand_core::SeedableRng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Order in which a chain visits its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Pattern {
    /// Random order inside windows of `window_bytes`, windows in random order (multichase).
    Window { window_bytes: usize },
    /// Uniformly random order over the whole buffer.
    Random,
    /// Increasing addresses, one stride apart (lmbench `lat_mem_rd`): prefetchers win here.
    Stride,
}

/// The order of element indices a chain visits.
pub fn visit_order(elements: usize, stride: usize, pattern: Pattern, seed: u64) -> Vec<usize> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..elements).collect();
    match pattern {
        Pattern::Stride => {}
        Pattern::Random => order.shuffle(&mut rng),
        Pattern::Window { window_bytes } => {
            let per_window = (window_bytes / stride).max(1);
            let mut windows: Vec<&mut [usize]> = order.chunks_mut(per_window).collect();
            for w in windows.iter_mut() {
                w.shuffle(&mut rng);
            }
            windows.shuffle(&mut rng);
            order = windows
                .into_iter()
                .flat_map(|w| w.iter().copied())
                .collect();
        }
    }
    order
}

/// Where each element sits inside its stride block: a table of 64 slot offsets (multiples of a
/// pointer's size below the stride), indexed by element number modulo 64.
#[derive(Debug, Clone)]
pub struct Mixer {
    offsets: [usize; 64],
}

impl Mixer {
    /// Pseudo-random slots for `stride`, from `seed` (same seed, same slots).
    pub fn new(stride: usize, seed: u64) -> Self {
        const P: usize = std::mem::size_of::<usize>();
        let slots = (stride / P).max(1) as u64;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x006d_6978_6572);
        let mut offsets = [0usize; 64];
        for o in offsets.iter_mut() {
            *o = (rng.next_u64() % slots) as usize * P;
        }
        Mixer { offsets }
    }

    /// Every element at offset 0 of its block (lmbench's layout).
    pub fn none() -> Self {
        Mixer { offsets: [0; 64] }
    }

    /// Byte offset of element `e` in a buffer of `stride`-byte blocks.
    pub fn at(&self, e: usize, stride: usize) -> usize {
        e * stride + self.offsets[e % 64]
    }
}

/// Writes `k` chains into `buf`: the visit order is cut into `k` equal segments (the last takes
/// the remainder) and each segment is linked into its own cycle, each element at the slot of its
/// block that `mixer` gives. Returns the byte offset of each chain's first element. Pointers are
/// absolute addresses, so the buffer must not move afterwards.
///
/// Panics if the buffer cannot hold `order.len()` elements at `stride`, if the stride is smaller
/// than a pointer or misaligned, or if `k` is zero or larger than the element count.
pub fn link(buf: &mut [u8], stride: usize, order: &[usize], k: usize, mixer: &Mixer) -> Vec<usize> {
    const P: usize = std::mem::size_of::<usize>();
    assert!(
        stride >= P && stride.is_multiple_of(P),
        "stride must be a multiple of {P}"
    );
    assert!(k >= 1 && k <= order.len(), "need 1 ≤ k ≤ elements");
    assert!(
        order.len() * stride <= buf.len(),
        "buffer too small for the chain"
    );
    assert_eq!(
        buf.as_ptr() as usize % P,
        0,
        "buffer must be pointer-aligned"
    );
    let base = buf.as_ptr() as usize;
    let seg = order.len() / k;
    let mut starts = Vec::with_capacity(k);
    for c in 0..k {
        let lo = c * seg;
        let hi = if c + 1 == k { order.len() } else { lo + seg };
        let part = &order[lo..hi];
        for (i, &e) in part.iter().enumerate() {
            let next = part[(i + 1) % part.len()];
            let at = mixer.at(e, stride);
            buf[at..at + P].copy_from_slice(&(base + mixer.at(next, stride)).to_ne_bytes());
        }
        starts.push(mixer.at(part[0], stride));
    }
    starts
}

/// Follows the chain that starts at byte offset `start` until it returns there; returns the number
/// of steps, or `None` if a pointer leaves the buffer or the walk exceeds `limit` steps.
pub fn walk_cycle(buf: &[u8], start: usize, limit: usize) -> Option<usize> {
    const P: usize = std::mem::size_of::<usize>();
    let base = buf.as_ptr() as usize;
    let mut at = start;
    for steps in 1..=limit {
        let next = usize::from_ne_bytes(buf.get(at..at + P)?.try_into().ok()?);
        let off = next.checked_sub(base)?;
        if off + P > buf.len() {
            return None;
        }
        if off == start {
            return Some(steps);
        }
        at = off;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(elements: usize, stride: usize, pattern: Pattern, k: usize, seed: u64) {
        // malloc returns 16-byte aligned blocks; `link` asserts pointer alignment anyway.
        let mut store = vec![0u8; elements * stride];
        let buf = store.as_mut_slice();
        let order = visit_order(elements, stride, pattern, seed);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..elements).collect::<Vec<_>>(),
            "order is a permutation"
        );
        let starts = link(buf, stride, &order, k, &Mixer::new(stride, seed));
        let lens: Vec<usize> = starts
            .iter()
            .map(|&s| walk_cycle(buf, s, elements + 1).expect("chain closes"))
            .collect();
        assert_eq!(
            lens.iter().sum::<usize>(),
            elements,
            "chains cover every element once"
        );
        let seg = elements / k;
        for (i, l) in lens.iter().enumerate() {
            let want = if i + 1 == k {
                elements - seg * (k - 1)
            } else {
                seg
            };
            assert_eq!(*l, want);
        }
    }

    #[test]
    fn window_order_stays_inside_windows() {
        let stride = 128;
        let window = 4096;
        let order = visit_order(
            1000,
            stride,
            Pattern::Window {
                window_bytes: window,
            },
            7,
        );
        let per = window / stride;
        // Each window's elements are visited together: the window index changes exactly
        // (windows - 1) times along the order.
        let windows = 1000usize.div_ceil(per);
        let changes = order
            .windows(2)
            .filter(|p| p[0] / per != p[1] / per)
            .count();
        assert_eq!(changes, windows - 1);
        // And the windows are not visited in address order (seeded, so this is deterministic).
        let firsts: Vec<usize> = order.chunks(per).map(|c| c[0] / per).collect();
        assert!(firsts.windows(2).any(|p| p[1] < p[0]));
    }

    #[test]
    fn mixer_spreads_elements_over_the_block_and_stays_inside_it() {
        let m = Mixer::new(128, 1);
        let offs: std::collections::BTreeSet<usize> = (0..64).map(|e| m.at(e, 128) % 128).collect();
        // 64 draws from 16 slots hit both 64 B lines of the block and several slots.
        assert!(offs.iter().any(|&o| o < 64) && offs.iter().any(|&o| o >= 64));
        assert!(offs.len() > 4);
        assert!(offs.iter().all(|&o| o % 8 == 0 && o + 8 <= 128));
        assert_eq!(Mixer::none().at(5, 128), 640);
        assert_eq!(Mixer::new(128, 1).at(70, 128), m.at(70, 128));
    }

    #[test]
    fn stride_order_is_sequential() {
        assert_eq!(visit_order(5, 64, Pattern::Stride, 1), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn single_element_chain_points_to_itself() {
        check(1, 64, Pattern::Random, 1, 3);
    }

    proptest! {
        #[test]
        fn chains_are_single_cycles_over_every_element(
            elements in 1usize..3000,
            stride_lines in 1usize..4,
            pattern in prop_oneof![
                Just(Pattern::Random),
                Just(Pattern::Stride),
                (1usize..64).prop_map(|p| Pattern::Window { window_bytes: p * 4096 }),
            ],
            k in 1usize..11,
            seed in any::<u64>(),
        ) {
            let k = k.min(elements);
            check(elements, stride_lines * 64, pattern, k, seed);
        }
    }
}
