//! Run history: every `memsight run` (and any other result imported with `history --import`)
//! stored in an embedded SQLite database, keyed by host, machine fingerprint and time, so that
//! results can be listed, re-rendered, exported and compared.
//!
//! The database is opened, never recreated: a file that is not SQLite, belongs to another
//! program, fails SQLite's integrity check or was written by a newer memsight is refused with a
//! message saying how to recover, and left exactly as it was.

pub mod changes;
pub mod compare;
mod curves;
mod drift;
pub mod export;
pub mod prometheus;
mod rows;
pub mod series;

pub use curves::{curves_of, latest_curves};
pub(crate) use drift::figure_slow_by as slow_by;
pub(crate) use drift::probe_level;

use std::path::{Path, PathBuf};

use memsight_core::Error;
use memsight_core::env::Environment;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::document::{Document, parse};

/// `PRAGMA application_id` of memsight's databases ("MSgt").
const APPLICATION_ID: i64 = 0x4d53_6774;

/// Schema migrations, applied in order; `PRAGMA user_version` counts those applied.
const MIGRATIONS: &[&str] = &[
    // 1: one row per run with the whole result document.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started TEXT NOT NULL,
        host TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        cpu TEXT,
        level TEXT NOT NULL,
        complete INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        duration_s REAL NOT NULL,
        directory TEXT,
        document TEXT NOT NULL
    );
    CREATE INDEX runs_by_host_time ON runs (host, started);",
    // 2: the flat figures, for queries across runs without parsing documents.
    "CREATE TABLE figures (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        suite TEXT NOT NULL,
        label TEXT NOT NULL,
        unit TEXT NOT NULL,
        value REAL NOT NULL,
        ci_low REAL,
        ci_high REAL,
        n INTEGER,
        PRIMARY KEY (run_id, key)
    );
    CREATE INDEX figures_by_key ON figures (key);",
    // 3: any command's result, not only runs; older rows are runs.
    "ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT 'run';",
];

/// A row of `memsight history`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunRow {
    pub id: i64,
    /// The command that measured (`run`, `bandwidth` …).
    pub command: String,
    pub started: String,
    pub host: String,
    pub fingerprint: String,
    pub cpu: Option<String>,
    /// The level of a run; empty for a single command.
    pub level: String,
    pub complete: bool,
    pub duration_s: f64,
    pub directory: Option<String>,
}

/// An open history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

fn recovery(path: &Path) -> String {
    format!(
        "it was left untouched; move it aside (mv '{0}' '{0}.bad') to start a new history, or choose another with --db",
        path.display()
    )
}

impl History {
    /// Opens the database at `path`. With `create`, a missing file (and its directory) is
    /// created; without, a missing file is an error.
    pub fn open(path: &Path, create: bool) -> Result<Self, Error> {
        let exists = path.exists();
        if !exists && !create {
            return Err(Error::input(format!(
                "no run history at {}: `memsight run` creates it (or pass --db)",
                path.display()
            )));
        }
        if exists && path.is_dir() {
            return Err(Error::input(format!(
                "the history database {} is a directory; pass a file with --db",
                path.display()
            )));
        }
        if !exists && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::storage(format!(
                    "cannot create {} for the run history: {e}; choose a database with --db",
                    dir.display()
                ))
            })?;
        }
        let flags = if exists {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| {
            Error::storage(format!(
                "cannot open the run history {}: {e}",
                path.display()
            ))
        })?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
        };
        h.check(exists)?;
        h.migrate()?;
        Ok(h)
    }

    /// Refuses what is not a healthy memsight database, before anything is written.
    fn check(&self, existed: bool) -> Result<(), Error> {
        let path = &self.path;
        let bad = |what: String| {
            Error::storage(format!(
                "the run history {} {what}; {}",
                path.display(),
                recovery(path)
            ))
        };
        // The first read of the header is where a file that is not SQLite shows.
        let app: i64 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| bad(format!("is not a SQLite database ({e})")))?;
        let quick: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| bad(format!("is damaged ({e})")))?;
        if quick != "ok" {
            return Err(bad(format!("is damaged (SQLite's check says: {quick})")));
        }
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| bad(format!("is damaged ({e})")))?;
        if existed && tables > 0 && app != APPLICATION_ID {
            return Err(bad(
                "belongs to another program (not a memsight history)".into()
            ));
        }
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| bad(format!("is damaged ({e})")))?;
        if version > MIGRATIONS.len() as i64 {
            return Err(Error::storage(format!(
                "the run history {} was written by a newer memsight (database version {version}, this one knows {}); upgrade memsight or use another --db",
                path.display(),
                MIGRATIONS.len()
            )));
        }
        Ok(())
    }

    /// Applies the migrations not yet applied, each in one transaction, and turns on WAL.
    fn migrate(&mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| {
            Error::storage(format!(
                "cannot update the run history {}: {e} (is it read-only?)",
                path.display()
            ))
        };
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        self.conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(fail)?;
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(fail)?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction().map_err(fail)?;
            tx.execute_batch(sql).map_err(fail)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)
                .map_err(fail)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(fail)?;
            tx.commit().map_err(fail)?;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores a result of any command; returns its id.
    pub fn insert(&mut self, doc: &Document) -> Result<i64, Error> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| {
            Error::storage(format!("cannot store the run in {}: {e}", path.display()))
        };
        let text = serde_json::to_string(doc)
            .map_err(|e| Error::storage(format!("cannot encode the run: {e}")))?;
        let env = &doc.environment;
        let tx = self.conn.transaction().map_err(fail)?;
        tx.execute(
            "INSERT INTO runs (started, host, fingerprint, cpu, level, complete, schema_version, duration_s, directory, document, command)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                doc.started,
                env.hostname.clone().unwrap_or_else(|| "unknown".into()),
                fingerprint(env),
                env.cpu.model_name,
                doc.results.level(),
                doc.complete,
                doc.schema_version,
                doc.duration_s,
                doc.results.directory(),
                text,
                doc.results.command()
            ],
        )
        .map_err(fail)?;
        let id = tx.last_insert_rowid();
        {
            let mut stmt = tx
                .prepare(
                    "INSERT OR REPLACE INTO figures (run_id, key, suite, label, unit, value, ci_low, ci_high, n)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .map_err(fail)?;
            for f in crate::document::figures(doc) {
                let s = f.summary.as_ref();
                stmt.execute(params![
                    id,
                    f.key.to_string(),
                    f.suite,
                    f.label,
                    f.unit,
                    f.value,
                    s.map(|s| s.ci_low),
                    s.map(|s| s.ci_high),
                    s.map(|s| s.n as i64)
                ])
                .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)?;
        Ok(id)
    }

    /// Runs, newest first, optionally of one host.
    pub fn list(&self, host: Option<&str>, limit: usize) -> Result<Vec<RunRow>, Error> {
        let fail = |e: rusqlite::Error| Error::storage(format!("cannot read the run history: {e}"));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, started, host, fingerprint, cpu, level, complete, duration_s, directory, command
                 FROM runs WHERE (?1 IS NULL OR host = ?1) ORDER BY started DESC, id DESC LIMIT ?2",
            )
            .map_err(fail)?;
        let rows = stmt
            .query_map(params![host, limit as i64], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    started: r.get(1)?,
                    host: r.get(2)?,
                    fingerprint: r.get(3)?,
                    cpu: r.get(4)?,
                    level: r.get(5)?,
                    complete: r.get(6)?,
                    duration_s: r.get(7)?,
                    directory: r.get(8)?,
                    command: r.get(9)?,
                })
            })
            .map_err(fail)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(fail)
    }

    /// The stored document of run `id`.
    pub fn get(&self, id: i64) -> Result<Document, Error> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT document FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| Error::storage(format!("cannot read the run history: {e}")))?;
        let text = text.ok_or_else(|| {
            Error::input(format!(
                "no run {id} in {}: `memsight history` lists the runs",
                self.path.display()
            ))
        })?;
        parse(&text, &format!("run {id} of {}", self.path.display()))
    }
}

/// A stable fingerprint of the machine (not of its state): CPU model, logical CPUs, packages,
/// NUMA nodes, caches and memory rounded to GiB. FNV-1a, so it is the same on every build.
/// Memory is the kernel's MemTotal where known: the NUMA nodes' share of it moves under
/// hot-plugged memory (virtio-mem in a KVM guest: 7.8 then 15 of 23.5 GiB within a day),
/// which would make one machine look like two.
pub fn fingerprint(env: &Environment) -> String {
    let t = &env.topology;
    let caches: Vec<String> = t
        .caches
        .iter()
        .map(|c| format!("L{}{}:{}x{}", c.level, c.kind, c.size_bytes, c.instances))
        .collect();
    let text = format!(
        "{}|{}|{}|{}|{}|{}",
        env.cpu.model_name.as_deref().unwrap_or("?"),
        t.cpus.len(),
        t.packages,
        t.numa_nodes.len(),
        caches.join(","),
        (env.memory.total_bytes.unwrap_or(t.total_memory_bytes) + (1 << 29)) >> 30
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Resolves a run reference: a path to a result file or run directory, a run id, or `latest`
/// (and `latest~N`, the Nth run before it).
pub fn resolve(reference: &str, db: &Path) -> Result<Document, Error> {
    let as_path = Path::new(reference);
    if as_path.exists() {
        return crate::document::read(as_path);
    }
    // A missing file is said to be one before the history is looked for: without a history the
    // reader would learn of the database, not of the path they mistyped.
    let id: Option<i64> = reference.parse().ok();
    if id.is_none() && !reference.starts_with("latest") {
        return Err(Error::input(format!(
            "'{reference}' is neither a result file, a run directory, a run id nor 'latest'"
        )));
    }
    let h = History::open(db, false)?;
    if let Some(rest) = reference.strip_prefix("latest") {
        let back: usize = if rest.is_empty() {
            0
        } else {
            rest.strip_prefix('~')
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Error::input(format!("'{reference}': write latest or latest~N")))?
        };
        let rows = h.list(None, back + 1)?;
        let row = rows.get(back).ok_or_else(|| {
            Error::input(format!(
                "'{reference}': the history {} holds {} run(s)",
                db.display(),
                rows.len()
            ))
        })?;
        return h.get(row.id);
    }
    h.get(id.expect("read above"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_ignores_hot_plugged_node_memory() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../memsight/tests/data/results/latency.json");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let env: Environment = serde_json::from_value(doc["environment"].clone()).unwrap();
        let mut moved = env.clone();
        moved.topology.total_memory_bytes += 7 << 30;
        assert_eq!(fingerprint(&env), fingerprint(&moved));
        let mut bigger = env.clone();
        bigger.memory.total_bytes = bigger.memory.total_bytes.map(|b| b + (64 << 30));
        assert_ne!(fingerprint(&env), fingerprint(&bigger));
    }
}
