//! Cache-line transfers between two cores.
//!
//! **Modified line** (ping-pong): two threads take turns writing a counter in one line; each
//! write needs the line in Modified state, so every turn moves a dirty line from the other core's
//! cache. Time per turn = one core-to-core transfer of a modified line plus the waiting core's
//! reaction, the figure core-to-core latency tools report.
//!
//! **Clean line**: the measuring core flushes a data line, the partner reads it (it arrives clean,
//! Exclusive, in the partner's cache), then the measuring core times one load of it with the
//! time-stamp counter fenced on both sides, minus the cost of the same fenced sequence around a load
//! that hits its own L1. That is the latency of fetching a line that sits clean in another core.

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

/// Time-stamp counter helpers for single-access timing (x86_64 only).
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

    /// Cycles of one fenced load of `p`'s line.
    #[inline(always)]
    pub fn time_load(p: &super::AtomicU64) -> u64 {
        let t0 = now();
        std::hint::black_box(p.load(super::Ordering::Relaxed));
        now() - t0
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
    #[cfg(target_arch = "x86_64")]
    fn tsc_runs_forward_at_a_plausible_rate() {
        let r = tsc::ticks_per_ns(20);
        assert!(r > 0.1 && r < 10.0, "{r}");
        let line = Line::default();
        assert!(tsc::time_load(&line.value) < 100_000);
    }
}
