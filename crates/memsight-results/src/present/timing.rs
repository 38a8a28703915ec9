//! A run's time ([`memsight_suites::measure::timing`]): each suite's predicted time beside what
//! it took, the total, and what a time budget left out. `memsight run --plan` shows the same
//! table before anything is measured, without the second column.

use memsight_suites::measure::timing::RunTiming;

use crate::view::{Block, Cell, Table, View};

const METHOD: &str = "Each suite's time is predicted before the run from its settings and the machine: its sampled points (each what its stop rule allows a typical point), the working sets it builds and touches, its rounds, and the reference probes taken within and after it; the run's start adds where memory begins and the probes' buffer. The prediction trusts the cache sizes the machine reports until the run's first probe has measured where memory begins. docs/limits.md gives predicted beside measured.";

/// The time section of a run (and of `run --plan`), with `skipped` (suites the run will not or
/// did not run, with the reason) among its findings.
pub fn view(t: &RunTiming, skipped: &[String]) -> View {
    let ran = t.suites.iter().any(|s| s.actual_s.is_some());
    let mut header = vec!["suite".to_string(), "predicted s".into()];
    if ran {
        header.push("took s".into());
    }
    header.push("what was counted".into());
    let mut rows = vec![];
    let mut row = |name: &str, predicted: f64, took: Option<f64>, work: &str| {
        let mut r = vec![
            Cell::Text(name.into()),
            Cell::Num(format!("{predicted:.1}")),
        ];
        if ran {
            r.push(Cell::Num(took.map_or("-".into(), |s| format!("{s:.1}"))));
        }
        r.push(Cell::Text(work.into()));
        rows.push(r);
    };
    row(
        "start",
        t.start_s,
        None,
        "where memory begins, the reference probes' buffer",
    );
    for s in &t.suites {
        row(&s.suite, s.predicted_s, s.actual_s, &s.work);
    }
    let mut facts = vec![format!("predicted {:.1} s in all", t.predicted_s())];
    if let Some(b) = t.budget_s {
        facts.push(format!("time budget {b:.0} s (--time-budget)"));
    }
    let mut findings: Vec<String> = t
        .left_out
        .iter()
        .map(|s| {
            format!(
                "{}: left out to fit the time budget (predicted {:.1} s: {})",
                s.suite, s.predicted_s, s.work
            )
        })
        .collect();
    findings.extend(skipped.iter().map(|s| format!("not run: {s}")));
    View {
        id: "time",
        title: "Time".into(),
        method: METHOD.into(),
        facts,
        blocks: vec![Block::Table(Table {
            caption: String::new(),
            header,
            rows,
        })],
        findings,
    }
}
