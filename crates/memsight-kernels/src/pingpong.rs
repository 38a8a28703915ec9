//! Cache-line transfers between two cores.
//!
//! **Modified line, atomic** ([`pingpong_atomic`]): two threads take turns advancing a counter
//! in one line with a compare-and-swap; the waiting thread's CAS attempts ask for the line in
//! Modified state, so every turn is one request for ownership of a dirty line that sits in the
//! other core's cache: one coherence transaction. Time per turn = that transfer, the figure
//! core-to-core-latency (its CAS bench) and Intel MLC's c2c report.
//!
//! **Modified line, load then store** ([`pingpong`]): the waiting thread spins on a load and then
//! stores, so every turn is a read miss (the line arrives Shared) and then an upgrade to
//! Modified: two coherence transactions, which across dies costs about twice one.
//!
//! **Clean lines**: the measuring core flushes a set of lines, the partner reads them all (they
//! arrive clean, Exclusive, in the partner's cache), then the measuring core walks them as a
//! pointer chain — each load needs the previous one's value — and times the walk. Time ÷ lines is
//! the load-to-use latency of a line that sits clean in another core. A chain of many lines keeps
//! the figure well above the time-stamp counter's granularity (26 ticks ≈ 10 ns in one KVM
//! guest, too coarse to time one load).

use std::sync::atomic::{AtomicU64, Ordering};

/// A cache line of its own (128 B so the adjacent-line prefetcher does not pair it with others).
#[repr(C, align(128))]
pub struct Line {
    pub value: AtomicU64,
    _pad: [u64; 15],
}

impl Default for Line {
    fn default() -> Self {
        Line {
            value: AtomicU64::new(0),
            _pad: [0; 15],
        }
    }
}

/// Runs `rounds` turns of the modified-line ping-pong as `first` (true for one thread, false for
/// its partner). `base` is the round count both threads have already done on this line.
pub fn pingpong(line: &Line, first: bool, base: u64, rounds: u64) {
    let me = u64::from(!first);
    for k in base..base + rounds {
        let want = 2 * k + me;
        while line.value.load(Ordering::Acquire) != want {
            std::hint::spin_loop();
        }
        line.value.store(want + 1, Ordering::Release);
    }
}

/// Runs `rounds` turns of the atomic modified-line ping-pong as `first` (true for one thread,
/// false for its partner): each turn one compare-and-swap from `2k + me` to `2k + me + 1` that
/// succeeds once the partner's turn has made the line hold `2k + me`. No pause between attempts
/// (as core-to-core-latency): each failed attempt is itself the request for the line, and a
/// pause would add its own delay (up to ~140 cycles on Intel cores) to every turn.
pub fn pingpong_atomic(line: &Line, first: bool, base: u64, rounds: u64) {
    let me = u64::from(!first);
    for k in base..base + rounds {
        let want = 2 * k + me;
        while line
            .value
            .compare_exchange(want, want + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {}
    }
}

/// A chain of lines: `lines[i].value` holds the index of the next line, visiting all in the
/// seeded random order `order` and returning to the first.
pub fn chain_lines(n: usize, seed: u64) -> Vec<Line> {
    let lines: Vec<Line> = (0..n).map(|_| Line::default()).collect();
    let order = crate::chain::visit_order(n, 128, crate::chain::Pattern::Random, seed);
    for (i, &e) in order.iter().enumerate() {
        lines[e]
            .value
            .store(order[(i + 1) % n] as u64, Ordering::Relaxed);
    }
    lines
}

/// Follows the chain from line `start` for `steps` loads; returns where it stopped.
pub fn walk_lines(lines: &[Line], start: usize, steps: usize) -> usize {
    let mut at = start;
    for _ in 0..steps {
        at = lines[at].value.load(Ordering::Relaxed) as usize;
    }
    std::hint::black_box(at)
}

/// TSC ticks per ns, measured over `ms` milliseconds; `None` where there is no TSC to time
/// with (not x86_64).
pub fn tsc_ticks_per_ns(ms: u64) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    return Some(tsc::ticks_per_ns(ms));
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = ms;
        None
    }
}

/// Time-stamp counter helpers (x86_64 only).
#[cfg(target_arch = "x86_64")]
pub mod tsc {
    use std::arch::x86_64::{_mm_clflush, _mm_lfence, _mm_mfence, _rdtsc};

    /// Fenced TSC read: earlier instructions complete before, later ones start after.
    #[inline(always)]
    pub fn now() -> u64 {
        // SAFETY: fences and rdtsc have no memory-safety preconditions.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }

    /// Evicts the line holding `p` from every cache.
    pub fn flush(p: &super::AtomicU64) {
        // SAFETY: p is a valid reference; clflush only evicts the line.
        unsafe {
            _mm_clflush((p as *const super::AtomicU64).cast());
            _mm_mfence();
        }
    }

    /// TSC ticks per nanosecond, measured against the monotonic clock over `ms` milliseconds.
    pub fn ticks_per_ns(ms: u64) -> f64 {
        let (t0, c0) = (std::time::Instant::now(), now());
        std::thread::sleep(std::time::Duration::from_millis(ms));
        let (dt, dc) = (t0.elapsed().as_nanos() as f64, (now() - c0) as f64);
        dc / dt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pingpong_alternates_and_ends_at_twice_the_rounds() {
        let line = Line::default();
        std::thread::scope(|s| {
            s.spawn(|| pingpong(&line, true, 0, 1000));
            s.spawn(|| pingpong(&line, false, 0, 1000));
        });
        assert_eq!(line.value.load(Ordering::SeqCst), 2000);
        // And it resumes from where it stopped.
        std::thread::scope(|s| {
            s.spawn(|| pingpong(&line, true, 1000, 10));
            s.spawn(|| pingpong(&line, false, 1000, 10));
        });
        assert_eq!(line.value.load(Ordering::SeqCst), 2020);
    }

    #[test]
    fn the_atomic_pingpong_alternates_and_resumes() {
        let line = Line::default();
        for base in [0, 500] {
            std::thread::scope(|s| {
                s.spawn(|| pingpong_atomic(&line, true, base, 500));
                s.spawn(|| pingpong_atomic(&line, false, base, 500));
            });
            // Every turn advanced the counter by exactly one: 2 × rounds in all.
            assert_eq!(line.value.load(Ordering::SeqCst), 2 * (base + 500));
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn tsc_runs_forward_at_a_plausible_rate() {
        let r = tsc::ticks_per_ns(20);
        assert!(r > 0.1 && r < 10.0, "{r}");
        let a = tsc::now();
        assert!(tsc::now() >= a);
    }

    #[test]
    fn line_chains_are_single_cycles() {
        let lines = chain_lines(64, 3);
        let mut seen = [false; 64];
        let mut at = 0;
        for _ in 0..64 {
            assert!(!seen[at]);
            seen[at] = true;
            at = walk_lines(&lines, at, 1);
        }
        assert_eq!(at, 0);
        assert!(seen.iter().all(|&s| s));
    }
}
