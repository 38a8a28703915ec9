//! The dependent-load loops.
//!
//! Each step loads the address of the next element from the current one. The loop is unrolled 16
//! times; its counter and branch run in parallel with the load chain, so at the 4-5 cycle L1
//! latency they add nothing measurable (the L1 plateau reads 4-5 cycles, what vendors document).
//! The final pointer is returned and passed through `black_box` so the loads cannot be removed.
//! The generated loop was checked once with objdump: a run of `mov rax,[rax]` (see README).

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::chain::{Mixer, Pattern, link, visit_order};

/// A set of `k` chains written into a buffer, ready to chase. Borrowing the buffer mutably for
/// `'a` keeps it alive, unmoved and ours while the chains' absolute pointers are in use (the
/// write chase stores through them).
pub struct Chains<'a> {
    base: *mut u8,
    len: usize,
    starts: Vec<*const u8>,
    elements: usize,
    writes: bool,
    /// Bytes read per step (0: the pointer's word only).
    block: usize,
    _buf: std::marker::PhantomData<&'a mut [u8]>,
}

impl<'a> Chains<'a> {
    /// Builds `k` chains over the first `elements × stride` bytes of `buf` (see [`link`]).
    pub fn build(
        buf: &'a mut [u8],
        elements: usize,
        stride: usize,
        pattern: Pattern,
        k: usize,
        seed: u64,
    ) -> Self {
        let order = visit_order(elements, stride, pattern, seed);
        let offsets = link(buf, stride, &order, k, &Mixer::new(stride, seed));
        let base = buf.as_mut_ptr();
        let starts = offsets
            .iter()
            .map(|&o| base.wrapping_add(o).cast_const())
            .collect();
        Chains {
            base,
            len: buf.len(),
            starts,
            elements,
            writes: false,
            block: 0,
            _buf: std::marker::PhantomData,
        }
    }

    /// Makes every step read a whole aligned block of `block` bytes around the pointer (one word
    /// of every 64-byte line of it) before the next pointer can be used: the idle latency of an
    /// access of that size, as Intel's Optane talk compared 64 B and 256 B accesses. The extra
    /// words are set to zero here and added to the next pointer, so the step waits for every
    /// line. One chain only; `block` a power of two from 64 B to the stride, which it divides.
    pub fn with_block(mut self, block: usize) -> Self {
        assert_eq!(self.k(), 1, "the block chase walks one chain");
        assert!(block.is_power_of_two() && (64..=4096).contains(&block));
        assert!(
            (self.base as usize).is_multiple_of(block),
            "buffer aligned to the block"
        );
        let mut p = self.starts[0];
        for _ in 0..self.elements {
            let (base, w) = block_words(p, block);
            for line in (0..block).step_by(64) {
                let word = (base + line + w) as *mut u64;
                assert!(
                    word as usize >= self.base as usize
                        && word as usize + 8 <= self.base as usize + self.len,
                    "the block lies in the buffer (the stride is a multiple of the block)"
                );
                // SAFETY: inside the buffer borrowed mutably for 'a (checked above), aligned,
                // and never the pointer's own word (`block_words` picks another slot).
                unsafe { word.write(0) };
            }
            // SAFETY: `p` is an element of the chain `link` wrote into the buffer.
            p = unsafe { *(p as *const *const u8) };
        }
        self.block = block;
        self
    }

    /// One chain through the given elements only (element `e` at `e × stride`), visited in a
    /// random order: a chase confined to part of a buffer, such as the pages of one physical
    /// address range. One cycle through every element given, as [`Chains::build`].
    pub fn over(buf: &'a mut [u8], stride: usize, mut elements: Vec<usize>, seed: u64) -> Self {
        use rand::seq::SliceRandom;
        use rand_xoshiro::rand_core::SeedableRng;
        assert!(!elements.is_empty(), "a chain needs elements");
        assert!(
            elements.iter().all(|&e| (e + 1) * stride <= buf.len()),
            "every element lies in the buffer"
        );
        elements.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed));
        let offsets = link(buf, stride, &elements, 1, &Mixer::new(stride, seed));
        let base = buf.as_mut_ptr();
        Chains {
            base,
            len: buf.len(),
            starts: vec![base.wrapping_add(offsets[0]).cast_const()],
            elements: elements.len(),
            writes: false,
            block: 0,
            _buf: std::marker::PhantomData,
        }
    }

    /// Makes every step also write the line it visits (multichase's `incr`): the 8-byte word
    /// beside the pointer (same 16-byte pair, so the same line) is incremented before the next
    /// pointer is loaded. The line is then dirty and costs a write-back when evicted, so the
    /// figure is the latency of a read-modify-write of a line, a store-heavy workload's view of
    /// memory. One chain only (the MLP sweep reads); the stride must leave the word free (≥ 16).
    pub fn with_writes(mut self) -> Self {
        assert_eq!(self.k(), 1, "the write chase walks one chain");
        self.writes = true;
        self
    }

    /// Number of chains.
    pub fn k(&self) -> usize {
        self.starts.len()
    }

    /// Elements over all chains.
    pub fn elements(&self) -> usize {
        self.elements
    }

    /// The bytes the chains live in.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: base..base+len is the buffer borrowed mutably for 'a; no write is in flight
        // while `&self` is held.
        unsafe { std::slice::from_raw_parts(self.base, self.len) }
    }

    /// Walks every chain for `rounds` steps each (k × rounds loads). Each chain resumes where the
    /// previous call left it, so successive samples cover different parts of a large chain.
    pub fn run(&mut self, rounds: u64) {
        macro_rules! par {
            ($k:literal) => {{
                let s: [*const u8; $k] = self.starts[..$k].try_into().expect("k chains");
                // SAFETY: every start and every stored pointer was written by `link` and points to
                // a pointer-aligned element inside `self.buf`, which is borrowed for 'a.
                let e = unsafe { chase_parallel::<$k>(s, rounds) };
                self.starts.copy_from_slice(&e);
            }};
        }
        match self.k() {
            1 if self.block > 0 => {
                // SAFETY: as above; `with_block` zeroed the extra word of every line of every
                // element's block, all inside the buffer.
                self.starts[0] = unsafe { chase1_block(self.starts[0], rounds, self.block) };
            }
            1 if self.writes => {
                // SAFETY: as above; the pointers derive from the buffer borrowed mutably for 'a,
                // and each element's partner word lies in the same 16-byte pair of the buffer.
                self.starts[0] = unsafe { chase1_write(self.starts[0].cast_mut(), rounds) };
            }
            1 => {
                // SAFETY: as above, for the single chain.
                self.starts[0] = unsafe { chase1(self.starts[0], rounds) };
            }
            2 => par!(2),
            3 => par!(3),
            4 => par!(4),
            5 => par!(5),
            6 => par!(6),
            7 => par!(7),
            8 => par!(8),
            9 => par!(9),
            10 => par!(10),
            k => panic!("{k} parallel chains: memsight supports 1 to 10"),
        }
        black_box(&self.starts);
    }

    /// Times `rounds` steps of every chain.
    pub fn time(&mut self, rounds: u64) -> Duration {
        let t = Instant::now();
        self.run(rounds);
        t.elapsed()
    }
}

/// One chain: `steps` dependent loads. Returns where it stopped.
///
/// # Safety
/// `p` and every pointer reachable from it must point to readable, pointer-aligned memory holding
/// another such pointer.
#[inline(never)]
pub unsafe fn chase1(mut p: *const u8, steps: u64) -> *const u8 {
    let mut n = steps;
    while n >= 16 {
        // SAFETY: guaranteed by the caller for every pointer on the chain.
        unsafe {
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
            p = *(p as *const *const u8);
        }
        n -= 16;
    }
    while n > 0 {
        // SAFETY: as above.
        p = unsafe { *(p as *const *const u8) };
        n -= 1;
    }
    black_box(p)
}

/// One chain whose every step increments the word beside the pointer (address xor 8) before
/// loading the next pointer: `steps` dependent read-modify-writes. Returns where it stopped.
///
/// # Safety
/// As for [`chase1`], and every element's partner word (address xor 8) is writable and belongs to
/// no other element.
#[inline(never)]
pub unsafe fn chase1_write(mut p: *mut u8, steps: u64) -> *const u8 {
    for _ in 0..steps {
        let w = (p as usize ^ 8) as *mut u64;
        // SAFETY: guaranteed by the caller; volatile keeps one store per step.
        unsafe {
            w.write_volatile(w.read_volatile().wrapping_add(1));
            p = *(p as *const *mut u8);
        }
    }
    black_box(p)
}

/// The aligned block holding `p`, and the offset inside each of its lines of the word a block
/// step adds (never the pointer's own: 8 when the pointer sits at a line's start, else 0).
fn block_words(p: *const u8, block: usize) -> (usize, usize) {
    let a = p as usize;
    (a & !(block - 1), if a & 63 == 0 { 8 } else { 0 })
}

/// One chain whose every step reads one word of every line of the `block`-byte block around
/// the pointer and adds them (all zero) to the next pointer: `steps` dependent block reads.
///
/// # Safety
/// As for [`chase1`], and for every element the extra words (see [`block_words`]) of its block
/// are readable and hold zero.
#[inline(never)]
pub unsafe fn chase1_block(mut p: *const u8, steps: u64, block: usize) -> *const u8 {
    for _ in 0..steps {
        let (base, w) = block_words(p, block);
        let mut acc = 0usize;
        let mut line = 0;
        while line < block {
            // SAFETY: guaranteed by the caller: a zero word of the element's block.
            acc = acc.wrapping_add(unsafe { *((base + line + w) as *const usize) });
            line += 64;
        }
        // SAFETY: guaranteed by the caller for every pointer on the chain.
        p = unsafe { *(p as *const usize) }.wrapping_add(acc) as *const u8;
    }
    black_box(p)
}

/// `K` independent chains walked in lockstep: K loads in flight per round, which shows how many
/// misses the core overlaps (memory-level parallelism, multichase `parallelN`).
///
/// # Safety
/// As for [`chase1`], for every start.
#[inline(never)]
pub unsafe fn chase_parallel<const K: usize>(mut p: [*const u8; K], rounds: u64) -> [*const u8; K] {
    for _ in 0..rounds {
        for q in p.iter_mut() {
            // SAFETY: guaranteed by the caller for every pointer on every chain.
            *q = unsafe { *(*q as *const *const u8) };
        }
    }
    black_box(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_chase_follows_the_chain_and_zeroes_one_word_per_line() {
        let (stride, elements, block) = (512, 1024, 256);
        let layout = std::alloc::Layout::from_size_align(stride * elements, 4096).unwrap();
        // SAFETY: a non-zero size; freed at the end of the test.
        let ptr = unsafe { std::alloc::alloc(layout) };
        // SAFETY: the allocation above, `layout.size()` bytes, page aligned.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, layout.size()) };
        bytes.fill(0xa5);
        let base = bytes.as_ptr() as usize;
        let mut c = Chains::build(bytes, elements, stride, Pattern::Random, 1, 3).with_block(block);
        let start = c.starts[0];
        c.run(elements as u64);
        assert_eq!(
            c.starts[0], start,
            "the zero words kept the chain intact: one lap"
        );
        c.run(3);
        assert_ne!(c.starts[0], start);
        drop(c);
        // SAFETY: as above; the chains are gone.
        let words = unsafe { std::slice::from_raw_parts(ptr.cast::<u64>(), layout.size() / 8) };
        let pointers = words
            .iter()
            .filter(|&&w| (base..base + layout.size()).contains(&(w as usize)))
            .count();
        let zeros = words.iter().filter(|&&w| w == 0).count();
        let junk = words
            .iter()
            .filter(|&&w| w == 0xa5a5_a5a5_a5a5_a5a5)
            .count();
        assert_eq!(pointers, elements);
        assert_eq!(
            zeros,
            elements * block / 64,
            "one word per line of each block"
        );
        assert_eq!(pointers + zeros + junk, words.len(), "nothing else written");
        // SAFETY: allocated above with this layout.
        unsafe { std::alloc::dealloc(ptr, layout) };
    }

    #[test]
    fn a_chain_over_some_elements_visits_exactly_them() {
        let (stride, elements) = (128, 4096);
        let mut store = vec![0u64; elements * stride / 8];
        // SAFETY: test-only byte view of u64 storage.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(store.as_mut_ptr().cast::<u8>(), elements * stride)
        };
        let chosen: Vec<usize> = (0..elements).filter(|e| e % 32 < 4).collect();
        let mut c = Chains::over(bytes, stride, chosen.clone(), 5);
        let start = c.starts[0];
        c.run(chosen.len() as u64);
        assert_eq!(c.starts[0], start, "one cycle through the elements given");
        drop(c);
        // Only the chosen elements hold pointers.
        let with_pointer: Vec<usize> = store
            .iter()
            .enumerate()
            .filter(|(_, w)| **w != 0)
            .map(|(i, _)| i * 8 / stride)
            .collect();
        assert_eq!(with_pointer, chosen);
    }

    #[test]
    fn chase_visits_every_element_in_one_lap() {
        // After exactly `elements` steps a single cycle returns to its start; after fewer it must
        // not (every element is distinct), which shows the loop really followed the pointers.
        let stride = 64;
        let elements = 4096;
        let mut store = vec![0u8; elements * stride];
        let mut c = Chains::build(&mut store, elements, stride, Pattern::Random, 1, 9);
        let start = c.starts[0];
        c.run(elements as u64);
        assert_eq!(c.starts[0], start);
        c.run(elements as u64 / 2);
        assert_ne!(c.starts[0], start);
    }

    #[test]
    fn the_write_chase_writes_every_line_once_per_lap() {
        let (stride, elements) = (128, 2048);
        let mut store = vec![0u64; elements * stride / 8];
        // SAFETY: test-only byte view of u64 storage (8-byte aligned, as `link` requires).
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(store.as_mut_ptr().cast::<u8>(), elements * stride)
        };
        let base = bytes.as_ptr() as usize;
        let mut c = Chains::build(bytes, elements, stride, Pattern::Random, 1, 4).with_writes();
        let start = c.starts[0];
        c.run(elements as u64);
        assert_eq!(c.starts[0], start, "one cycle through every element");
        drop(c);
        let words: Vec<u64> = store.clone();
        let mut counted = 0;
        for (i, &w) in words.iter().enumerate() {
            let is_pointer = w as usize >= base && (w as usize) < base + elements * stride;
            if is_pointer {
                assert_eq!(
                    words[i ^ 1],
                    1,
                    "the partner of the pointer at word {i} was written once"
                );
                counted += 1;
            }
        }
        assert_eq!(counted, elements, "every element's line was written");
        let ones = words.iter().filter(|&&w| w == 1).count();
        assert_eq!(ones, elements, "nothing else was written");
    }

    #[test]
    fn parallel_chains_each_close() {
        let stride = 128;
        let elements = 1000;
        for k in 1..=10 {
            let mut store = vec![0u8; elements * stride];
            let mut c = Chains::build(&mut store, elements, stride, Pattern::Random, k, 5);
            let starts = c.starts.clone();
            let seg = elements / k;
            // Chains have equal length except the last; run a multiple of every length.
            let last = elements - seg * (k - 1);
            let lcm = (1..=seg * last)
                .find(|n| n % seg == 0 && n % last == 0)
                .unwrap();
            c.run(lcm as u64);
            assert_eq!(c.starts, starts, "k={k}");
        }
    }
}
