//! Cache levels found from the latency curve, compared with the sizes the OS reports.
//!
//! A pointer chase over a working set that fits in a cache level runs at that level's latency
//! whatever the exact size: the curve is a staircase of plateaus. The plateaus are found by
//! growing segments of consecutive sizes whose latency stays within ±12% of the segment's running
//! median; a segment of three or more points (¾ octave at the default density) is a plateau,
//! shorter ones are transitions. The last size on a plateau is the capacity the chase could use
//! at that latency. The last plateau is memory when the curve reached memory by one of the
//! checks of [`crate::measure::reach`] (held at a latency no cache has, or past twice the largest
//! reported cache); the others are matched with the reported cache levels in order with the
//! least total distance in octaves, a plateau or level left unpaired where that costs less
//! ([`align`]).
//!
//! They can disagree for real: inside a VM on a shared EPYC the OS reports a 32 MiB L3, but one
//! core's latency climbs past ~6–8 MiB. That is a finding, not an error.

use crate::measure::memlevel::MemLevel;
use memsight_core::finding::{Cited, Finding};
use memsight_core::stats::median;
use memsight_core::topology::Topology;
use memsight_core::units::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Point;

/// Relative band around a plateau's running median.
pub const TOLERANCE: f64 = 0.12;
/// Fewest points that make a plateau.
const MIN_POINTS: usize = 3;
/// A plateau less than this factor above the previous one is a shoulder of the same level (the
/// level degrading as it fills: conflict misses, replacement policy), not a new level. Real steps
/// between levels are 2-4× (L1→L2 ~3×, L2→L3 ~3×, L3→DRAM >2×).
const NEW_LEVEL_FACTOR: f64 = 1.6;

/// What leaving a plateau or a level unpaired costs, in octaves of distance: a pairing further
/// apart than twice this (a plateau at 64 KiB against a 1 MiB L2 while a 724 KiB plateau is there
/// too) loses to skipping both.
const SKIP_OCTAVES: f64 = 4.0;

/// A plateau this many times slower than a faster one that could be a level's own is another
/// level's (a cache's hits and the next level's differ 3-8×; one level's own plateaus, a shoulder
/// and its body, less than 2×): it never pairs with that level ([`align`]).
const OTHER_LEVEL_FACTOR: f64 = 3.0;

/// A run of sizes at about the same latency.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Plateau {
    /// What it was matched with: `L1`, `L2`, `L3`, `memory`, or `unmatched`.
    #[schemars(with = "String")]
    pub name: MemLevel,
    pub first_bytes: u64,
    /// Last size still on the plateau: the capacity usable at this latency.
    pub last_bytes: u64,
    /// First size measured beyond it, if any.
    pub next_bytes: Option<u64>,
    /// Median latency over the plateau's points, ns.
    pub ns: f64,
    /// Absent when the core clock was disputed.
    pub cycles: Option<f64>,
    pub points: usize,
    /// The cache size the OS reports for the matched level (per instance).
    pub reported_bytes: Option<u64>,
    /// For the memory plateau: the check that says it is memory, not a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_check: Option<crate::measure::reach::MemoryCheck>,
}

/// Detected levels and what they say.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Levels {
    pub plateaus: Vec<Plateau>,
    /// Each finding with the plateaus or points it cites (bare strings before schema 4).
    pub findings: Vec<Finding>,
    /// Where memory begins on this curve, when it reached memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::measure::reach::MemoryStart>,
}

/// A plateau found on the curve: the index range it spans and the indices whose latencies make
/// its median (the range less isolated spikes, [`crate::measure::reach::MAX_SPIKE`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub range: std::ops::Range<usize>,
    pub members: Vec<usize>,
}

impl Segment {
    fn ns(&self, lat: &[f64]) -> f64 {
        median(&self.members.iter().map(|&i| lat[i]).collect::<Vec<_>>())
    }
}

/// Plateaus in a curve of latencies sorted by size: runs of at least [`MIN_POINTS`] members
/// within the band, one or two outlying points inside a run passed over rather than splitting
/// it; a short run at the end counts when a plateau came before it.
pub fn segments(latencies: &[f64]) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < latencies.len() {
        let run = crate::measure::reach::grow(&latencies[start..], TOLERANCE);
        let end = start + run.span;
        let n = run.members.len();
        let last_segment = end == latencies.len();
        if n >= MIN_POINTS || (last_segment && n >= 2 && !out.is_empty()) {
            out.push(Segment {
                range: start..end,
                members: run.members.iter().map(|i| start + i).collect(),
            });
        }
        start = end;
    }
    out
}

/// Index ranges of plateaus in a curve of (size, latency) sorted by size ([`segments`]).
pub fn segment(latencies: &[f64]) -> Vec<std::ops::Range<usize>> {
    segments(latencies).into_iter().map(|s| s.range).collect()
}

/// The cache plateaus before memory: segments of `lat[..end]`, a segment at about the latency
/// of the one before it (within the band) merged into it, a shoulder (less than
/// [`NEW_LEVEL_FACTOR`] slower, and no longer) dropped, and, where memory follows at `memory_ns`, a segment as
/// slow as memory ([`crate::measure::reach::MEMORY_FLOOR_NS`], or a shoulder of memory's own latency)
/// dropped as part of the way into it. A short run of two sizes just before memory is no level
/// when neither converged (each stopped wider than ±5%): two points whose samples spread from
/// the last cache's latency to memory's, on a busy host's L3 edge, are a transition. A guest's
/// one-octave L3 of two points, either of them converged, stays a level.
fn cache_segments(lat: &[f64], noisy: &[bool], end: usize, memory_ns: Option<f64>) -> Vec<Segment> {
    let mut kept: Vec<Segment> = Vec::new();
    let mut found = segments(&lat[..end]);
    let memory_follows = end < lat.len();
    let unsettled =
        |s: &Segment| s.members.len() < MIN_POINTS && s.members.iter().all(|&i| noisy[i]);
    if memory_follows && found.last().is_some_and(unsettled) {
        found.pop();
    }
    for seg in found {
        let ns = seg.ns(lat);
        if memory_ns.is_some_and(|m| {
            ns >= crate::measure::reach::MEMORY_FLOOR_NS || ns * NEW_LEVEL_FACTOR > m
        }) {
            continue;
        }
        // A segment faster than the one before it (beyond the band): that one was a bump above
        // the curve (latency does not fall as the working set grows), not a level.
        if kept
            .last()
            .is_some_and(|prev| ns * (1.0 + TOLERANCE) < prev.ns(lat))
        {
            kept.pop();
        }
        let within = |prev: &Segment| (ns / prev.ns(lat)).ln().abs() <= (1.0 + TOLERANCE).ln();
        match kept.last_mut() {
            Some(prev) if within(prev) => {
                prev.range.end = seg.range.end;
                prev.members.extend(seg.members);
            }
            // Barely slower than the one before: a shoulder of it, unless it is the longer of
            // the two, when the one before was a step on the way to it (a 3-point 2.4 ns step
            // before a 16-point 3.9 ns L2) and both stay for the alignment to name.
            Some(prev)
                if ns < prev.ns(lat) * NEW_LEVEL_FACTOR
                    && seg.members.len() <= prev.members.len() => {}
            _ => kept.push(seg),
        }
    }
    kept
}

fn plateau(points: &[Point], lat: &[f64], seg: &Segment, ghz: Option<f64>) -> Plateau {
    let ns = seg.ns(lat);
    Plateau {
        name: MemLevel::Unmatched,
        first_bytes: points[seg.range.start].size_bytes,
        last_bytes: points[seg.range.end - 1].size_bytes,
        next_bytes: points.get(seg.range.end).map(|p| p.size_bytes),
        ns,
        cycles: ghz.map(|g| ns * g),
        points: seg.members.len(),
        reported_bytes: None,
        memory_check: None,
    }
}

/// Finds plateaus in the ladder and matches them with the topology's caches. The memory
/// plateau is the settled end of the curve ([`crate::measure::reach::memory_start`]); the plateaus
/// before it are the caches.
pub fn detect(all: &[Point], topo: &Topology, ghz: Option<f64>) -> Levels {
    let kept = super::clean(all);
    let points = &kept[..];
    let lat: Vec<f64> = points.iter().map(|p| p.ns.median).collect();
    let caches: Vec<(u32, u64)> = (1..=5)
        .filter_map(|l| topo.cache(l).map(|c| (l, c.size_bytes)))
        .collect();
    let largest = caches.iter().map(|c| c.1).max().unwrap_or(0);
    let memory = crate::measure::reach::memory_start(&super::curve(points), largest);
    let from = memory.map_or(points.len(), |m| {
        points
            .iter()
            .position(|p| p.size_bytes == m.from_bytes)
            .unwrap_or(points.len())
    });
    let noisy: Vec<bool> = points.iter().map(|p| p.noisy).collect();
    let mut plateaus: Vec<Plateau> = cache_segments(&lat, &noisy, from, memory.map(|m| m.ns))
        .iter()
        .map(|s| plateau(points, &lat, s, ghz))
        .collect();
    // A plateau no cache could answer at (≥ 55 ns) is never named for one, even where the
    // curve had not settled into memory by its end (a ladder that stopped inside memory, or
    // whose last sizes a busy machine slowed): it stays unmatched and says why.
    let cached: Vec<usize> = (0..plateaus.len())
        .filter(|&i| plateaus[i].ns < crate::measure::reach::MEMORY_FLOOR_NS)
        .collect();
    let ends: Vec<(u64, u64)> = cached
        .iter()
        .map(|&i| (plateaus[i].first_bytes, plateaus[i].last_bytes))
        .collect();
    let ns: Vec<f64> = cached.iter().map(|&i| plateaus[i].ns).collect();
    let sizes: Vec<u64> = caches.iter().map(|c| c.1).collect();
    for (&i, level) in cached.iter().zip(align(&ends, &ns, &sizes)) {
        if let Some(j) = level {
            plateaus[i].name = MemLevel::Cache(caches[j].0 as u8);
            plateaus[i].reported_bytes = Some(caches[j].1);
        }
    }
    if let Some(m) = memory.filter(|_| from < points.len()) {
        plateaus.push(Plateau {
            name: MemLevel::Memory,
            first_bytes: m.from_bytes,
            last_bytes: points[points.len() - 1].size_bytes,
            next_bytes: None,
            ns: m.ns,
            cycles: ghz.map(|g| m.ns * g),
            points: points.len() - from,
            reported_bytes: None,
            memory_check: Some(m.check),
        });
    }
    let mut findings = findings(&plateaus, &caches, points, all.len());
    let left = all.len() - points.len();
    if left > 0 {
        findings.push(Finding::unsampled(format!(
            "{left} of {} sizes rest on disturbed samples (⚠: a measuring thread lost its CPU so often that too few clean samples were left) and were left out of the levels: they read slower than the machine",
            all.len()
        )));
    }
    Levels {
        plateaus,
        findings,
        memory: memory.filter(|_| from < points.len()),
    }
}

/// Matches plateaus (by the size where each ends) with reported cache levels (by size), both
/// in increasing order, with the least total cost: the distance in octaves between a paired
/// plateau's end and its level's size, and [`SKIP_OCTAVES`] for each plateau or level left
/// unpaired. A shoulder or a level split in two leaves one plateau unmatched; a level without a
/// plateau of its own is skipped; a plateau ending far below its level (a guest told of the
/// host's 480 MiB L3 whose core sees 8 MiB) still pairs with it. A plateau that starts beyond a
/// level's size never pairs with it while a faster plateau starts within it: the level is the
/// one that fits. Nor does a plateau [`OTHER_LEVEL_FACTOR`] times slower than a faster one that
/// could be the level's own: one that starts within the level, beyond the level below, and ends
/// within two octaves of the level's size (a short step between two levels is not one). On a
/// guest whose core keeps half its 2 MiB L2, 4.6 ns up to 724 KiB is the L2, not 23.6 ns from 1
/// to 2.4 MiB, which ends nearer 2 MiB. `plateaus` are (first size, last size), `ns` their
/// latencies, one each; returns, per plateau, the index of its level.
pub fn align(plateaus: &[(u64, u64)], ns: &[f64], levels: &[u64]) -> Vec<Option<usize>> {
    const SKIP: f64 = SKIP_OCTAVES;
    assert_eq!(ns.len(), plateaus.len(), "one latency per plateau");
    let (p, l) = (plateaus.len(), levels.len());
    let dist = |i: usize, j: usize| {
        let (first, last) = plateaus[i];
        let fits_before = plateaus[..i].iter().any(|&(f, _)| f <= levels[j]);
        let below = if j == 0 { 0 } else { levels[j - 1] };
        let own = |&(f, end): &(u64, u64)| f <= levels[j] && f > below && end >= levels[j] / 4;
        let faster_own = (0..i).any(|k| own(&plateaus[k]) && ns[i] >= OTHER_LEVEL_FACTOR * ns[k]);
        if (first > levels[j] && fits_before) || faster_own {
            f64::INFINITY
        } else {
            (last as f64 / levels[j] as f64).log2().abs()
        }
    };
    let mut cost = vec![vec![0.0; l + 1]; p + 1];
    for i in 0..=p {
        for j in 0..=l {
            cost[i][j] = match (i, j) {
                (0, _) | (_, 0) => (i + j) as f64 * SKIP,
                _ => (cost[i - 1][j - 1] + dist(i - 1, j - 1))
                    .min(cost[i - 1][j] + SKIP)
                    .min(cost[i][j - 1] + SKIP),
            };
        }
    }
    let mut out = vec![None; p];
    let (mut i, mut j) = (p, l);
    while i > 0 && j > 0 {
        if cost[i][j] == cost[i - 1][j - 1] + dist(i - 1, j - 1) {
            out[i - 1] = Some(j - 1);
            i -= 1;
            j -= 1;
        } else if cost[i][j] == cost[i - 1][j] + SKIP {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    out
}

/// `measured` counts every size of the ladder, `points` only those levels were read from.
fn findings(
    plateaus: &[Plateau],
    caches: &[(u32, u64)],
    points: &[Point],
    measured: usize,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = memory_finding(plateaus, points, measured)
        .into_iter()
        .collect();
    out.extend(reported_size_findings(plateaus));
    out.extend(unmatched_findings(plateaus));
    for (level, size) in caches {
        let name = MemLevel::Cache(*level as u8);
        if !plateaus.iter().any(|p| p.name == name)
            && points.first().is_some_and(|f| f.size_bytes <= *size)
            && points.last().is_some_and(|l| l.size_bytes >= *size)
        {
            out.push(Finding::unsampled(format!(
                "{name} ({}) shows no plateau of its own: latency changes gradually through that range (non-LRU replacement, a cache shared with other tenants, or too few points per octave)",
                format_bytes(*size)
            )));
        }
    }
    out
}

/// Where memory begins and what its latency is; or, where the ladder found no memory plateau,
/// why no figure of it is memory latency.
fn memory_finding(plateaus: &[Plateau], points: &[Point], measured: usize) -> Option<Finding> {
    if let Some(m) = plateaus.iter().find(|p| p.name == MemLevel::Memory) {
        Some(Finding::citing(
            format!(
                "memory: {:.1} ns from {} on ({} points); it is memory because {}",
                m.ns,
                format_bytes(m.first_bytes),
                m.points,
                m.memory_check
                    .map_or("it is the last plateau".to_string(), |c| c.describe())
            ),
            vec![cite(m)],
        ))
    } else if let ([only], 1) = (points, measured) {
        let slow = if only.ns.median >= crate::measure::reach::MEMORY_FLOOR_NS {
            format!(
                "; at ≥ {:.0} ns no cache answers, so it is a memory latency, but one size cannot show that it held",
                crate::measure::reach::MEMORY_FLOOR_NS
            )
        } else {
            String::new()
        };
        Some(at_point(
            only,
            format!(
                "one size measured ({}: {:.1} ns): a single size shows no levels, which take sizes on both sides of each cache{slow}",
                format_bytes(only.size_bytes),
                only.ns.median
            ),
        ))
    } else if let Some(last) = points.last() {
        let advice = if last.ns.median >= crate::measure::reach::MEMORY_FLOOR_NS {
            format!(
                "its last sizes are slower than any cache (≥ {:.0} ns) but did not hold one latency for {} octaves; measure a wider range of sizes",
                crate::measure::reach::MEMORY_FLOOR_NS,
                crate::measure::reach::HOLD_OCTAVES
            )
        } else {
            "raise --max-size".to_string()
        };
        Some(at_point(
            last,
            format!(
                "the curve did not reach a memory plateau by {} ({:.1} ns): no figure of this ladder is memory latency; {advice}",
                format_bytes(last.size_bytes),
                last.ns.median
            ),
        ))
    } else {
        None
    }
}

/// Plateaus ending far short of (or far beyond) the size the OS reports for their level.
fn reported_size_findings(plateaus: &[Plateau]) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in plateaus {
        let Some(rep) = p.reported_bytes else {
            continue;
        };
        let ratio = p.last_bytes as f64 / rep as f64;
        if ratio < 0.5 {
            out.push(Finding::citing(format!(
                "{}: the OS reports {} per instance, but the {:.1} ns plateau ends at {}{}: one core uses about {} of it at that latency (shared with other cores or tenants, set conflicts between physical pages, or the replacement policy)",
                p.name,
                format_bytes(rep),
                p.ns,
                format_bytes(p.last_bytes),
                p.next_bytes.map(|n| format!(" ({} is slower)", format_bytes(n))).unwrap_or_default(),
                format_bytes(p.last_bytes)
            ), vec![cite(p)]));
        } else if ratio > 2.0 {
            out.push(Finding::citing(format!(
                "{}: latency stays at {:.1} ns up to {}, beyond the {} the OS reports (prefetching, or a larger neighbouring cache level)",
                p.name,
                p.ns,
                format_bytes(p.last_bytes),
                format_bytes(rep)
            ), vec![cite(p)]));
        }
    }
    out
}

/// What a plateau that pairs with no reported level is, for each such plateau: named by the
/// levels around it, so a reader of the table is not left guessing.
fn unmatched_findings(plateaus: &[Plateau]) -> Vec<Finding> {
    let range = |p: &Plateau| {
        format!(
            "{} – {}",
            format_bytes(p.first_bytes),
            format_bytes(p.last_bytes)
        )
    };
    let mut out = Vec::new();
    for (i, p) in plateaus.iter().enumerate() {
        if p.name != MemLevel::Unmatched {
            continue;
        }
        let before = plateaus[..i]
            .iter()
            .rev()
            .find(|q| q.name != MemLevel::Unmatched);
        let after = plateaus[i + 1..]
            .iter()
            .find(|q| q.name != MemLevel::Unmatched);
        let mut cites = vec![cite(p)];
        if p.ns >= crate::measure::reach::MEMORY_FLOOR_NS {
            out.push(Finding::citing(
                format!(
                    "plateau {} at {:.1} ns is slower than any cache (≥ {:.0} ns), so it is memory, but latency had not settled there by the ladder's last sizes; it is not given as the memory level",
                    range(p),
                    p.ns,
                    crate::measure::reach::MEMORY_FLOOR_NS
                ),
                cites,
            ));
            continue;
        }
        let text = match (before, after) {
            (Some(b), Some(a)) => {
                cites.extend([cite(b), cite(a)]);
                format!(
                    "unmatched plateau {} at {:.2} ns, between {} ({:.2} ns) and {} ({:.2} ns), ends where no cache level the OS reports does: most likely a step on the way out of {} (the chase no longer fits in it, but part of every lap still hits it because its replacement is not strict LRU), otherwise a structure the OS does not list; it is not counted as a level",
                    range(p),
                    p.ns,
                    b.name,
                    b.ns,
                    a.name,
                    a.ns,
                    b.name
                )
            }
            _ => format!(
                "unmatched plateau {} at {:.2} ns: no cache level the OS reports pairs with it (the OS may report fewer levels than the curve shows); it is not counted as a level",
                range(p),
                p.ns
            ),
        };
        out.push(Finding::citing(text, cites));
    }
    out
}

/// A plateau as a finding cites it: its median over clean sizes (sizes resting on disturbed
/// samples are left out of the levels, so a plateau rests on clean ones).
fn cite(p: &Plateau) -> Cited {
    Cited::value(format!("{} plateau", p.name), p.ns, "ns", false)
}

/// A finding about one size of the ladder, citing it.
fn at_point(p: &Point, text: String) -> Finding {
    let cite = Cited::of(format!("{} chase", format_bytes(p.size_bytes)), "ns", &p.ns);
    Finding::citing(text, vec![cite])
}

#[cfg(test)]
#[path = "levels_tests.rs"]
mod tests;
