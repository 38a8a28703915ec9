//! One run, one story: where two suites of a run measured the same quantity, do their figures
//! agree, and if not, which one stands for the machine and why.
//!
//! Pairs judged (each only where both figures exist, so on the machines where they are one
//! quantity):
//! - **read bandwidth**: the bandwidth suite's read test on every allowed CPU against the NUMA
//!   matrix's local read cell, when the machine has one NUMA node with CPUs (then both are the
//!   same team reading its own node, with working sets from the same streaming check);
//! - **idle memory latency**: the latency ladder's memory plateau against loaded-latency's idle
//!   point (all reads) and the NUMA matrix's local latency cell (one node), all pointer chases
//!   over a memory working set.
//!
//! Two figures agree when their ratio is within the tolerance: 10%, or more where the figures
//! are less certain (their relative 95% CI widths added) and where the run's drift probes saw
//! the quantity move between probes (their read rate for bandwidth, their idle latency for
//! latency, highest ÷ lowest − 1), since figures taken at different moments differ by that;
//! but never more than ±25% ([`MAX_TOLERANCE`]): a gap wider than that is not agreement
//! whatever the noise. Past the tolerance, one figure stands when there is a reason to prefer
//! it: the drift probes put the other in a slow phase, or, failing that, where the noise and
//! the drift cannot account for the gap, the suite that measures the quantity on its own (the
//! bandwidth suite's read past the streaming check; the ladder's settled memory plateau, the
//! median of its last octaves). Where the noise and the drift could account for a gap beyond
//! ±25% and no slow phase tells the two apart, the run says it cannot tell.

use memsight_suites::probes::DriftSeries;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::figure::Figure;
use crate::key::Key;

/// The least tolerance between two figures of one quantity.
pub const MIN_TOLERANCE: f64 = 0.10;
/// The most: a wider gap is never called agreement, whatever the figures' CIs and the drift.
pub const MAX_TOLERANCE: f64 = 0.25;

/// What the pair says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Concord {
    /// Within the tolerance.
    Agree,
    /// Beyond it, and one figure stands for a reason given.
    Differ,
    /// Beyond ±25%, within what the noise and the drift allow, and nothing tells the two apart:
    /// the machine moved too much to tell.
    CannotTell,
}

impl Concord {
    /// How the report's table says it.
    pub fn word(self) -> &'static str {
        match self {
            Concord::Agree => "yes",
            Concord::Differ => "no",
            Concord::CannotTell => "cannot tell",
        }
    }
}

/// One figure of a pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Witness {
    pub suite: String,
    pub key: crate::key::Key,
    pub value: f64,
    pub unit: String,
    /// Relative width of its 95% CI (0 when not sampled).
    pub uncertainty: f64,
}

/// Two figures of one quantity, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Agreement {
    pub quantity: String,
    /// The figure that stands for the machine, and the one set against it.
    pub stands: Witness,
    pub against: Witness,
    /// `against` over `stands`.
    pub ratio: f64,
    /// The tolerance applied: the noise and the drift, within 10–25%.
    pub tolerance: f64,
    /// What the figures' CIs and the drift alone would allow, uncapped.
    #[serde(default)]
    pub noise: f64,
    pub agree: bool,
    /// Agree, differ, or cannot tell; absent in files written before it ([`Self::concord`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concord: Option<Concord>,
    /// Why the standing figure stands (or why no figure can be said to).
    pub why: String,
}

impl Agreement {
    /// What the pair says; for a file written before [`Concord`], from `agree`.
    pub fn concord(&self) -> Concord {
        self.concord.unwrap_or(if self.agree {
            Concord::Agree
        } else {
            Concord::Differ
        })
    }
}

/// What a quantity's pair needs: the figures, which suite measures it on its own, and the
/// drift that widens the tolerance.
struct Pair<'a> {
    quantity: &'static str,
    main: &'a Figure,
    other: &'a Figure,
    /// How far the drift probes saw this quantity move during the run (highest ÷ lowest − 1),
    /// added to the tolerance.
    drift: f64,
    /// Why `main` stands where the two differ beyond the noise.
    stands_because: &'static str,
}

const READ_STANDS: &str = "the bandwidth suite measures the whole team's read on its own, at working sets past the streaming check, sampling until the median is certain";
const LATENCY_STANDS: &str = "the ladder's memory plateau is where its latency settled: the median of its last octaves, the largest working sets it chased, sampled until the median is certain";

fn witness(f: &Figure) -> Witness {
    let uncertainty = f
        .summary
        .as_ref()
        .filter(|s| s.median > 0.0 && s.ci_high.is_finite() && s.ci_low.is_finite())
        .map_or(0.0, |s| (s.ci_high - s.ci_low) / s.median);
    Witness {
        suite: f.suite.clone(),
        key: f.key.clone(),
        value: f.value,
        unit: f.unit.clone(),
        uncertainty,
    }
}

/// The suite a run names a figure's suite by (`loaded` figures come from `loaded-latency`).
fn run_name(suite: &str) -> &str {
    match suite {
        "loaded" => "loaded-latency",
        s => s,
    }
}

/// The share of its best the machine ran at while `w`'s suite measured, where that was a slow
/// phase: one core's probes, and for a bandwidth (a team's figure) the team's too, the lower
/// of the two (the team can draw half while one core's rate stays).
fn slow_share(d: &DriftSeries, w: &Witness) -> Option<f64> {
    let suite = run_name(&w.suite);
    let core = d.slow_share(suite);
    let team = w
        .unit
        .starts_with("GB/s")
        .then(|| d.team_slow_share(suite))
        .flatten();
    match (core, team) {
        (Some(c), Some(t)) => Some(c.min(t)),
        (c, t) => c.or(t),
    }
}

fn judge(p: Pair, drift: Option<&DriftSeries>) -> Option<Agreement> {
    let (a, b) = (witness(p.main), witness(p.other));
    if !(a.value > 0.0 && b.value > 0.0) {
        return None;
    }
    let ratio = b.value / a.value;
    let noise = MIN_TOLERANCE.max(a.uncertainty + b.uncertainty + p.drift);
    let tolerance = noise.min(MAX_TOLERANCE);
    let within = |t: f64| ratio.ln().abs() <= (1.0 + t).ln();
    let slow = |w: &Witness| drift.and_then(|d| slow_share(d, w));
    let (concord, stands, against, why) = match (slow(&a), slow(&b)) {
        _ if within(tolerance) => (Concord::Agree, a, b, p.stands_because.to_string()),
        (Some(sa), None) => (
            Concord::Differ,
            b,
            a,
            format!(
                "measured outside the slow phase the drift probes saw (the other at {sa:.2}× the run's best)"
            ),
        ),
        (None, Some(sb)) => (
            Concord::Differ,
            a,
            b,
            format!(
                "measured outside the slow phase the drift probes saw (the other at {sb:.2}× the run's best)"
            ),
        ),
        _ if within(noise) => (
            Concord::CannotTell,
            a,
            b,
            format!(
                "the machine moved too much to tell: the figures' CIs and the drift probes allow {:.0}%, beyond the ±{:.0}% within which two figures may be said to agree, and no slow phase sets one apart; rerun when the machine is quieter",
                100.0 * noise,
                100.0 * MAX_TOLERANCE
            ),
        ),
        _ => (Concord::Differ, a, b, p.stands_because.to_string()),
    };
    Some(Agreement {
        quantity: p.quantity.to_string(),
        ratio: against.value / stands.value,
        stands,
        against,
        tolerance,
        noise,
        agree: concord == Concord::Agree,
        concord: Some(concord),
        why,
    })
}

/// Judges every pair the run's figures allow.
pub fn agreements(figs: &[Figure], drift: Option<&DriftSeries>) -> Vec<Agreement> {
    let find = |pred: &dyn Fn(&Key) -> bool| figs.iter().find(|f| pred(&f.key));
    let local = |what: &str| -> Option<&Figure> {
        let cells: Vec<&Figure> = figs
            .iter()
            .filter(|f| match &f.key {
                Key::Numa {
                    cpu_node,
                    node,
                    test,
                    kernel: None,
                } => node.0 == format!("node{cpu_node}") && test == what,
                _ => false,
            })
            .collect();
        // One node with CPUs: its local cell is the whole machine's team on its own memory.
        (cells.len() == 1).then(|| cells[0])
    };
    // How far the probes saw the machine move, whether or not it counted as drift: figures
    // taken at different moments may differ by as much.
    let verdict = drift.and_then(|d| d.verdict.as_ref());
    let moved = |r: f64| if r.is_finite() { r - 1.0 } else { 0.0 };
    // Bandwidth pairs are team figures: the team's probes count too.
    let bw_drift = verdict.map_or(0.0, |v| {
        let team = v.team.as_ref().map_or(0.0, |t| moved(t.bandwidth_ratio));
        moved(v.bandwidth_ratio).max(team)
    });
    let lat_drift = verdict.map_or(0.0, |v| moved(v.latency_ratio));
    let mut pairs = Vec::new();
    // The read of the whole team: the largest thread count (a thorough run also scales).
    let threads = |k: &Key| match k {
        Key::Bandwidth {
            test,
            threads,
            pattern: None,
        } if test == "read" => Some(*threads),
        _ => None,
    };
    let read = figs
        .iter()
        .filter_map(|f| threads(&f.key).map(|n| (n, f)))
        .max_by_key(|&(n, _)| n)
        .map(|(_, f)| f);
    if let (Some(main), Some(other)) = (read, local("bandwidth")) {
        pairs.push(Pair {
            quantity: "read bandwidth",
            main,
            other,
            drift: bw_drift,
            stands_because: READ_STANDS,
        });
    }
    if let Some(main) = find(&|k| matches!(k, Key::LatencyLevel { level, .. } if level == "memory"))
    {
        let idle = find(
            &|k| matches!(k, Key::Loaded { mix, statistic } if mix == "all-reads" && statistic == "idle"),
        );
        for other in [idle, local("latency")].into_iter().flatten() {
            pairs.push(Pair {
                quantity: "idle memory latency",
                main,
                other,
                drift: lat_drift,
                stands_because: LATENCY_STANDS,
            });
        }
    }
    pairs.into_iter().filter_map(|p| judge(p, drift)).collect()
}

/// One finding per pair that does not agree.
pub fn findings(a: &[Agreement]) -> Vec<String> {
    a.iter()
        .filter(|x| !x.agree)
        .map(|x| {
            let head = format!(
                "{}: {} ({}, {:.1} {}) and {} ({}, {:.1} {}) differ by {:.2}×",
                x.quantity,
                x.stands.key,
                x.stands.suite,
                x.stands.value,
                x.stands.unit,
                x.against.key,
                x.against.suite,
                x.against.value,
                x.against.unit,
                x.ratio.max(1.0 / x.ratio),
            );
            match x.concord() {
                Concord::CannotTell => format!("{head}: cannot tell which stands: {}", x.why),
                _ => format!(
                    "{head}, more than their {:.0}% tolerance; {} {:.1} {} stands for this machine: {}",
                    100.0 * x.tolerance,
                    x.stands.key,
                    x.stands.value,
                    x.stands.unit,
                    x.why
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Better;
    use memsight_suites::probes::{Affected, DriftVerdict};

    fn fig(suite: &str, key: &str, value: f64) -> Figure {
        let f = Figure::scalar(
            crate::key::Key::parse(key).expect("a figure key"),
            key.into(),
            "GB/s",
            Better::Higher,
            value,
        );
        assert_eq!(f.suite, suite);
        f
    }

    fn one_node(read: f64, cell: f64) -> Vec<Figure> {
        vec![
            fig("bandwidth", "bandwidth/read/2t", read),
            fig("numa", "numa/node0/node0/bandwidth", cell),
            fig("numa", "numa/node0/interleaved/bandwidth", cell),
            fig("latency", "latency/cpu0/level/memory", 110.0),
            fig("loaded-latency", "loaded/all-reads/idle", 104.0),
            fig("numa", "numa/node0/node0/latency", 150.0),
        ]
    }

    /// The run of the issue: bandwidth read 81.4 GB/s, the NUMA read cell 45.8.
    #[test]
    fn a_read_cell_far_from_the_bandwidth_read_is_said() {
        let a = agreements(&one_node(81.4, 45.8), None);
        assert_eq!(a.len(), 3);
        let bw = &a[0];
        assert_eq!(bw.quantity, "read bandwidth");
        assert!(!bw.agree);
        assert_eq!(bw.stands.suite, "bandwidth");
        let f = findings(&a);
        assert!(f[0].starts_with("read bandwidth: bandwidth/read/2t (bandwidth, 81.4 GB/s) and numa/node0/node0/bandwidth (numa, 45.8 GB/s) differ by 1.78×"), "{}", f[0]);
        // The latency pairs: 104 vs 110 agrees, 150 vs 110 does not.
        assert!(a[1].agree && !a[2].agree);
    }

    #[test]
    fn figures_within_the_tolerance_agree() {
        let a = agreements(&one_node(30.9, 28.4), None);
        assert!(a[0].agree, "{:?}", a[0]);
        assert!(findings(&a[..2]).is_empty());
    }

    /// The drift widens the tolerance for bandwidth, and a figure measured in the slow phase
    /// gives way to one measured outside it.
    #[test]
    fn drift_widens_the_tolerance_and_decides_which_stands() {
        let d = DriftSeries {
            method: String::new(),
            cpu: 0,
            buffer_bytes: 0,
            probes: Vec::new(),
            phases: Vec::new(),
            verdict: Some(DriftVerdict {
                usable: 6,
                probes: 6,
                bandwidth_ratio: 1.8,
                latency_ratio: 1.4,
                noise: 0.02,
                moved: true,
                slow_from_s: Some(12.0),
                slow_to_s: Some(19.0),
                slow: vec![Affected {
                    suite: "numa".into(),
                    from_s: 10.0,
                    to_s: 20.0,
                    share_of_best: 0.56,
                }],
                cpu_shared: Vec::new(),
                team: None,
            }),
            findings: Vec::new(),
        };
        // 1.78× lies within a 1.8× drift, but beyond ±25% it is never agreement: the NUMA
        // cell was measured in the slow phase, so the bandwidth read stands.
        let a = agreements(&one_node(81.4, 45.8), Some(&d));
        assert!(!a[0].agree);
        assert_eq!(a[0].concord(), Concord::Differ);
        assert_eq!(a[0].stands.suite, "bandwidth");
        assert!(a[0].why.contains("outside the slow phase"), "{}", a[0].why);
        assert!(a[0].tolerance <= MAX_TOLERANCE);
        // Without a slow phase to tell them apart, the run cannot tell.
        let mut d3 = d.clone();
        if let Some(v) = &mut d3.verdict {
            v.slow.clear();
        }
        let a = agreements(&one_node(81.4, 45.8), Some(&d3));
        assert_eq!(a[0].concord(), Concord::CannotTell);
        assert!(
            findings(&a)[0].contains("cannot tell which stands"),
            "{:?}",
            findings(&a)
        );
        let mut d2 = d.clone();
        if let Some(v) = &mut d2.verdict {
            v.bandwidth_ratio = 1.3;
            v.slow[0].suite = "bandwidth".into();
        }
        let a = agreements(&one_node(81.4, 45.8), Some(&d2));
        assert!(!a[0].agree);
        assert_eq!(
            a[0].stands.suite, "numa",
            "the figure outside the slow phase stands"
        );
        assert!(a[0].why.contains("outside the slow phase"));
        // One core's probes put the bandwidth suite in a slow phase; the team's put the NUMA
        // cell in one of its own (the run read on a busy guest): neither stands for the
        // machine, and the team's move widens the tolerance.
        let mut d4 = d2.clone();
        if let Some(v) = &mut d4.verdict {
            v.team = Some(memsight_suites::probes::TeamDrift {
                usable: 6,
                bandwidth_ratio: 1.86,
                best_gbs: 60.8,
                low_gbs: 32.7,
                moved: true,
                slow: vec![Affected {
                    suite: "numa".into(),
                    from_s: 49.0,
                    to_s: 56.0,
                    share_of_best: 0.56,
                }],
            });
        }
        let a = agreements(&one_node(58.9, 43.7), Some(&d4));
        assert_eq!(a[0].concord(), Concord::CannotTell, "{:?}", a[0]);
    }

    /// The run of the issue: read 55.65 GB/s (bandwidth) vs 34.53 (NUMA cell), ratio 0.62, a
    /// 73% tolerance from wide CIs and drift, and "agree: yes".
    #[test]
    fn a_gap_past_25_percent_is_never_agreement() {
        let mut f = one_node(55.65, 34.53);
        for x in f.iter_mut().filter(|x| x.unit == "GB/s") {
            x.summary = Some(memsight_core::stats::summarize(&[
                x.value * 0.7,
                x.value,
                x.value * 1.3,
            ]));
        }
        let a = agreements(&f, None);
        assert!(a[0].noise > 0.6, "{}", a[0].noise);
        assert!(!a[0].agree);
        assert_eq!(a[0].concord(), Concord::CannotTell);
        assert!((a[0].tolerance - MAX_TOLERANCE).abs() < 1e-12);
        // Every ratio said to agree lies within ±25%.
        for r in [0.5, 0.7, 0.79, 0.81, 1.0, 1.2, 1.26, 1.6] {
            let a = agreements(&one_node(50.0, 50.0 * r), None);
            assert!(!a[0].agree || (0.8..=1.25).contains(&r), "{r}");
        }
    }

    /// A file written before the concord was kept reads it from `agree`.
    #[test]
    fn an_older_agreement_reads_its_concord_from_agree() {
        let a = &agreements(&one_node(30.9, 28.4), None)[0];
        let mut v = serde_json::to_value(a).unwrap();
        v.as_object_mut().unwrap().remove("concord");
        let back: Agreement = serde_json::from_value(v).unwrap();
        assert_eq!(back.concord(), Concord::Agree);
    }

    /// A thorough run scales threads: the whole team's read is the one compared.
    #[test]
    fn the_whole_team_read_is_compared() {
        let mut f = one_node(81.4, 45.8);
        f.insert(0, fig("bandwidth", "bandwidth/read/1t", 27.6));
        f.push(fig("bandwidth", "bandwidth/read/12t", 50.0));
        let a = agreements(&f, None);
        assert_eq!(a[0].stands.key.to_string(), "bandwidth/read/12t");
        assert!(a[0].agree);
    }

    /// Several nodes: the local cells are per node, not the whole team's; no pair is made.
    #[test]
    fn several_nodes_make_no_bandwidth_pair() {
        let mut f = one_node(81.4, 45.8);
        f.push(fig("numa", "numa/node1/node1/bandwidth", 40.0));
        let a = agreements(&f, None);
        assert!(a.iter().all(|x| x.quantity != "read bandwidth"));
    }
}
