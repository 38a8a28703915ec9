//! A node as the fleet analysis sees it: what it needs of one result and nothing more. Its
//! samples, curves and tables are not kept, so a fleet's memory grows with its nodes' summary
//! figures only, whatever each result holds.
//!
//! The same record, written beside a rank's result by `memsight run --fleet` (`run.json` →
//! `run.summary.json`), is what `memsight fleet` reads where it exists: a few kilobytes a node
//! instead of the result's hundreds. docs/fleet.md gives its schema.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::document::{Document, Results};
use crate::figure::{Better, Figure, Scope};

/// The record's schema name and version, as its file says them.
pub const SCHEMA: &str = "memsight-node-summary";
/// Version 2 added each figure's `slow_phase`; a version 1 record leaves it unknown.
pub const VERSION: u32 = 2;

/// A node's summary: identity, the settings it is grouped by, and its figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeSummary {
    pub schema: String,
    pub schema_version: u32,
    /// The full result's file name, beside this record (`run.json`).
    pub result: String,
    pub command: String,
    pub host: Option<String>,
    pub started: String,
    /// False for an interrupted run (Ctrl-C): left out of the statistics.
    pub complete: bool,
    /// What should make nodes alike: command, CPU model, topology, kernel, THP mode, DIMM
    /// population ([`fingerprint`]).
    pub fingerprint: Vec<(String, String)>,
    /// The DIMMs' part numbers, vendors and ranks, where SMBIOS was readable.
    pub dimms: Option<String>,
    /// The memory the kernel sees.
    pub memory_total_bytes: Option<u64>,
    /// The environment's warning codes (`load`, `steal` …).
    pub warnings: Vec<String>,
    pub figures: Vec<NodeFigure>,
}

/// One figure, without its samples: value, confidence interval and what it rests on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeFigure {
    pub key: crate::key::Key,
    pub label: String,
    pub unit: String,
    pub better: Better,
    pub value: f64,
    /// The median's confidence interval, where the figure was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<[f64; 2]>,
    /// It rests on disturbed samples: neither scored nor part of its group's median.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// Its suite measured while the run's drift probes read the machine slow; `None` in a
    /// version 1 record, which did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_phase: Option<bool>,
    /// What the key does not say but the value depends on: only like is compared with like.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub conditions: String,
    #[serde(default)]
    pub scope: Scope,
}

impl NodeSummary {
    /// The summary of a result (`result` its file name); with `curves`, the points of the
    /// latency and bandwidth curves too (`fleet --all-figures`), which a written record leaves
    /// out.
    pub fn of(doc: &Document, result: &str, curves: bool) -> NodeSummary {
        let slow = crate::document::slow_suites(doc);
        let figures = crate::document::figures(doc)
            .into_iter()
            .filter(|f| curves || f.scope == Scope::Summary)
            .map(|f| NodeFigure::of(f, &slow))
            .collect();
        NodeSummary {
            schema: SCHEMA.into(),
            schema_version: VERSION,
            result: result.into(),
            command: doc.command.clone(),
            host: doc.environment.hostname.clone(),
            started: doc.started.clone(),
            complete: doc.complete,
            fingerprint: fingerprint(doc),
            dimms: dimms(doc).map(dimm_signature),
            memory_total_bytes: doc.environment.memory.total_bytes,
            warnings: doc
                .environment
                .warnings
                .iter()
                .map(|w| w.code.clone())
                .collect(),
            figures,
        }
    }

    /// Reads a written record, refusing another schema or a newer version.
    pub fn read(path: &Path) -> Result<NodeSummary, String> {
        let text = memsight_core::input::read_text(path, 16 << 20, "node summary")
            .map_err(|e| e.to_string())?;
        let s: NodeSummary =
            serde_json::from_str(&text).map_err(|e| format!("damaged node summary: {e}"))?;
        if s.schema != SCHEMA || s.schema_version > VERSION {
            return Err(format!(
                "a {} version {} record: this memsight reads {SCHEMA} up to version {VERSION}",
                s.schema, s.schema_version
            ));
        }
        Ok(s)
    }
}

impl NodeFigure {
    fn of(f: Figure, slow_suites: &[String]) -> NodeFigure {
        // The marks as the terminal and the exports work them out, so a node's summary cannot
        // disagree with its own result; a record written here always knows its slow phase.
        let doubt = f.doubt(slow_suites);
        NodeFigure {
            ci: f.summary.as_ref().map(|s| [s.ci_low, s.ci_high]),
            disturbed: doubt.disturbed,
            slow_phase: Some(doubt.slow_phase),
            key: f.key,
            label: f.label,
            unit: f.unit,
            better: f.better,
            value: f.value,
            conditions: f.conditions,
            scope: f.scope,
        }
    }
}

/// The settings the grouping uses, with their names.
pub fn fingerprint(doc: &Document) -> Vec<(String, String)> {
    let e = &doc.environment;
    let t = &e.topology;
    let mut f = vec![
        ("command".to_string(), doc.command.clone()),
        (
            "CPU".into(),
            e.cpu.model_name.clone().unwrap_or_else(|| "?".into()),
        ),
        (
            "topology".into(),
            format!(
                "{} sockets, {} threads, {} NUMA nodes",
                t.packages,
                t.threads,
                t.numa_nodes.len()
            ),
        ),
        (
            "kernel".into(),
            e.kernel.clone().unwrap_or_else(|| "?".into()),
        ),
        (
            "THP".into(),
            e.thp_enabled.clone().unwrap_or_else(|| "?".into()),
        ),
    ];
    if let Some(d) = dimms(doc) {
        f.push(("DIMMs".into(), dimm_population(d)));
    }
    f
}

/// The DIMM inventory a run carries, if SMBIOS was readable.
pub fn dimms(doc: &Document) -> Option<&memsight_suites::dimms::DimmsResults> {
    match &doc.results {
        Results::Run(r) => r.dimms.as_ref(),
        Results::Dimms(d) => Some(d),
        _ => None,
    }
}

/// Populated slots, sizes and configured speed: `16 × 32 GiB @ 3200 MT/s`.
pub fn dimm_population(d: &memsight_suites::dimms::DimmsResults) -> String {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for m in d.inventory.populated() {
        let k = format!(
            "{} @ {} MT/s",
            m.size_bytes
                .map_or("?".into(), memsight_core::units::format_bytes),
            m.configured_mts.map_or("?".into(), |s| s.to_string())
        );
        *kinds.entry(k).or_default() += 1;
    }
    kinds
        .into_iter()
        .map(|(k, n)| format!("{n} × {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes a node's compact record beside its result `dir/file` (what `memsight fleet` reads)
/// and gives the state its rank finished in.
pub fn write_beside(
    doc: &crate::document::Document,
    dir: &Path,
    file: &str,
) -> Result<crate::fleet_report::State, memsight_core::Error> {
    let summary = NodeSummary::of(doc, file, false);
    let text = serde_json::to_string(&summary).expect("a node summary serialises");
    memsight_core::files::write_text(&summary_path(&dir.join(file)), &text)?;
    Ok(if doc.complete {
        crate::fleet_report::State::Done
    } else {
        crate::fleet_report::State::Interrupted
    })
}

/// Where a result's summary is written: `run.json` → `run.summary.json`.
pub fn summary_path(result: &Path) -> PathBuf {
    let stem = result
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    result.with_file_name(format!("{stem}.summary.json"))
}

/// The DIMMs' part numbers, vendors and ranks, sorted: nodes of a group should have one.
fn dimm_signature(d: &memsight_suites::dimms::DimmsResults) -> String {
    let mut parts: Vec<String> = d
        .inventory
        .populated()
        .map(|x| {
            format!(
                "{} {} rank {}",
                x.manufacturer.as_deref().unwrap_or("?"),
                x.part_number.as_deref().unwrap_or("?").trim(),
                x.rank.map_or("?".into(), |r| r.to_string())
            )
        })
        .collect();
    parts.sort();
    parts.join(", ")
}

/// The words of a figure, shared by every node's figure with the same words.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Meta {
    /// The key's text: fleet members' figures are counted, grouped and ordered by it.
    pub key: String,
    pub label: String,
    pub unit: String,
    pub conditions: String,
}

/// A figure as the analysis holds it: its words shared (one pointer), its value and what it
/// rests on. About 50 bytes, so a node of 60 summary figures takes 3 KB.
#[derive(Debug, Clone)]
pub struct Fig {
    pub meta: Arc<Meta>,
    pub better: Better,
    pub value: f64,
    pub ci: Option<[f64; 2]>,
    pub disturbed: bool,
    pub slow_phase: Option<bool>,
    pub scope: Scope,
}

/// Shares equal words between nodes. What it keeps is allocated on the thread that analyses,
/// not on the threads that read: their memory, which full results pass through, is then free
/// to be reused, not pinned by a few long-lived strings.
#[derive(Default)]
pub struct Interner {
    metas: HashSet<Arc<Meta>>,
    words: HashSet<Arc<str>>,
}

impl Interner {
    fn meta(&mut self, m: Meta) -> Arc<Meta> {
        if let Some(a) = self.metas.get(&m) {
            return a.clone();
        }
        let a = Arc::new(Meta {
            key: m.key.clone(),
            label: m.label.clone(),
            unit: m.unit.clone(),
            conditions: m.conditions.clone(),
        });
        self.metas.insert(a.clone());
        a
    }

    fn word(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.words.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.words.insert(a.clone());
        a
    }

    /// A node's figures, their words shared.
    fn figures(&mut self, figures: Vec<NodeFigure>) -> Vec<Fig> {
        let mut out = Vec::with_capacity(figures.len());
        for f in figures {
            out.push(Fig {
                meta: self.meta(Meta {
                    key: f.key.to_string(),
                    label: f.label,
                    unit: f.unit,
                    conditions: f.conditions,
                }),
                better: f.better,
                value: f.value,
                ci: f.ci,
                disturbed: f.disturbed,
                slow_phase: f.slow_phase,
                scope: f.scope,
            });
        }
        out
    }
}

/// A node held for the analysis: its summary, its figures' words shared.
#[derive(Debug, Clone)]
pub struct Node {
    pub host: Option<String>,
    pub command: Arc<str>,
    pub started: String,
    pub complete: bool,
    pub fingerprint: Vec<(Arc<str>, Arc<str>)>,
    pub dimms: Option<Arc<str>>,
    pub memory_total_bytes: Option<u64>,
    pub warnings: Vec<Arc<str>>,
    pub figures: Vec<Fig>,
}

impl Node {
    /// The node of a summary read on another thread: every string it keeps allocated anew here
    /// (see [`Interner`]).
    pub fn of(s: NodeSummary, words: &mut Interner) -> Node {
        Node {
            host: s.host.as_deref().map(str::to_string),
            command: words.word(&s.command),
            started: s.started.as_str().to_string(),
            complete: s.complete,
            fingerprint: s
                .fingerprint
                .iter()
                .map(|(k, v)| (words.word(k), words.word(v)))
                .collect(),
            dimms: s.dimms.as_deref().map(|d| words.word(d)),
            memory_total_bytes: s.memory_total_bytes,
            warnings: s.warnings.iter().map(|w| words.word(w)).collect(),
            figures: words.figures(s.figures),
        }
    }
}
