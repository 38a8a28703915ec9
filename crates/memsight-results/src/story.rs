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
//! latency, highest ÷ lowest − 1), since figures taken at different moments differ by that. Otherwise the figure of the
//! suite that measures that quantity on its own stands (the bandwidth suite for bandwidth, the
//! ladder for idle latency: they sample until the median is certain and measure nothing else
//! at the time), unless the drift probes put it in a slow phase and the other not.

use memsight_suites::drift::DriftSeries;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::figure::Figure;

/// The least tolerance between two figures of one quantity.
pub const MIN_TOLERANCE: f64 = 0.10;

/// One figure of a pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Witness {
    pub suite: String,
    pub key: String,
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
    pub tolerance: f64,
    pub agree: bool,
    /// Why the standing figure stands.
    pub why: String,
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
}

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

fn judge(p: Pair, drift: Option<&DriftSeries>) -> Option<Agreement> {
    let (a, b) = (witness(p.main), witness(p.other));
    if !(a.value > 0.0 && b.value > 0.0) {
        return None;
    }
    let ratio = b.value / a.value;
    let tolerance = MIN_TOLERANCE.max(a.uncertainty + b.uncertainty + p.drift);
    let agree = (ratio.ln()).abs() <= (1.0 + tolerance).ln();
    let slow = |w: &Witness| drift.and_then(|d| d.slow_share(run_name(&w.suite)));
    let (stands, against, why) = match (slow(&a), slow(&b)) {
        (Some(sa), None) => (
            b,
            a,
            format!(
                "measured outside the slow phase the drift probes saw (the other at {sa:.2}× the run's best)"
            ),
        ),
        _ => (
            a,
            b,
            "the suite that measures this quantity on its own: it samples until the median is certain and measures nothing else meanwhile".to_string(),
        ),
    };
    Some(Agreement {
        quantity: p.quantity.to_string(),
        ratio: against.value / stands.value,
        stands,
        against,
        tolerance,
        agree,
        why,
    })
}

/// Judges every pair the run's figures allow.
pub fn agreements(figs: &[Figure], drift: Option<&DriftSeries>) -> Vec<Agreement> {
    let find = |pred: &dyn Fn(&str) -> bool| figs.iter().find(|f| pred(&f.key));
    let local = |what: &str| -> Option<&Figure> {
        let cells: Vec<&Figure> = figs
            .iter()
            .filter(|f| {
                let parts: Vec<&str> = f.key.split('/').collect();
                parts.len() == 4
                    && parts[0] == "numa"
                    && parts[1] == parts[2]
                    && parts[1].starts_with("node")
                    && parts[3] == what
            })
            .collect();
        // One node with CPUs: its local cell is the whole machine's team on its own memory.
        (cells.len() == 1).then(|| cells[0])
    };
    // How far the probes saw the machine move, whether or not it counted as drift: figures
    // taken at different moments may differ by as much.
    let verdict = drift.and_then(|d| d.verdict.as_ref());
    let moved = |r: f64| if r.is_finite() { r - 1.0 } else { 0.0 };
    let bw_drift = verdict.map_or(0.0, |v| moved(v.bandwidth_ratio));
    let lat_drift = verdict.map_or(0.0, |v| moved(v.latency_ratio));
    let mut pairs = Vec::new();
    // The read of the whole team: the largest thread count (a thorough run also scales).
    let threads = |k: &str| {
        k.strip_prefix("bandwidth/read/")
            .and_then(|t| t.strip_suffix('t'))
            .and_then(|t| t.parse::<usize>().ok())
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
        });
    }
    if let Some(main) = find(&|k| k.starts_with("latency/cpu") && k.ends_with("/level/memory")) {
        let idle = find(&|k| k == "loaded/all-reads/idle");
        for other in [idle, local("latency")].into_iter().flatten() {
            pairs.push(Pair {
                quantity: "idle memory latency",
                main,
                other,
                drift: lat_drift,
            });
        }
    }
    pairs.into_iter().filter_map(|p| judge(p, drift)).collect()
}

/// One finding per pair that disagrees.
pub fn findings(a: &[Agreement]) -> Vec<String> {
    a.iter()
        .filter(|x| !x.agree)
        .map(|x| {
            format!(
                "{}: {} ({}) and {} ({}) differ by {:.2}×, more than their {:.0}% tolerance; {} {:.1} {} stands for this machine: {}",
                x.quantity,
                x.stands.key,
                x.stands.suite,
                x.against.key,
                x.against.suite,
                x.ratio.max(1.0 / x.ratio),
                100.0 * x.tolerance,
                x.stands.key,
                x.stands.value,
                x.stands.unit,
                x.why
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Better;
    use memsight_suites::drift::{Affected, DriftVerdict};

    fn fig(suite: &str, key: &str, value: f64) -> Figure {
        Figure::scalar(suite, key.into(), key.into(), "GB/s", Better::Higher, value)
    }

    fn one_node(read: f64, cell: f64) -> Vec<Figure> {
        vec![
            fig("bandwidth", "bandwidth/read/2t", read),
            fig("numa", "numa/node0/node0/bandwidth", cell),
            fig("numa", "numa/node0/interleaved/bandwidth", cell),
            fig("latency", "latency/cpu0/level/memory", 110.0),
            fig("loaded", "loaded/all-reads/idle", 104.0),
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
        assert!(f[0].starts_with("read bandwidth: bandwidth/read/2t (bandwidth) and numa/node0/node0/bandwidth (numa) differ by 1.78×"), "{}", f[0]);
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
            }),
            findings: Vec::new(),
        };
        let a = agreements(&one_node(81.4, 45.8), Some(&d));
        assert!(a[0].agree, "1.78× is within a 1.8× drift");
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
    }

    /// A thorough run scales threads: the whole team's read is the one compared.
    #[test]
    fn the_whole_team_read_is_compared() {
        let mut f = one_node(81.4, 45.8);
        f.insert(0, fig("bandwidth", "bandwidth/read/1t", 27.6));
        f.push(fig("bandwidth", "bandwidth/read/12t", 50.0));
        let a = agreements(&f, None);
        assert_eq!(a[0].stands.key, "bandwidth/read/12t");
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
