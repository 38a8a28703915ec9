//! What the drift probes of two runs say about their comparison: a change the slow phase of
//! one run explains is noise ([`within_drift`]); a change the whole machine made between the
//! runs, probes included, is not judged ([`moved_between`]).

use super::rows::{MIN_FLOOR, Row, Verdict};
use crate::document::{Document, Results};

/// How much slower than its best the machine was while `suite` measured in `doc`'s run, as the
/// run's drift probes saw it (1 − the lowest probed read rate ÷ the run's best), where that
/// suite measured in a slow phase.
fn slow_by(doc: &Document, suite: &str) -> Option<f64> {
    let Results::Run(run) = &doc.results else {
        return None;
    };
    let share = run.drift.as_ref()?.slow_share(suite)?;
    Some((1.0 - share).max(0.0))
}

/// A change judged beyond the noise whose size the drift of the runs explains is not called:
/// where the side that reads worse measured its suite in a slow phase of its run (the drift
/// probes read the machine slower by a share s then), a change of at most s plus the figure's
/// floor is the host, not the machine. The row becomes noise, with the reason.
pub(super) fn within_drift(rows: &mut [Row], a: &Document, b: &Document) {
    for r in rows
        .iter_mut()
        .filter(|r| matches!(r.verdict, Verdict::Better | Verdict::Worse))
    {
        let (slow_side, label) = if r.verdict == Verdict::Worse {
            (b, "B")
        } else {
            (a, "A")
        };
        let Some(s) = slow_by(slow_side, &r.suite) else {
            continue;
        };
        let change = r.change.map_or(0.0, f64::abs);
        if change <= s + r.floor.unwrap_or(MIN_FLOOR) {
            r.verdict = Verdict::Moved;
            r.note = Some(format!(
                "{label} measured {} in a slow phase of its run (the drift probes read {:.0}% below the run's best), which covers this {:.1}% change",
                r.suite,
                100.0 * s,
                100.0 * change
            ));
        }
    }
}

/// The share by which the drift probes of the two runs read the machine apart, when both are
/// runs with probes: the median read rate of B's usable probes over A's.
fn probe_ratio(a: &Document, b: &Document) -> Option<f64> {
    let level = |d: &Document| {
        let Results::Run(run) = &d.results else {
            return None;
        };
        let rates: Vec<f64> = run
            .drift
            .as_ref()?
            .probes
            .iter()
            .map(|p| p.read_gbs)
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        (!rates.is_empty()).then(|| memsight_core::stats::median(&rates))
    };
    Some(level(b)? / level(a)?)
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
    let Some(ratio) = probe_ratio(a, b) else {
        return;
    };
    if (ratio - 1.0).abs() <= MOVED {
        return;
    }
    let slower = ratio < 1.0;
    for r in rows.iter_mut() {
        let same_way = match r.verdict {
            Verdict::Worse => slower,
            Verdict::Better => !slower,
            _ => false,
        };
        if same_way {
            r.verdict = Verdict::Moved;
            r.note = Some(format!(
                "the drift probes read the machine {:.0}% {} in B than in A: its state changed between the runs",
                100.0 * (ratio - 1.0).abs(),
                if slower { "slower" } else { "faster" }
            ));
        }
    }
}
