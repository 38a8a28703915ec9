//! The machine's loaded-latency curves from the history, for `memsight profile` to read
//! bandwidth pressure off.

use std::path::Path;

use memsight_core::Error;

use super::History;
use crate::document::Document;

/// The loaded-latency curves a result holds (a `loaded-latency` result, or a run that measured
/// them), with how to name where they came from.
pub fn curves_of(doc: &Document) -> Option<memsight_suites::loaded::LoadedResults> {
    let r = match &doc.results {
        crate::document::Results::LoadedLatency(r) => Some(r.as_ref().clone()),
        crate::document::Results::Run(r) => r.loaded_latency.clone(),
        _ => None,
    }?;
    r.curves.iter().any(|c| c.points.len() >= 2).then_some(r)
}

/// The newest loaded-latency curves of the machine with `fingerprint` in the history at `db`,
/// with a line naming the run ("run 12, 2026-11-27T03:10:00Z, loaded-latency"); `None` when the
/// history holds none (or does not exist).
pub fn latest_curves(
    db: &Path,
    fingerprint: &str,
) -> Result<Option<(String, memsight_suites::loaded::LoadedResults)>, Error> {
    if !db.exists() {
        return Ok(None);
    }
    let h = History::open(db, false)?;
    for row in h.list(None, 500)? {
        let wanted = row.command == "loaded-latency" || row.command == "run";
        if !wanted || row.fingerprint != fingerprint || !row.complete {
            continue;
        }
        if let Some(r) = curves_of(&h.get(row.id)?) {
            let source = format!(
                "run {} of the history, {}, {}",
                row.id, row.started, row.command
            );
            return Ok(Some((source, r)));
        }
    }
    Ok(None)
}
