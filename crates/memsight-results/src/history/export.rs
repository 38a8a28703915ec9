//! `memsight export`: a stored run as CSV (one row per figure, or per sample) or as its JSON
//! document, for pandas, R or a spreadsheet.

use std::io::Write;

use memsight_core::Error;

use crate::dims::Dim;
use crate::document::Document;

/// Writes one row per figure: run, key, suite, the key's dimensions as typed columns (test,
/// cpu, threads, node, working_set_bytes, mix …; empty where a figure has none), label, unit,
/// direction, median and spread.
pub fn figures_csv(doc: &Document, out: impl Write) -> Result<(), Error> {
    let mut w = csv::Writer::from_writer(out);
    let fail = |e: csv::Error| Error::system(format!("cannot write CSV: {e}"));
    let mut header = vec!["run_started", "host", "key", "suite"];
    header.extend(Dim::ALL.iter().map(|d| d.name()));
    header.extend([
        "label",
        "unit",
        "better",
        "value",
        "ci_low",
        "ci_high",
        "ci_level",
        "n",
        "min",
        "max",
        "cv",
        "scope",
        "disturbed",
        "slow_phase",
        "not_converged",
    ]);
    w.write_record(&header).map_err(fail)?;
    let host = doc.environment.hostname.clone().unwrap_or_default();
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let slow = crate::document::slow_suites(doc);
    for f in crate::document::figures(doc) {
        let doubt = f.doubt(&slow);
        let s = f.summary.as_ref();
        let dims = f.dims();
        let mut row = vec![
            doc.started.clone(),
            host.clone(),
            f.key.to_string(),
            f.suite,
        ];
        row.extend(
            Dim::ALL
                .iter()
                .map(|d| dims.get(*d).unwrap_or_default().to_string()),
        );
        row.extend([
            f.label,
            f.unit,
            f.better.word().to_string(),
            f.value.to_string(),
            opt(s.map(|s| s.ci_low)),
            opt(s.map(|s| s.ci_high)),
            opt(s.map(|s| s.ci_level)),
            s.map_or(String::new(), |s| s.n.to_string()),
            opt(s.map(|s| s.min)),
            opt(s.map(|s| s.max)),
            opt(s.map(|s| s.cv)),
            f.scope.word().to_string(),
            doubt.disturbed.to_string(),
            doubt.slow_phase.to_string(),
            doubt.not_converged.to_string(),
        ]);
        w.write_record(&row).map_err(fail)?;
    }
    w.flush()
        .map_err(|e| Error::system(format!("cannot write CSV: {e}")))?;
    Ok(())
}

/// Writes one row per sample (long format): key, unit, sample index, value.
pub fn samples_csv(doc: &Document, out: impl Write) -> Result<(), Error> {
    let mut w = csv::Writer::from_writer(out);
    let fail = |e: csv::Error| Error::system(format!("cannot write CSV: {e}"));
    w.write_record(["run_started", "key", "unit", "sample", "value"])
        .map_err(fail)?;
    for f in crate::document::figures(doc) {
        let Some(s) = &f.summary else { continue };
        for (i, v) in s.samples.iter().enumerate() {
            w.write_record([
                doc.started.clone(),
                f.key.to_string(),
                f.unit.clone(),
                i.to_string(),
                v.to_string(),
            ])
            .map_err(fail)?;
        }
    }
    w.flush()
        .map_err(|e| Error::system(format!("cannot write CSV: {e}")))?;
    Ok(())
}

pub use super::prometheus::prometheus;
