//! Loaded latency: how memory latency grows with the bandwidth other cores draw.
//!
//! One pinned thread chases a pointer chain over a DRAM-sized buffer; every other chosen CPU runs
//! a load generator ([`memsight_kernels::loadgen`]) that visits lines in a read:write mix and
//! spins a number of cycles between visits. By default the mixes are a family by the share of
//! DRAM bytes read (100%, 90%, 80%, 75%, 67%, 60%, 50%: regular stores, each read for ownership
//! first) and the two non-temporal mixes, so that a program's place can be read off the curve of
//! its own mix (Esmaili-Dokht et al., "A Mess of Memory System Benchmarking, Simulation and
//! Application Profiling", MICRO 2024). Instead of MLC's fixed delay list (most of
//! whose points sit at saturation), the delays are chosen per mix so the points spread evenly in
//! bandwidth between idle and saturation: idle and delay 0 are measured first, then for each
//! target bandwidth the delay is found by bisection on a log scale with short probes. At each
//! point the traffic runs `--settle-ms` before sampling; then the chase latency is sampled with
//! the engine's stop rule while the load threads' visits are counted over the same window, and
//! on x86_64 2000 single chase steps are timed with the TSC for p50/p90/p99.
//!
//! The mixes are measured in alternating rounds (`rounds`, A B C A B C …): the first finds each
//! mix's delays, the later ones measure every mix at those delays again, each round with its
//! share of the stop rule; a point merges its rounds and keeps their bandwidths, so a machine
//! that moved between rounds shows as a spread, alike on every curve.
//!
//! Bandwidth per point = load visits × DRAM bytes per visit (regular stores add a read for
//! ownership) + the chase's own 64 B per load, over the sampling window (GB/s, 10⁹ B/s).

mod estimate;
pub mod placement;
mod suite;
pub use estimate::estimate;
pub use suite::Loaded;
mod chase;
mod rounds;

use crate::measure::level::Level;
use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::stats::Summary;
use memsight_core::units::MIB;
use memsight_core::{Error, Result};
use memsight_kernels::loadgen::TrafficMix;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::buffer::{DaxTarget, PageKind};

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSettings {
    /// Traffic mixes, one curve each; empty: all nine (the read-share family and the NT mixes).
    pub mixes: Vec<TrafficMix>,
    /// Points per curve, idle and saturation included.
    pub points: u32,
    /// The knee is where latency first reaches this multiple of idle latency.
    pub knee: f64,
    /// The first chases, the others load; `None`: every allowed CPU.
    pub cpus: Option<Vec<usize>>,
    /// Bind the buffers to this node; `None`: the chasing CPU's node.
    pub node: Option<usize>,
    /// Chase working set; `None`: max(4 × LLC, 256 MiB).
    pub chase_bytes: Option<u64>,
    /// Buffer per load thread.
    pub load_bytes: u64,
    pub page_kind: PageKind,
    /// Time the traffic runs before each point is sampled.
    pub settle_ms: u64,
    /// Alternating rounds over the mixes (1: one mix after another).
    pub rounds: usize,
    /// Of the latency samples per point.
    pub sampling: crate::measure::sampling::Sampling,
    /// Map every buffer from this DAX device or directory instead (`--dax`).
    pub dax: Option<&'static DaxTarget>,
}

impl LoadedSettings {
    /// What `memsight run` measures at `level`: reads and 2:1 in five points each at the default
    /// level, every mix in the command's points when thorough, nothing in a quick run.
    pub fn at_level(self, level: Level) -> Option<Self> {
        let d = self;
        match level {
            Level::Quick => return None,
            Level::Default => {}
            _ => return Some(d),
        }
        Some(LoadedSettings {
            mixes: vec![TrafficMix::Reads, TrafficMix::R2W1],
            points: 5,
            settle_ms: 50,
            sampling: crate::measure::sampling::Sampling {
                min_samples: 5,
                point_budget: 0.2,
                ..d.sampling
            },
            ..d
        })
    }
}

impl Default for LoadedSettings {
    fn default() -> Self {
        LoadedSettings {
            mixes: Vec::new(),
            points: 8,
            knee: 2.0,
            cpus: None,
            node: None,
            chase_bytes: None,
            load_bytes: 96 * MIB,
            page_kind: PageKind::Thp,
            settle_ms: 100,
            rounds: 3,
            sampling: crate::measure::sampling::Sampling {
                target_ci: 0.01,
                min_samples: 7,
                point_budget: 0.4,
                sample_ms: 2.0,
            },
            dax: None,
        }
    }
}

/// One point of a curve.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CurvePoint {
    /// Cycles each load thread spins between line visits (None: load threads idle).
    pub delay_cycles: Option<u64>,
    /// Total estimated DRAM bandwidth, load threads and chase, GB/s.
    pub bandwidth_gbs: f64,
    /// Chase latency, ns per load (median, CI, samples).
    pub latency_ns: Summary,
    /// Per-access latency percentiles from TSC-timed single steps, ns (x86_64).
    pub p50_ns: Option<f64>,
    pub p90_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// The step of the TSC those percentiles were timed with, ns: every percentile lies on
    /// that grid (a guest's TSC may step 10 ns), so a p50 can stand up to a step from the
    /// median. Absent before schema 4 and off x86_64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tsc_step_ns: Option<f64>,
    /// Each round's bandwidth at this point, GB/s (empty: one round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_bandwidths_gbs: Vec<f64>,
    /// Each round's median chase latency at this point, ns, in the order of
    /// `round_bandwidths_gbs` (empty: one round, or a file written before rounds were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_latencies_ns: Vec<f64>,
    /// (Highest − lowest round median latency) ÷ the merged median (one round: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_rounds: Option<f64>,
}

impl CurvePoint {
    /// (Highest − lowest round bandwidth) ÷ their mean; none with one round.
    pub fn bandwidth_between_rounds(&self) -> Option<f64> {
        rounds::apart(&self.round_bandwidths_gbs)
    }
}

/// One curve.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Curve {
    pub mix: TrafficMix,
    /// Points sorted by bandwidth, idle first.
    pub points: Vec<CurvePoint>,
    /// Bandwidth where latency first reaches `knee_factor` × idle, GB/s.
    pub knee_gbs: Option<f64>,
    /// Highest bandwidth reached, GB/s.
    pub saturation_gbs: f64,
    /// How far the saturation point's bandwidth moved between rounds: (highest − lowest) ÷
    /// mean (one round: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturation_between_rounds: Option<f64>,
}

impl Curve {
    /// The point of highest bandwidth: where the curve saturates.
    pub fn saturation_point(&self) -> Option<&CurvePoint> {
        saturation_point(&self.points)
    }

    /// Each round's sweep as (bandwidth GB/s, median latency ns) pairs, in the points' order;
    /// empty when the points keep no rounds. A round measures one mix's points one after
    /// another (the mixes alternate between rounds, not within one), so a machine whose
    /// response changed between rounds gives a sweep of its own rather than a point between
    /// the two. A round cut short (Ctrl-C) keeps the points it reached.
    pub fn round_sweeps(&self) -> Vec<Vec<(f64, f64)>> {
        let rounds = self
            .points
            .first()
            .map_or(0, |p| p.round_latencies_ns.len());
        (0..rounds)
            .map(|r| {
                self.points
                    .iter()
                    .filter_map(|p| {
                        let gbs = *p.round_bandwidths_gbs.get(r)?;
                        let ns = *p.round_latencies_ns.get(r)?;
                        (ns.is_finite() && ns > 0.0).then_some((gbs, ns))
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|sweep| sweep.len() >= 2)
            .collect()
    }
}

/// The `loaded-latency` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoadedResults {
    pub method: String,
    pub plan: placement::LoadedPlan,
    pub knee_factor: f64,
    /// Alternating rounds the mixes were measured in.
    #[serde(default = "crate::measure::sampling::one_round")]
    pub rounds: usize,
    pub curves: Vec<Curve>,
    /// The DAX device or file the buffers were mapped from (`--dax`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<memsight_core::buffer::FileBacking>,
    pub findings: Vec<Finding>,
}

/// The traffic mixes by default: the read-share family (100% to 50% of DRAM bytes read, in the
/// order of their read share), then the non-temporal ones.
const MIXES: [TrafficMix; 9] = TrafficMix::FAMILY;

/// Runs every curve. Returns results and whether it completed.
pub fn run(
    a: &LoadedSettings,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    tick: Tick<'_>,
) -> Result<Completed<LoadedResults>> {
    let mixes: Vec<TrafficMix> = if a.mixes.is_empty() {
        MIXES.to_vec()
    } else {
        a.mixes.clone()
    };
    if let Some(list) = &a.cpus {
        memsight_core::pin::validate_cpus(list, &env.allowed_cpus)?;
    }
    let cpus = a.cpus.clone().unwrap_or_else(|| env.allowed_cpus.clone());
    let plan = placement::loaded_plan(&env.topology, &cpus, a.node)?;
    env.check_node(plan.node.filter(|_| a.node.is_some()))?;
    if !(a.knee > 1.0 && a.knee.is_finite()) {
        return Err(Error::input("--knee must be a factor above 1, e.g. 2"));
    }
    crate::measure::sampling::check_rounds(a.rounds)?;
    let (rule, _) = a.sampling.rule()?;
    let load_size = a.load_bytes;
    if load_size < 3 * 4096 {
        return Err(Error::input("--load-size must be at least 12K"));
    }
    // Every flag is checked above: the working set may measure (the short probe).
    let (size, in_memory) = machine.working_set(a.chase_bytes, env)?;
    memsight_core::buffer::check_size(size + load_size * plan.load_cpus.len() as u64, env)?;
    let mut cpus = vec![plan.chase_cpu];
    cpus.extend(&plan.load_cpus);
    let (taken, all_rounds) = chase::measure(&chase::Team {
        a,
        env,
        mixes: &mixes,
        cpus: &cpus,
        size,
        rule,
        tick,
    })?;
    let curves: Vec<Curve> = taken
        .into_iter()
        .zip(&mixes)
        .map(|(slots, &mix)| {
            let points = slots.into_iter().filter_map(rounds::merge).collect();
            curve(mix, points, a.knee)
        })
        .filter(|c| c.points.len() >= 2)
        .collect();
    let complete = all_rounds
        && curves.len() == mixes.len()
        && curves.iter().all(|c| c.points.len() >= a.points as usize);
    let mut findings = findings(&curves, a.knee, env.cpu.vendor.as_deref());
    let mut method = method(a, &mixes, &plan, size) + &format!(" Chase working set: {in_memory}.");
    let memory = a.dax.map(|d| d.probe()).transpose()?;
    if let Some(m) = &memory {
        method += &format!(" Memory: {}.", m.describe());
        findings.extend(crate::measure::dax_finding(m).map(Finding::from));
    }
    Ok(Completed::new(
        LoadedResults {
            method,
            plan,
            knee_factor: a.knee,
            rounds: a.rounds,
            curves,
            memory,
            findings,
        },
        complete,
    ))
}

/// A curve from its points: sorted by bandwidth, the knee (first point at `knee` × idle
/// latency) and the saturation bandwidth.
fn curve(mix: TrafficMix, mut points: Vec<CurvePoint>, knee: f64) -> Curve {
    points.sort_by(|x, y| x.bandwidth_gbs.total_cmp(&y.bandwidth_gbs));
    let idle_ns = points
        .iter()
        .find(|p| p.delay_cycles.is_none())
        .map_or(0.0, |p| p.latency_ns.median);
    let knee_gbs = points
        .iter()
        .find(|p| p.latency_ns.median >= knee * idle_ns)
        .map(|p| p.bandwidth_gbs);
    let top = saturation_point(&points);
    let saturation_gbs = top.map_or(0.0, |p| p.bandwidth_gbs);
    let saturation_between_rounds = top.and_then(CurvePoint::bandwidth_between_rounds);
    Curve {
        mix,
        points,
        knee_gbs,
        saturation_gbs,
        saturation_between_rounds,
    }
}

/// The point of highest bandwidth among `points`.
fn saturation_point(points: &[CurvePoint]) -> Option<&CurvePoint> {
    points
        .iter()
        .max_by(|x, y| x.bandwidth_gbs.total_cmp(&y.bandwidth_gbs))
}

/// What a visit of each mix does: "all reads 1 load; 9:1 8 loads + 1 store; …".
fn visit_patterns(mixes: &[TrafficMix]) -> String {
    mixes
        .iter()
        .map(|m| {
            let (r, w) = m.lines();
            let store = if m.non_temporal() {
                "NT store"
            } else {
                "store"
            };
            let mut parts = Vec::new();
            if r > 0 {
                parts.push(format!("{r} load{}", if r > 1 { "s" } else { "" }));
            }
            if w > 0 {
                parts.push(format!("{w} {store}{}", if w > 1 { "s" } else { "" }));
            }
            format!("{} {}", m.name(), parts.join(" + "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// How the curves were measured, in words.
fn method(
    a: &LoadedSettings,
    mixes: &[TrafficMix],
    plan: &placement::LoadedPlan,
    size: u64,
) -> String {
    let rounds = if a.rounds > 1 {
        format!(
            " The mixes were measured in {} alternating rounds (every mix once a round, delays found in the first), each with its share of the samples; a point's latency merges its rounds' samples and its bandwidth is their median.",
            a.rounds
        )
    } else {
        String::new()
    };
    rounds
        + &format!(
            "one thread chases a {} chain (128 B stride, random within 256 KiB windows, {} pages) on CPU {}; {} load thread(s) on CPUs {} walk their own {} buffer in visits of the mix's pattern ({}) with a delay (cycles) between visits; delays chosen by bisection so {} points spread evenly in bandwidth from idle to saturation; {} ms of traffic before each point; latency = median ns per chase load (engine stop rule); bandwidth = load visits × DRAM bytes per visit (RFO included) + chase bytes, GB/s; p50/p90/p99 from 2000 TSC-timed single steps with the timer's own cost (median of empty timed pairs) subtracted.",
            memsight_core::units::format_bytes(size),
            a.page_kind.name(),
            plan.chase_cpu,
            plan.load_cpus.len(),
            memsight_core::units::format_list(&plan.load_cpus),
            memsight_core::units::format_bytes(a.load_bytes),
            visit_patterns(mixes),
            a.points,
            a.settle_ms
        )
}

/// Rounds whose saturation bandwidth moved this much apart are worth a finding.
const ROUNDS_APART: f64 = 0.2;

/// A clock that memory traffic raises and an idle chase may run without, by the vendor whose
/// cores have it; none named where the vendor is not known.
fn traffic_clock(vendor: Option<&str>) -> &'static str {
    match vendor {
        Some("GenuineIntel") => "Intel's uncore/mesh frequency follows traffic",
        Some("AuthenticAMD") => {
            "AMD's Infinity Fabric and memory clocks drop in idle data-fabric power states"
        }
        _ => "a fabric or memory clock that rises with traffic",
    }
}

/// A point's chase latency, cited.
fn cite(c: &Curve, p: &CurvePoint) -> Cited {
    let at = p
        .delay_cycles
        .map_or("idle".to_string(), |d| format!("delay {d}"));
    Cited::of(
        format!("{} latency, {at}", c.mix.name()),
        "ns",
        &p.latency_ns,
    )
}

fn findings(curves: &[Curve], knee: f64, vendor: Option<&str>) -> Vec<Finding> {
    let mut out: Vec<Finding> = family_finding(curves).into_iter().collect();
    for c in curves {
        if let Some(apart) = c.saturation_between_rounds.filter(|x| *x >= ROUNDS_APART) {
            let top = c.saturation_point();
            out.push(Finding::unsampled(format!(
                "{}: the saturation bandwidth moved {:.0}% between rounds ({} GB/s): the memory was shared with other work while the curves were measured; every mix was measured in each round, so the curves compare with one another, but their absolute bandwidths carry that spread",
                c.mix.name(),
                apart * 100.0,
                top.map_or(String::new(), |p| p
                    .round_bandwidths_gbs
                    .iter()
                    .map(|b| format!("{b:.1}"))
                    .collect::<Vec<_>>()
                    .join(", "))
            )));
        }
        let idle = c.points.iter().find(|p| p.delay_cycles.is_none());
        let top = c.points.last();
        if let (Some(i), Some(t)) = (idle, top) {
            out.push(Finding::citing(format!(
                "{}: idle {:.0} ns; at {:.1} GB/s (saturation) {:.0} ns ({:.1}×){}",
                c.mix.name(),
                i.latency_ns.median,
                c.saturation_gbs,
                t.latency_ns.median,
                t.latency_ns.median / i.latency_ns.median,
                match c.knee_gbs {
                    Some(k) => format!("; latency reaches {knee}× idle at {k:.1} GB/s (the knee)"),
                    None => format!("; latency never reached {knee}× idle: the load threads cannot saturate memory"),
                }
            ), vec![cite(c, i), cite(c, t)]));
            // Queueing never makes a miss cheaper: a loaded point clearly below idle means the
            // idle point was disturbed, or ran while a clock the traffic raises was low (Intel's
            // uncore/mesh frequency follows traffic), so the curve's ratios to idle mislead.
            if let Some(low) = c
                .points
                .iter()
                .filter(|p| p.delay_cycles.is_some())
                .min_by(|a, b| a.latency_ns.median.total_cmp(&b.latency_ns.median))
                .filter(|p| p.latency_ns.median < BELOW_IDLE * i.latency_ns.median)
            {
                out.push(Finding::citing(format!(
                    "{}: at {:.1} GB/s latency was {:.0} ns, {:.2}× the idle {:.0} ns: queueing cannot make a miss cheaper, so either the idle point was disturbed or the traffic raised a clock the idle chase ran without ({}); the ratios to idle above are not to be acted on: measure again",
                    c.mix.name(),
                    low.bandwidth_gbs,
                    low.latency_ns.median,
                    low.latency_ns.median / i.latency_ns.median,
                    i.latency_ns.median,
                    traffic_clock(vendor)
                ), vec![cite(c, low), cite(c, i)]));
            }
        }
    }
    out
}

/// How the saturation bandwidth falls as the write share grows, over the regular-store curves of
/// the read-share family (three or more): writes cost a memory controller bus turnarounds and
/// their reads for ownership, so a program's attainable bandwidth depends on its mix.
fn family_finding(curves: &[Curve]) -> Option<Finding> {
    let mut family: Vec<&Curve> = curves.iter().filter(|c| !c.mix.non_temporal()).collect();
    if family.len() < 3 {
        return None;
    }
    family.sort_by(|a, b| b.mix.read_share().total_cmp(&a.mix.read_share()));
    let (first, last) = (family[0], family[family.len() - 1]);
    let list = family
        .iter()
        .map(|c| format!("{:.0}% {:.1}", c.mix.read_share() * 100.0, c.saturation_gbs))
        .collect::<Vec<_>>()
        .join(", ");
    let change = last.saturation_gbs / first.saturation_gbs;
    // A ratio of two saturations whose rounds lay far apart carries that spread: the rounds are
    // given with it, and the conclusion is not drawn from it.
    let moved: Vec<String> = [first, last]
        .iter()
        .filter(|c| {
            c.saturation_between_rounds
                .is_some_and(|x| x >= ROUNDS_APART)
        })
        .filter_map(|c| {
            let top = c.saturation_point()?;
            let rounds: Vec<String> = top
                .round_bandwidths_gbs
                .iter()
                .map(|b| format!("{b:.1}"))
                .collect();
            Some(format!(
                "{:.0}% read: rounds at {} GB/s",
                c.mix.read_share() * 100.0,
                rounds.join(", ")
            ))
        })
        .collect();
    let tail = if !moved.is_empty() {
        format!(
            "; unconfirmed: the saturations' rounds lay more than {:.0}% apart ({}), so the ratio carries the machine's movement",
            ROUNDS_APART * 100.0,
            moved.join("; ")
        )
    } else if change < 0.9 {
        ": a program's attainable bandwidth depends on its write share, so place it on the curve of its own mix".to_string()
    } else {
        String::new()
    };
    // The saturation points' latencies carry their samples' state (a bandwidth has none).
    let cites = family
        .iter()
        .filter_map(|c| Some(cite(c, c.saturation_point()?)))
        .collect();
    Some(Finding::citing(
        format!(
            "saturation by share of DRAM bytes read (GB/s, medians of the rounds): {list}; at {:.0}% read the memory serves {:.2}× what it serves at {:.0}%{tail}",
            last.mix.read_share() * 100.0,
            change,
            first.mix.read_share() * 100.0,
        ),
        cites,
    ))
}

/// A loaded point this far below idle latency is a measurement error, not a property of memory.
const BELOW_IDLE: f64 = 0.9;

#[cfg(test)]
mod tests {
    use super::*;

    fn point(delay: Option<u64>, gbs: f64, ns: f64) -> CurvePoint {
        CurvePoint {
            delay_cycles: delay,
            bandwidth_gbs: gbs,
            latency_ns: memsight_core::stats::summarize(&[ns]),
            p50_ns: None,
            p90_ns: None,
            p99_ns: None,
            tsc_step_ns: None,
            round_bandwidths_gbs: Vec::new(),
            round_latencies_ns: Vec::new(),
            between_rounds: None,
        }
    }

    /// The knee is the first bandwidth at which latency reaches the factor × idle; saturation
    /// is the highest bandwidth, whatever order the points came in.
    #[test]
    fn knee_and_saturation_of_a_curve() {
        let points = vec![
            point(Some(10), 40.0, 260.0),
            point(None, 1.0, 100.0),
            point(Some(100), 20.0, 130.0),
            point(Some(30), 35.0, 210.0),
        ];
        let c = curve(TrafficMix::Reads, points, 2.0);
        assert_eq!(c.points[0].delay_cycles, None, "idle first");
        assert_eq!(c.knee_gbs, Some(35.0));
        assert_eq!(c.saturation_gbs, 40.0);
        let f = findings(std::slice::from_ref(&c), 2.0, None);
        assert!(
            f[0].contains("idle 100 ns")
                && f[0].contains("(2.6×)")
                && f[0].contains("at 35.0 GB/s (the knee)"),
            "{f:?}"
        );
    }

    /// The family's finding lists the regular-store curves by read share, NT curves left out.
    #[test]
    fn the_family_finding_orders_by_read_share() {
        let c = |mix, sat| {
            curve(
                mix,
                vec![point(None, 1.0, 100.0), point(Some(0), sat, 150.0)],
                2.0,
            )
        };
        let curves = [
            c(TrafficMix::R2W1, 30.0),
            c(TrafficMix::Reads, 40.0),
            c(TrafficMix::NtWrites, 10.0),
            c(TrafficMix::Writes, 24.0),
        ];
        let f = family_finding(&curves).unwrap();
        assert!(
            f.contains("(GB/s, medians of the rounds): 100% 40.0, 67% 30.0, 50% 24.0; at 50% read the memory serves 0.60× what it serves at 100%: a program"),
            "{f}"
        );
        assert!(
            family_finding(&curves[..2]).is_none(),
            "two curves are no family"
        );
    }

    #[test]
    fn a_curve_without_a_knee_says_the_load_could_not_saturate() {
        let c = curve(
            TrafficMix::R2W1,
            vec![point(None, 1.0, 100.0), point(Some(0), 30.0, 150.0)],
            2.0,
        );
        assert_eq!(c.knee_gbs, None);
        let f = findings(&[c], 2.0, None);
        assert!(f[0].contains("never reached 2× idle"), "{f:?}");
    }

    /// A loaded point below idle latency cannot be: it is called a disturbed idle point.
    #[test]
    fn a_loaded_point_below_idle_is_called_an_error() {
        let c = curve(
            TrafficMix::Reads,
            vec![point(None, 1.0, 123.0), point(Some(0), 30.4, 97.0)],
            2.0,
        );
        let f = findings(&[c], 2.0, None);
        assert!(
            f.iter()
                .any(|x| x.contains("0.79× the idle 123 ns") && x.contains("not to be acted on")),
            "{f:?}"
        );
        let c = curve(
            TrafficMix::Reads,
            vec![point(None, 1.0, 100.0), point(Some(0), 30.0, 96.0)],
            2.0,
        );
        assert_eq!(
            findings(&[c], 2.0, None).len(),
            1,
            "within the noise: no such finding"
        );
    }

    #[test]
    fn the_clock_blamed_is_the_vendors_own() {
        assert!(!traffic_clock(Some("AuthenticAMD")).contains("Intel"));
        assert!(traffic_clock(Some("GenuineIntel")).contains("uncore"));
        assert!(!traffic_clock(None).contains("Intel"));
    }
}
