//! What the drift probes (and the ladders' core clocks) of two runs say about their comparison:
//! a change a slow phase of either run covers is not judged ([`within_drift`]); a change the
//! whole machine made between the runs, probes included, is not judged either
//! ([`moved_between`]); a bandwidth change within the drift the runs recorded below a slow
//! phase is noise ([`within_recorded_drift`]). Not judged makes a gate INCOMPLETE, noise lets
//! it pass.

use super::rows::{MIN_FLOOR, Row, Verdict};
use crate::document::{Document, Results};

/// How much slower than its best the machine was while `suite` measured in `doc`'s run, as the
/// run's drift probes saw it (1 − the lowest probed read rate ÷ the run's best), where that
/// suite measured in a slow phase.
fn slow_by(doc: &Document, suite: &str, rate: Rate) -> Option<f64> {
    let Results::Run(run) = &doc.results else {
        return None;
    };
    let d = run.drift.as_ref()?;
    let share = match rate {
        Rate::Core => d.slow_share(suite)?,
        // Where the team was slow then, its share; else one core's (which also covers old
        // results and one CPU, where there is no team series).
        Rate::Team => d.team_slow_share(suite).or_else(|| d.slow_share(suite))?,
    };
    Some((1.0 - share).max(0.0))
}

/// How much slower than its best the machine was while `f`'s suite measured in `doc`'s run,
/// by the rate `f` is held against, where that suite measured in a slow phase: what `check`
/// allows a figure to fall short by before it judges.
pub(crate) fn figure_slow_by(doc: &Document, f: &crate::figure::Figure) -> Option<f64> {
    slow_by(doc, &f.suite, Rate::for_figure(&f.suite, &f.unit, &f.key))
}

/// A change judged beyond the noise whose size the drift of the runs explains is not called:
/// where either run measured the figure's suite in a slow phase of its run (its drift probes
/// read the machine slower by a share s then, at some point of the suite), a change of at most
/// s plus the figure's floor is the host, not the machine. The side that reads worse may be
/// slow; the side that reads better may have measured partly before or after a slow phase
/// (the probes bracketing its suite disagree), and then its figure is no baseline for either
/// state. The row is not judged (the machine moved), with the reason.
pub(super) fn within_drift(rows: &mut [Row], a: &Document, b: &Document) {
    for r in rows
        .iter_mut()
        .filter(|r| matches!(r.verdict, Verdict::Better | Verdict::Worse))
    {
        let rate = Rate::for_row(r);
        let sides = [
            ("A", slow_by(a, &r.suite, rate)),
            ("B", slow_by(b, &r.suite, rate)),
        ];
        let Some((label, s)) = sides
            .into_iter()
            .filter_map(|(l, s)| Some((l, s?)))
            .max_by(|x, y| x.1.total_cmp(&y.1))
        else {
            continue;
        };
        let change = r.change.map_or(0.0, f64::abs);
        if change <= s + r.floor.unwrap_or(MIN_FLOOR) {
            r.verdict = Verdict::Moved;
            r.note = Some(format!(
                "{label} measured {} in a slow phase of its run (the drift probes read {} rate {:.0}% below the run's best), which covers this {:.1}% change",
                r.suite,
                rate.word(),
                100.0 * s,
                100.0 * change
            ));
        }
    }
}

/// How far `doc`'s probes of `rate` ranged within its run (highest ÷ lowest − 1), when that
/// stayed below the drift that marks a slow phase (a larger one names its suites instead).
fn recorded_drift(doc: &Document, rate: Rate) -> Option<f64> {
    let Results::Run(run) = &doc.results else {
        return None;
    };
    let v = run.drift.as_ref()?.verdict.as_ref()?;
    let (ratio, moved) = match rate {
        Rate::Core => (v.bandwidth_ratio, v.moved),
        Rate::Team => v.team.as_ref().map(|t| (t.bandwidth_ratio, t.moved))?,
    };
    (!moved && ratio.is_finite()).then(|| (ratio - 1.0).max(0.0))
}

/// A bandwidth change within the drift the two runs recorded is noise: where a run's probes of
/// the figure's rate ranged by d within it (below a slow phase's threshold), the machine moved
/// that much while nothing changed, so a change of at most d plus the figure's floor is not
/// called. Only bandwidth figures: the probes read bandwidth, and a cache's latency does not
/// move with memory's. What the probes moved between the runs, the same way as the figure, is
/// taken out of d (a slower DIMM setting moves the probes too, and a gate must not pass it as
/// noise; [`moved_between`] judges larger moves).
pub(super) fn within_recorded_drift(rows: &mut [Row], a: &Document, b: &Document) {
    let busy = busy_before(b).is_some();
    for r in rows.iter_mut().filter(|r| {
        matches!(r.verdict, Verdict::Better | Verdict::Worse) && r.unit.starts_with("GB/s")
    }) {
        // B's own CPUs busy with other work: a worse figure is what the node delivered.
        if busy && r.verdict == Verdict::Worse {
            continue;
        }
        let rate = Rate::for_row(r);
        let recorded = [recorded_drift(a, rate), recorded_drift(b, rate)]
            .into_iter()
            .flatten()
            .fold(0.0, f64::max);
        // The part of the change the probes also made between the runs is no noise (a slower
        // DIMM setting moves them too): the recorded drift covers only what is left.
        let between = probe_ratio(a, b, rate).map_or(0.0, |q| {
            let same_way = (q < 1.0) == (r.change.unwrap_or(0.0) < 0.0);
            if same_way { (q - 1.0).abs() } else { 0.0 }
        });
        let d = (recorded - between).max(0.0);
        let change = r.change.map_or(0.0, f64::abs);
        if d > 0.0 && change <= d + r.floor.unwrap_or(MIN_FLOOR) {
            r.verdict = Verdict::Noise;
            r.note = Some(format!(
                "within the drift the runs recorded: the probes read {} rate up to {:.0}% apart within a run ({:.0}% of it not explained by their move between the runs), which with the floor covers this {:.1}% change",
                rate.word(),
                100.0 * recorded,
                100.0 * d,
                100.0 * change
            ));
        }
    }
}

/// Which of a probe's read rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rate {
    /// One core's.
    Core,
    /// Every CPU of the run at once.
    Team,
}

impl Rate {
    fn of(self, p: &memsight_suites::probes::DriftProbe) -> Option<f64> {
        match self {
            Rate::Core => Some(p.read_gbs),
            Rate::Team => p.team_read_gbs,
        }
        .filter(|r| r.is_finite() && *r > 0.0)
    }

    fn word(self) -> &'static str {
        match self {
            Rate::Core => "one core's",
            Rate::Team => "the team's",
        }
    }

    /// [`Rate::for_key`], and the team's for the bandwidths of suites whose keys name no
    /// thread count but which measure with a team: STREAM, the NUMA matrix's cells, loaded
    /// latency's saturation.
    fn for_row(r: &Row) -> Rate {
        Rate::for_figure(&r.suite, &r.unit, &r.key)
    }

    fn for_figure(suite: &str, unit: &str, key: &crate::key::Key) -> Rate {
        let team_suite = memsight_suites::suite_id::SuiteId::from_name(suite)
            .is_some_and(memsight_suites::suite_id::SuiteId::team_bandwidth);
        if team_suite && unit.starts_with("GB/s") {
            Rate::Team
        } else {
            Rate::for_key(key)
        }
    }

    /// The rate a figure is held against: the team's for a figure several threads measured
    /// together (the run's CPUs may have been placed on fewer cores or dies in one run than in
    /// the other, which one core's rate does not see), one core's otherwise.
    fn for_key(key: &crate::key::Key) -> Rate {
        let threads = key
            .dims()
            .get(crate::dims::Dim::Threads)
            .and_then(|t| t.trim_start_matches('t').parse::<usize>().ok());
        if threads.is_some_and(|t| t > 1) {
            Rate::Team
        } else {
            Rate::Core
        }
    }
}

/// The share by which the drift probes of the two runs read the machine apart, when both are
/// runs with probes of that `rate`: the median rate of B's usable probes over A's.
fn probe_ratio(a: &Document, b: &Document, rate: Rate) -> Option<f64> {
    let level = |d: &Document| {
        let Results::Run(run) = &d.results else {
            return None;
        };
        let rates: Vec<f64> = run
            .drift
            .as_ref()?
            .probes
            .iter()
            .filter_map(|p| rate.of(p))
            .collect();
        (!rates.is_empty()).then(|| memsight_core::stats::median(&rates))
    };
    Some(level(b)? / level(a)?)
}

/// The level of `doc`'s drift probes that `f` is held against: the median read rate (GB/s) of
/// one core or of the team, as [`Rate::for_figure`] chooses, for a bandwidth; the median chase
/// latency (ns) for a latency; `None` for other figures or a run without probes.
pub(crate) fn probe_level(doc: &Document, f: &crate::figure::Figure) -> Option<f64> {
    let Results::Run(run) = &doc.results else {
        return None;
    };
    let probes = &run.drift.as_ref()?.probes;
    let values: Vec<f64> = if f.unit.starts_with("GB/s") {
        let rate = Rate::for_figure(&f.suite, &f.unit, &f.key);
        probes.iter().filter_map(|p| rate.of(p)).collect()
    } else if f.unit == "ns" {
        probes
            .iter()
            .map(|p| p.latency_ns)
            .filter(|l| l.is_finite() && *l > 0.0)
            .collect()
    } else {
        return None;
    };
    (!values.is_empty()).then(|| memsight_core::stats::median(&values))
}

/// How busy `doc`'s CPUs were with other work just before it measured, percent, when past
/// [`memsight_core::env::BUSY_PERCENT`].
fn busy_before(doc: &Document) -> Option<f64> {
    doc.environment
        .load
        .busy_percent
        .filter(|&b| b > memsight_core::env::BUSY_PERCENT)
}

/// The probes' read rate must move by more than this between runs for the machine to have
/// moved (a probe's own passes spread by a few percent).
pub const MOVED: f64 = 0.10;

/// Where the drift probes read the whole machine slower (or faster) in B than in A by more
/// than [`MOVED`], a figure judged worse (or better) the same way is not judged: a host's
/// state or the machine itself changed between the runs, and a gate cannot tell which from a
/// regression (a shared host's memory moves 2× within minutes; a failed DIMM moves the probes
/// too). The gate then reports it as not seen, never as passed.
pub(super) fn moved_between(rows: &mut [Row], a: &Document, b: &Document) {
    let core = probe_ratio(a, b, Rate::Core);
    let team = probe_ratio(a, b, Rate::Team);
    for r in rows.iter_mut() {
        let Some((what, ratio, threshold)) = reference(r, a, b, core, team) else {
            continue;
        };
        if (ratio - 1.0).abs() <= threshold {
            continue;
        }
        let slower = ratio < 1.0;
        let same_way = match r.verdict {
            Verdict::Worse => slower,
            Verdict::Better => !slower,
            _ => false,
        };
        // A figure that moved more than twice as far as the machine did moved beyond it.
        let m = (ratio - 1.0).abs();
        let within = r.change.map_or(0.0, f64::abs) <= 2.0 * m + r.floor.unwrap_or(MIN_FLOOR);
        if !(same_way && within) {
            continue;
        }
        // Worse where B's own CPUs were busy with other work as it began: a process on this
        // node competes for its memory (a hog, a job left behind), which is what the node
        // delivered then and what a gate must fail, not a host state it cannot see.
        let busy = busy_before(b).filter(|_| slower && r.verdict == Verdict::Worse);
        let way = if slower { "slower" } else { "faster" };
        if let Some(pct) = busy {
            r.note = Some(format!(
                "{what} read {:.0}% {way} in B than in A, and B's CPUs were {pct:.0}% busy with other work as it began: another process on this node competes for its memory",
                100.0 * m
            ));
        } else {
            r.verdict = Verdict::Moved;
            r.note = Some(format!(
                "{what} read {:.0}% {way} in B than in A: the machine's state changed between the runs",
                100.0 * m
            ));
        }
    }
}

/// What a figure is held against between runs: its words, B's value over A's (below 1: the
/// machine slower), and the move that counts. A cache level's latency follows the core clock
/// the ladder measured (a vCPU moved to a core with another clock changes it by a few
/// percent, and the clock is read to well under 1%); a figure several threads measured, the
/// team's rate; any other, one core's rate.
fn reference(
    r: &Row,
    a: &Document,
    b: &Document,
    core: Option<f64>,
    team: Option<f64>,
) -> Option<(&'static str, f64, f64)> {
    let d = r.key.dims();
    let level = d.get(crate::dims::Dim::Level);
    if level.is_some_and(|l| l.starts_with('L')) {
        let cpu: usize = d.get(crate::dims::Dim::Cpu)?.parse().ok()?;
        return Some((
            "the core clock",
            clock(b, cpu)? / clock(a, cpu)?,
            CLOCK_MOVED,
        ));
    }
    match (Rate::for_row(r), team) {
        (Rate::Team, Some(t)) => Some(("the drift probes' team rate", t, MOVED)),
        // A team figure falls back on one core's rate where the runs probed no team.
        _ => Some(("the drift probes' one-core rate", core?, MOVED)),
    }
}

/// The core clock `doc`'s latency ladder measured on `cpu`, GHz.
fn clock(doc: &Document, cpu: usize) -> Option<f64> {
    let latency = match &doc.results {
        Results::Run(run) => run.latency.as_ref()?,
        Results::Latency(l) => l,
        _ => return None,
    };
    let l = latency.ladders.iter().find(|l| l.cpu == cpu)?;
    l.core_clock
        .ghz
        .as_ref()
        .map(|s| s.median)
        .filter(|g| g.is_finite() && *g > 0.0)
}

/// The core clock must move by more than this between runs for the machine to have moved.
pub const CLOCK_MOVED: f64 = 0.02;
