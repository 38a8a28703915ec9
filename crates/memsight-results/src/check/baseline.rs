//! A node judged against its own history (`check --baseline last:N`): the reference is made
//! from the N newest complete runs of the same machine and command before the judged one, per
//! figure from their distribution (median and median absolute deviation) rather than one run's
//! confidence interval, which a shared host's drift between runs exceeds.

use std::collections::BTreeMap;
use std::str::FromStr;

use memsight_core::Error;
use memsight_core::stats::{mad_sigma, median};

use super::{Expectation, Reference};
use crate::document::Document;
use crate::figure::Figure;
use crate::history::{History, fingerprint};

/// How far a figure may fall below its baseline's median: this many robust standard deviations
/// of the baseline runs (MAD × 1.4826)…
pub const MAD_FACTOR: f64 = 4.0;
/// … and at least this share of the median: runs that happened to agree closely do not make a
/// tolerance tighter than a shared machine holds from one hour to the next.
pub const MIN_BASELINE_TOLERANCE: f64 = 0.05;
/// The fewest baseline runs a figure must be in (cleanly, outside a slow phase) to be judged.
pub const MIN_RUNS: usize = 5;

/// `last:N`: the N newest runs before the judged one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub runs: usize,
}

impl FromStr for Window {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let n = s
            .strip_prefix("last:")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n >= MIN_RUNS)
            .ok_or_else(|| {
                format!(
                    "'{s}' is not a baseline: write last:N, N at least {MIN_RUNS} (e.g. last:10)"
                )
            })?;
        Ok(Window { runs: n })
    }
}

/// The N newest complete runs of `command` on the machine `fingerprint` names that started
/// before `before` (RFC 3339; every run when `None`), newest first.
pub fn runs(
    h: &History,
    fingerprint_of: &str,
    command: &str,
    before: Option<&str>,
    w: Window,
) -> Result<Vec<Document>, Error> {
    let mut out = Vec::new();
    for row in h.list(None, 100_000)? {
        let earlier = before.is_none_or(|b| row.started.as_str() < b);
        if row.fingerprint != fingerprint_of || row.command != command || !row.complete || !earlier
        {
            continue;
        }
        out.push(h.get(row.id)?);
        if out.len() == w.runs {
            break;
        }
    }
    Ok(out)
}

/// A baseline: the runs it was made of and the reference they support.
pub struct Baseline {
    pub docs: Vec<Document>,
    pub reference: Reference,
}

/// The baseline `last:N` from the history at `db`: the runs of the machine `fingerprint_of`
/// names before `before` (every run when measuring now).
pub fn from_history(
    db: &std::path::Path,
    fingerprint_of: &str,
    before: Option<&str>,
    w: Window,
) -> Result<Baseline, Error> {
    let h = History::open(db, false)?;
    let docs = runs(&h, fingerprint_of, "run", before, w)?;
    let reference = reference(&docs, w)?;
    Ok(Baseline { docs, reference })
}

/// What a check judges against: a reference file, or the node's own history.
pub enum Judge {
    Reference(Reference),
    Baseline(Baseline),
}

impl Judge {
    /// The reference (a baseline's is made from its runs): what to measure, what to expect.
    pub fn reference(&self) -> &Reference {
        match self {
            Judge::Reference(r) => r,
            Judge::Baseline(b) => &b.reference,
        }
    }

    pub fn judge(&self, doc: &Document) -> super::CheckReport {
        match self {
            Judge::Reference(r) => super::judge::judge(r, doc),
            Judge::Baseline(b) => b.judge(doc),
        }
    }
}

/// Why a figure was not judged: it fell short by no more than the machine's own drift probes
/// moved since the baseline runs.
const HOST_MOVED: &str = "outside the expected range by no more than the run's drift probes read the machine worse than in the baseline runs";

impl Baseline {
    /// `doc` judged against the baseline. A figure that fell beyond its tolerance by no more
    /// than the run's drift probes read the machine worse than in the baseline runs (their
    /// median), for the rate or latency the figure is held against, is not judged: the host
    /// moved between the runs (a shared machine's memory moves by several percent within the
    /// hour), and the check says so (INCOMPLETE), never PASS. A node that lost a channel moves
    /// its probes too, so such a node is INCOMPLETE run after run, which an alert sees.
    pub fn judge(&self, doc: &Document) -> super::CheckReport {
        let r = super::judge::judge(&self.reference, doc);
        let figures = crate::document::figures(doc);
        let mut moved = Vec::new();
        let checks: Vec<super::Check> = r
            .checks
            .into_iter()
            .map(|c| {
                let Some(drop) = self.host_drop(doc, &figures, &c) else {
                    return c;
                };
                let short = c.margin_percent.map_or(f64::INFINITY, |m| -m / 100.0);
                if short > drop {
                    return c;
                }
                moved.push(c.name.clone());
                super::Check {
                    status: super::Status::Skip,
                    reason: format!(
                        "{HOST_MOVED} ({:.1}% beyond the tolerance, probes {:.1}% worse)",
                        100.0 * short,
                        100.0 * drop
                    ),
                    ..c
                }
            })
            .collect();
        let mut incomplete = r.incomplete;
        if !moved.is_empty() {
            incomplete.push(format!(
                "{} figure(s) fell short by no more than the host moved since the baseline runs ({})",
                moved.len(),
                moved.join(", ")
            ));
        }
        super::CheckReport::new(r.reference, r.host, r.started, incomplete, checks)
    }

    /// How much worse than in the baseline runs the judged run's probes read the machine, for a
    /// failed figure's rate or latency (`None` where it did not fail or nothing says).
    fn host_drop(&self, doc: &Document, figures: &[Figure], c: &super::Check) -> Option<f64> {
        if c.status != super::Status::Fail || !c.reason.starts_with("outside the expected range") {
            return None;
        }
        let f = figures
            .iter()
            .find(|f| f.key == crate::key::Key::read(&c.name))?;
        let now = crate::history::probe_level(doc, f)?;
        let before: Vec<f64> = self
            .docs
            .iter()
            .filter_map(|d| crate::history::probe_level(d, f))
            .collect();
        if before.is_empty() {
            return None;
        }
        let then = median(&before);
        let drop = if f.unit == "ns" {
            now / then - 1.0
        } else {
            1.0 - now / then
        };
        (drop > 0.0).then_some(drop)
    }
}

/// The reference the baseline runs support: every summary figure at least [`MIN_RUNS`] of them
/// measured cleanly (not on disturbed samples, not in a slow phase of its run), expected at their
/// median, allowed to be worse by max([`MAD_FACTOR`] × MAD-σ, [`MIN_BASELINE_TOLERANCE`]);
/// the machine's layout as health conditions, from the newest run.
pub fn reference(docs: &[Document], w: Window) -> Result<Reference, Error> {
    if docs.len() < MIN_RUNS {
        return Err(Error::input(format!(
            "the history holds {} complete run(s) of this machine before the judged one, a baseline needs at least {MIN_RUNS} (`memsight run` adds one)",
            docs.len()
        )));
    }
    let newest = &docs[0];
    let mut by_key: BTreeMap<String, Vec<Figure>> = BTreeMap::new();
    for d in docs {
        let slow = crate::document::slow_suites(d);
        for f in crate::document::figures(d)
            .into_iter()
            .filter(super::make::is_summary)
        {
            let disturbed = f.summary.as_ref().is_some_and(|s| s.rests_on_disturbed());
            if disturbed || !f.value.is_finite() || slow.contains(&f.suite) {
                continue;
            }
            by_key.entry(f.key.to_string()).or_default().push(f);
        }
    }
    by_key.retain(|_, fs| fs.len() >= MIN_RUNS);
    if by_key.is_empty() {
        return Err(Error::input(format!(
            "no summary figure was measured cleanly in at least {MIN_RUNS} of the {} baseline runs",
            docs.len()
        )));
    }
    let mut r = super::make::make(std::slice::from_ref(newest), &[], String::new())?;
    r.name = format!(
        "the {} run(s) before it on this machine ({} asked: {})",
        docs.len(),
        fingerprint(&newest.environment),
        format_args!("last:{}", w.runs)
    );
    // A figure some baseline runs lacked (a level the ladder resolves now and then) is
    // optional: its absence is what this node does; one every run had is required.
    r.figures = by_key
        .into_values()
        .map(|fs| expectation(&fs, fs.len() < docs.len()))
        .collect();
    Ok(r)
}

/// A figure's expectation from its baseline values.
fn expectation(fs: &[Figure], optional: bool) -> Expectation {
    let values: Vec<f64> = fs.iter().map(|f| f.value).collect();
    let m = median(&values);
    let sigma = mad_sigma(&values);
    let rel = if m.abs() > 0.0 {
        MAD_FACTOR * sigma / m.abs()
    } else {
        0.0
    };
    let tol = rel.max(MIN_BASELINE_TOLERANCE);
    Expectation {
        optional,
        note: format!(
            "{}: median {m:.4} of {} runs, MAD-σ {:.1}%; tolerance max({:.0}%, {MAD_FACTOR} × MAD-σ)",
            fs[0].label,
            values.len(),
            100.0 * sigma / m.abs().max(f64::MIN_POSITIVE),
            100.0 * MIN_BASELINE_TOLERANCE
        ),
        ..super::make::expected(&fs[0], m, tol)
    }
}
