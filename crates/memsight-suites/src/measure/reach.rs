//! Where memory begins for a measuring core, found on its latency curve rather than taken from
//! the cache sizes the OS reports.
//!
//! Hypervisors pass the host's CPUID cache leaves through: a 2-vCPU guest may be told of a
//! 480 MiB L3 of which its core sees 8 MiB. Working sets sized from the claim (4 × 480 MiB)
//! make every run minutes long; on a real server with a 100–500 MiB L3 (Sapphire, Emerald and
//! Granite Rapids, Genoa-X) one core does reach far into that cache, and a working set sized
//! from a rule of thumb would sit inside it. So the curve decides:
//!
//! - **The memory plateau.** Walking the latency curve from its largest size down, the trailing
//!   sizes whose latency stays within ±12% of their running median (one or two spikes passed
//!   over, [`grow`]) form the last plateau. Its latency is the median of its last
//!   [`HOLD_OCTAVES`] octaves, where latency has stopped rising, and it starts where every later
//!   size lies within [`SETTLED`] below that. It is memory when it has held for
//!   [`HOLD_OCTAVES`] octaves at a latency no cache answers at ([`MEMORY_FLOOR_NS`]), after a
//!   rise (some smaller size ran at most half its latency) or with nothing faster before it (a
//!   ladder that started past the caches): the check [`MemoryCheck::HeldPlateau`]. Where the
//!   curve rose and runs past twice every cache the OS reports, its last plateau is memory
//!   whatever its latency ([`MemoryCheck::PastReportedCaches`]). A ladder ends only once the
//!   plateau has held and its last octave lies within [`SETTLED`] of the one before ([`settled`]).
//! - **The reach.** The largest size that ran at most half the memory latency is what the core
//!   keeps in its caches; suites size their memory working sets from it ([`MemoryReach`]).
//!
//! The latency ladder ends once the memory plateau has held (unless `--max-size` forces a size);
//! the other suites take the reach from the [`crate::measure::machine::Machine`] they are given: a
//! ladder's that ran earlier in the same run, or a short probe's (`crate::measure::machine::probe`).
//! This module holds the rules; it measures nothing and keeps nothing.

pub mod stream;

use memsight_core::env::Environment;
use memsight_core::units::{MIB, format_bytes};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Slower than any cache of the cores memsight knows answers a dependent load (L3 hits take
/// 10–50 ns from Zen to Granite Rapids and Neoverse V2; DRAM, HBM and CXL 75 ns and more), so a
/// plateau at or above it is memory, never a cache.
pub const MEMORY_FLOOR_NS: f64 = 55.0;
/// Octaves a memory plateau must hold before the curve may end there.
pub const HOLD_OCTAVES: u32 = 2;
/// The band around a plateau's running median (as the level detection uses).
const TOLERANCE: f64 = 0.12;
/// Smallest memory working set the suites use, whatever the reach: 256 MiB also spreads a chase
/// over enough DRAM banks and pages that one row or one page does not dominate.
pub const MIN_WORKING_SET: u64 = 256 * MIB;

/// Which evidence says the last plateau is memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryCheck {
    /// It held one latency for two octaves, at or above the memory floor (after a rise, or from
    /// a smallest size that was already that slow).
    HeldPlateau,
    /// It lies past twice the largest cache the OS reports.
    PastReportedCaches,
}

impl MemoryCheck {
    /// What was checked, for methods and findings.
    pub fn describe(self) -> String {
        match self {
            MemoryCheck::HeldPlateau => format!(
                "latency held within ±{:.0}% for {HOLD_OCTAVES} octaves at ≥ {MEMORY_FLOOR_NS:.0} ns (slower than any cache), its figure the median of those octaves, where it had stopped rising",
                100.0 * TOLERANCE
            ),
            MemoryCheck::PastReportedCaches => {
                "the sizes lie past twice the largest cache the OS reports".to_string()
            }
        }
    }
}

/// The start of the memory plateau on a latency curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryStart {
    /// First size on the memory plateau.
    pub from_bytes: u64,
    /// Median latency over the plateau, ns; not a number (`null` in JSON) where the sizes come
    /// from the reported caches and nothing was measured.
    #[serde(with = "crate::measure::nan_as_null")]
    #[schemars(with = "Option<f64>")]
    pub ns: f64,
    pub check: MemoryCheck,
    /// Largest size that ran at most half the memory latency: what the core keeps in caches.
    pub cache_bytes: u64,
}

/// Consecutive points passed over inside a run when the point after them comes back into its
/// band: a sample or two a preempted chase inflated (or a lucky lap deflated) does not end a
/// plateau, while a real step between levels never comes back.
pub const MAX_SPIKE: usize = 2;
/// A memory plateau has settled where its latency lies within this share of the median of its
/// last [`HOLD_OCTAVES`] octaves: sizes before that still hit a cache on part of every lap.
pub const SETTLED: f64 = 0.07;

/// A run of values that stay within ±`tol` of the running median of those taken, walked from
/// index 0: `span` values long, `members` the indices that entered the median (the span less
/// the spikes passed over, [`MAX_SPIKE`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub span: usize,
    pub members: Vec<usize>,
}

/// Walks indices `0..n`, taking each that `accept` (given those taken so far) admits; one or
/// two refused in a row ([`MAX_SPIKE`]) are passed over when an index after them is admitted,
/// and the walk ends at a refusal no admitted index follows that closely.
fn walk(n: usize, accept: impl Fn(&[usize], usize) -> bool) -> Run {
    let mut members = Vec::new();
    let mut end = 0;
    while end < n {
        if accept(&members, end) {
            members.push(end);
            end += 1;
            continue;
        }
        match (1..=MAX_SPIKE).find(|k| end + k < n && accept(&members, end + k)) {
            Some(k) => {
                members.push(end + k);
                end += k + 1;
            }
            None => break,
        }
    }
    Run { span: end, members }
}

/// Grows a [`Run`] from the first of `values`.
pub fn grow(values: &[f64], tol: f64) -> Run {
    walk(values.len(), |taken, i| {
        if taken.is_empty() {
            return true;
        }
        let r = memsight_core::stats::median(&taken.iter().map(|&j| values[j]).collect::<Vec<_>>());
        values[i] <= r * (1.0 + tol) && values[i] >= r / (1.0 + tol)
    })
}

/// Finds the memory plateau on a curve of (size, ns) sorted by size; `largest_reported` is the
/// largest cache the OS reports (per instance), 0 when none.
///
/// The trailing run ([`grow`] from the largest size down) is the plateau's extent; its latency
/// is the median of its last [`HOLD_OCTAVES`] octaves, where latency has stopped rising, and it
/// starts at the first size from which every later one lies within [`SETTLED`] below that
/// (earlier sizes still hit a cache on part of every lap). A curve that rose to it (some
/// smaller size ran at most half its latency) or that starts beyond the caches (its smallest
/// size already at [`MEMORY_FLOOR_NS`] or slower) is memory when the plateau held for
/// [`HOLD_OCTAVES`] octaves at or above that floor; a curve past twice every reported cache is
/// memory whatever its latency.
pub fn memory_start(curve: &[(u64, f64)], largest_reported: u64) -> Option<MemoryStart> {
    let (last_size, _) = *curve.last()?;
    let reversed: Vec<f64> = curve.iter().rev().map(|&(_, x)| x).collect();
    let run = grow(&reversed, TOLERANCE);
    let first = curve.len() - run.span;
    let members: Vec<usize> = run.members.iter().map(|&i| curve.len() - 1 - i).collect();
    let tail: Vec<f64> = members
        .iter()
        .filter(|&&i| curve[i].0 >= last_size >> HOLD_OCTAVES)
        .map(|&i| curve[i].1)
        .collect();
    let ns = memsight_core::stats::median(&tail);
    // Where it settled: walking down from the end, the last member no more than SETTLED below,
    // one or two low members passed over when a member after them is back (a lap the host
    // sped is no cache).
    let steady = walk(members.len(), |_, k| {
        curve[members[k]].1 >= ns / (1.0 + SETTLED)
    });
    let from = steady
        .members
        .last()
        .map_or(curve.len() - 1, |&k| members[k]);
    let rose = curve[..first].iter().any(|&(_, x)| x <= ns / 2.0);
    // A ladder that starts past the caches: everything before the plateau is as slow as memory
    // too (the tail of the last-level cache at most), so nothing it measured was a cache.
    let past_caches =
        ns >= MEMORY_FLOOR_NS && curve[..first].iter().all(|&(_, x)| x >= MEMORY_FLOOR_NS);
    if !rose && !past_caches {
        return None;
    }
    let held = last_size >= curve[from].0 << HOLD_OCTAVES;
    let check = if held && ns >= MEMORY_FLOOR_NS {
        MemoryCheck::HeldPlateau
    } else if rose
        && largest_reported > 0
        && last_size >= 2 * largest_reported
        && members.len() >= 2
    {
        MemoryCheck::PastReportedCaches
    } else {
        return None;
    };
    let cache_bytes = curve[..first]
        .iter()
        .filter(|&&(_, x)| x <= ns / 2.0)
        .map(|&(s, _)| s)
        .max()
        .unwrap_or(0);
    Some(MemoryStart {
        from_bytes: curve[from].0,
        ns,
        check,
        cache_bytes,
    })
}

/// Whether the curve's latency has stopped rising at its end: the median of its last octave lies
/// within [`SETTLED`] of the median of the octave before (a ladder that ends while latency still
/// climbs, or on a point the host slowed, would call a latency on the way the memory's).
pub fn settled(curve: &[(u64, f64)]) -> bool {
    let Some(&(last, _)) = curve.last() else {
        return false;
    };
    let octave = |lo: u64, hi: u64| -> Vec<f64> {
        curve
            .iter()
            .filter(|&&(s, _)| s > lo && s <= hi)
            .map(|&(_, x)| x)
            .collect()
    };
    let (end, before) = (octave(last / 2, last), octave(last / 4, last / 2));
    if end.is_empty() || before.is_empty() {
        return false;
    }
    let ratio = memsight_core::stats::median(&end) / memsight_core::stats::median(&before);
    (ratio - 1.0).abs() <= SETTLED
}

/// Where the curve came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReachSource {
    /// The latency ladder measured earlier in this run.
    Ladder,
    /// A short probe (two sizes per octave, few samples).
    Probe,
    /// The cache sizes the OS reports, on a recorded machine where nothing can be measured.
    Reported,
    /// The cache sizes the OS reports, because the probe's curve did not settle on a memory
    /// plateau (a noisy machine).
    Unsettled,
}

/// What the suites size memory working sets from: one core's reach into the caches and where
/// memory begins, with the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryReach {
    pub cpu: usize,
    pub memory: MemoryStart,
    pub source: ReachSource,
    /// Where one core streaming reaches memory ([`stream`]), where it was checked (the
    /// bandwidth suites' default sizes; a latency ladder alone does not check it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<stream::StreamCheck>,
}

impl MemoryReach {
    /// A working set that lives in memory: twice the start of the memory plateau, four times
    /// the core's reach, at least [`MIN_WORKING_SET`].
    pub fn working_set(&self) -> u64 {
        (2 * self.memory.from_bytes)
            .max(4 * self.memory.cache_bytes)
            .max(MIN_WORKING_SET)
    }

    /// The cache a team of `threads` cores can hold between them: each core's reach, but no
    /// more than every last-level cache the OS reports together.
    pub fn team_cache(&self, threads: usize, env: &Environment) -> u64 {
        let reported = env.llc_total_bytes();
        (threads as u64 * self.memory.cache_bytes).min(reported.max(self.memory.cache_bytes))
    }

    /// Bytes a team's streamed arrays must reach together to be in memory: four times what
    /// the team holds in caches by its latency curves, and no less than where one core
    /// streaming reaches memory, where that was checked.
    pub fn team_stream_bytes(&self, threads: usize, env: &Environment) -> u64 {
        (4 * self.team_cache(threads, env)).max(self.stream.map_or(0, |s| s.from_bytes))
    }

    /// Whether working sets of `bytes` per thread in arrays of `array_bytes`, `threads` of
    /// them, are memory by both checks: each on the latency curve's memory plateau, and every
    /// array of the team together past the streaming check (a copy with non-temporal stores
    /// keeps its sources in a cache its destinations do not use).
    pub fn holds_in_memory(&self, bytes: u64, array_bytes: u64, threads: usize) -> bool {
        bytes >= self.memory.from_bytes
            && self
                .stream
                .is_none_or(|s| array_bytes * threads.max(1) as u64 >= s.from_bytes)
    }

    /// One sentence for methods: which size was chosen and why it is memory.
    pub fn describe(&self, chosen: u64) -> String {
        let measured = |whose: &str| {
            let kept = if self.memory.cache_bytes > 0 {
                format!(
                    "keeps about {} in caches",
                    format_bytes(self.memory.cache_bytes)
                )
            } else {
                "measured no size a cache served (it started past the caches)".to_string()
            };
            format!(
                "{} is in memory: CPU {}'s latency curve ({whose}) reaches its memory plateau ({:.0} ns) at {} and {kept}; {}",
                format_bytes(chosen),
                self.cpu,
                self.memory.ns,
                format_bytes(self.memory.from_bytes),
                self.memory.check.describe()
            )
        };
        let reported = |why: &str| {
            format!(
                "{} is taken to be in memory from the cache sizes the OS reports ({why}): it is at least twice the largest, {}",
                format_bytes(chosen),
                format_bytes(self.memory.cache_bytes)
            )
        };
        let head = match self.source {
            ReachSource::Ladder => measured("the latency ladder of this run"),
            ReachSource::Probe => measured("a short probe"),
            ReachSource::Reported => reported("a recorded machine: nothing measured"),
            ReachSource::Unsettled => reported(
                "a short latency probe, tried three times, did not settle on a memory plateau",
            ),
        };
        match self.stream {
            Some(s) => format!("{head}; {}", s.describe()),
            None => head,
        }
    }
}

/// The largest cache the OS reports per instance, bytes (0 when none).
pub fn largest_reported(env: &Environment) -> u64 {
    (1..=5)
        .filter_map(|l| env.topology.cache(l).map(|c| c.size_bytes))
        .max()
        .unwrap_or(0)
}

/// The largest size a default ladder may grow to: four times the largest reported cache, at
/// least 64 MiB, and no more than a quarter of what this process may allocate (so that the
/// ladder and its huge-page twin fit); the ladder ends earlier once memory has held.
pub fn ladder_cap(env: &Environment) -> u64 {
    let cap = (4 * largest_reported(env)).max(64 * MIB);
    match env.memory.usable_bytes() {
        Some(u) => cap.min((u / 4).max(64 * MIB)),
        None => cap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::sizes::log_sizes;

    const K: u64 = 1024;
    const M: u64 = 1024 * 1024;

    /// A staircase: (plateau end, ns) steps, sampled at four points per octave from 4 KiB.
    fn staircase(steps: &[(u64, f64)], top: u64) -> Vec<(u64, f64)> {
        log_sizes(4 * K, top, 4, 128)
            .into_iter()
            .map(|s| {
                let ns = steps
                    .iter()
                    .find(|&&(end, _)| s <= end)
                    .map_or(steps.last().unwrap().1, |&(_, ns)| ns);
                (s, ns)
            })
            .collect()
    }

    /// The first prefix of a curve at which a ladder may stop, and the memory found there.
    fn stop_point(curve: &[(u64, f64)]) -> Option<(u64, MemoryStart)> {
        (1..=curve.len()).find_map(|n| {
            memory_start(&curve[..n], 0)
                .filter(|m| m.check == MemoryCheck::HeldPlateau)
                .map(|m| (curve[n - 1].0, m))
        })
    }

    /// A guest told of a 480 MiB L3 whose core sees 8 MiB: the ladder ends two octaves past the
    /// rise, far below the 1.9 GiB the claim would have asked for.
    #[test]
    fn a_480_mib_claim_with_an_8_mib_plateau_ends_near_32_mib() {
        let c = staircase(
            &[
                (48 * K, 1.2),
                (2 * M, 4.5),
                (8 * M, 14.0),
                (u64::MAX, 112.0),
            ],
            4 * 480 * M,
        );
        let (end, m) = stop_point(&c).expect("memory found");
        assert!((32 * M..=64 * M).contains(&end), "ended at {end}");
        assert_eq!(m.cache_bytes, 8 * M);
        assert!(m.from_bytes > 8 * M && m.from_bytes <= 12 * M);
        let r = MemoryReach {
            cpu: 0,
            memory: m,
            source: ReachSource::Probe,
            stream: None,
        };
        assert_eq!(r.working_set(), MIN_WORKING_SET);
    }

    /// One Sapphire Rapids socket: a 105 MiB L3 at ~35 ns. The L3 plateau holds for several
    /// octaves but lies below the memory floor, so the ladder goes on to its cap (4 × 105 MiB),
    /// where the last plateau is memory by the reported size; given more room, by its own.
    #[test]
    fn a_real_105_mib_l3_is_not_taken_for_memory() {
        let steps = [
            (48 * K, 1.2),
            (2 * M, 4.8),
            (64 * M, 35.0),
            (128 * M, 70.0),
            (u64::MAX, 115.0),
        ];
        let c = staircase(&steps, 4 * 105 * M);
        assert!(stop_point(&c).is_none());
        let m = memory_start(&c, 105 * M).expect("past the claim");
        assert_eq!(m.check, MemoryCheck::PastReportedCaches);
        assert_eq!(m.cache_bytes, 64 * M);
        let r = MemoryReach {
            cpu: 0,
            memory: m,
            source: ReachSource::Probe,
            stream: None,
        };
        assert!(r.working_set() >= 4 * 64 * M, "{}", r.working_set());
        let (end, m) = stop_point(&staircase(&steps, 4096 * M)).expect("memory found");
        assert!(end >= 512 * M, "ended at {end}");
        assert_eq!(m.check, MemoryCheck::HeldPlateau);
    }

    /// A 1 GiB cache (Genoa-X-like, one core reaching all of it): memory from 2 GiB.
    #[test]
    fn a_1_gib_cache_is_passed() {
        let c = staircase(
            &[(32 * K, 1.0), (M, 3.5), (1024 * M, 45.0), (u64::MAX, 118.0)],
            8 * 1024 * M,
        );
        let (end, m) = stop_point(&c).expect("memory found");
        assert!(end >= 4 * 1024 * M, "ended at {end}");
        assert_eq!(m.cache_bytes, 1024 * M);
        assert!(
            MemoryReach {
                cpu: 0,
                memory: m,
                source: ReachSource::Probe,
                stream: None,
            }
            .working_set()
                >= 4 * 1024 * M
        );
    }

    /// Zen 4 with its 32 MiB L3 fully reachable: memory from 64 MiB, ladder to ~256 MiB.
    #[test]
    fn a_zen4_32_mib_l3() {
        let c = staircase(
            &[(32 * K, 1.0), (M, 3.8), (32 * M, 13.0), (u64::MAX, 110.0)],
            128 * M,
        );
        // The default cap (4 × 32 MiB) comes before two octaves past 32 MiB: the claim decides.
        assert!(stop_point(&c).is_none());
        let m = memory_start(&c, 32 * M).expect("past the claim");
        assert_eq!(m.check, MemoryCheck::PastReportedCaches);
        assert_eq!(m.cache_bytes, 32 * M);
    }

    #[test]
    fn a_cache_plateau_or_a_flat_curve_is_not_memory() {
        // Still on the L3 plateau: no memory yet.
        let c = staircase(&[(32 * K, 1.0), (M, 3.8), (u64::MAX, 13.0)], 64 * M);
        assert!(memory_start(&c, 0).is_none());
        // Flat from the start at a cache's latency: nothing to call memory.
        let flat: Vec<(u64, f64)> = (0..12).map(|i| (MIB << i, 13.0)).collect();
        assert!(memory_start(&flat, 0).is_none());
        // Flat from the start at a latency no cache has (a ladder from 4 MiB): memory.
        let flat: Vec<(u64, f64)> = (0..12).map(|i| ((4 * MIB) << i, 120.0)).collect();
        let m = memory_start(&flat, 0).expect("memory from the first size");
        assert_eq!((m.from_bytes, m.cache_bytes), (4 * MIB, 0));
        assert_eq!(m.check, MemoryCheck::HeldPlateau);
        // A plateau held for less than two octaves: not yet.
        let c = staircase(&[(32 * K, 1.0), (8 * M, 12.0), (u64::MAX, 110.0)], 24 * M);
        assert!(stop_point(&c).is_none());
    }

    /// The curve measured on a 2-vCPU Zen 4 guest (32 MiB reported, ~8 MiB reached).
    #[test]
    fn a_measured_guest_curve() {
        let c = [
            (4 * K, 1.09),
            (32 * K, 1.10),
            (64 * K, 2.40),
            (256 * K, 3.87),
            (M, 4.7),
            (2 * M, 10.9),
            (4 * M, 13.1),
            (8 * M, 14.3),
            (9728 * K, 90.7),
            (11571 * K, 118.4),
            (16 * M, 129.6),
            (19 * M, 126.2),
            (27 * M, 132.8),
            (32 * M, 126.2),
            (38 * M, 126.6),
            (45 * M, 126.1),
            (54 * M, 130.7),
            (64 * M, 126.7),
            (76 * M, 126.4),
        ];
        let (end, m) = stop_point(&c).expect("memory found");
        assert_eq!(end, 54 * M);
        assert_eq!(m.from_bytes, 11571 * K);
        assert_eq!(m.cache_bytes, 8 * M);
        assert!((m.ns - 127.0).abs() < 3.0, "{}", m.ns);
    }

    #[test]
    fn a_run_passes_over_one_or_two_spikes_but_not_a_step() {
        let r = grow(&[1.1, 1.1, 2.2, 2.4, 1.1, 1.1, 3.9], 0.12);
        assert_eq!(r.span, 6);
        assert_eq!(r.members, [0, 1, 4, 5]);
        // Three points out is a step, not a spike.
        assert_eq!(grow(&[1.1, 1.1, 2.2, 2.4, 2.3, 1.1], 0.12).span, 2);
        // A step that never comes back ends the run.
        assert_eq!(grow(&[1.1, 1.1, 3.9, 3.9, 3.9], 0.12).span, 2);
    }

    /// A ladder whose memory latency still climbed over its last octave (131 → 167 ns on a
    /// guest the host slowed) has not settled; a flat one has.
    #[test]
    fn a_curve_still_climbing_at_its_end_has_not_settled() {
        let flat = staircase(&[(32 * K, 1.0), (4 * M, 13.0), (u64::MAX, 131.0)], 64 * M);
        assert!(settled(&flat));
        let climbing: Vec<(u64, f64)> = flat
            .iter()
            .map(|&(s, x)| (s, if s > 32 * M { 167.0 } else { x }))
            .collect();
        assert!(!settled(&climbing));
        assert!(!settled(&[]));
    }

    /// A reach from the reported caches (nothing measured: latency NaN) survives JSON and is
    /// valid against its schema: it was written as `null` that the schema and reader refused.
    #[test]
    fn an_unmeasured_plateau_latency_round_trips_as_null() {
        let r = MemoryStart {
            from_bytes: 2 << 20,
            ns: f64::NAN,
            check: MemoryCheck::PastReportedCaches,
            cache_bytes: 1 << 20,
        };
        let v = serde_json::to_value(r).unwrap();
        assert!(v["ns"].is_null(), "{v}");
        let back: MemoryStart = serde_json::from_value(v).unwrap();
        assert!(back.ns.is_nan() && back.from_bytes == 2 << 20);
        let schema = serde_json::to_value(schemars::schema_for!(MemoryStart)).unwrap();
        assert!(schema.to_string().contains("null"), "{schema}");
    }
}
