//! How long a run's parts take, predicted before anything is measured, and a run fitted to a time
//! budget. A suite predicts its time from its resolved settings (points, sampling rule, rounds,
//! working sets), the machine's shape (CPUs, nodes, cache sizes) and where memory begins for a
//! core ([`Estimate`]); the run adds its own costs (the reference probes) and, under a budget,
//! leaves suites out (never those a suite says are kept) until the prediction fits ([`fit`]).
//!
//! The model is a sum, deliberately simple: every sampled point costs what its stop rule allows
//! a typical point ([`point_s`]), every working set what building and touching it costs
//! ([`chain_s`], [`fill_s`]). Its constants were fitted to runs on a 2-vCPU guest; docs/limits.md
//! gives predicted beside measured, per suite and level, and what the model cannot know (a ladder
//! that ends early, a busy machine's longer points).

use crate::suite_id::{SuiteId, UnderBudget};
use memsight_core::stats::StopRule;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Samples a point typically takes before its median's CI meets the target (quiet points stop
/// at their minimum, points near a level's edge run to the cap of 51 or the budget).
const TYPICAL_SAMPLES: f64 = 24.0;
/// Building, flushing and warming a pointer chain in random order over the whole working set:
/// ns per element of a set in memory (a scattered write, a flush and a dependent load that each
/// miss the caches and, on small pages, the TLB).
const RANDOM_CHAIN_NS: f64 = 500.0;
/// The same for the default order, random within 256 KiB windows (the writes and the warm lap
/// stay within a window's pages): ns per element.
const WINDOW_CHAIN_NS: f64 = 45.0;
/// What one thread first-touches and fills, bytes/s (page faults included).
const FILL_PER_THREAD: f64 = 3.0e9;
/// What one NUMA node's memory takes in fills from many threads at once, bytes/s.
const FILL_PER_NODE: f64 = 25.0e9;
/// What one core reads from memory, bytes/s.
const READ_PER_CORE: f64 = 12.0e9;
/// One reference probe of the run's drift (three reads of its buffer by one core, a short chase,
/// the team's read), seconds.
pub const PROBE_S: f64 = 0.15;
/// Between two reference probes within a suite, seconds (the run's `DRIFT_EVERY`).
pub const PROBE_EVERY_S: f64 = 5.0;
/// The run's own start: the short latency probe that finds where memory begins (0.2–1 s) and the
/// reference probes' buffer, touched and chained, seconds.
pub const START_S: f64 = 0.6;

/// Whether a budget may leave suite `name` out: each suite says ([`SuiteId::under_budget`]);
/// a name no suite has is left out (kept is a decision, never a default).
fn kept(name: &str) -> bool {
    SuiteId::from_name(name).is_some_and(|s| s.under_budget() == UnderBudget::Kept)
}

/// The suites of `plan` in the order a budget leaves them out: a name no suite has first, then
/// by each suite's rank.
fn trim_order(plan: &RunTiming) -> Vec<String> {
    let rank = |name: &str| match SuiteId::from_name(name).map(SuiteId::under_budget) {
        None => Some(0),
        Some(UnderBudget::LeftOut(r)) => Some(1 + u32::from(r)),
        Some(UnderBudget::Kept | UnderBudget::NotInRun) => None,
    };
    let mut out: Vec<(u32, String)> = plan
        .suites
        .iter()
        .filter_map(|s| Some((rank(&s.suite)?, s.suite.clone())))
        .collect();
    out.sort();
    out.into_iter().map(|(_, n)| n).collect()
}

/// A suite's predicted time in a run and what the prediction counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Estimate {
    /// Seconds.
    pub seconds: f64,
    /// The work counted, e.g. "35 sizes × 1 CPU, chains to 64 MiB".
    pub work: String,
}

impl Estimate {
    pub fn new(seconds: f64, work: impl Into<String>) -> Self {
        Estimate {
            seconds,
            work: work.into(),
        }
    }
}

/// Seconds one point of sampling typically takes under `rule` with samples of `sample_ns`.
pub fn point_s(rule: &StopRule, sample_ns: f64) -> f64 {
    let s = sample_ns * 1e-9;
    let most = rule.max_samples.max(rule.min_samples) as f64;
    let n = TYPICAL_SAMPLES.clamp(rule.min_samples as f64, most);
    ((rule.warmup as f64 + n) * s).min(rule.budget_s + s)
}

/// Seconds to build, flush and warm a pointer chain over `bytes` at `stride`, in random order
/// over the whole set (`random`) or within windows.
pub fn chain_s(bytes: u64, stride: u64, random: bool) -> f64 {
    let ns = if random {
        RANDOM_CHAIN_NS
    } else {
        WINDOW_CHAIN_NS
    };
    bytes as f64 / stride.max(64) as f64 * ns * 1e-9
}

/// Seconds for `threads` threads spread over `nodes` nodes to touch and fill `bytes_per_thread`
/// each.
pub fn fill_s(bytes_per_thread: u64, threads: usize, nodes: usize) -> f64 {
    let total = bytes_per_thread as f64 * threads.max(1) as f64;
    let rate = (threads.max(1) as f64 * FILL_PER_THREAD).min(nodes.max(1) as f64 * FILL_PER_NODE);
    total / rate
}

/// Seconds for one core to read `bytes` from memory.
pub fn read_s(bytes: u64) -> f64 {
    bytes as f64 / READ_PER_CORE
}

/// NUMA nodes the CPUs `cpus` sit on (1 when the topology does not say).
pub fn nodes_of(topo: &memsight_core::topology::Topology, cpus: &[usize]) -> usize {
    let mut nodes: Vec<usize> = topo
        .cpus
        .iter()
        .filter(|c| cpus.contains(&c.os_index))
        .filter_map(|c| c.node)
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.len().max(1)
}

/// Reference probes a suite of `seconds` takes within it (one every [`PROBE_EVERY_S`]) and after
/// it (one), seconds.
pub fn probes_s(seconds: f64) -> f64 {
    ((seconds / PROBE_EVERY_S).floor() + 1.0) * PROBE_S
}

/// A suite in a run's plan: predicted, and measured once it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteTiming {
    /// The suite's command name.
    pub suite: String,
    /// Predicted seconds, its reference probes included.
    pub predicted_s: f64,
    /// What the prediction counted.
    pub work: String,
    /// Seconds it took, its reference probes included; absent when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_s: Option<f64>,
}

/// A run's plan: each suite's predicted time beside what it took, and the budget it was fitted
/// to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunTiming {
    /// `--time-budget`, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// The run's own start (where memory begins, the probes' buffer), seconds.
    pub start_s: f64,
    /// The suites that were planned to run, in run order.
    pub suites: Vec<SuiteTiming>,
    /// Suites the budget left out, with their predicted time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<SuiteTiming>,
}

impl RunTiming {
    /// A run's plan from its suites' predictions in run order (`Err`: why one will not run):
    /// each suite with the reference probes within and after it when `drift`. Returns the plan
    /// and the reasons of the suites that will not run.
    pub fn assemble<'a>(
        planned: impl IntoIterator<Item = (&'a str, Result<Estimate, String>)>,
        drift: bool,
    ) -> (RunTiming, Vec<String>) {
        let probes = |s: f64| if drift { probes_s(s) } else { 0.0 };
        let mut t = RunTiming {
            start_s: if drift { START_S + PROBE_S } else { 0.0 },
            ..RunTiming::default()
        };
        let mut skipped = Vec::new();
        for (name, p) in planned {
            match p {
                Ok(e) => t.suites.push(SuiteTiming {
                    suite: name.into(),
                    predicted_s: e.seconds + probes(e.seconds),
                    work: e.work,
                    actual_s: None,
                }),
                Err(why) => skipped.push(why),
            }
        }
        (t, skipped)
    }

    /// One line: the predicted total and each suite's share.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .suites
            .iter()
            .map(|s| format!("{} {:.1}", s.suite, s.predicted_s))
            .collect();
        let budget = self
            .budget_s
            .map_or(String::new(), |b| format!(", budget {b:.0} s"));
        format!(
            "predicted time {:.1} s ({}{budget}; memsight run --plan for the table)",
            self.predicted_s(),
            parts.join(", ")
        )
    }

    /// Why the budget keeps suite `name` from running when the run has used `used_s` (`None`:
    /// it runs): the plan left it out, or the suites before it took so long that its predicted
    /// time no longer fits. The suites never left out (latency, bandwidth) run once kept.
    pub fn over_budget(&self, name: &str, used_s: f64) -> Option<String> {
        let budget = self.budget_s?;
        if let Some(s) = self.left_out.iter().find(|s| s.suite == name) {
            let p = s.predicted_s;
            return Some(format!(
                "{name}: left out to fit --time-budget {budget:.0}s (predicted {p:.1} s)"
            ));
        }
        // (A suite its plan said would not run that runs after all, tiers under Memory Mode
        // found by the DIMM inventory, was given no time: it runs, and its time is recorded.)
        let predicted = self.suites.iter().find(|s| s.suite == name)?.predicted_s;
        (!kept(name) && used_s + predicted > budget).then(|| {
            format!(
                "{name}: left out: the run had used {used_s:.1} s of its {budget:.0} s budget and this suite is predicted at {predicted:.1} s"
            )
        })
    }

    /// Records what suite `name` took.
    pub fn took(&mut self, name: &str, seconds: f64) {
        if let Some(s) = self.suites.iter_mut().find(|s| s.suite == name) {
            s.actual_s = Some(seconds);
        }
    }

    /// Moves suite `name` to the suites left out (the run found no time left for it).
    pub fn leave_out(&mut self, name: &str) {
        if let Some(i) = self.suites.iter().position(|s| s.suite == name) {
            let s = self.suites.remove(i);
            self.left_out.push(s);
        }
    }

    /// The predicted total, seconds.
    pub fn predicted_s(&self) -> f64 {
        self.start_s + self.suites.iter().map(|s| s.predicted_s).sum::<f64>()
    }

    /// Seconds still predicted for the suites not yet run, from `at` in run order.
    pub fn remaining_s(&self, at: usize) -> f64 {
        self.suites.iter().skip(at).map(|s| s.predicted_s).sum()
    }
}

/// Fits a plan to `budget_s`: leaves suites out (in [`SuiteId::under_budget`]'s order) while the prediction exceeds
/// it, then takes back, most important first, each one left out that fits in what is left (a
/// short study need not go because a long matrix did). `Err` with the smallest prediction when
/// even the suites never left out (latency, bandwidth) do not fit.
pub fn fit(mut plan: RunTiming, budget_s: f64) -> Result<RunTiming, f64> {
    if !(budget_s > 0.0 && budget_s.is_finite()) {
        return Err(plan.predicted_s());
    }
    plan.budget_s = Some(budget_s);
    let order: Vec<String> = plan.suites.iter().map(|s| s.suite.clone()).collect();
    for name in trim_order(&plan) {
        if plan.predicted_s() <= budget_s {
            break;
        }
        if let Some(i) = plan.suites.iter().position(|s| s.suite == name) {
            plan.left_out.push(plan.suites.remove(i));
        }
    }
    if plan.predicted_s() > budget_s {
        return Err(plan.predicted_s());
    }
    for s in std::mem::take(&mut plan.left_out).into_iter().rev() {
        if plan.predicted_s() + s.predicted_s <= budget_s {
            plan.suites.push(s);
        } else {
            plan.left_out.push(s);
        }
    }
    let at = |s: &SuiteTiming| order.iter().position(|n| *n == s.suite);
    plan.suites.sort_by_key(at);
    plan.left_out.sort_by_key(at);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(name: &str, s: f64) -> SuiteTiming {
        SuiteTiming {
            suite: name.into(),
            predicted_s: s,
            work: String::new(),
            actual_s: None,
        }
    }

    fn plan() -> RunTiming {
        RunTiming {
            budget_s: None,
            start_s: 1.0,
            suites: [
                "latency",
                "bandwidth",
                "loaded-latency",
                "numa",
                "c2c",
                "dimms",
            ]
            .iter()
            .zip([5.0, 10.0, 8.0, 20.0, 30.0, 0.0])
            .map(|(n, s)| suite(n, s))
            .collect(),
            left_out: vec![],
        }
    }

    #[test]
    fn a_budget_leaves_out_the_studies_and_matrices_first() {
        assert_eq!(plan().predicted_s(), 74.0);
        let p = fit(plan(), 45.0).unwrap();
        let kept: Vec<&str> = p.suites.iter().map(|s| s.suite.as_str()).collect();
        // loaded-latency (8 s) and c2c (30 s) go, which leaves 36 s; loaded-latency then fits
        // again: 44 ≤ 45.
        assert_eq!(
            kept,
            ["latency", "bandwidth", "loaded-latency", "numa", "dimms"]
        );
        assert_eq!(p.left_out.len(), 1);
        assert_eq!(p.left_out[0].suite, "c2c");
        assert!(p.predicted_s() <= 45.0);
        // A budget the plan already meets changes nothing.
        assert_eq!(fit(plan(), 100.0).unwrap().suites.len(), 6);
        // Latency and bandwidth are kept: a budget they cannot meet is refused with their time.
        assert_eq!(fit(plan(), 10.0), Err(16.0));
        assert!(fit(plan(), f64::NAN).is_err() && fit(plan(), 0.0).is_err());
    }

    #[test]
    fn a_suite_no_list_names_is_left_out_first_never_kept_by_omission() {
        let mut p = plan();
        p.suites.push(suite("newsuite", 12.0));
        let fitted = fit(p, 75.0).unwrap();
        assert_eq!(fitted.left_out.len(), 1);
        assert_eq!(fitted.left_out[0].suite, "newsuite");
        assert!(fitted.over_budget("latency", 1e9).is_none());
        let mut p = plan();
        p.suites.push(suite("newsuite", 12.0));
        let p = fit(p, 100.0).unwrap();
        assert!(p.over_budget("newsuite", 95.0).is_some());
    }

    #[test]
    fn a_run_leaves_out_what_no_longer_fits_but_never_its_health_figures() {
        let mut p = fit(plan(), 45.0).unwrap();
        assert!(
            p.over_budget("c2c", 0.0)
                .unwrap()
                .contains("left out to fit")
        );
        assert_eq!(p.over_budget("numa", 20.0), None);
        assert!(
            p.over_budget("numa", 30.0)
                .unwrap()
                .contains("had used 30.0 s")
        );
        // Latency and bandwidth run once kept, however late.
        assert_eq!(p.over_budget("bandwidth", 44.0), None);
        // The DIMM inventory costs nothing and is never left out, however late.
        assert_eq!(p.over_budget("dimms", 45.0), None);
        p.took("numa", 19.5);
        assert_eq!(
            p.suites
                .iter()
                .find(|s| s.suite == "numa")
                .unwrap()
                .actual_s,
            Some(19.5)
        );
        assert!(
            p.line().starts_with("predicted time 44.0 s (latency 5.0, "),
            "{}",
            p.line()
        );
        // Without a budget nothing is left out.
        assert_eq!(plan().over_budget("c2c", 1e9), None);
        p.leave_out("numa");
        assert!(p.left_out.iter().any(|s| s.suite == "numa"));
        assert!(!p.suites.iter().any(|s| s.suite == "numa"));
    }

    #[test]
    fn points_cost_their_typical_samples_within_the_budget() {
        let rule = StopRule {
            warmup: 1,
            min_samples: 7,
            max_samples: 51,
            target_rel_ci: 0.01,
            budget_s: 0.15,
        };
        // 25 samples of 2 ms: 50 ms, within 0.15 s.
        assert!((point_s(&rule, 2e6) - 0.05).abs() < 1e-9);
        // Samples of 20 ms: the budget (and the sample that crosses it) binds.
        assert!((point_s(&rule, 20e6) - 0.17).abs() < 1e-9);
        assert!(chain_s(1 << 30, 128, false) > chain_s(1 << 20, 128, false) * 1000.0);
        assert!(chain_s(1 << 30, 128, true) > chain_s(1 << 30, 128, false));
        // Many threads fill at the nodes' rate, not their own.
        assert!(fill_s(1 << 30, 512, 8) > fill_s(1 << 30, 512, 64));
        assert_eq!(probes_s(4.0), PROBE_S);
        assert_eq!(probes_s(11.0), 3.0 * PROBE_S);
    }
}
