//! Where memory begins for a core that streams.
//!
//! A latency curve can sit on its memory plateau while streaming at the same size is still
//! served partly from a cache: on one Sapphire Rapids-class KVM guest a pointer chase took
//! ~110 ns from 27 MiB to 1 GiB, yet one core read 128 MiB at 28 GB/s and 512 MiB at 17 GB/s
//! (the prefetched lines of a stream stay in a cache the chase's lines do not). So a size is
//! memory for the bandwidth suites only when it is twice a size over which one core streaming
//! reads at most [`STREAM_TOLERANCE`] faster than over a reference past every cache the OS
//! reports (the margin: a team draws more from a partly cached set than one core). The rule
//! lives here; `crate::measure::machine::streaming` measures.
//!
//! **Rounded up, so that noise cannot flip it.** Whether the smallest size tried settles is a
//! threshold on a rate that other tenants move by several percent: on one guest 256 MiB read
//! 4% above the reference in one process and 8% in the next, so two runs of one command chose
//! 512 MiB and 1 GiB. A settled size within a factor of four of the reference (twice it within
//! a factor of two) therefore counts as the reference itself: the size moves only where the
//! curve settles far below the reference, where a few percent cannot move the decision across
//! a doubling and back.

use memsight_core::units::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much faster than the reference a size may stream and still count as memory.
pub const STREAM_TOLERANCE: f64 = 0.05;

/// One core's read rate at doubling sizes against a reference size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamCheck {
    /// Where a team's arrays stream from memory, bytes: twice the settled size, since several
    /// cores draw more from a partly cached working set than one shows (two threads of 128 MiB
    /// read 16% faster than of 960 MiB where one core reading 256 MiB was within 5% of the
    /// reference); the reference itself where that is within a factor of two of it
    /// ([`stream_start`]).
    pub from_bytes: u64,
    /// The smallest size tried that read within the tolerance of the reference, bytes.
    #[serde(default)]
    pub settled_bytes: u64,
    /// Its read rate, GB/s (the best of its passes: disturbances only slow a pass).
    pub gbs: f64,
    /// The reference size, bytes, and its read rate, GB/s.
    pub reference_bytes: u64,
    pub reference_gbs: f64,
    /// The largest size tried that read faster than the tolerance allows (partly cached), and
    /// its rate; 0 when the first size tried was already memory.
    pub cached_bytes: u64,
    pub cached_gbs: f64,
    /// A smaller size that read slower than `cached_bytes` beyond the tolerance, and its rate:
    /// a smaller set reading slower is not a cache, so the readings moved with the machine and
    /// the cached size rests on that movement ([`Self::coherent`]). Absent before schema 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smaller_slower: Option<(u64, f64)>,
}

impl StreamCheck {
    /// Each of `threads` threads' share of [`Self::from_bytes`], in whole 256 B kernel steps.
    pub fn share(&self, threads: usize) -> u64 {
        self.from_bytes
            .div_ceil(threads.max(1) as u64)
            .next_multiple_of(256)
    }

    /// Whether its readings can be read as a cache at all: no smaller size read slower than the
    /// one it calls partly cached.
    pub fn coherent(&self) -> bool {
        self.smaller_slower.is_none()
    }

    /// One sentence for methods and findings.
    pub fn describe(&self) -> String {
        // The reference itself settled: no smaller size read within the tolerance of it.
        let head = if self.settled_bytes >= self.reference_bytes {
            format!(
                "one core streaming reads {} (past every cache the OS reports) at {:.1} GB/s and no smaller size tried within {:.0}% of that, so teams stream from memory from {} on",
                format_bytes(self.reference_bytes),
                self.reference_gbs,
                100.0 * STREAM_TOLERANCE,
                format_bytes(self.from_bytes)
            )
        } else {
            // Computed from the two rates printed: a settled size may read slower than the
            // reference (the rule is one-sided), and then it is not "within" anything.
            let relation =
                memsight_core::finding::relation(self.gbs, self.reference_gbs, STREAM_TOLERANCE);
            let why = if self.gbs < self.reference_gbs * (1.0 - STREAM_TOLERANCE) {
                " (slower than memory itself: the machine slowed that reading, and a size no faster than memory is not cached)"
            } else {
                ""
            };
            format!(
                "one core streaming reads {} at {:.1} GB/s, {relation} the {:.1} GB/s it reads over {} (past every cache the OS reports){why}, so teams stream from memory from {} on",
                format_bytes(self.settled_bytes),
                self.gbs,
                self.reference_gbs,
                format_bytes(self.reference_bytes),
                format_bytes(self.from_bytes)
            )
        };
        if self.cached_bytes == 0 {
            head
        } else if let Some((bytes, gbs)) = self.smaller_slower {
            format!(
                "{head}; over {} it read {:.1} GB/s, but the smaller {} read {gbs:.1} GB/s: a smaller set reading slower is not a cache, so the rates moved with the machine between readings and the size from which teams stream from memory is taken conservatively, unconfirmed",
                format_bytes(self.cached_bytes),
                self.cached_gbs,
                format_bytes(bytes)
            )
        } else {
            format!(
                "{head}; over {} it read {:.1} GB/s, so a working set that small is still partly served from a cache",
                format_bytes(self.cached_bytes),
                self.cached_gbs
            )
        }
    }
}

/// Working set per thread of a bandwidth cell on `threads` CPUs when none was given (`numa`,
/// `tiers`): 128 MiB, and the threads together at least the streaming check's size.
pub fn cell_bytes(check: Option<StreamCheck>, threads: usize) -> u64 {
    check
        .map_or(0, |s| s.share(threads))
        .max(128 * memsight_core::units::MIB)
}

/// The check from the rates of the sizes tried (ascending) and the reference's: the first size
/// within the tolerance, else the reference itself.
pub fn stream_start(tried: &[(u64, f64)], reference: (u64, f64)) -> StreamCheck {
    let (reference_bytes, reference_gbs) = reference;
    let limit = reference_gbs * (1.0 + STREAM_TOLERANCE);
    let first = tried.iter().position(|&(_, g)| g <= limit);
    let (settled_bytes, gbs) = first.map_or(reference, |i| tried[i]);
    let cached = tried[..first.unwrap_or(tried.len())]
        .iter()
        .rfind(|&&(_, g)| g > limit);
    // A partly cached size reads faster than every larger one: a smaller size that read
    // slower (beyond the tolerance) says the machine moved, not a cache.
    let smaller_slower = cached.and_then(|&(bytes, gbs)| {
        tried
            .iter()
            .filter(|&&(b, g)| b < bytes && g * (1.0 + STREAM_TOLERANCE) < gbs)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .copied()
    });
    StreamCheck {
        from_bytes: rounded_up(settled_bytes, reference_bytes),
        settled_bytes,
        gbs,
        reference_bytes,
        reference_gbs,
        cached_bytes: cached.map_or(0, |c| c.0),
        cached_gbs: cached.map_or(0.0, |c| c.1),
        smaller_slower,
    }
}

/// Twice the settled size, or the reference where that comes within a factor of two of it
/// (the module's "rounded up").
fn rounded_up(settled: u64, reference: u64) -> u64 {
    if 4 * settled >= reference {
        reference
    } else {
        2 * settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    /// The flip this rule removes: the first size read 4% above the reference in one process
    /// and 8% in the next; both runs now stream the same size.
    #[test]
    fn noise_either_side_of_the_tolerance_chooses_one_size() {
        let reference = (1024 * M, 20.0);
        let a = stream_start(&[(256 * M, 20.8)], reference);
        let b = stream_start(&[(256 * M, 21.6), (512 * M, 20.2)], reference);
        assert_eq!(a.settled_bytes, 256 * M);
        assert_eq!(b.settled_bytes, 512 * M);
        assert_eq!((a.from_bytes, b.from_bytes), (1024 * M, 1024 * M));
        // Far below the reference the settled size still decides.
        let c = stream_start(&[(64 * M, 20.1)], (4096 * M, 20.0));
        assert_eq!(c.from_bytes, 128 * M);
    }

    /// The guest of the module comment: 256 MiB still 8% fast, 512 MiB memory.
    #[test]
    fn a_stream_cache_the_chase_does_not_see_is_passed() {
        let c = stream_start(&[(256 * M, 17.8), (512 * M, 16.8)], (1920 * M, 16.5));
        assert_eq!((c.settled_bytes, c.from_bytes), (512 * M, 1920 * M));
        assert_eq!(c.cached_bytes, 256 * M);
        assert!(c.describe().contains("partly served from a cache"));
    }

    /// Zen 4: the first size tried already streams at memory speed.
    #[test]
    fn memory_from_the_first_size() {
        let c = stream_start(&[(256 * M, 20.4)], (1024 * M, 20.1));
        assert_eq!((c.from_bytes, c.cached_bytes), (1024 * M, 0));
        assert!(!c.describe().contains("partly"));
    }

    /// Nothing short of the reference settles: the reference is the working set.
    #[test]
    fn no_size_settles() {
        let c = stream_start(&[(256 * M, 40.0), (512 * M, 30.0)], (1024 * M, 20.0));
        assert_eq!((c.from_bytes, c.cached_bytes), (1024 * M, 512 * M));
        // The sentence never compares the reference with itself.
        let d = c.describe();
        assert!(!d.contains("it reads over 1 GiB"), "{d}");
        assert!(
            d.contains("reads 1 GiB (past every cache the OS reports) at 20.0 GB/s"),
            "{d}"
        );
    }

    /// A slower pass (a disturbance) at a size never counts against a faster one before it:
    /// the first size within the tolerance decides, and what ran faster before it is cached.
    #[test]
    fn the_first_settled_size_decides() {
        let c = stream_start(
            &[(256 * M, 30.0), (512 * M, 16.0), (1024 * M, 25.0)],
            (4096 * M, 16.5),
        );
        assert_eq!((c.settled_bytes, c.cached_bytes), (512 * M, 256 * M));
        assert_eq!(c.from_bytes, 1024 * M);
    }

    /// The two contradictions of one busy guest: a settled size 16% below the reference said
    /// to be "within 5%", and a size 16× the L3 called partly cached while a smaller one read
    /// slower.
    #[test]
    fn its_sentences_agree_with_its_rates() {
        let c = stream_start(&[(256 * M, 20.8)], (2048 * M, 24.8));
        let d = c.describe();
        assert!(d.contains("20.8 GB/s, 16% below the 24.8 GB/s"), "{d}");
        assert!(!d.contains("within 5%"), "{d}");
        let c = stream_start(
            &[(128 * M, 8.1), (256 * M, 8.4), (512 * M, 9.7)],
            (2048 * M, 8.9),
        );
        // 128 MiB settles first, so nothing is called cached here.
        assert_eq!(c.cached_bytes, 0);
        let c = stream_start(&[(256 * M, 9.9), (512 * M, 9.7)], (2048 * M, 8.9));
        assert_eq!(c.cached_bytes, 512 * M);
        assert!(c.coherent(), "a falling curve is a cache");
        let c = stream_start(
            &[(128 * M, 9.4), (256 * M, 9.6), (512 * M, 9.9)],
            (2048 * M, 8.9),
        );
        assert_eq!(c.cached_bytes, 512 * M);
        assert_eq!(c.smaller_slower, Some((128 * M, 9.4)));
        assert!(!c.coherent());
        assert!(c.describe().contains("not a cache"), "{}", c.describe());
    }
}
