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

/// A set of `k` chains written into a buffer, ready to chase. Borrowing the buffer for `'a` keeps
/// it alive and unmoved while the chains' absolute pointers are in use.
pub struct Chains<'a> {
    buf: &'a [u8],
    starts: Vec<*const u8>,
    elements: usize,
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
        let buf: &'a [u8] = buf;
        let starts = offsets.iter().map(|&o| buf[o..].as_ptr()).collect();
        Chains {
            buf,
            starts,
            elements,
        }
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
        self.buf
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
