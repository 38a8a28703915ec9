//! `compare --fail-on-regression PCT` as a verdict: what the gate says of a comparison, as an exit
//! status and one ASCII line, kept beside the comparison it judges so that every front end (the
//! terminal, a script) says the same.

use memsight_core::error::Exit;

use super::ascii;
use crate::history::compare::{Comparison, Row, Verdict};

/// `--fail-on-regression PCT`, a gate: FAIL (naming the worst) when B made a figure worse beyond
/// the noise, the runs' drift and PCT percent; else INCOMPLETE when a result was interrupted or a
/// figure could not be judged (it rests on disturbed samples, moved with the machine, is missing
/// or was measured differently: a gate must not pass what it could not see); else PASS.
pub fn regression(c: &Comparison, pct: f64) -> (Exit, String) {
    let worse = c.regressions(pct / 100.0);
    let by = if pct > 0.0 {
        format!(" and by >= {pct}%")
    } else {
        String::new()
    };
    if let Some(worst) = worse.iter().max_by(|x, y| {
        let m = |r: &&Row| r.change.map_or(0.0, f64::abs);
        m(x).total_cmp(&m(y))
    }) {
        let names: Vec<String> = worse.iter().take(5).map(|r| r.key.to_string()).collect();
        let more = if worse.len() > names.len() {
            ", ..."
        } else {
            ""
        };
        let line = format!(
            "memsight: FAIL: {} figure(s) worse beyond the noise{by}: {}{more}; worst {} ({}) {:+.1}%",
            worse.len(),
            names.join(", "),
            worst.key,
            worst.label,
            worst.change.unwrap_or(0.0) * 100.0
        );
        return (Exit::Failed, ascii(&line));
    }
    let judged = c
        .rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Better | Verdict::Worse | Verdict::Noise))
        .count();
    let unseen = unseen(c, judged);
    if !unseen.is_empty() {
        let line = format!(
            "memsight: INCOMPLETE: no figure worse beyond the noise{by}, but {}",
            unseen.join("; ")
        );
        return (Exit::System, ascii(&line));
    }
    (
        Exit::Ok,
        format!("memsight: PASS: {judged} figure(s) judged, none worse beyond the noise{by}"),
    )
}

/// What the gate could not see: an interrupted result, figures it could not judge (and why),
/// or no judged figure at all.
fn unseen(c: &Comparison, judged: usize) -> Vec<String> {
    let mut unseen: Vec<String> = [&c.a, &c.b]
        .iter()
        .filter(|i| !i.complete)
        .map(|i| format!("{} was interrupted", i.label))
        .collect();
    let keys = |v: Verdict| -> Vec<String> {
        c.rows
            .iter()
            .filter(|r| r.verdict == v)
            .map(|r| r.key.to_string())
            .collect()
    };
    for (v, why) in [
        (
            Verdict::Disturbed,
            "rest on disturbed samples and could not be judged",
        ),
        (
            Verdict::Moved,
            "moved with the machine (its drift probes or core clock read it slower or faster, in a slow phase of a run or between the runs): rerun both to tell a regression from a state change",
        ),
        (Verdict::OnlyA, "of A are missing from B"),
        (
            Verdict::Different,
            "were measured under different conditions (pages, working set)",
        ),
    ] {
        let k = keys(v);
        if !k.is_empty() {
            unseen.push(format!("{} figure(s) {why} ({})", k.len(), k.join(", ")));
        }
    }
    if judged == 0 {
        unseen.push("no figure could be judged".into());
    }
    unseen
}
