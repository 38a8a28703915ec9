//! The wall clock and what it can resolve.
//!
//! memsight times with `CLOCK_MONOTONIC` (through `std::time::Instant`), never CPU time: memory
//! stalls are wall time. The clock's granularity and the cost of reading it are measured at start,
//! and every timed sample is made long enough to span at least 20 ticks and 1000 clock reads, so
//! neither quantisation nor the reads themselves move a figure by more than a few tenths of a
//! percent (METHODS.md §1).

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the clock can do on this machine.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ClockInfo {
    /// Smallest non-zero step seen between consecutive reads, ns.
    pub granularity_ns: f64,
    /// Mean cost of one read, ns.
    pub read_cost_ns: f64,
    /// Shortest sample memsight accepts, ns (≥ 20 ticks and ≥ 1000 reads).
    pub min_sample_ns: f64,
    pub source: String,
}

/// Measures the clock: 20 000 back-to-back reads.
pub fn calibrate() -> ClockInfo {
    const N: usize = 20_000;
    let mut stamps = Vec::with_capacity(N);
    let t0 = Instant::now();
    for _ in 0..N {
        stamps.push(Instant::now());
    }
    let total = t0.elapsed().as_nanos() as f64;
    let granularity = stamps
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_nanos() as f64)
        .filter(|&d| d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let granularity = if granularity.is_finite() {
        granularity
    } else {
        1000.0
    };
    let read_cost = total / N as f64;
    ClockInfo {
        granularity_ns: granularity,
        read_cost_ns: read_cost,
        min_sample_ns: (20.0 * granularity).max(1000.0 * read_cost),
        source: "clock_gettime(CLOCK_MONOTONIC)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_is_fine_grained_enough() {
        let c = super::calibrate();
        assert!(c.granularity_ns > 0.0 && c.granularity_ns < 1e6, "{c:?}");
        assert!(c.min_sample_ns >= 20.0 * c.granularity_ns);
    }
}
