//! Core-to-core latency: how long a cache line takes to move between two cores.
//!
//! For every pair of chosen CPUs: the **modified-line** ping-pong (one-way transfer time of a
//! dirty line, median of samples of many turns, via the engine's team sampler), each turn one
//! compare-and-swap, so one coherence transaction (as core-to-core-latency and Intel MLC count);
//! beside it, unless `--modified-only`, the **load-then-store** ping-pong (a read miss and then
//! an upgrade a turn: two transactions, what a spin-then-store handoff costs) and, on x86_64, the
//! **clean-line** probe (a dependent walk over 64 lines that sit clean in the partner's cache,
//! TSC-timed, per line; 200 probes per direction). The
//! default CPUs are one per last-level-cache domain (CCX, socket), or one per core when there is a
//! single domain ([`placement::c2c_cpus`]).

pub mod placement;
mod suite;
pub use suite::C2c;

use crate::measure::level::Level;
use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::ratio::{Ratio, Relation};
use memsight_core::stats::{Summary, median};
use memsight_core::team::sample_team;
use memsight_core::{Error, Result};
use memsight_kernels::pingpong::{Line, pingpong, pingpong_atomic};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::measure::sampling::Sampling;

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct C2cSettings {
    /// CPUs of the matrix; `None`: one per last-level-cache domain, or one per core when there
    /// is one domain.
    pub cpus: Option<Vec<usize>>,
    /// Only the modified-line ping-pong (skip the clean-line probe).
    pub modified_only: bool,
    pub sampling: Sampling,
}

/// Sampling per pair unless told otherwise.
pub const SAMPLING: Sampling = Sampling {
    target_ci: 0.02,
    min_samples: 7,
    point_budget: 0.5,
    sample_ms: 5.0,
};

impl C2cSettings {
    /// What `memsight run` measures at `level`: nothing in a quick run; otherwise shorter pairs
    /// than the command's (the run measures every suite; the command gives the pairs their
    /// full time).
    pub fn at_level(self, level: Level) -> Option<Self> {
        if level == Level::Quick {
            return None;
        }
        Some(C2cSettings {
            sampling: Sampling {
                point_budget: 0.3,
                ..self.sampling
            },
            ..self
        })
    }
}

impl Default for C2cSettings {
    fn default() -> Self {
        C2cSettings {
            cpus: None,
            modified_only: false,
            sampling: SAMPLING,
        }
    }
}

/// Turns per pass of the ping-pong.
const TURNS: u64 = 1000;
/// Clean-line probes per direction.
const PROBES: usize = 200;
/// Lines per clean-line probe (walked as a dependent chain).
const LINES: usize = 64;

/// What a turn of the modified-line figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Turn {
    /// One compare-and-swap: one coherence transaction (schema 4 on).
    Atomic,
    /// A spin on a load, then a store: a read miss and an upgrade (files before schema 4).
    #[default]
    LoadStore,
}

impl Turn {
    /// The quantity's name, for tables and findings.
    pub fn name(self) -> &'static str {
        match self {
            Turn::Atomic => "modified line (atomic: one transfer a turn)",
            Turn::LoadStore => "modified line (load then store: a read miss and an upgrade a turn)",
        }
    }
}

/// One pair's figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    /// One-way transfer of a modified line, ns (symmetric: a→b and b→a alternate); a turn as
    /// [`C2cResults::turn`] says.
    pub modified_ns: Summary,
    /// The load-then-store ping-pong's turn, ns: two coherence transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_store_ns: Option<Summary>,
    /// `a` loads a line clean in `b`'s cache, ns.
    pub clean_a_from_b_ns: Option<Summary>,
    /// `b` loads a line clean in `a`'s cache, ns.
    pub clean_b_from_a_ns: Option<Summary>,
}

/// The `c2c` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct C2cResults {
    pub method: String,
    pub cpus: Vec<usize>,
    /// How the CPUs were chosen.
    pub selection: String,
    /// What a turn of `modified_ns` is (absent in files before schema 4: load then store).
    #[serde(default)]
    pub turn: Turn,
    pub pairs: Vec<Pair>,
    /// `modified[i][j]`: median one-way ns between cpus[i] and cpus[j] (None on the diagonal).
    pub modified: Vec<Vec<Option<f64>>>,
    /// `clean[i][j]`: median ns for cpus[i] to load a line clean in cpus[j].
    pub clean: Vec<Vec<Option<f64>>>,
    pub tsc_ticks_per_ns: Option<f64>,
    pub findings: Vec<Finding>,
}

/// Checks the sampling and the CPUs given before anything is measured.
fn check(a: &C2cSettings, env: &Environment) -> Result<()> {
    a.sampling.rule()?;
    choose_cpus(a, env).map(drop)
}

/// Measures the matrix. Returns results and whether every pair was measured.
pub fn run(a: &C2cSettings, env: &Environment, tick: Tick<'_>) -> Result<Completed<C2cResults>> {
    let (rule, sample_ns) = a.sampling.rule()?;
    let (cpus, selection) = choose_cpus(a, env)?;
    let clean_enabled = cfg!(target_arch = "x86_64") && !a.modified_only;
    let ticks = clean_enabled
        .then(|| memsight_kernels::pingpong::tsc_ticks_per_ns(50))
        .flatten();
    let (pairs, complete) = measure_pairs(a, &cpus, &rule, sample_ns, ticks, tick)?;
    let (modified, clean) = matrices(&cpus, &pairs);
    let findings = findings(env, &pairs);
    let method = method(a, &rule, sample_ns, clean_enabled);
    Ok(Completed::new(
        C2cResults {
            method,
            cpus,
            selection,
            turn: Turn::Atomic,
            pairs,
            modified,
            clean,
            tsc_ticks_per_ns: ticks,
            findings,
        },
        complete,
    ))
}

/// Predicted time in `memsight run` ([`crate::measure::timing`]): every pair's two ping-pong
/// points (atomic and load-store, each after its two threads start) and, on x86, its two
/// clean-line probes.
pub fn estimate(a: &C2cSettings, env: &Environment) -> Result<crate::measure::timing::Estimate> {
    /// Two threads started and pinned, and a clean-line probe's 200 walks, per pair, seconds.
    const PAIR_SETUP_S: f64 = 0.01;
    let (rule, sample_ns) = a.sampling.rule()?;
    let (cpus, _) = choose_cpus(a, env)?;
    let pairs = cpus.len() * (cpus.len() - 1) / 2;
    let point = crate::measure::timing::point_s(&rule, sample_ns);
    Ok(crate::measure::timing::Estimate::new(
        pairs as f64 * (2.0 * point + PAIR_SETUP_S),
        format!("{pairs} pairs of {} CPUs", cpus.len()),
    ))
}

/// The CPUs of the matrix and how they were chosen; at least two.
fn choose_cpus(a: &C2cSettings, env: &Environment) -> Result<(Vec<usize>, String)> {
    let (cpus, selection) = match &a.cpus {
        Some(list) => {
            memsight_core::pin::validate_cpus(list, &env.allowed_cpus)?;
            (list.clone(), "as given".to_string())
        }
        None => {
            let cpus = placement::c2c_cpus(&env.topology, &env.allowed_cpus);
            let how = if placement::one_core(&env.topology, &cpus) {
                "the hardware threads of the one core allowed: the line moves between two threads of one core, not between cores"
            } else {
                "one per last-level-cache domain, or one per core when there is one domain"
            };
            (cpus, how.to_string())
        }
    };
    if cpus.len() < 2 {
        return Err(Error::input(format!(
            "core-to-core latency needs at least 2 CPUs but only {} can be used; give --cpus with two or more",
            cpus.len()
        )));
    }
    Ok((cpus, selection))
}

/// Every pair in turn (i < j); false when interrupted.
fn measure_pairs(
    a: &C2cSettings,
    cpus: &[usize],
    rule: &memsight_core::stats::StopRule,
    sample_ns: f64,
    ticks: Option<f64>,
    tick: Tick<'_>,
) -> Result<(Vec<Pair>, bool)> {
    let n = cpus.len();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (x, y) = (cpus[i], cpus[j]);
            tick(&format!("CPU {x} ↔ CPU {y}"));
            let Some(modified) = modified_pair(x, y, rule, sample_ns, Turn::Atomic)? else {
                return Ok((pairs, false));
            };
            let load_store = match a.modified_only {
                true => None,
                false => modified_pair(x, y, rule, sample_ns, Turn::LoadStore)?,
            };
            let (ab, ba) = match ticks {
                Some(t) => (clean_probe(x, y, t)?, clean_probe(y, x, t)?),
                None => (None, None),
            };
            pairs.push(Pair {
                a: x,
                b: y,
                modified_ns: modified,
                load_store_ns: load_store,
                clean_a_from_b_ns: ab,
                clean_b_from_a_ns: ba,
            });
            if memsight_core::cancel::requested() {
                return Ok((pairs, false));
            }
        }
    }
    Ok((pairs, true))
}

/// A CPU × CPU table of medians, ns (None on the diagonal and where not measured).
type Matrix = Vec<Vec<Option<f64>>>;

/// The pairs' medians as matrices: modified (symmetric) and clean (row loads from column).
fn matrices(cpus: &[usize], pairs: &[Pair]) -> (Matrix, Matrix) {
    let n = cpus.len();
    let idx = |c: usize| {
        cpus.iter()
            .position(|&x| x == c)
            .expect("pair CPUs are in the list")
    };
    let mut modified = vec![vec![None; n]; n];
    let mut clean = vec![vec![None; n]; n];
    for p in pairs {
        let (i, j) = (idx(p.a), idx(p.b));
        modified[i][j] = Some(p.modified_ns.median);
        modified[j][i] = Some(p.modified_ns.median);
        clean[i][j] = p.clean_a_from_b_ns.as_ref().map(|s| s.median);
        clean[j][i] = p.clean_b_from_a_ns.as_ref().map(|s| s.median);
    }
    (modified, clean)
}

/// How the matrix was measured, in words.
fn method(
    a: &C2cSettings,
    rule: &memsight_core::stats::StopRule,
    sample_ns: f64,
    clean_enabled: bool,
) -> String {
    format!(
        "modified line: two pinned threads take turns advancing a counter in one 128-byte-aligned line with a compare-and-swap, retried without a pause until the partner's turn lets it succeed ({TURNS} turns a pass), samples of ≥{:.0} ms until the median's 95% CI is within {:.0}%; figure = time ÷ turns = one-way transfer of a dirty line, one coherence transaction a turn (as core-to-core-latency's CAS bench and Intel MLC count). {}{}",
        sample_ns / 1e6,
        100.0 * rule.target_rel_ci,
        if a.modified_only {
            String::new()
        } else {
            "load then store: the same turns with a spin on a load and then a plain store, a read miss and then an upgrade to Modified a turn (two transactions; what a spin-then-store handoff costs). ".to_string()
        },
        if clean_enabled {
            format!(
                "clean line: the reader flushes {LINES} lines, the partner loads them (clean, in its cache), the reader walks them as a dependent pointer chain timed with the TSC (fenced, calibrated against CLOCK_MONOTONIC); figure = walk time ÷ {LINES} = load-to-use latency of a line clean in the other core; {PROBES} probes per direction."
            )
        } else {
            "clean line: not measured (needs x86_64 TSC, or --modified-only was given).".to_string()
        }
    )
}

fn modified_pair(
    x: usize,
    y: usize,
    rule: &memsight_core::stats::StopRule,
    sample_ns: f64,
    turn: Turn,
) -> Result<Option<Summary>> {
    let line = Line::default();
    let out = sample_team(
        &[x, y],
        rule,
        sample_ns,
        |i, _| Ok((i == 0, 0u64)),
        |state, passes| {
            let turns = passes * TURNS;
            match turn {
                Turn::Atomic => pingpong_atomic(&line, state.0, state.1, turns),
                Turn::LoadStore => pingpong(&line, state.0, state.1, turns),
            }
            state.1 += turns;
        },
        |passes, ns| ns / (2 * passes * TURNS) as f64,
    )?;
    Ok(out.map(|t| t.sampled.summary))
}

/// `reader` walks a chain of [`LINES`] lines that `owner` has just loaded clean; ns per line.
#[cfg(target_arch = "x86_64")]
fn clean_probe(reader: usize, owner: usize, ticks_per_ns: f64) -> Result<Option<Summary>> {
    use memsight_kernels::pingpong::{chain_lines, tsc, walk_lines};
    use std::sync::atomic::Ordering;
    let flag = Line::default();
    let lines = chain_lines(LINES, reader as u64 * 7919 + owner as u64);
    let out = memsight_core::pin::run_team(&[reader, owner], |i, _, _| {
        if i == 0 {
            let mut per_line = Vec::with_capacity(PROBES);
            for k in 0..PROBES as u64 {
                wait_for(&flag, 2 * k);
                for l in &lines {
                    tsc::flush(&l.value);
                }
                flag.value.store(2 * k + 1, Ordering::Release);
                wait_for(&flag, 2 * k + 2);
                let t0 = tsc::now();
                walk_lines(&lines, 0, LINES);
                let t1 = tsc::now();
                per_line.push((t1 - t0) as f64 / ticks_per_ns / LINES as f64);
            }
            Some(per_line)
        } else {
            for k in 0..PROBES as u64 {
                wait_for(&flag, 2 * k + 1);
                walk_lines(&lines, 0, LINES);
                flag.value.store(2 * k + 2, Ordering::Release);
            }
            None
        }
    })?;
    Ok(out
        .into_iter()
        .flatten()
        .next()
        .map(|v| memsight_core::stats::summarize(&v)))
}

/// Spins until the probe's flag holds `value` (untimed), leaving if the partner panicked.
#[cfg(target_arch = "x86_64")]
fn wait_for(flag: &Line, value: u64) {
    let mut spins = 0u32;
    while flag.value.load(std::sync::atomic::Ordering::Acquire) != value {
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(1024) {
            memsight_core::teambarrier::leave_if_aborted();
        }
        std::hint::spin_loop();
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn clean_probe(_: usize, _: usize, _: f64) -> Result<Option<Summary>> {
    Ok(None)
}

/// A pair's modified-line figure, cited.
fn cite(p: &Pair) -> Cited {
    Cited::of(
        format!("CPU {} ↔ {} modified line", p.a, p.b),
        "ns",
        &p.modified_ns,
    )
}

/// One group of pairs (`label`: where they sit): the median of its clean pairs' transfers, or,
/// where every pair rests on disturbed samples, NaN and a finding that says it was not measured.
fn group(label: &str, all: &[&Pair]) -> Option<(f64, Finding)> {
    if all.is_empty() {
        return None;
    }
    let medians = |ps: &[&Pair]| ps.iter().map(|p| p.modified_ns.median).collect::<Vec<_>>();
    let clean: Vec<&Pair> = all
        .iter()
        .copied()
        .filter(|p| !p.modified_ns.rests_on_disturbed())
        .collect();
    if clean.is_empty() {
        return Some((
            f64::NAN,
            Finding::citing(
                format!(
                    "modified-line transfer {label}: not measured: every sample of its {} pair(s) was disturbed (a measuring thread lost its CPU), so the {:.0} ns they read includes time the threads waited for their CPUs and is no transfer time; rerun on a quieter machine",
                    all.len(),
                    median(&medians(all))
                ),
                all.iter().map(|p| cite(p)).collect(),
            ),
        ));
    }
    let v = median(&medians(&clean));
    let left = all.len() - clean.len();
    let left_out = if left > 0 {
        format!("; {left} pair(s) resting on disturbed samples left out")
    } else {
        String::new()
    };
    Some((
        v,
        Finding::citing(
            format!(
                "modified-line transfer {label}: {v:.0} ns (median over {} pair(s){left_out})",
                clean.len()
            ),
            clean.iter().map(|p| cite(p)).collect(),
        ),
    ))
}

/// The findings: transfer times by where the pair sits (within an LLC domain, across domains,
/// across sockets), each the median over its clean pairs; a group whose every pair rests on
/// disturbed samples is said to be unmeasured, not given as a time.
pub fn findings(env: &Environment, pairs: &[Pair]) -> Vec<Finding> {
    let mut out = Vec::new();
    let cpu = |c: usize| env.topology.cpus.iter().find(|x| x.os_index == c);
    let domain = |c: usize| cpu(c).and_then(|x| x.llc_domain);
    let package = |c: usize| cpu(c).and_then(|x| x.package);
    let of = |label: &str, same: &dyn Fn(&Pair) -> bool| {
        group(label, &pairs.iter().filter(|p| same(p)).collect::<Vec<_>>())
    };
    let within = of("within one LLC domain", &|p| domain(p.a) == domain(p.b));
    let across = of("across LLC domains of one socket", &|p| {
        domain(p.a) != domain(p.b) && package(p.a) == package(p.b)
    });
    let sockets = of("across sockets", &|p| package(p.a) != package(p.b));
    for (_, f) in [&within, &across, &sockets].into_iter().flatten() {
        out.push(f.clone());
    }
    let far = [&across, &sockets]
        .into_iter()
        .flatten()
        .find(|(x, _)| x.is_finite());
    if let (Some((w, fw)), Some((x, fx))) = (&within, far)
        && w.is_finite()
    {
        let mut cites = fw.cites.clone();
        cites.extend(fx.cites.iter().cloned());
        out.push(Finding::citing(
            crossing(*x, *w, &fx.cites, &fw.cites),
            cites,
        ));
    }
    out.extend(load_store_finding(pairs));
    if let Some(h) = &env.cpu.hypervisor {
        out.push(Finding::unsampled(format!(
            "under a hypervisor ({h}) these are transfers between wherever the host placed the vCPUs at the time: the same pair of vCPUs can measure one LLC domain's latency in one run and a cross-die latency (several times higher on chiplet CPUs) in the next; repeat and compare"
        )));
    }
    out
}

/// What crossing an LLC boundary costs (`far` ns, its pairs cited in `far_cites`) beside a
/// transfer inside one (`near`), said as the pairs' confidence intervals allow: the same within
/// the noise (a hypervisor's vCPUs, or domains that cost alike), more, or less.
fn crossing(far: f64, near: f64, far_cites: &[Cited], near_cites: &[Cited]) -> String {
    let ratios: Vec<Ratio> = far_cites
        .iter()
        .flat_map(|f| near_cites.iter().filter_map(|n| Ratio::of_cited(f, n)))
        .collect();
    let relation = if ratios.is_empty() {
        Relation::Same
    } else {
        Ratio::median_of(&ratios).relation()
    };
    let r = far / near;
    match relation {
        Relation::Above => format!(
            "crossing an LLC boundary costs {r:.1}× a transfer inside one ({far:.0} vs {near:.0} ns)"
        ),
        Relation::Same => format!(
            "crossing an LLC boundary costs the same as a transfer inside one within the noise ({far:.0} vs {near:.0} ns, {r:.2}×): these LLC domains cost alike, or the vCPUs of a guest sit elsewhere than the domains they report"
        ),
        Relation::Below => format!(
            "crossing an LLC boundary costs less than a transfer inside one ({far:.0} vs {near:.0} ns, {r:.2}×): the domains the topology reports are not where these CPUs sit (a hypervisor's placement)"
        ),
    }
}

/// What a spin-then-store handoff costs beside one transfer, over the pairs where both are
/// clean. The sentence follows the ratio: a read miss then an upgrade (two coherence
/// transactions) only where the handoff costs clearly more than one transfer, the same cost
/// where the two are within the noise of each other.
fn load_store_finding(pairs: &[Pair]) -> Option<Finding> {
    let both: Vec<(&Summary, &Summary)> = pairs
        .iter()
        .filter_map(|p| Some((&p.modified_ns, p.load_store_ns.as_ref()?)))
        .filter(|(a, l)| !a.rests_on_disturbed() && !l.rests_on_disturbed())
        .collect();
    if both.is_empty() {
        return None;
    }
    let r = Ratio::median_of(
        &both
            .iter()
            .map(|(a, l)| Ratio::of(l, a))
            .collect::<Vec<_>>(),
    );
    let cites = both
        .iter()
        .flat_map(|(a, l)| {
            [
                Cited::of("atomic turn", "ns", a),
                Cited::of("load-then-store turn", "ns", l),
            ]
        })
        .collect();
    let head = format!(
        "a handoff that spins on a load and then stores takes {:.2}× one atomic transfer (median over {} pair(s), {:.2}–{:.2} within the figures' confidence intervals)",
        r.value,
        both.len(),
        r.low,
        r.high
    );
    let why = match r.relation() {
        Relation::Same => {
            "the same cost within the noise: no second coherence transaction's cost shows"
        }
        Relation::Below => "less than one atomic transfer",
        // (Half-way to two transfers: the second transaction's cost shows.)
        Relation::Above if r.value >= 1.5 => {
            "a read miss and then an upgrade, two coherence transactions a turn"
        }
        Relation::Above => {
            "more than one transfer, less than the two a read miss and then an upgrade would cost apart"
        }
    };
    Some(Finding::citing(format!("{head}: {why}"), cites))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::finding::Evidence;
    use memsight_core::stats::{Shortfall, summarize};
    use memsight_core::sysfs::FsRoot;
    use memsight_core::topology::Topology;

    fn pair(a: usize, b: usize, ns: f64, disturbed: bool) -> Pair {
        let mut s = summarize(&[ns, ns, ns]);
        if disturbed {
            s.shortfall = Some(Shortfall {
                clean: 0,
                wanted: 7,
                disturbed_kept: 9,
                cause: memsight_core::stats::Disturbance::LostCpu,
            });
        }
        Pair {
            a,
            b,
            modified_ns: s,
            load_store_ns: Some(summarize(&[1.2 * ns])),
            clean_a_from_b_ns: None,
            clean_b_from_a_ns: None,
        }
    }

    /// A busy guest: "modified-line transfer within one LLC domain: 3899 ns" from zero clean
    /// samples, unmarked. It is said to be unmeasured now, with its ⚠.
    #[test]
    fn a_group_of_disturbed_pairs_is_not_given_as_a_transfer_time() {
        let env = Environment::collect(&FsRoot::live(), Topology::load().unwrap(), false);
        let f = findings(&env, &[pair(0, 1, 3899.0, true)]);
        let group = &f[0];
        assert_eq!(group.evidence, Evidence::Disturbed);
        assert!(
            group.starts_with("⚠ modified-line transfer"),
            "{}",
            group.text
        );
        assert!(group.contains("not measured"), "{}", group.text);
        // Clean pairs are given as they are, and the handoff beside them.
        let f = findings(&env, &[pair(0, 1, 30.0, false)]);
        assert_eq!(f[0].evidence, Evidence::Clean);
        assert!(
            f[0].contains(": 30 ns (median over 1 pair(s))"),
            "{}",
            f[0].text
        );
        assert!(f.iter().any(|x| x.contains("1.20× one atomic transfer")));
    }

    /// The handoff's sentence follows its ratio: at 1.01× (seen on an Emerald Rapids guest) it
    /// may not claim a second coherence transaction.
    #[test]
    fn the_handoff_sentence_follows_its_ratio() {
        let spread = |ns: f64| summarize(&[ns * 0.98, ns, ns * 1.02, ns * 0.99, ns * 1.01, ns]);
        let with = |atomic: f64, handoff: f64| {
            let p = Pair {
                a: 0,
                b: 1,
                modified_ns: spread(atomic),
                load_store_ns: Some(spread(handoff)),
                clean_a_from_b_ns: None,
                clean_b_from_a_ns: None,
            };
            load_store_finding(&[p]).unwrap().text
        };
        let same = with(100.0, 101.0);
        assert!(
            same.contains("1.01×") && same.contains("the same cost within the noise"),
            "{same}"
        );
        assert!(!same.contains("two coherence transactions"), "{same}");
        let two = with(100.0, 190.0);
        assert!(two.contains("two coherence transactions a turn"), "{two}");
        let between = with(100.0, 125.0);
        assert!(
            between.contains("more than one transfer, less than"),
            "{between}"
        );
        let less = with(100.0, 80.0);
        assert!(less.contains("less than one atomic transfer"), "{less}");
    }
}
