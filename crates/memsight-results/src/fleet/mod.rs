//! Fleet mode: one characterisation per node, and the nodes that stand out.
//!
//! `memsight run --fleet DIR` under a launcher (`srun`, `mpirun`, `mpiexec`) writes each rank's
//! result under DIR ([`member`]); rank 0 waits for the others and writes the fleet report.
//! `memsight fleet DIR` builds the same report from any directory of results ([`collect`]),
//! however they got there. The analysis ([`outliers`]) groups nodes by hardware and settings and
//! flags, per figure, the ones far from their group's median.

pub mod collect;
pub mod distribution;
pub mod node;
pub mod outliers;
mod parquet;

use std::collections::BTreeMap;
use std::path::Path;

use crate::fleet_report::{Fault, FaultKind, FleetMember, FleetResults, Headline};
use crate::key::Key;
use outliers::Member;

/// How the fleet is read and how strict the analysis is.
#[derive(Debug, Clone, Copy)]
pub struct FleetOptions {
    pub threshold: f64,
    pub min_change: f64,
    /// Score every point of the latency and bandwidth curves too (`--all-figures`).
    pub curves: bool,
    /// Results the directory may hold: more are refused (`--max-nodes`), never cut short.
    pub max_nodes: usize,
    /// Write each node's summary beside a full result that has none (`--summarise`), so that
    /// the next analysis reads the summaries alone.
    pub summarise: bool,
}

impl FleetOptions {
    /// Score 3.5 (Iglewicz & Hoaglin) and 5% from the median; up to a million nodes.
    pub const DEFAULT: FleetOptions = FleetOptions {
        threshold: 3.5,
        min_change: 0.05,
        curves: false,
        max_nodes: 1_000_000,
        summarise: false,
    };

    /// What reading the directory needs of these options ([`collect::collect`]).
    fn reading(&self) -> collect::Reading {
        collect::Reading {
            curves: self.curves,
            max_nodes: self.max_nodes,
            summarise: self.summarise,
        }
    }
}

/// Picks the figures of one headline column.
type Pick = fn(&Key) -> bool;

/// The headline columns, in order: name, unit and which figures belong to the column.
const HEADLINES: [(&str, &str, Pick); 7] = [
    (
        "memory latency",
        "ns",
        |k| matches!(k, Key::LatencyLevel { level, .. } if level == "memory"),
    ),
    (
        "read",
        "GB/s",
        |k| matches!(k, Key::Bandwidth { test, .. } if test == "read"),
    ),
    ("write", "GB/s", |k| {
        matches!(k, Key::Bandwidth { test, pattern, .. }
            if test == "write" && pattern.as_deref() != Some("0x0000000000000000"))
    }),
    (
        "copy",
        "GB/s",
        |k| matches!(k, Key::Bandwidth { test, .. } if test == "copy" || test == "copy-nt"),
    ),
    (
        "loaded saturation",
        "GB/s",
        |k| matches!(k, Key::Loaded { mix, statistic } if mix == "all-reads" && statistic == "saturation"),
    ),
    (
        "c2c",
        "ns",
        |k| matches!(k, Key::C2c { test, .. } if test == "modified"),
    ),
    // The Catamount paper's figure across nodes: HPCCG's median time per solve.
    ("HPCCG solve", "ms", |k| {
        matches!(k, Key::Rowbuffer { test, statistic, .. }
            if test == "hpccg" && statistic == "solve-ms-median")
    }),
];

/// Headline columns: memory latency, bandwidth at the most threads (read, write, copy), the
/// loaded-latency saturation, core-to-core latency and HPCCG's time per solve — where the
/// members measured them.
fn headline(members: &[Member]) -> Vec<Headline> {
    let counts = key_counts(members);
    HEADLINES
        .into_iter()
        .filter_map(|column| headline_column(members, &counts, column))
        .collect()
}

/// How many members have each key: every headline column picks from it.
fn key_counts<'a>(members: &'a [Member]) -> BTreeMap<&'a str, usize> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for f in members.iter().flat_map(|m| &m.node.figures) {
        *count.entry(&f.meta.key).or_default() += 1;
    }
    count
}

/// One headline column, unless no member has a figure for it.
fn headline_column(
    members: &[Member],
    counts: &BTreeMap<&str, usize>,
    (name, unit, pred): (&str, &str, Pick),
) -> Option<Headline> {
    // The key most members have; among equals, the most threads (`…/8t` over `…/1t`). Each
    // distinct key is read once, however many members have it.
    let count: BTreeMap<&str, usize> = counts
        .iter()
        .filter(|(k, _)| Key::parse(k).is_some_and(|k| pred(&k)))
        .map(|(k, n)| (*k, *n))
        .collect();
    let threads = |k: &str| -> u64 {
        match Key::parse(k) {
            Some(Key::Bandwidth { threads, .. }) => threads,
            _ => 0,
        }
    };
    let (key, _) = count
        .iter()
        .max_by_key(|(k, n)| (**n, threads(k), std::cmp::Reverse(k.to_string())))?;
    let f = members
        .iter()
        .flat_map(|m| &m.node.figures)
        .find(|f| f.meta.key == *key)
        .expect("counted");
    // Bandwidth columns say which test and how many threads (`copy-nt 2t`).
    let name = match Key::parse(key) {
        Some(Key::Bandwidth { test, threads, .. }) => format!("{test} {threads}t"),
        _ => name.to_string(),
    };
    Some(Headline {
        key: Key::read(key),
        name,
        unit: unit.to_string(),
        lower_is_better: f.better == crate::figure::Better::Lower,
    })
}

/// Unique names: the host, or `host#rank` where one host gave several results.
fn names(entries: &[collect::Entry]) -> Vec<String> {
    let host = |e: &collect::Entry| e.node.host.clone().unwrap_or_else(|| "?".into());
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for e in entries {
        *count.entry(host(e)).or_default() += 1;
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let h = host(e);
            if count[&h] == 1 {
                h
            } else {
                match e.status.as_ref() {
                    Some(s) => format!("{h}#{}", s.rank),
                    None => format!("{h}#{}", i),
                }
            }
        })
        .collect()
}

/// Builds the fleet report from a directory.
pub fn aggregate(
    dir: &Path,
    options: FleetOptions,
    expected: Option<usize>,
) -> memsight_core::Result<FleetResults> {
    analyse(dir, options, expected).map(Analysis::into_results)
}

/// The fleet report, with the nodes it was made from (for the Parquet table).
pub struct Analysis {
    pub results: FleetResults,
    collected: collect::Collected,
    names: Vec<String>,
}

impl Analysis {
    /// The report, the nodes' figures let go.
    pub fn into_results(self) -> FleetResults {
        self.results
    }
}

/// Reads the directory and analyses it.
pub fn analyse(
    dir: &Path,
    options: FleetOptions,
    expected: Option<usize>,
) -> memsight_core::Result<Analysis> {
    let c = collect::collect(dir, options.reading())?;
    let names = names(&c.entries);
    let members: Vec<Member> = c
        .entries
        .iter()
        .zip(&names)
        .map(|(e, n)| Member {
            name: n.clone(),
            node: &e.node,
        })
        .collect();
    let groups = outliers::groups(&members);
    let scored = outliers::score(
        &members,
        &groups,
        outliers::Scoring {
            threshold: options.threshold,
            min_change: options.min_change,
            curves: options.curves,
        },
    );
    let head = headline(&members);
    let group_of: std::collections::HashMap<&str, usize> = groups
        .iter()
        .flat_map(|g| g.members.iter().map(move |n| (n.as_str(), g.id)))
        .collect();
    let fleet_members: Vec<FleetMember> = c
        .entries
        .iter()
        .zip(&members)
        .map(|(e, m)| {
            let group = group_of.get(m.name.as_str()).copied().unwrap_or(0);
            member_row(dir, e, m, group, &head)
        })
        .collect();
    let faults = with_missing_ranks(c.faults.clone(), c.statuses.len(), expected);
    let findings = findings::findings(
        &members,
        &fleet_members,
        &groups,
        &scored,
        &faults,
        &c.statuses,
    );
    let results = FleetResults {
        directory: dir.display().to_string(),
        method: METHOD.into(),
        expected,
        threshold: options.threshold,
        min_change: options.min_change,
        headline: head,
        members: fleet_members,
        groups,
        outliers: scored.outliers,
        distributions: scored.distributions,
        unscored: scored.unscored,
        faults,
        findings,
        all_nodes: false,
    };
    drop(members);
    Ok(Analysis {
        results,
        collected: c,
        names,
    })
}

/// The faults, with the ranks the launcher started that left no trace.
fn with_missing_ranks(mut faults: Vec<Fault>, ranks: usize, expected: Option<usize>) -> Vec<Fault> {
    if let Some(n) = expected
        && ranks < n
        && !faults.iter().any(|f| f.kind == FaultKind::NeverStarted)
    {
        faults.push(Fault {
            who: format!("{} of {n} ranks", n - ranks),
            kind: FaultKind::NeverStarted,
            reason: "left no status file in the directory".into(),
        });
    }
    faults
}

const METHOD: &str = "Every memsight result under the directory, read from its compact summary where one lies beside it (status files name the ranks that failed or wrote nothing). Members are grouped by command, CPU model, sockets/threads/NUMA nodes, kernel, THP mode and DIMM population. Per figure (same key and conditions, ≥ 3 members of a group): robust score = (value − group median) ÷ max(1.4826 × MAD, 0.5% of the median); a member is flagged when |score| exceeds the threshold, the value is further than the minimum change from the median, and its own confidence interval does not hold the median. Points of the latency and bandwidth curves (one working-set size each) are not scored unless --all-figures: near cache boundaries they move between runs of one healthy machine; their summaries (plateaus, tests) are scored.";

fn member_row(
    dir: &Path,
    e: &collect::Entry,
    m: &Member,
    group: usize,
    head: &[Headline],
) -> FleetMember {
    let report = e
        .path
        .parent()
        .map(|p| p.join("report.html"))
        .filter(|p| dir.join(p).is_file())
        .map(|p| p.display().to_string());
    FleetMember {
        name: m.name.clone(),
        host: e.node.host.clone().unwrap_or_else(|| "?".into()),
        rank: e.status.as_ref().map(|s| s.rank),
        path: e.path.display().to_string(),
        report,
        command: e.node.command.to_string(),
        group,
        started: e.node.started.clone(),
        headline: head
            .iter()
            .filter_map(|h| {
                let text = h.key.to_string();
                let f = m.node.figures.iter().find(|f| f.meta.key == text)?;
                Some((text, f.value))
            })
            .collect(),
        warnings: e.node.warnings.iter().map(|w| w.to_string()).collect(),
    }
}

mod findings;
