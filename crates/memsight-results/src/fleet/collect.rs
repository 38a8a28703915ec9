//! Reading a fleet directory: every memsight result under it (however it got there) and the
//! status files ranks leave, with every file that cannot be used named and why.
//!
//! Results are read in parallel, one per core at a time, and each is cut down to its node's
//! summary ([`super::node`]) as soon as it is read; where a rank wrote its summary beside its
//! result, the summary alone is read. A directory with more results than the limit the caller
//! sets is refused, never cut short.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use memsight_core::{Error, Result};

use super::node::{Interner, Node, NodeSummary, summary_path};
use crate::fleet_report::{Fault, FaultKind, State, Status};

/// Directory levels searched below the fleet directory (job / rank / run.json is three).
const MAX_DEPTH: usize = 4;

/// A usable result and where it came from.
pub struct Entry {
    /// Relative to the fleet directory.
    pub path: PathBuf,
    pub node: Node,
    pub status: Option<Status>,
}

/// Everything found.
#[derive(Default)]
pub struct Collected {
    pub entries: Vec<Entry>,
    pub faults: Vec<Fault>,
    pub statuses: Vec<(PathBuf, Status)>,
}

/// The files under the fleet directory, by kind.
#[derive(Default)]
struct Files {
    results: Vec<PathBuf>,
    summaries: Vec<PathBuf>,
    statuses: Vec<PathBuf>,
}

/// Collects the files under `dir`; refuses once more than `limit` results (and as many
/// summaries and statuses each) are found, rather than reading a part of them.
fn walk(dir: &Path, depth: usize, out: &mut Files, limit: usize) -> Result<()> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut names: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    names.sort_by_key(|e| e.file_name());
    for e in names {
        // Symbolic links are not followed: a loop must not make the walk endless.
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if ft.is_dir() && depth < MAX_DEPTH {
            walk(&p, depth + 1, out, limit)?;
        } else if ft.is_file() && name.ends_with(".status.json") {
            out.statuses.push(p);
        } else if ft.is_file() && name.ends_with(".summary.json") {
            out.summaries.push(p);
        } else if ft.is_file() && name.ends_with(".json") {
            out.results.push(p);
        }
        if [&out.results, &out.summaries, &out.statuses]
            .iter()
            .any(|v| v.len() > limit)
        {
            return Err(Error::input(format!(
                "more than {limit} results under the directory: raise --max-nodes (each node takes about 10 KiB of memory to analyse) or give a part of the fleet"
            )));
        }
    }
    Ok(())
}

fn rel(dir: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(dir).unwrap_or(p).to_path_buf()
}

/// How a fleet directory is read: the part of the fleet's options reading depends on, so that
/// this module does not reach up for its parent's options type (the parent builds it).
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// Read every point of the curves too: full results, never summaries, which leave them out.
    pub curves: bool,
    /// Results the directory may hold: more are refused, never cut short.
    pub max_nodes: usize,
    /// Write each full result's summary beside it where it has none.
    pub summarise: bool,
}

/// What is read for one node: its summary, or its full result cut down to one.
enum Job {
    Summary { summary: PathBuf, result: PathBuf },
    Full(PathBuf),
}

/// The nodes to read: a result with a summary beside it is read from the summary (unless the
/// curves are asked for, which a summary leaves out), a summary whose result is gone alone.
fn jobs(files: &Files, curves: bool) -> Vec<Job> {
    let summaries: HashSet<&PathBuf> = files.summaries.iter().collect();
    let mut out = Vec::new();
    let mut used = HashSet::new();
    for r in &files.results {
        let s = summary_path(r);
        match summaries.get(&s) {
            Some(s) if !curves => {
                used.insert(s.to_path_buf());
                out.push(Job::Summary {
                    summary: s.to_path_buf(),
                    result: r.clone(),
                });
            }
            _ => {
                used.insert(s);
                out.push(Job::Full(r.clone()))
            }
        }
    }
    for s in files.summaries.iter().filter(|s| !used.contains(*s)) {
        let result = s.with_file_name(s.file_name().map_or(String::new(), |n| {
            n.to_string_lossy().replace(".summary.json", ".json")
        }));
        out.push(Job::Summary {
            summary: s.clone(),
            result,
        });
    }
    out
}

/// Reads one node: `None` for the fleet's own report, which is not a member.
fn read(
    job: &Job,
    curves: bool,
) -> std::result::Result<Option<(PathBuf, NodeSummary)>, (PathBuf, String)> {
    match job {
        Job::Summary { summary, result } => NodeSummary::read(summary)
            .map(|s| Some((result.clone(), s)))
            .map_err(|e| (summary.clone(), e)),
        Job::Full(p) => match crate::document::read(p) {
            Ok(doc) if doc.command == "fleet" => Ok(None),
            Ok(doc) => {
                let name = p
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned());
                Ok(Some((p.clone(), NodeSummary::of(&doc, &name, curves))))
            }
            Err(e) => Err((p.clone(), e.to_string())),
        },
    }
}

/// Reads every result and status file under `dir` (at most `reading.max_nodes` results), the
/// results in parallel; with `reading.curves`, from the full results.
pub fn collect(dir: &Path, reading: Reading) -> Result<Collected> {
    let curves = reading.curves;
    let mut files = Files::default();
    walk(dir, 0, &mut files, reading.max_nodes)?;
    let mut c = Collected::default();
    for f in &files.statuses {
        match read_status(f) {
            Ok(s) => c.statuses.push((rel(dir, f), s)),
            Err(reason) => c.faults.push(Fault {
                who: rel(dir, f).display().to_string(),
                kind: FaultKind::Unreadable,
                reason,
            }),
        }
    }
    let jobs = jobs(&files, curves);
    drop(files);
    // Each node's words are shared as it arrives, so the strings of only a few nodes are held
    // apart at any time; results and faults are put in the directory's order after.
    let mut words = Interner::default();
    let mut entries: Vec<(usize, Entry)> = Vec::new();
    let mut faults: Vec<(usize, Fault)> = Vec::new();
    read_all(&jobs, reading, &mut |i, r| match r {
        Ok(None) => {}
        Ok(Some((path, node))) => entries.push((
            i,
            Entry {
                path: rel(dir, &path),
                node: Node::of(node, &mut words),
                status: None,
            },
        )),
        Err((path, reason)) => faults.push((
            i,
            Fault {
                who: rel(dir, &path).display().to_string(),
                kind: FaultKind::Unreadable,
                reason,
            },
        )),
    });
    entries.sort_by_key(|(i, _)| *i);
    faults.sort_by_key(|(i, _)| *i);
    c.entries = entries.into_iter().map(|(_, e)| e).collect();
    c.faults.extend(faults.into_iter().map(|(_, f)| f));
    attach_statuses(dir, &mut c);
    Ok(c)
}

type Read = std::result::Result<Option<(PathBuf, NodeSummary)>, (PathBuf, String)>;

/// Reads the jobs on every core, each worker one result at a time, handing each node to `take`
/// on the calling thread as it is read; with `reading.summarise`, writing the summary of each
/// full result that has none.
fn read_all(jobs: &[Job], reading: Reading, take: &mut dyn FnMut(usize, Read)) {
    let Reading {
        curves, summarise, ..
    } = reading;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16);
    let next = AtomicUsize::new(0);
    // Bounded: workers wait while the calling thread is behind, so read nodes do not pile up.
    let (tx, rx) = mpsc::sync_channel(4 * workers);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let r = read(job, curves);
                    if let (true, Job::Full(path), Ok(Some((_, s)))) = (summarise, job, &r) {
                        write_summary(path, s);
                    }
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            take(i, r);
        }
    });
}

/// Writes a full result's summary beside it, as `run --fleet` does; a summary that cannot be
/// written is left out (the result is read again next time).
fn write_summary(result: &Path, s: &NodeSummary) {
    let mut s = s.clone();
    // A summary holds the summary figures only, whatever this analysis read.
    s.figures
        .retain(|f| f.scope == crate::figure::Scope::Summary);
    let path = summary_path(result);
    let _ = memsight_core::files::write_atomic(&path, |w| {
        serde_json::to_writer(w, &s).map_err(|e| Error::system(format!("{e}")))
    });
}

fn read_status(p: &Path) -> std::result::Result<Status, String> {
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
        .partition(|e| !e.node.complete);
    c.entries = full;
    for e in partial {
        c.faults.push(Fault {
            who: e.path.display().to_string(),
            kind: FaultKind::Partial,
            reason: "an interrupted run (complete: false): left out of the statistics".into(),
        });
    }
}
