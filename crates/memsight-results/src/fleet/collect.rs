//! Reading a fleet directory: every memsight result under it (however it got there) and the
//! status files ranks leave, with every file that cannot be used named and why.

use std::path::{Path, PathBuf};

use crate::document::Document;
use crate::fleet_report::{Fault, FaultKind, State, Status};

/// Directory levels searched below the fleet directory (job / rank / run.json is three).
const MAX_DEPTH: usize = 4;
/// Files looked at, at most: a runaway directory is cut off with a fault, not read forever.
const MAX_FILES: usize = 200_000;

/// A usable result and where it came from.
pub struct Entry {
    /// Relative to the fleet directory.
    pub path: PathBuf,
    pub doc: Document,
    pub status: Option<Status>,
}

/// Everything found.
#[derive(Default)]
pub struct Collected {
    pub entries: Vec<Entry>,
    pub faults: Vec<Fault>,
    pub statuses: Vec<(PathBuf, Status)>,
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, faults: &mut Vec<Fault>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    names.sort_by_key(|e| e.file_name());
    for e in names {
        if out.len() >= MAX_FILES {
            if !faults.iter().any(|f| f.kind == FaultKind::TooMany) {
                faults.push(Fault {
                    who: dir.display().to_string(),
                    kind: FaultKind::TooMany,
                    reason: format!("more than {MAX_FILES} files: the rest were not read"),
                });
            }
            return;
        }
        // Symbolic links are not followed: a loop must not make the walk endless.
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() && depth < MAX_DEPTH {
            walk(&p, depth + 1, out, faults);
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn rel(dir: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(dir).unwrap_or(p).to_path_buf()
}

/// Reads every result and status file under `dir`.
pub fn collect(dir: &Path) -> Collected {
    let mut c = Collected::default();
    let mut files = Vec::new();
    walk(dir, 0, &mut files, &mut c.faults);
    for f in &files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(".status.json") {
            match read_status(f) {
                Ok(s) => c.statuses.push((rel(dir, f), s)),
                Err(reason) => c.faults.push(Fault {
                    who: rel(dir, f).display().to_string(),
                    kind: FaultKind::Unreadable,
                    reason,
                }),
            }
            continue;
        }
        match crate::document::read(f) {
            // The fleet's own report is not a member.
            Ok(doc) if doc.command == "fleet" => {}
            Ok(doc) => c.entries.push(Entry {
                path: rel(dir, f),
                doc,
                status: None,
            }),
            Err(e) => c.faults.push(Fault {
                who: rel(dir, f).display().to_string(),
                kind: FaultKind::Unreadable,
                reason: e.to_string(),
            }),
        }
    }
    attach_statuses(dir, &mut c);
    c
}

fn read_status(p: &Path) -> Result<Status, String> {
    let text =
        memsight_core::input::read_text(p, 1 << 20, "status file").map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("damaged status file: {e}"))
}

/// Pairs statuses with results; ranks without a usable result become faults.
fn attach_statuses(dir: &Path, c: &mut Collected) {
    let mut seen: std::collections::BTreeMap<usize, &Status> = Default::default();
    let mut size = 0;
    for (path, s) in &c.statuses {
        size = size.max(s.size);
        if let Some(prev) = seen.insert(s.rank, s) {
            c.faults.push(Fault {
                who: format!("rank {}", s.rank),
                kind: FaultKind::DuplicateRank,
                reason: format!(
                    "claimed by {} (pid {}) and {} (pid {}): the launcher's rank variables did not reach every process",
                    prev.host, prev.pid, s.host, s.pid
                ),
            });
        }
        match status_entry(&mut c.entries, path, s) {
            Some(e) => e.status = Some(s.clone()),
            None => c.faults.push(missing_result(dir, s)),
        }
    }
    for r in (0..size).filter(|r| !seen.contains_key(r)) {
        c.faults.push(Fault {
            who: format!("rank {r}"),
            kind: FaultKind::NeverStarted,
            reason: format!("the launcher started {size} ranks but this one left no status file"),
        });
    }
    set_partial_aside(c);
}

/// The result a status names, or, without a name, whatever its rank's directory holds.
fn status_entry<'a>(entries: &'a mut [Entry], path: &Path, s: &Status) -> Option<&'a mut Entry> {
    let base = path.parent().unwrap_or(Path::new(""));
    // A rank killed between writing its result and updating its status still left the
    // result where ranks write it: one fault for it (partial), not two.
    // Without a status naming it, the result is whatever the rank's directory holds
    // (run.json, or a suite's COMMAND.json).
    let rank_dir = base.join(format!("rank-{:05}", s.rank));
    match &s.result {
        Some(r) => {
            let r = base.join(r);
            entries.iter_mut().find(|e| e.path == r)
        }
        None => entries
            .iter_mut()
            .find(|e| e.path.parent() == Some(rank_dir.as_path())),
    }
}

/// The fault of a rank whose status names no result found: it failed, hung, or its result is
/// gone.
fn missing_result(dir: &Path, s: &Status) -> Fault {
    let who = format!("rank {} ({})", s.rank, s.host);
    match s.state {
        State::Failed => Fault {
            who,
            kind: FaultKind::Failed,
            reason: s
                .reason
                .clone()
                .unwrap_or_else(|| "failed without a reason".into()),
        },
        State::Running => Fault {
            who,
            kind: FaultKind::NoResult,
            reason: format!(
                "started {} and wrote no result: hung past the timeout, killed, or crashed",
                s.started
            ),
        },
        _ => Fault {
            who,
            kind: FaultKind::NoResult,
            reason: format!(
                "its result {} is missing from {}",
                s.result.clone().unwrap_or_default(),
                dir.display()
            ),
        },
    }
}

/// Partial results are named and left out of the statistics.
fn set_partial_aside(c: &mut Collected) {
    let (partial, full): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut c.entries)
        .into_iter()
        .partition(|e| !e.doc.complete);
    c.entries = full;
    for e in partial {
        c.faults.push(Fault {
            who: e.path.display().to_string(),
            kind: FaultKind::Partial,
            reason: "an interrupted run (complete: false): left out of the statistics".into(),
        });
    }
}
