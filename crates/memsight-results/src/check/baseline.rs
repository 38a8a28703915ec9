//! A node judged against its own history (`check --baseline last:N`): the reference is made
//! from the N newest complete runs of the same machine and command before the judged one, per
//! figure from their distribution (median and median absolute deviation) rather than one run's
//! confidence interval, which a shared host's drift between runs exceeds.

use std::collections::BTreeMap;
use std::str::FromStr;

use memsight_core::Error;
use memsight_core::stats::{mad_sigma, median};

use super::{Expectation, Reference, Tolerance};
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

/// The reference of `last:N` from the history at `db`: the runs of the machine `fingerprint_of`
/// names before `before` (every run when measuring now).
pub fn from_history(
    db: &std::path::Path,
    fingerprint_of: &str,
    before: Option<&str>,
    w: Window,
) -> Result<Reference, Error> {
    let h = History::open(db, false)?;
    reference(&runs(&h, fingerprint_of, "run", before, w)?, w)
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
            by_key.entry(f.key.clone()).or_default().push(f);
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
        select: fs[0].key.clone(),
        expect: Some(m),
        tolerance: Some(Tolerance::Relative(tol)),
        at_least_of_ceiling: None,
        better: Some(fs[0].better),
        both_ways: false,
        unit: Some(
            fs[0]
                .unit
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string(),
        ),
        optional,
        note: format!(
            "{}: median {m:.4} of {} runs, MAD-σ {:.1}%; tolerance max({:.0}%, {MAD_FACTOR} × MAD-σ)",
            fs[0].label,
            values.len(),
            100.0 * sigma / m.abs().max(f64::MIN_POSITIVE),
            100.0 * MIN_BASELINE_TOLERANCE
        ),
    }
}
