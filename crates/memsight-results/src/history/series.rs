//! A node's figures across its stored runs, and the runs where their levels moved
//! ([`super::changes`]): what `memsight history --changes` prints and exports.

use std::collections::{BTreeMap, HashMap};

use memsight_core::Error;
use rusqlite::params;

use super::History;
use super::changes::{Change, Options, change_points};
use crate::figure::{Better, Scope};
use crate::key::Key;

/// One figure's values in the runs of one machine (host and fingerprint), oldest first.
#[derive(Debug, Clone)]
pub struct Series {
    pub host: String,
    pub key: crate::key::Key,
    pub suite: String,
    pub label: String,
    pub unit: String,
    /// (run id, started, value).
    pub points: Vec<(i64, String, f64)>,
}

/// A change found in a series, with the run it happened at.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ChangeAt {
    /// The first run of the new level.
    pub run: i64,
    pub started: String,
    #[serde(flatten)]
    pub change: Change,
    /// Whether the figure got worse, by its own sense of better.
    pub worse: bool,
}

/// The changes of one figure's series.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FigureChanges {
    pub host: String,
    pub key: crate::key::Key,
    pub suite: String,
    pub label: String,
    pub unit: String,
    pub runs: usize,
    pub changes: Vec<ChangeAt>,
}

impl History {
    /// The summary figures of `command`'s complete runs, per machine, oldest first; of `host`
    /// only where given. Which keys are summaries (not curve points) and which way is better is
    /// read from each machine's newest run.
    pub fn series(&self, host: Option<&str>, command: &str) -> Result<Vec<Series>, Error> {
        let fail = |e: rusqlite::Error| Error::storage(format!("cannot read the run history: {e}"));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.started, r.host, r.fingerprint, f.key, f.suite, f.label, f.unit, f.value
                 FROM figures f JOIN runs r ON r.id = f.run_id
                 WHERE r.command = ?1 AND r.complete = 1 AND (?2 IS NULL OR r.host = ?2)
                 ORDER BY r.started, r.id",
            )
            .map_err(fail)?;
        let mut by: BTreeMap<(String, String, String), Series> = BTreeMap::new();
        let rows = stmt
            .query_map(params![command, host], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, f64>(8)?,
                ))
            })
            .map_err(fail)?;
        for row in rows {
            let (id, started, host, fp, key, suite, label, unit, value) = row.map_err(fail)?;
            if !value.is_finite() {
                continue;
            }
            by.entry((host.clone(), fp, key.clone()))
                .or_insert_with(|| Series {
                    host,
                    key: crate::key::Key::read(&key),
                    suite,
                    label,
                    unit,
                    points: Vec::new(),
                })
                .points
                .push((id, started, value));
        }
        Ok(by.into_values().collect())
    }

    /// The summary keys of `host`'s newest complete run of `command`, with which way is better.
    fn summaries(&self, host: &str, command: &str) -> Result<HashMap<Key, Better>, Error> {
        let id: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE host = ?1 AND command = ?2 AND complete = 1
                 ORDER BY started DESC, id DESC LIMIT 1",
                params![host, command],
                |r| r.get(0),
            )
            .ok();
        let Some(id) = id else {
            return Ok(HashMap::new());
        };
        Ok(crate::document::figures(&self.get(id)?)
            .into_iter()
            .filter(|f| f.scope == Scope::Summary)
            .map(|f| (f.key, f.better))
            .collect())
    }

    /// The change points of every summary figure `select` matches (a `check` selector; every
    /// one without), per machine.
    pub fn changes(
        &self,
        host: Option<&str>,
        command: &str,
        select: Option<&str>,
        o: &Options,
    ) -> Result<Vec<FigureChanges>, Error> {
        let mut summaries: BTreeMap<String, HashMap<Key, Better>> = BTreeMap::new();
        let mut out = Vec::new();
        for s in self.series(host, command)? {
            if !summaries.contains_key(&s.host) {
                summaries.insert(s.host.clone(), self.summaries(&s.host, command)?);
            }
            let Some(better) = summaries[&s.host].get(&s.key).copied() else {
                continue;
            };
            if select.is_some_and(|sel| !crate::key::selects(sel, &s.key)) {
                continue;
            }
            let values: Vec<f64> = s.points.iter().map(|p| p.2).collect();
            let changes = change_points(&values, o)
                .into_iter()
                .map(|c| ChangeAt {
                    run: s.points[c.index].0,
                    started: s.points[c.index].1.clone(),
                    worse: match better {
                        Better::Higher => c.after < c.before,
                        Better::Lower => c.after > c.before,
                    },
                    change: c,
                })
                .collect();
            out.push(FigureChanges {
                host: s.host,
                key: s.key,
                suite: s.suite,
                label: s.label,
                unit: s.unit,
                runs: values.len(),
                changes,
            });
        }
        Ok(out)
    }
}

/// `memsight history --changes --json`: versioned like every result.
#[derive(Debug, serde::Serialize)]
pub struct ChangesReport<'a> {
    pub schema: &'static str,
    pub schema_version: u32,
    pub tool: serde_json::Value,
    pub command: &'static str,
    pub database: &'a std::path::Path,
    pub method: serde_json::Value,
    pub figures: &'a [FigureChanges],
}

impl<'a> ChangesReport<'a> {
    pub fn new(database: &'a std::path::Path, o: &Options, figures: &'a [FigureChanges]) -> Self {
        ChangesReport {
            schema: "memsight-changes",
            schema_version: 1,
            tool: serde_json::json!({"name": "memsight", "version": env!("CARGO_PKG_VERSION")}),
            command: "history",
            database,
            method: serde_json::json!({"max_p": o.max_p, "min_runs": o.min_runs, "min_change": o.min_change}),
            figures,
        }
    }
}

/// The table's columns.
pub const CHANGE_COLUMNS: [&str; 9] = [
    "host", "figure", "runs", "run", "started", "before", "after", "change", "p",
];

/// What the table leaves out: how many figures held one level, or that there is no history.
pub fn steady_line(found: &[FigureChanges], o: &Options) -> String {
    if found.is_empty() {
        return "no figures of complete runs stored: change points need a history of runs".into();
    }
    let steady = found.iter().filter(|f| f.changes.is_empty()).count();
    format!(
        "{steady} of {} figures held one level throughout (t-test p < {}, at least {} runs a level)",
        found.len(),
        o.max_p,
        o.min_runs
    )
}

/// One row per change, as the table shows it.
pub fn change_rows(found: &[FigureChanges]) -> Vec<Vec<String>> {
    let num = crate::view::num;
    let mut rows = Vec::new();
    for f in found {
        for c in &f.changes {
            rows.push(vec![
                f.host.clone(),
                f.key.to_string(),
                f.runs.to_string(),
                c.run.to_string(),
                c.started.clone(),
                format!("{} {}", num(c.change.before), f.unit),
                format!("{} {}", num(c.change.after), f.unit),
                format!(
                    "{:+.1}%{}",
                    100.0 * c.change.change,
                    if c.worse { " worse" } else { "" }
                ),
                format!("{:.1e}", c.change.p),
            ]);
        }
    }
    rows
}

/// `memsight history --json`: versioned like every result, so that a script can tell what it
/// reads.
#[derive(Debug, serde::Serialize)]
pub struct HistoryReport<'a> {
    pub schema: &'static str,
    pub schema_version: u32,
    pub tool: serde_json::Value,
    pub command: &'static str,
    pub database: &'a std::path::Path,
    pub runs: &'a [super::RunRow],
}

impl<'a> HistoryReport<'a> {
    pub fn new(database: &'a std::path::Path, runs: &'a [super::RunRow]) -> Self {
        HistoryReport {
            schema: "memsight-history",
            schema_version: 1,
            tool: serde_json::json!({"name": "memsight", "version": env!("CARGO_PKG_VERSION")}),
            command: "history",
            database,
            runs,
        }
    }
}

/// The columns of `memsight history`'s table of runs.
pub const RUN_COLUMNS: [&str; 10] = [
    "id",
    "started",
    "host",
    "machine",
    "CPU",
    "command",
    "level",
    "complete",
    "s",
    "directory",
];

/// One row per stored run, under [`RUN_COLUMNS`].
pub fn run_rows(rows: &[super::RunRow]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.started.clone(),
                r.host.clone(),
                r.fingerprint.clone(),
                r.cpu.clone().unwrap_or_default(),
                r.command.clone(),
                r.level.clone(),
                if r.complete { "yes" } else { "partial" }.to_string(),
                format!("{:.0}", r.duration_s),
                r.directory.clone().unwrap_or_default(),
            ]
        })
        .collect()
}
