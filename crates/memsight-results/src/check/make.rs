//! A reference written from good runs of one kind of node, for the administrator to edit: the
//! summary figures (no curve points) with the median of the runs as the expectation and a
//! tolerance from their spread, and the machine's layout as health conditions.

use std::collections::BTreeMap;

use memsight_core::Error;
use memsight_core::units::format_bytes;

use super::judge::cache_name;
use super::{Expectation, Health, Measure, MeasureLevel, Reference, Tolerance};
use crate::dims::Dim;
use crate::document::{Document, Level, Results};
use crate::figure::Figure;

/// The smallest tolerance written: machines shared with others move by more than their own
/// samples' spread (see the methods' drift section).
pub const MIN_TOLERANCE: f64 = 0.10;
/// The tolerance is this many times the runs' relative spread (or one run's own), at least
/// [`MIN_TOLERANCE`].
pub const SPREAD_FACTOR: f64 = 3.0;

/// Whether a figure summarises (a plateau, a test at its size, a saturation) rather than being a
/// point of a curve (a working-set size, a block size, an address, a chain count).
pub(crate) fn is_summary(f: &Figure) -> bool {
    let d = f.dims();
    let point = [
        Dim::WorkingSetBytes,
        Dim::BlockBytes,
        Dim::Address,
        Dim::Chains,
    ]
    .into_iter()
    .any(|x| d.get(x).is_some());
    f.scope == crate::figure::Scope::Summary
        && !point
        && d.get(Dim::Statistic) != Some("sweep")
        && !matches!(f.key, crate::key::Key::Fleet { .. })
}

/// The reference `docs` support: refused when they are of different machines (their hardware
/// fingerprints differ), naming the two results by `labels` (as the user gave them) and their
/// machines, or when they hold no summary figure.
pub fn make(docs: &[Document], labels: &[String], name: String) -> Result<Reference, Error> {
    let first = docs
        .first()
        .ok_or_else(|| Error::input("give at least one result to make a reference from"))?;
    let kind = crate::history::fingerprint(&first.environment);
    if let Some(i) = docs
        .iter()
        .position(|d| crate::history::fingerprint(&d.environment) != kind)
    {
        let what = |j: usize| {
            let e = &docs[j].environment;
            format!(
                "'{}' (host {}, {})",
                labels.get(j).map_or("?", String::as_str),
                e.hostname.as_deref().unwrap_or("?"),
                e.cpu.model_name.as_deref().unwrap_or("unknown CPU")
            )
        };
        return Err(Error::input(format!(
            "{} and {} are of different kinds of machine: make one reference per kind",
            what(0),
            what(i)
        )));
    }
    let mut by_key: BTreeMap<String, Vec<Figure>> = BTreeMap::new();
    for d in docs {
        for f in crate::document::figures(d).into_iter().filter(is_summary) {
            if f.summary.as_ref().is_some_and(|s| s.rests_on_disturbed()) || !f.value.is_finite() {
                continue;
            }
            by_key.entry(f.key.to_string()).or_default().push(f);
        }
    }
    // A figure every run has; one that only some runs measured would fail on the others.
    by_key.retain(|_, fs| fs.len() == docs.len());
    if by_key.is_empty() {
        return Err(Error::input(
            "the results hold no summary figure that every one of them measured cleanly",
        ));
    }
    let mut r = Reference::new(name);
    r.measure = Measure {
        level: match first.results {
            Results::Run(ref run) => match run.level {
                Level::Quick => MeasureLevel::Quick,
                Level::Default | Level::Interrupted => MeasureLevel::Default,
                Level::Thorough => MeasureLevel::Thorough,
            },
            _ => MeasureLevel::Default,
        },
        suites: Vec::new(),
    };
    r.figures = by_key.into_values().map(|fs| expectation(&fs)).collect();
    r.health = health(first);
    Ok(r)
}

fn expectation(fs: &[Figure]) -> Expectation {
    let mut values: Vec<f64> = fs.iter().map(|f| f.value).collect();
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    let spread = if values.len() >= 2 {
        (values[values.len() - 1] - values[0]) / median.abs().max(f64::MIN_POSITIVE)
    } else {
        fs[0].summary.as_ref().map_or(0.0, |s| s.robust_cv)
    };
    let tol = (SPREAD_FACTOR * spread).max(MIN_TOLERANCE);
    // Two significant decimals are plenty for an expectation; more would look measured.
    let tol = (tol * 100.0).ceil() / 100.0;
    let basis = if values.len() >= 2 {
        format!("range of {} runs", values.len())
    } else {
        "robust CV of the run's samples".into()
    };
    Expectation {
        optional: false,
        note: format!(
            "{}: median {}; tolerance max({:.0}%, {SPREAD_FACTOR} × {basis} {:.1}%)",
            fs[0].label,
            round4(median),
            MIN_TOLERANCE * 100.0,
            spread * 100.0
        ),
        ..expected(&fs[0], round4(median), tol)
    }
}

/// The expectation of figure `f` at `value`, allowed `tol` (relative) the worse way, in the
/// figure's unit: what a made reference and a baseline write alike.
pub(crate) fn expected(f: &Figure, value: f64, tol: f64) -> Expectation {
    Expectation {
        select: f.key.to_string(),
        expect: Some(value),
        tolerance: Some(Tolerance::Relative(tol)),
        at_least_of_ceiling: None,
        better: Some(f.better),
        both_ways: false,
        unit: Some(
            f.unit
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string(),
        ),
        optional: false,
        note: String::new(),
    }
}

/// A size as people write it where that is exact (`48KiB`), else in bytes.
fn exact_size(bytes: u64) -> String {
    let short = format_bytes(bytes).replace(' ', "");
    if memsight_core::units::parse_size(&short).ok() == Some(bytes) {
        short
    } else {
        bytes.to_string()
    }
}

fn round4(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let digits = 4 - v.abs().log10().ceil() as i32;
    let p = 10f64.powi(digits);
    (v * p).round() / p
}

/// The machine as the result saw it: layout, caches, memory (2% below what it had, for memory
/// the firmware or kernel may keep), and no uncorrected memory errors. The memory is MemTotal,
/// the figure `check` holds against it (the NUMA nodes' sum can be far less: a guest's nodes,
/// hot-plugged memory), so that a node that lost memory fails.
fn health(d: &Document) -> Health {
    let t = &d.environment.topology;
    let memory = d
        .environment
        .memory
        .total_bytes
        .unwrap_or(t.total_memory_bytes);
    let mut caches = BTreeMap::new();
    for c in &t.caches {
        caches.insert(cache_name(c.level, &c.kind), exact_size(c.size_bytes));
    }
    Health {
        corrected_errors_max: None,
        uncorrected_errors_max: Some(0),
        memory_at_least: Some(format_bytes(memory * 98 / 100).replace(' ', "")),
        numa_nodes: Some(t.numa_nodes.len()),
        sockets: Some(t.packages),
        cpus: Some(t.threads),
        caches,
        huge_pages_free: BTreeMap::new(),
    }
}
