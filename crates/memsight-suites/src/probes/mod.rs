//! Drift: how the memory available to this machine moved while a run measured it.
//!
//! Most memory is now measured on machines shared with others (cloud guests, nodes where other
//! jobs share the memory controllers), and what one core can draw from memory there moves by
//! up to 2× within minutes. A run is then a series of snapshots of a moving machine: two of
//! its suites may disagree only because they ran in different phases. So a run takes a short
//! reference probe ([`prober`]) at its start, after every suite, at its end and every few
//! seconds within a long suite: one core reads a fixed buffer in memory (best of three passes,
//! program bytes) and chases a pointer chain over the same buffer (median of five samples,
//! idle latency). This module holds the series and the rule that reads it; `prober` measures.
//!
//! **The rule.** Among the probes that kept their CPU, the highest read rate over the lowest is
//! the drift. It counts as the machine moving when it is at least [`MIN_DRIFT`] and at least
//! three times the probes' own spread (the median of (best − worst) ÷ best of each probe's
//! passes): then the probes at least [`MIN_DRIFT`] below the best mark the slow phase, and
//! every suite measured while a slow probe was taken, or between two of them, is named with the
//! share of the best rate it ran at. A probe that lost its CPU to another process (its CPU time
//! fell short of its wall time in half its passes and samples or more) is not a memory figure;
//! where some did, the suites measured then are named as having competed for CPUs (their own
//! samples say what was dropped).

pub mod prober;

use memsight_core::stats::median;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The least move of one core's read rate that counts as drift: 20%, past what a 3-pass probe
/// of a quiet machine scatters (1–5% on the guests measured) yet well below the 2× moves seen
/// on shared ones.
pub const MIN_DRIFT: f64 = 0.20;

/// Passes and samples of one probe (3 read passes, 5 chase samples).
pub const PROBE_PARTS: u32 = 8;

/// One reference probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftProbe {
    /// Seconds since the run started.
    pub at_s: f64,
    /// Where in the run: `start`, `after latency`, `in bandwidth`, `end`.
    pub label: String,
    /// One core's read rate over the probe buffer, GB/s of program bytes (best of the passes
    /// that kept their CPU); not a number (`null`) when every pass lost it.
    #[serde(with = "crate::measure::nan_as_null")]
    #[schemars(with = "Option<f64>")]
    pub read_gbs: f64,
    /// Every CPU of the run reading its share of the buffer at once, GB/s of program bytes
    /// (best of the samples that kept their CPUs); absent with one CPU, when every sample lost
    /// a CPU, and in results written before it was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_read_gbs: Option<f64>,
    /// The passes' spread, (best − worst) ÷ best.
    pub read_spread: f64,
    /// Idle latency of a dependent load over the same buffer, ns (median of the samples that
    /// kept their CPU); `null` when none did.
    #[serde(with = "crate::measure::nan_as_null")]
    #[schemars(with = "Option<f64>")]
    pub latency_ns: f64,
    /// Passes and samples that lost the CPU to another process and were left out.
    pub dropped: u32,
}

impl DriftProbe {
    fn usable(&self) -> bool {
        self.read_gbs.is_finite() && self.read_gbs > 0.0
    }

    /// Another process held the probe's CPU for much of it: half its parts or more were
    /// switched out (one lost part is a kernel thread's tick, not competition).
    fn cpu_contended(&self) -> bool {
        !self.usable() || 2 * self.dropped >= PROBE_PARTS
    }
}

/// When one suite of the run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    /// The suite's name in `memsight run` (`bandwidth`, `numa` …).
    pub suite: String,
    pub from_s: f64,
    pub to_s: f64,
}

/// A suite measured while the machine was slow, or while its CPUs were shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Affected {
    pub suite: String,
    pub from_s: f64,
    pub to_s: f64,
    /// The lowest read rate probed while it measured, as a share of the run's best; 1 when
    /// only CPU competition touched it.
    pub share_of_best: f64,
}

/// What the series says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftVerdict {
    /// Probes that kept their CPU, of all.
    pub usable: usize,
    pub probes: usize,
    /// Highest over lowest read rate among the usable probes.
    pub bandwidth_ratio: f64,
    /// Highest over lowest idle latency among them.
    pub latency_ratio: f64,
    /// The median spread of a probe's own passes.
    pub noise: f64,
    /// Whether the read rate moved by more than [`MIN_DRIFT`] and three times the noise.
    pub moved: bool,
    /// The slow phase, from the first to the last slow probe, s (when moved).
    pub slow_from_s: Option<f64>,
    pub slow_to_s: Option<f64>,
    /// Suites measured in the slow phase.
    pub slow: Vec<Affected>,
    /// Suites measured while a probe lost its CPU to another process.
    pub cpu_shared: Vec<Affected>,
    /// How the team's read rate moved (runs on two CPUs or more, probed from this version on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamDrift>,
}

/// What the team's read rate of the probes says: the CPUs of a run can draw less together
/// while one core's rate stays (a host that places two vCPUs on SMT siblings of one core, or on
/// one die, for a while), so figures several threads measured have a drift of their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TeamDrift {
    /// Probes with a team rate.
    pub usable: usize,
    /// Highest over lowest team read rate.
    pub bandwidth_ratio: f64,
    pub best_gbs: f64,
    pub low_gbs: f64,
    /// Whether it moved by more than [`MIN_DRIFT`] and three times the probes' own spread.
    pub moved: bool,
    /// Suites measured while the team's rate was low (when moved), with its share of the best.
    pub slow: Vec<Affected>,
}

/// The drift series of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftSeries {
    pub method: String,
    pub cpu: usize,
    pub buffer_bytes: u64,
    pub probes: Vec<DriftProbe>,
    pub phases: Vec<Phase>,
    /// `None` with fewer than three usable probes.
    pub verdict: Option<DriftVerdict>,
    pub findings: Vec<String>,
}

impl DriftSeries {
    /// How a suite's figures relate to the drift, for the run's summary: `Some(share)` when
    /// it measured in the slow phase.
    pub fn slow_share(&self, suite: &str) -> Option<f64> {
        let v = self.verdict.as_ref()?;
        v.slow
            .iter()
            .find(|a| a.suite == suite)
            .map(|a| a.share_of_best)
    }

    /// As [`Self::slow_share`], for the team's read rate: the share of its best the CPUs
    /// could draw together while `suite` measured, when that was in a slow phase of theirs.
    pub fn team_slow_share(&self, suite: &str) -> Option<f64> {
        let t = self.verdict.as_ref()?.team.as_ref()?;
        t.slow
            .iter()
            .find(|a| a.suite == suite)
            .map(|a| a.share_of_best)
    }
}

/// Reads the series: the verdict and its findings.
pub fn analyse(probes: &[DriftProbe], phases: &[Phase]) -> (Option<DriftVerdict>, Vec<String>) {
    let usable: Vec<&DriftProbe> = probes.iter().filter(|p| p.usable()).collect();
    let cpu_shared = touched(phases, probes, DriftProbe::cpu_contended, |_| 1.0);
    if usable.len() < 3 {
        let mut findings = vec![format!(
            "drift not judged: {} of {} reference probes kept their CPU (at least 3 are needed)",
            usable.len(),
            probes.len()
        )];
        findings.extend(cpu_finding(&cpu_shared));
        return (None, findings);
    }
    let reads: Vec<f64> = usable.iter().map(|p| p.read_gbs).collect();
    let best = reads.iter().copied().fold(f64::MIN, f64::max);
    let low = reads.iter().copied().fold(f64::MAX, f64::min);
    let lats: Vec<f64> = usable
        .iter()
        .map(|p| p.latency_ns)
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let latency_ratio = if lats.is_empty() {
        f64::NAN
    } else {
        lats.iter().copied().fold(f64::MIN, f64::max)
            / lats.iter().copied().fold(f64::MAX, f64::min)
    };
    let spreads: Vec<f64> = usable.iter().map(|p| p.read_spread).collect();
    let noise = median(&spreads);
    let ratio = best / low;
    let moved = counts_as_drift(ratio, noise);
    let is_slow = |p: &DriftProbe| p.usable() && p.read_gbs * (1.0 + MIN_DRIFT) <= best;
    let slow_probes: Vec<&&DriftProbe> = usable.iter().filter(|p| is_slow(p)).collect();
    let slow = if moved {
        touched(phases, probes, is_slow, |p| p.read_gbs / best)
    } else {
        Vec::new()
    };
    let v = DriftVerdict {
        usable: usable.len(),
        probes: probes.len(),
        bandwidth_ratio: ratio,
        latency_ratio,
        noise,
        moved,
        slow_from_s: moved.then(|| slow_probes.first().map(|p| p.at_s)).flatten(),
        slow_to_s: moved.then(|| slow_probes.last().map(|p| p.at_s)).flatten(),
        slow,
        cpu_shared,
        team: team_drift(probes, phases, noise),
    };
    let mut findings = Vec::new();
    findings.extend(moved_finding(&v, best, low, &usable));
    findings.extend(v.team.as_ref().and_then(|t| team_finding(t, &v)));
    findings.extend(cpu_finding(&v.cpu_shared));
    (Some(v), findings)
}

/// The rule both rates follow: highest ÷ lowest `ratio` is drift from [`MIN_DRIFT`] and three
/// times the probes' own spread `noise`.
fn counts_as_drift(ratio: f64, noise: f64) -> bool {
    ratio >= 1.0 + MIN_DRIFT && ratio - 1.0 >= 3.0 * noise
}

fn team_rate(p: &DriftProbe) -> Option<f64> {
    p.team_read_gbs.filter(|r| r.is_finite() && *r > 0.0)
}

/// The team's drift, by the rule one core's follows (`noise`: the probes' own spread), when
/// three probes or more have a team rate.
fn team_drift(probes: &[DriftProbe], phases: &[Phase], noise: f64) -> Option<TeamDrift> {
    let rates: Vec<f64> = probes.iter().filter_map(team_rate).collect();
    if rates.len() < 3 {
        return None;
    }
    let best = rates.iter().copied().fold(f64::MIN, f64::max);
    let low = rates.iter().copied().fold(f64::MAX, f64::min);
    let ratio = best / low;
    let moved = counts_as_drift(ratio, noise);
    let is_slow = |p: &DriftProbe| team_rate(p).is_some_and(|r| r * (1.0 + MIN_DRIFT) <= best);
    let slow = if moved {
        touched(phases, probes, is_slow, |p| {
            team_rate(p).map_or(1.0, |r| r / best)
        })
    } else {
        Vec::new()
    };
    Some(TeamDrift {
        usable: rates.len(),
        bandwidth_ratio: ratio,
        best_gbs: best,
        low_gbs: low,
        moved,
        slow,
    })
}

fn team_finding(t: &TeamDrift, v: &DriftVerdict) -> Option<String> {
    if !t.moved {
        return None;
    }
    let named = if t.slow.is_empty() {
        "no suite's span".to_string()
    } else {
        span_list(&t.slow, true)
    };
    let core = if v.moved {
        format!("one core's moved {:.2}×", v.bandwidth_ratio)
    } else {
        format!(
            "one core's stayed within {:.0}%",
            100.0 * (v.bandwidth_ratio - 1.0)
        )
    };
    Some(format!(
        "the memory bandwidth the run's CPUs draw together moved {:.2}× during the run ({:.1} GB/s at best, {:.1} GB/s at worst) while {core}: as when a host places the CPUs on fewer cores or dies for a while, or another tenant or job shares the memory; figures several threads measured then read low by up to that share: {named}. Compare them only with figures from the same phase, or measure again",
        t.bandwidth_ratio, t.best_gbs, t.low_gbs
    ))
}

/// The suites during which a probe matching `hit` was taken: the probes inside a suite's span,
/// the last one at or before its start and the first at or after its end (a suite is measured
/// between those two), each with the lowest `share` of its matching probes.
fn touched(
    phases: &[Phase],
    probes: &[DriftProbe],
    hit: impl Fn(&DriftProbe) -> bool,
    share: impl Fn(&DriftProbe) -> f64,
) -> Vec<Affected> {
    phases
        .iter()
        .filter_map(|ph| {
            let before = probes.iter().rposition(|p| p.at_s <= ph.from_s);
            let after = probes.iter().position(|p| p.at_s >= ph.to_s);
            let lo = before.unwrap_or(0);
            let hi = after.unwrap_or(probes.len().saturating_sub(1));
            let hits: Vec<f64> = probes
                .get(lo..=hi)?
                .iter()
                .filter(|p| hit(p))
                .map(&share)
                .collect();
            (!hits.is_empty()).then(|| Affected {
                suite: ph.suite.clone(),
                from_s: ph.from_s,
                to_s: ph.to_s,
                share_of_best: hits.iter().copied().fold(1.0, f64::min),
            })
        })
        .collect()
}

fn span_list(a: &[Affected], with_share: bool) -> String {
    a.iter()
        .map(|x| {
            let share = if with_share {
                format!(", at {:.2}× the best", x.share_of_best)
            } else {
                String::new()
            };
            format!("{} ({:.0}–{:.0} s{share})", x.suite, x.from_s, x.to_s)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn moved_finding(v: &DriftVerdict, best: f64, low: f64, usable: &[&DriftProbe]) -> Option<String> {
    let lat = |x: f64| {
        usable
            .iter()
            .find(|p| p.read_gbs == x)
            .map_or(f64::NAN, |p| p.latency_ns)
    };
    if !v.moved {
        return Some(format!(
            "no drift: one core's read rate stayed within {:.0}% over {} reference probes ({:.1}–{:.1} GB/s; a move counts from {:.0}% and three times the probes' own {:.1}% spread)",
            100.0 * (v.bandwidth_ratio - 1.0),
            v.usable,
            low,
            best,
            100.0 * MIN_DRIFT,
            100.0 * v.noise
        ));
    }
    let named = if v.slow.is_empty() {
        "no suite's span".to_string()
    } else {
        span_list(&v.slow, true)
    };
    Some(format!(
        "the memory bandwidth available to one core moved {:.2}× during the run ({:.1} GB/s at best, {:.1} GB/s between {:.0} s and {:.0} s; idle latency {:.0} → {:.0} ns), more than the probes' own {:.1}% spread: another tenant or job shares the memory; figures measured then read low by up to that share: {named}. Compare such figures only with figures from the same phase, or measure again",
        v.bandwidth_ratio,
        best,
        low,
        v.slow_from_s.unwrap_or(f64::NAN),
        v.slow_to_s.unwrap_or(f64::NAN),
        lat(best),
        lat(low),
        100.0 * v.noise
    ))
}

fn cpu_finding(shared: &[Affected]) -> Option<String> {
    (!shared.is_empty()).then(|| {
        format!(
            "another process took the reference probe's CPU while these suites measured: {}; their own samples in which a thread lost its CPU were dropped and counted (the samples table)",
            span_list(shared, false)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(at_s: f64, read_gbs: f64, latency_ns: f64) -> DriftProbe {
        DriftProbe {
            at_s,
            label: format!("at {at_s}"),
            read_gbs,
            team_read_gbs: None,
            read_spread: 0.02,
            latency_ns,
            dropped: 0,
        }
    }

    fn phase(suite: &str, from_s: f64, to_s: f64) -> Phase {
        Phase {
            suite: suite.into(),
            from_s,
            to_s,
        }
    }

    fn phases() -> Vec<Phase> {
        vec![
            phase("latency", 0.5, 8.0),
            phase("bandwidth", 8.1, 20.0),
            phase("numa", 20.1, 26.0),
            phase("loaded", 26.1, 34.0),
        ]
    }

    /// The guest of the issue: another tenant started streaming at 12 s and stopped at 19 s.
    #[test]
    fn a_tenant_part_way_names_the_suites_it_touched() {
        let probes = vec![
            probe(0.0, 17.0, 95.0),
            probe(8.0, 16.8, 96.0),
            probe(13.0, 9.4, 140.0),
            probe(18.0, 9.8, 136.0),
            probe(20.0, 16.9, 95.0),
            probe(26.0, 17.1, 94.0),
            probe(34.0, 16.7, 96.0),
        ];
        let (v, f) = analyse(&probes, &phases());
        let v = v.unwrap();
        assert!(v.moved);
        assert!((v.bandwidth_ratio - 17.1 / 9.4).abs() < 1e-9);
        assert_eq!((v.slow_from_s, v.slow_to_s), (Some(13.0), Some(18.0)));
        let names: Vec<&str> = v.slow.iter().map(|a| a.suite.as_str()).collect();
        assert_eq!(names, ["bandwidth"]);
        assert!((v.slow[0].share_of_best - 9.4 / 17.1).abs() < 1e-9);
        assert!(f[0].contains("moved 1.82×"), "{}", f[0]);
        assert!(
            f[0].contains("bandwidth (8–20 s, at 0.55× the best)"),
            "{}",
            f[0]
        );
        assert!(v.cpu_shared.is_empty());
    }

    /// The run of the gate's quiet pairs (AMD EPYC Zen 4 guest, 2 vCPUs): one core read
    /// 30 GB/s throughout while the two CPUs together fell from 54 to 33 GB/s after the start,
    /// as when the host moves two vCPUs onto one core. The bandwidth suite is named for the
    /// team, not for one core.
    #[test]
    fn the_team_drifts_where_one_core_does_not() {
        let team = |at, core, t| DriftProbe {
            team_read_gbs: Some(t),
            ..probe(at, core, 120.0)
        };
        let probes = vec![
            team(0.0, 30.6, 54.2),
            team(8.0, 30.6, 33.2),
            team(20.0, 29.8, 34.4),
        ];
        let (v, f) = analyse(&probes, &phases());
        let v = v.unwrap();
        assert!(!v.moved, "one core stayed");
        let t = v.team.as_ref().unwrap();
        assert!(t.moved);
        assert!((t.bandwidth_ratio - 54.2 / 33.2).abs() < 1e-9);
        let names: Vec<&str> = t.slow.iter().map(|a| a.suite.as_str()).collect();
        assert_eq!(names, ["latency", "bandwidth", "numa", "loaded"]);
        assert!(
            f.iter().any(|x| x.contains("draw together moved 1.63×")),
            "{f:?}"
        );
        let series = DriftSeries {
            method: String::new(),
            cpu: 0,
            buffer_bytes: 0,
            probes,
            phases: phases(),
            verdict: Some(v),
            findings: f,
        };
        assert_eq!(series.slow_share("bandwidth"), None);
        assert!((series.team_slow_share("bandwidth").unwrap() - 33.2 / 54.2).abs() < 1e-9);
        // Without team rates (one CPU, older results) there is no team drift.
        let (v, _) = analyse(
            &[
                probe(0.0, 30.0, 1.0),
                probe(1.0, 30.0, 1.0),
                probe(2.0, 30.0, 1.0),
            ],
            &[],
        );
        assert!(v.unwrap().team.is_none());
    }

    /// A slow probe at a suite's boundary touches both suites it lies between.
    #[test]
    fn a_slow_probe_between_two_suites_names_both() {
        let probes = vec![
            probe(0.0, 17.0, 95.0),
            probe(8.0, 17.0, 95.0),
            probe(20.05, 10.0, 130.0),
            probe(26.0, 17.0, 95.0),
        ];
        let (v, _) = analyse(&probes, &phases());
        let names: Vec<String> = v.unwrap().slow.into_iter().map(|a| a.suite).collect();
        assert_eq!(names, ["bandwidth", "numa"]);
    }

    /// A quiet machine: the probes' own scatter is not drift, and the finding says so.
    #[test]
    fn noise_is_not_drift() {
        let probes: Vec<DriftProbe> = (0..8)
            .map(|i| probe(i as f64 * 5.0, 16.0 + (i % 3) as f64 * 0.4, 95.0))
            .collect();
        let mut probes = probes;
        // One part switched out (a kernel thread's tick) is not CPU competition.
        probes[1].dropped = 1;
        let (v, f) = analyse(&probes, &phases());
        let v = v.unwrap();
        assert!(!v.moved && v.slow.is_empty());
        assert!(v.cpu_shared.is_empty());
        assert!(f[0].starts_with("no drift"), "{}", f[0]);
        // A 25% move inside probes that scatter 10% each is not judged a move either.
        let mut noisy = probes.clone();
        for p in &mut noisy {
            p.read_spread = 0.10;
        }
        noisy[3].read_gbs = 13.2;
        assert!(!analyse(&noisy, &phases()).0.unwrap().moved);
    }

    /// Probes that lost their CPU are not memory figures: left out of the ratio, and the suites
    /// they touched are named as having competed for CPUs.
    #[test]
    fn a_probe_that_lost_its_cpu_is_left_out_and_said() {
        let mut probes = vec![
            probe(0.0, 17.0, 95.0),
            probe(8.0, 16.9, 95.0),
            probe(20.0, 16.8, 95.0),
            probe(34.0, 17.0, 95.0),
        ];
        probes.insert(
            2,
            DriftProbe {
                dropped: 3,
                ..probe(14.0, 6.0, 300.0)
            },
        );
        probes[2].read_gbs = f64::NAN;
        let (v, f) = analyse(&probes, &phases());
        let v = v.unwrap();
        assert!(!v.moved, "a lost CPU is not a memory drift");
        assert_eq!(v.usable, 4);
        assert_eq!(v.cpu_shared.len(), 1);
        assert_eq!(v.cpu_shared[0].suite, "bandwidth");
        assert!(
            f.iter()
                .any(|l| l.contains("took the reference probe's CPU"))
        );
    }

    #[test]
    fn too_few_probes_are_not_judged() {
        let (v, f) = analyse(&[probe(0.0, 17.0, 95.0), probe(5.0, 8.0, 95.0)], &[]);
        assert!(v.is_none());
        assert!(f[0].starts_with("drift not judged"));
    }

    #[test]
    fn json_round_trip_keeps_unmeasured_as_null() {
        let mut p = probe(1.0, f64::NAN, 95.0);
        p.dropped = 3;
        let s = serde_json::to_string(&p).unwrap();
        assert!(s.contains("\"read_gbs\":null"), "{s}");
        let back: DriftProbe = serde_json::from_str(&s).unwrap();
        assert!(back.read_gbs.is_nan());
    }
}
