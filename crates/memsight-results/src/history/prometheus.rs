//! `memsight export --format prometheus`: a result in the Prometheus text exposition format, the
//! way its users expect it (node_exporter's textfile collector reads it).
//!
//! - One family per quantity, in base units: `memsight_latency_seconds`,
//!   `memsight_bandwidth_bytes_per_second`, `memsight_memory_bytes`, `memsight_ratio` …; what was
//!   measured is in labels (`suite`, `test`, `cpu`, `threads`, `node`, `working_set_bytes`, `mix`
//!   …, from [`crate::dims`]), so one query spans machines and runs.
//! - Bandwidth says which bytes it counts: `bytes="program"`, `"dram_estimated"`,
//!   `"dram_counted"` or `"theoretical"`.
//! - No label changes from run to run (a start time as a label would make a new series per run):
//!   the start is the gauge `memsight_result_timestamp_seconds`. By default only the summary
//!   figures ([`crate::figure::Scope`]) are written: curve points (each working set of a ladder,
//!   each physical range) have label sets that change with every run; `all_figures` adds them.
//! - Every sample carries `command`, so textfiles of different commands in one directory never
//!   write the same series (node_exporter refuses a series two files write). One file per
//!   command: two results of one command in one directory do collide.
//! - What the terminal doubts travels too: `memsight_figure_doubt` holds, for every figure, 1 or
//!   0 for each `reason` (`disturbed`, `slow_phase`, `not_converged`), with the figure's labels
//!   and its `quantity`, so alerts can leave doubtful figures out.
//! - No sample timestamps (the textfile collector refuses them).

use std::collections::BTreeMap;
use std::io::Write;

use memsight_core::Error;

use crate::document::{Document, Results};
use crate::figure::{Figure, Scope};
use crate::fleet_report::FleetResults;

/// A family: its name, type and help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Info,
    Timestamp,
    Complete,
    Latency,
    Duration,
    Bandwidth,
    Bytes,
    GrowthRate,
    Ratio,
    Operations,
    OverlappedMisses,
    MemoryErrors,
    Count,
    OutlierScore,
    Fault,
    Doubt,
    SuiteRan,
    SuiteSkipped,
    ChangeTime,
    ChangeSize,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Info => "memsight_result_info",
            Family::Timestamp => "memsight_result_timestamp_seconds",
            Family::Complete => "memsight_result_complete",
            Family::Latency => "memsight_latency_seconds",
            Family::Duration => "memsight_duration_seconds",
            Family::Bandwidth => "memsight_bandwidth_bytes_per_second",
            Family::Bytes => "memsight_memory_bytes",
            Family::GrowthRate => "memsight_memory_growth_bytes_per_second",
            Family::Ratio => "memsight_ratio",
            Family::Operations => "memsight_operations_per_second",
            Family::OverlappedMisses => "memsight_overlapped_misses",
            Family::MemoryErrors => "memsight_memory_errors",
            Family::Count => "memsight_count",
            Family::OutlierScore => "memsight_fleet_outlier_score",
            Family::Fault => "memsight_fleet_fault",
            Family::Doubt => "memsight_figure_doubt",
            Family::SuiteRan => "memsight_suite_ran",
            Family::SuiteSkipped => "memsight_suite_skipped",
            Family::ChangeTime => "memsight_change_point_timestamp_seconds",
            Family::ChangeSize => "memsight_change_point_size_ratio",
        }
    }

    /// The quantity a figure family measures, as the doubt series names it.
    fn quantity(self) -> &'static str {
        self.name()
            .trim_start_matches("memsight_")
            .trim_end_matches("_seconds")
            .trim_end_matches("_bytes_per_second")
    }

    fn help(self) -> &'static str {
        match self {
            Family::Info => {
                "The result this file holds: command, memsight version, host; always 1."
            }
            Family::Timestamp => "When the result's measurement started, seconds since the epoch.",
            Family::Complete => "1 when the result is complete, 0 when it was interrupted.",
            Family::Latency => "Load-to-use latency (median of samples), seconds.",
            Family::Duration => "Time a workload took (median where sampled), seconds.",
            Family::Bandwidth => {
                "Bandwidth (median of samples), bytes per second; the bytes label says which bytes are counted."
            }
            Family::Bytes => "Memory held, bytes.",
            Family::GrowthRate => "Growth of resident memory, bytes per second.",
            Family::Ratio => "A ratio or fraction (1 = 100%).",
            Family::Operations => "Operations per second (median of samples).",
            Family::OverlappedMisses => "Cache misses a core overlaps (memory-level parallelism).",
            Family::MemoryErrors => "Memory errors the EDAC driver counted since boot.",
            Family::Count => "A count.",
            Family::OutlierScore => "Robust score of a node's figure within its hardware group.",
            Family::Fault => "A node's result that is missing, partial or failed; always 1.",
            Family::ChangeTime => {
                "When the figure's level last moved in this node's history: the start of the first run at the new level, seconds since the epoch (memsight history --changes)."
            }
            Family::ChangeSize => {
                "How far the figure's level last moved: the new level's mean over the old one's, minus 1 (memsight history --changes)."
            }
            Family::SuiteRan => {
                "A suite the run measured (its figures are in this file); always 1."
            }
            Family::SuiteSkipped => {
                "A suite the run left out; always 1. why: not_selected (--only/--skip), not_at_level (the run level leaves it out), cannot_run (asked for, and it could not run here)."
            }
            Family::Doubt => {
                "1 when the figure with these labels (and this quantity) has this reason for doubt: disturbed (rests on disturbed samples, reads slower than the machine), slow_phase (measured while the run's drift probes read the machine slow), not_converged (CI wider than 5% of the median); else 0."
            }
        }
    }

    /// A figure's family and the factor to its base unit, from the figure's unit.
    fn of(f: &Figure) -> (Family, f64) {
        let unit = f.unit.split_whitespace().next().unwrap_or("");
        match unit {
            "ns" => (Family::Latency, 1e-9),
            "ms" => (Family::Duration, 1e-3),
            "s" => (Family::Duration, 1.0),
            "GB/s" => (Family::Bandwidth, 1e9),
            "MB/s" => (Family::Bandwidth, 1e6),
            "B" => (Family::Bytes, 1.0),
            "B/h" => (Family::GrowthRate, 1.0 / 3600.0),
            "×" | "fraction" => (Family::Ratio, 1.0),
            "%" => (Family::Ratio, 0.01),
            "ops/s" | "allocs/s" => (Family::Operations, 1.0),
            "Mops/s" => (Family::Operations, 1e6),
            "misses" => (Family::OverlappedMisses, 1.0),
            "count" if matches!(f.key, crate::key::Key::MemoryErrors { .. }) => {
                (Family::MemoryErrors, 1.0)
            }
            _ => (Family::Count, 1.0),
        }
    }
}

/// Which bytes a bandwidth counts, from its unit.
fn bytes_counted(f: &Figure) -> &'static str {
    let u = f.unit.to_ascii_lowercase();
    use crate::key::Key;
    if matches!(f.key, Key::Dimms { .. } | Key::DimmsPlan { .. }) {
        "theoretical"
    } else if u.contains("counted") {
        "dram_counted"
    } else if u.contains("dram") {
        "dram_estimated"
    } else {
        "program"
    }
}

type Labels = Vec<(&'static str, String)>;

/// The samples of every family, in family order.
#[derive(Default)]
struct Exposition(BTreeMap<Family, Vec<(Labels, f64)>>);

impl Exposition {
    fn push(&mut self, family: Family, labels: Labels, v: f64) {
        self.0.entry(family).or_default().push((labels, v));
    }

    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (family, samples) in &self.0 {
            let m = family.name();
            writeln!(out, "# HELP {m} {}", family.help())?;
            writeln!(out, "# TYPE {m} gauge")?;
            for (labels, v) in samples {
                if labels.is_empty() {
                    writeln!(out, "{m} {}", value(*v))?;
                    continue;
                }
                let l: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                    .collect();
                writeln!(out, "{m}{{{}}} {}", l.join(","), value(*v))?;
            }
        }
        Ok(())
    }
}

/// A label value: backslash, double quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The labels of a figure key: its dimensions, or the key itself where no key family reads it.
fn key_labels(key: &crate::key::Key) -> Labels {
    let d = key.dims();
    if d.0.is_empty() {
        return vec![("figure", key.to_string())];
    }
    d.0.into_iter().map(|(dim, v)| (dim.name(), v)).collect()
}

/// A figure as a sample: family, labels and value in the base unit.
fn figure_sample(f: &Figure) -> (Family, Labels, f64) {
    let (family, factor) = Family::of(f);
    let mut labels: Labels = vec![("suite", f.suite.clone())];
    labels.extend(key_labels(&f.key));
    if family == Family::Bandwidth {
        labels.push(("bytes", bytes_counted(f).to_string()));
    }
    (family, labels, f.value * factor)
}

/// Writes the result in the Prometheus text exposition format: the result's identity and start,
/// then its summary figures (every figure with `all_figures`) and their doubt (a fleet report:
/// every node's headline figures, outliers and faults). Every sample carries the command.
pub fn prometheus(doc: &Document, all_figures: bool, mut out: impl Write) -> Result<(), Error> {
    let mut x = Exposition::default();
    let host = doc.environment.hostname.clone().unwrap_or_default();
    let command = || ("command", doc.command.clone());
    x.push(
        Family::Info,
        vec![
            command(),
            ("version", doc.tool.version.clone()),
            ("host", host),
        ],
        1.0,
    );
    if let Ok(t) = humantime::parse_rfc3339_weak(&doc.started)
        && let Ok(since) = t.duration_since(std::time::UNIX_EPOCH)
    {
        x.push(Family::Timestamp, vec![command()], since.as_secs_f64());
    }
    x.push(
        Family::Complete,
        vec![command()],
        f64::from(u8::from(doc.complete)),
    );
    if let Results::Fleet(f) = &doc.results {
        fleet_samples(f, &mut x);
    } else {
        if let Results::Run(run) = &doc.results {
            suite_samples(run, &doc.command, &mut x);
        }
        let slow = crate::document::slow_suites(doc);
        let mut figures: Vec<Figure> = crate::document::figures(doc)
            .into_iter()
            .filter(|f| all_figures || f.scope == Scope::Summary)
            .collect();
        figures.extend(unfound_levels(doc, &figures));
        for f in figures {
            let (family, mut labels, v) = figure_sample(&f);
            labels.insert(0, command());
            let d = f.doubt(&slow);
            for (reason, on) in [
                ("disturbed", d.disturbed),
                ("slow_phase", d.slow_phase),
                ("not_converged", d.not_converged),
            ] {
                let mut l = labels.clone();
                l.insert(1, ("quantity", family.quantity().to_string()));
                l.push(("reason", reason.to_string()));
                x.push(Family::Doubt, l, f64::from(u8::from(on)));
            }
            x.push(family, labels, v);
        }
    }
    x.write(&mut out)
        .map_err(|e| Error::system(format!("cannot write the Prometheus text: {e}")))
}

/// Refuses a textfile for `command` where another file of the directory already holds that
/// command's series: node_exporter's textfile collector drops the duplicate samples of a
/// scrape without an error (two results of one command in one directory lost 123 of them), so
/// one file per command is the rule, and a second one is refused here in one line.
pub fn refuse_second_file(target: &std::path::Path, command: &str) -> Result<(), Error> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let info = format!("{}{{command=\"{}\"", Family::Info.name(), escape(command));
    for p in entries.flatten().map(|e| e.path()) {
        let other_prom =
            p.extension().is_some_and(|x| x == "prom") && p.file_name() != target.file_name();
        if other_prom && std::fs::read_to_string(&p).is_ok_and(|t| t.contains(&info)) {
            return Err(Error::input(format!(
                "{} already holds memsight's `{command}` series, and node_exporter drops duplicate samples without an error: write one file per command (to {}, or remove it first)",
                p.display(),
                p.display()
            )));
        }
    }
    Ok(())
}

/// The last change point of each figure that has one, for the textfile collector: when the
/// level moved (a gauge holding the time, since the textfile format refuses sample timestamps)
/// and by how much.
pub fn change_points(
    found: &[super::series::FigureChanges],
    command: &str,
    mut out: impl Write,
) -> Result<(), Error> {
    let mut x = Exposition::default();
    for f in found {
        let Some(last) = f.changes.last() else {
            continue;
        };
        let Ok(t) = humantime::parse_rfc3339_weak(&last.started) else {
            continue;
        };
        let Ok(since) = t.duration_since(std::time::UNIX_EPOCH) else {
            continue;
        };
        let mut labels: Labels = vec![
            ("command", command.to_string()),
            ("host", f.host.clone()),
            ("suite", f.suite.clone()),
        ];
        labels.extend(key_labels(&f.key));
        x.push(Family::ChangeTime, labels.clone(), since.as_secs_f64());
        x.push(Family::ChangeSize, labels, last.change.change);
    }
    x.write(&mut out)
        .map_err(|e| Error::system(format!("cannot write the Prometheus text: {e}")))
}

/// Which suites a run measured and which it left out, and why: a suite that could not run
/// takes its series away with it while the result stays complete, and only these say so.
fn suite_samples(run: &crate::document::RunResults, command: &str, x: &mut Exposition) {
    use crate::document::SkipKind;
    for (name, _) in run.tallies() {
        let labels = vec![
            ("command", command.to_string()),
            ("suite", name.to_string()),
        ];
        x.push(Family::SuiteRan, labels, 1.0);
    }
    for line in &run.skipped {
        let suite = line.split(':').next().unwrap_or_default().trim();
        let labels = vec![
            ("command", command.to_string()),
            ("suite", suite.to_string()),
            ("why", SkipKind::of(line).word().to_string()),
        ];
        x.push(Family::SuiteSkipped, labels, 1.0);
    }
}

/// The cache levels the OS reports, and memory, that a CPU's ladder found no plateau for, as NaN:
/// a plateau that one run finds and the next does not would otherwise make its series appear and
/// vanish (and leave a stale value behind in node_exporter's file); NaN says "not found this
/// time" with the same labels every run.
fn unfound_levels(doc: &Document, figures: &[Figure]) -> Vec<Figure> {
    let mut levels: Vec<String> = (1..=5)
        .filter(|&l| doc.environment.topology.cache(l).is_some())
        .map(|l| format!("L{l}"))
        .collect();
    levels.push("memory".into());
    // The CPUs whose ladders named a level, read from the keys as every export reads them,
    // and those whose ladder found none at all (their series must not vanish either).
    let ladders = match &doc.results {
        crate::document::Results::Run(run) => run.latency.as_ref(),
        crate::document::Results::Latency(l) => Some(&**l),
        _ => None,
    };
    let mut cpus: Vec<u64> = figures
        .iter()
        .filter_map(|f| match f.key {
            crate::key::Key::LatencyLevel { cpu, .. } => Some(cpu),
            _ => None,
        })
        .chain(
            ladders
                .into_iter()
                .flat_map(|l| &l.ladders)
                .map(|l| l.cpu as u64),
        )
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut out = Vec::new();
    for cpu in cpus {
        for level in &levels {
            let key = crate::key::Key::LatencyLevel {
                cpu,
                level: level.to_string(),
            };
            if !figures.iter().any(|f| f.key == key) {
                out.push(Figure::scalar(
                    key,
                    format!("{level} plateau latency, CPU {cpu}: not found by this ladder"),
                    "ns",
                    crate::figure::Better::Lower,
                    f64::NAN,
                ));
            }
        }
    }
    out
}

/// A fleet report: each node's headline figures (labelled with the node and its hardware group),
/// the outliers' scores and the faults.
fn fleet_samples(f: &FleetResults, x: &mut Exposition) {
    for m in &f.members {
        for h in &f.headline {
            let Some(v) = m.headline_of(&h.key) else {
                continue;
            };
            let fig = h.figure(h.key.clone(), h.name.clone(), v);
            let (family, mut labels, v) = figure_sample(&fig);
            labels.insert(0, ("command", "fleet".to_string()));
            labels.insert(1, ("member", m.name.clone()));
            labels.insert(2, ("group", m.group.to_string()));
            x.push(family, labels, v);
        }
    }
    for o in &f.outliers {
        let mut labels = vec![
            ("command", "fleet".to_string()),
            ("member", o.member.clone()),
        ];
        labels.extend(key_labels(&o.key));
        labels.push(("direction", snake(&o.direction)));
        x.push(Family::OutlierScore, labels, o.score);
    }
    for fault in &f.faults {
        x.push(
            Family::Fault,
            vec![
                ("command", "fleet".to_string()),
                ("member", fault.who.clone()),
                ("kind", snake(&fault.kind)),
            ],
            1.0,
        );
    }
}

/// An enum's serialized (snake_case) name.
fn snake(v: &impl serde::Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_go_to_base_units_with_labels() {
        let f = Figure::scalar(
            crate::key::Key::LatencyPoint {
                cpu: 0,
                size: crate::key::Size::of(64 << 20),
            },
            String::new(),
            "ns",
            crate::figure::Better::Lower,
            100.0,
        );
        let (family, labels, v) = figure_sample(&f);
        assert_eq!(family.name(), "memsight_latency_seconds");
        assert!((v - 1e-7).abs() < 1e-15);
        assert!(labels.contains(&("working_set_bytes", (64u64 << 20).to_string())));
        assert!(labels.contains(&("cpu", "0".into())));
        let mut g = f.clone();
        g.unit = "GB/s (DRAM est.)".into();
        g.key = crate::key::Key::read("loaded/all-reads/saturation");
        let (family, labels, v) = figure_sample(&g);
        assert_eq!(family, Family::Bandwidth);
        assert_eq!(v, 100e9);
        assert!(labels.contains(&("bytes", "dram_estimated".into())));
        assert!(labels.contains(&("mix", "all-reads".into())));
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "+Inf");
    }
}
