//! The latency ladder: load-to-use latency from inside L1 to several times the last-level cache.
//!
//! **Method.** For each working-set size, a pointer chain over `size ÷ stride` elements is built
//! as one cycle ([`memsight_kernels::chain`]), flushed from the caches, walked once to warm up,
//! and then timed in samples of a few milliseconds until the median's 95% CI is within the target
//! ([`memsight_core::stats`]). Each sample is `ns ÷ loads`; cycles use the core clock measured by
//! a dependent-add chain. Sizes are log-spaced (several per octave, powers of two included).
//!
//! **What is reported.** Per size: median ns and cycles per load with CI, min–max, CV and sample
//! count; the cache levels found from the curve's plateaus, compared with what the OS reports; the
//! TLB cost (the same ladder on huge pages, interleaved size by size, and the difference); and the
//! memory-level parallelism (k = 1…10 independent chains) on a set that is in memory for the
//! core: sized from the curve's reach, never a size a cache can serve.

mod estimate;
pub use estimate::estimate;
pub mod ladder;
pub mod levels;
mod settings;
mod suite;
pub use suite::Latency;

pub use settings::{LatencySettings, Order};

use crate::measure::progress::Completed;
use memsight_core::buffer::{BufferReport, PageKind};
use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::stats::{StopRule, Summary};
use memsight_core::timer::ClockInfo;

pub use crate::measure::chase::{LadderConfig, Point, clean, curve};
pub use crate::measure::clock::CoreClock;
use memsight_core::Result;
use memsight_kernels::chain::Pattern;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A ladder on one buffer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Ladder {
    pub buffer: BufferReport,
    pub points: Vec<Point>,
}

/// The TLB cost at one size: the same chase on small and on huge pages.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TlbPoint {
    pub size_bytes: u64,
    pub small_ns: f64,
    pub huge_ns: f64,
    /// small − huge, ns per load.
    pub cost_ns: f64,
    /// True when the two CIs do not overlap (the difference is beyond the noise).
    pub significant: bool,
}

/// Memory-level parallelism: k independent chains in lockstep.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MlpPoint {
    pub k: usize,
    /// ns per round (k loads in flight).
    pub round_ns: Summary,
    /// ns per load = round ÷ k.
    pub ns_per_load: f64,
    /// Loads the core overlapped: k × latency(k=1) ÷ round time.
    pub overlap: f64,
    /// The round took less than one miss (overlap above k): the chains were served by a cache,
    /// so the figure is a measurement error, not memory-level parallelism.
    #[serde(default)]
    pub impossible: bool,
}

/// The MLP sweep and where it ran.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Mlp {
    pub size_bytes: u64,
    pub page_kind: PageKind,
    pub points: Vec<MlpPoint>,
    /// Why the set is in memory (the latency curve's reach, or the reported caches).
    #[serde(default)]
    pub basis: String,
}

/// A round of k lockstep chains shorter than this share of one chain's round is not possible
/// from memory (each round waits for at least one miss); the slack absorbs sample noise.
pub const MLP_ROUND_FLOOR: f64 = 0.9;

impl Mlp {
    /// The points whose overlap a core can have (at most k misses at once).
    pub fn valid(&self) -> impl Iterator<Item = &MlpPoint> {
        self.points.iter().filter(|p| !p.impossible)
    }

    /// The finding: the best overlap measured, or why none is reported.
    pub fn finding(&self) -> Option<Finding> {
        let Some(one) = self.points.first() else {
            return Some(Finding::unsampled(format!(
                "memory-level parallelism {}",
                self.basis
            )));
        };
        let round = |p: &MlpPoint| Cited::of(format!("{} chain(s) round", p.k), "ns", &p.round_ns);
        let per_load = |p: &MlpPoint| {
            Cited::value(
                format!("{} chain(s), ns per load", p.k),
                p.ns_per_load,
                "ns",
                p.round_ns.rests_on_disturbed(),
            )
        };
        if let Some(bad) = self.points.iter().find(|p| p.impossible) {
            return Some(Finding::citing(
                format!(
                    "memory-level parallelism not reported: with {} chains a round took {:.1} ns, less than one miss ({:.1} ns), so the chains were served by a cache, not memory (a measurement error; rerun with a larger set, e.g. on a quieter machine)",
                    bad.k, bad.round_ns.median, one.round_ns.median
                ),
                vec![round(bad), round(one)],
            ));
        }
        let best = self
            .valid()
            .max_by(|a, b| a.overlap.total_cmp(&b.overlap))?;
        Some(Finding::citing(
            format!(
                "memory-level parallelism: with {} independent chains over {} the core overlaps {:.1} misses ({:.1} ns per load instead of {:.1})",
                best.k,
                memsight_core::units::format_bytes(self.size_bytes),
                best.overlap,
                best.ns_per_load,
                one.ns_per_load
            ),
            vec![per_load(best), per_load(one)],
        ))
    }
}

/// All results for one CPU.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CpuLadder {
    pub cpu: usize,
    pub core_clock: CoreClock,
    pub main: Ladder,
    pub huge: Option<Ladder>,
    pub tlb: Vec<TlbPoint>,
    pub mlp: Option<Mlp>,
    /// Levels found on the main ladder.
    pub levels: levels::Levels,
    /// Levels found on the huge-page ladder, when it ran.
    pub huge_levels: Option<levels::Levels>,
}

/// How the figures were obtained, in words and numbers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Method {
    pub description: String,
    pub stride_bytes: usize,
    pub pattern: Pattern,
    pub unit: String,
    pub timer: ClockInfo,
    pub stop_rule: StopRule,
    pub sample_ns: f64,
    pub seed: u64,
    /// Each step also wrote the line it visited (the write chase).
    #[serde(default)]
    pub write: bool,
}

/// The `latency` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LatencyResults {
    pub method: Method,
    pub ladders: Vec<CpuLadder>,
    /// Plain-language findings, each with the figures it cites (bare strings before schema 4).
    pub findings: Vec<Finding>,
}

impl LatencyResults {
    /// Each CPU's ladder on the main buffer, first CPU first: what the machine facts learn
    /// where memory begins from ([`crate::measure::machine::Machine::learn_from_ladder`]).
    pub fn main_ladders(&self) -> impl Iterator<Item = (usize, &[Point])> {
        self.ladders
            .iter()
            .map(|l| (l.cpu, l.main.points.as_slice()))
    }
}

/// Runs the ladder on every chosen CPU, one after another, each on its own pinned thread.
/// Returns the results and whether the run completed (false after Ctrl-C).
pub fn run(
    cfg: &LadderConfig,
    env: &Environment,
    timer: ClockInfo,
    tick: crate::measure::progress::Tick,
) -> Result<Completed<LatencyResults>> {
    let mut ladders = Vec::new();
    let mut complete = true;
    for &cpu in &cfg.cpus {
        let mut out = memsight_core::pin::run_team(&[cpu], |_, cpu, _| {
            ladder::run_on_cpu(cfg, env, cpu, timer.min_sample_ns, tick)
        })?;
        let (l, done) = out.pop().expect("one thread")?;
        ladders.push(l);
        complete &= done;
        if !done {
            break;
        }
    }
    let mut findings = findings(&ladders);
    if cfg.pattern == Pattern::Stride {
        findings.push(Finding::unsampled("the sequential stride order lets hardware prefetchers run ahead of the chase: these figures (like lmbench lat_mem_rd's) understate latency beyond L1 and their plateaus do not mark cache sizes; use the default window order for latency"));
    }
    let mut method = method(cfg, timer, &ladders);
    if let Some(f) = ladders.first().and_then(|l| l.main.buffer.file.as_ref()) {
        method.description += &format!(" Memory: {}.", f.describe());
        findings.extend(crate::measure::dax_finding(f).map(Finding::unsampled));
    }
    Ok(Completed::new(
        LatencyResults {
            method,
            ladders,
            findings,
        },
        complete,
    ))
}

/// How the ladders were measured: sizes, order, sampling, and the write chase where it was one.
fn method(cfg: &LadderConfig, timer: ClockInfo, ladders: &[CpuLadder]) -> Method {
    let measured = ladders.first().map_or(0, |l| l.main.points.len());
    let last = ladders
        .first()
        .and_then(|l| l.main.points.last())
        .map_or(cfg.sizes[0], |p| p.size_bytes);
    let mut method = Method {
        description: format!(
            "Pointer chase, one dependent load per step, over working sets of {} to {} ({} sizes{}); stride {} B; {}; chain flushed (clflush) after building, warmed with one lap, then timed in samples of ≥{:.1} ms until the median's 95% CI is within {:.1}% (at least {} samples, at most {:.2} s per size). Figures are ns per load (program loads, one per element visited).",
            memsight_core::units::format_bytes(cfg.sizes[0]),
            memsight_core::units::format_bytes(last),
            measured,
            if cfg.stop_at_memory && measured < cfg.sizes.len() {
                format!(
                    "; the ladder ended once its memory plateau had held for {} octaves and its latency had stopped rising (its last octave within 7% of the one before), before the cap of {}",
                    crate::measure::reach::HOLD_OCTAVES,
                    memsight_core::units::format_bytes(*cfg.sizes.last().expect("sizes"))
                )
            } else {
                String::new()
            },
            cfg.stride,
            match cfg.pattern {
                Pattern::Window { window_bytes } => format!(
                    "random order within {} windows, windows in random order (multichase)",
                    memsight_core::units::format_bytes(window_bytes as u64)
                ),
                Pattern::Random => "uniformly random order over the whole working set".to_string(),
                Pattern::Stride =>
                    "sequential fixed stride (prefetch-friendly, like lmbench lat_mem_rd)"
                        .to_string(),
            },
            cfg.sample_ns.max(timer.min_sample_ns) / 1e6,
            100.0 * cfg.rule.target_rel_ci,
            cfg.rule.min_samples,
            cfg.rule.budget_s,
        ),
        stride_bytes: cfg.stride,
        pattern: cfg.pattern,
        unit: "ns per load".to_string(),
        timer,
        stop_rule: cfg.rule,
        sample_ns: cfg.sample_ns,
        seed: cfg.seed,
        write: cfg.write,
    };
    if cfg.write {
        method.description += " Write chase: each step also increments the 8-byte word beside the pointer (the same line, as multichase's incr chase), so every visited line is written and later written back; the figure is ns per dependent read-modify-write.";
    }
    method
}

/// Every ladder's findings, each tagged with its CPU where there are several.
fn findings(ladders: &[CpuLadder]) -> Vec<Finding> {
    use memsight_core::units::format_bytes;
    let mut out = Vec::new();
    for l in ladders {
        let tag = if ladders.len() > 1 {
            format!("CPU {}: ", l.cpu)
        } else {
            String::new()
        };
        out.extend(l.levels.findings.iter().map(|f| f.tagged(&tag)));
        out.extend(huge_plateau_findings(l, &tag));
        let pts = &l.main.points;
        out.extend(rise_finding(pts, &tag));
        let noisy: Vec<String> = pts
            .iter()
            .filter(|p| p.noisy)
            .map(|p| format_bytes(p.size_bytes))
            .collect();
        if !noisy.is_empty() {
            out.push(Finding::unsampled(format!(
                "{tag}{} point(s) did not converge and stayed wider than ±5% ({}): noise from other load; rerun when the machine is quieter",
                noisy.len(),
                noisy.join(", ")
            )));
        }
        out.extend(tlb_finding(l, &tag));
        if let Some(f) = l.mlp.as_ref().and_then(Mlp::finding) {
            out.push(f.tagged(&tag));
        }
    }
    out
}

/// Where huge pages hold a level's latency over larger sizes, part of the small-page loss is set
/// conflicts between scattered 4 KiB frames (the cache is physically indexed).
fn huge_plateau_findings(l: &CpuLadder, tag: &str) -> Vec<Finding> {
    use memsight_core::units::format_bytes;
    let mut out = Vec::new();
    let Some(hl) = &l.huge_levels else {
        return out;
    };
    for p in &l.levels.plateaus {
        // The same level at about its latency: a huge-page plateau as slow as memory (named
        // after a reported cache only because the ladder ended inside it) holds nothing of the
        // cache.
        let Some(h) = hl.plateaus.iter().find(|h| {
            h.name == p.name
                && p.reported_bytes.is_some()
                && h.ns < crate::measure::reach::MEMORY_FLOOR_NS
                && h.ns <= 1.25 * p.ns
        }) else {
            continue;
        };
        if h.last_bytes as f64 >= 1.5 * p.last_bytes as f64 {
            // Plateaus are read from clean sizes only.
            let cites = vec![Cited::value(
                format!("{} on huge pages", h.name),
                h.ns,
                "ns",
                false,
            )];
            out.push(Finding::citing(
                format!(
                    "{tag}{}: on huge pages the {:.1} ns plateau reaches {} instead of {}: part of the loss on 4 KiB pages is set conflicts between scattered physical frames",
                    p.name,
                    h.ns,
                    format_bytes(h.last_bytes),
                    format_bytes(p.last_bytes)
                ),
                cites,
            ));
        }
    }
    out
}

/// How far latency rises from the smallest size to the largest.
fn rise_finding(pts: &[Point], tag: &str) -> Option<Finding> {
    use memsight_core::units::format_bytes;
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return None;
    };
    if pts.len() <= 1 {
        return None;
    }
    let ratio = last.ns.median / first.ns.median;
    // (A ladder inside one level, as --min-size and --max-size can make it, may not rise.)
    let moves = match memsight_core::ratio::Ratio::of(&last.ns, &first.ns).relation() {
        memsight_core::ratio::Relation::Above => format!("rises {ratio:.1}×"),
        memsight_core::ratio::Relation::Same => {
            format!("holds within the noise ({ratio:.2}×)")
        }
        memsight_core::ratio::Relation::Below => format!("falls to {ratio:.2}×"),
    };
    Some(Finding::citing(
        format!(
            "{tag}latency {moves} from {} ({:.2} ns) to {} ({:.1} ns)",
            format_bytes(first.size_bytes),
            first.ns.median,
            format_bytes(last.size_bytes),
            last.ns.median
        ),
        vec![chase(first), chase(last)],
    ))
}

/// The TLB's cost at the largest size measured on both page kinds.
fn tlb_finding(l: &CpuLadder, tag: &str) -> Option<Finding> {
    use memsight_core::units::format_bytes;
    let t = l.tlb.last()?;
    let h = l.huge.as_ref()?;
    let pts = &l.main.points;
    let at = |pts: &[Point]| {
        pts.iter()
            .find(|p| p.size_bytes == t.size_bytes)
            .map(|p| p.ns.rests_on_disturbed())
            .unwrap_or(false)
    };
    let cites = vec![
        Cited::value("4 KiB pages chase", t.small_ns, "ns", at(pts)),
        Cited::value("huge pages chase", t.huge_ns, "ns", at(&h.points)),
    ];
    Some(Finding::citing(
        format!(
            "{tag}TLB cost at {}: {:.1} ns per load on 4 KiB pages vs {:.1} ns on {} ({:+.1} ns, {:+.0}%){}",
            format_bytes(t.size_bytes),
            t.small_ns,
            t.huge_ns,
            h.buffer.kind,
            t.cost_ns,
            100.0 * t.cost_ns / t.huge_ns,
            if t.significant {
                ""
            } else {
                "; within the noise"
            }
        ),
        cites,
    ))
}

/// One size of a ladder as a finding cites it.
fn chase(p: &Point) -> Cited {
    Cited::of(
        format!("{} chase", memsight_core::units::format_bytes(p.size_bytes)),
        "ns",
        &p.ns,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mlp(rounds: &[f64]) -> Mlp {
        let lat1 = rounds[0];
        Mlp {
            size_bytes: 256 << 20,
            page_kind: PageKind::Thp,
            points: rounds
                .iter()
                .enumerate()
                .map(|(i, &r)| MlpPoint {
                    k: i + 1,
                    round_ns: memsight_core::stats::summarize(&[r]),
                    ns_per_load: r / (i + 1) as f64,
                    overlap: (i + 1) as f64 * lat1 / r,
                    impossible: r < MLP_ROUND_FLOOR * lat1,
                })
                .collect(),
            basis: String::new(),
        }
    }

    /// A round of 8 loads in less than one miss (59.6 ns against 122 ns) is refused as an
    /// error, never reported as 16 misses overlapped with 8 chains.
    #[test]
    fn mlp_beyond_the_number_of_chains_is_an_error() {
        let mut rounds = vec![122.0, 125.0, 126.0, 128.0, 130.0, 131.0, 133.0, 59.6];
        let m = mlp(&rounds);
        let f = m.finding().unwrap();
        assert!(
            f.starts_with("memory-level parallelism not reported"),
            "{f}"
        );
        assert!(
            f.contains("8 chains a round took 59.6 ns, less than one miss (122.0 ns)"),
            "{f}"
        );
        assert_eq!(m.valid().count(), 7);
        rounds[7] = 135.0;
        let f = mlp(&rounds).finding().unwrap();
        assert!(
            f.contains("with 8 independent chains over 256 MiB the core overlaps 7.2 misses"),
            "{f}"
        );
        assert!(
            mlp(&rounds)
                .valid()
                .all(|p| p.overlap <= p.k as f64 / MLP_ROUND_FLOOR)
        );
    }
}
