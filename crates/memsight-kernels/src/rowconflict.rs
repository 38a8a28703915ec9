//! The row-conflict probe's access pattern (DRAMA, Pessl et al., USENIX Security 2016): load two
//! addresses, flush both from the caches, repeat. Both loads go to DRAM every round; when the two
//! lines sit in different rows of the same bank, the second must wait for the bank to close one
//! row and open the other, and a round takes measurably longer.
//!
//! This is also the access pattern of RowHammer. Callers keep the rounds per address pair far below
//! published RowHammer thresholds (≥ ~4.8 k activations within a 64 ms refresh window): see
//! `MAX_ROUNDS_PER_PAIR` in memsight's row-buffer probe.

/// True where the probe can run (it needs an unprivileged cache-line flush).
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64")
}

/// Runs `rounds` rounds of: load `a`, load `b`, flush both, fence.
///
/// # Safety
/// `a` and `b` must point into live, readable memory (one byte each is read).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub unsafe fn pair_rounds(a: *const u8, b: *const u8, rounds: u64) {
    use std::arch::x86_64::{_mm_clflush, _mm_mfence};
    for _ in 0..rounds {
        // SAFETY: the caller guarantees both pointers are readable; volatile keeps both loads.
        unsafe {
            std::ptr::read_volatile(a);
            std::ptr::read_volatile(b);
            _mm_clflush(a);
            _mm_clflush(b);
            _mm_mfence();
        }
    }
}

/// Runs `rounds` rounds on the bytes at offsets `i` and `j` of `buf` (safe: offsets checked).
pub fn pair_rounds_in(buf: &[u8], i: usize, j: usize, rounds: u64) {
    assert!(
        i < buf.len() && j < buf.len(),
        "probe offsets inside the buffer"
    );
    let p = buf.as_ptr();
    // SAFETY: both offsets were checked to lie inside `buf`, which stays borrowed throughout.
    unsafe { pair_rounds(p.add(i), p.add(j), rounds) }
}

/// Stub where the probe is unsupported: does nothing.
///
/// # Safety
/// Always safe; kept `unsafe` for one signature on every target.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn pair_rounds(_a: *const u8, _b: *const u8, _rounds: u64) {}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn flushed_pairs_are_slower_than_cached_loads() {
        // The probe must really go to memory: a flushed round costs more than two cached loads.
        let buf = vec![1u8; 1 << 20];
        let (a, b) = (buf.as_ptr(), buf[4096..].as_ptr());
        let rounds = 2000;
        let t = std::time::Instant::now();
        // SAFETY: both pointers lie inside `buf`.
        unsafe { pair_rounds(a, b, rounds) };
        let flushed = t.elapsed().as_nanos() as f64 / rounds as f64;
        let t = std::time::Instant::now();
        let mut s = 0u64;
        for _ in 0..rounds {
            // SAFETY: as above.
            s += unsafe { std::ptr::read_volatile(a) as u64 + std::ptr::read_volatile(b) as u64 };
        }
        std::hint::black_box(s);
        let cached = t.elapsed().as_nanos() as f64 / rounds as f64;
        assert!(
            flushed > 5.0 * cached,
            "flushed {flushed} ns vs cached {cached} ns"
        );
    }
}
