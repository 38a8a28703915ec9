//! The fleet report's findings, in words: outliers, groups of one, disturbed nodes, DIMM
//! inventories that differ within a group, several ranks on one node, and faults.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::outliers::{Member, Scored};
use crate::fleet_report::{Direction, Fault, FleetMember, Group, Outlier, Status, some_names};

/// Environment warnings that mean a node was disturbed while it measured.
const DISTURBING: [&str; 6] = [
    "busy",
    "load",
    "steal",
    "governor",
    "damon",
    "cgroup_memory",
];

/// Findings of one kind beyond this many are counted, not listed: a fleet of 100,000 nodes
/// must still read in a screen or two.
const MAX_LINES: usize = 20;

pub fn findings(
    members: &[Member],
    rows: &[FleetMember],
    groups: &[Group],
    scored: &Scored,
    faults: &[Fault],
    statuses: &[(PathBuf, Status)],
) -> Vec<String> {
    let mut out = Vec::new();
    if members.is_empty() {
        out.push("no usable memsight result in the directory".into());
    }
    out.extend(outlier_lines(&scored.outliers));
    out.extend(unscored(&scored.unscored));
    out.extend(lonely(groups));
    out.extend(capped(disturbed(rows, groups), "warnings of disturbance"));
    out.extend(capped(
        disturbed_samples(members),
        "nodes with disturbed figures",
    ));
    out.extend(capped(
        inventory(members, groups),
        "nodes whose memory differs",
    ));
    out.extend(capped(crowded(rows, statuses), "hosts with several ranks"));
    let faults = faults
        .iter()
        .map(|f| format!("{} — {}: {}", f.who, f.kind.describe(), f.reason));
    out.extend(capped(faults.collect(), "faults"));
    out
}

/// The first [`MAX_LINES`] findings of one kind, and a count of the rest.
fn capped(mut lines: Vec<String>, what: &str) -> Vec<String> {
    if lines.len() > MAX_LINES {
        let rest = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(format!(
            "… and {rest} more {what}: the tables, the JSON and the Parquet table hold them all"
        ));
    }
    lines
}

/// Nodes never compared with a group: neither flagged nor known to be alike.
fn unscored(names: &[String]) -> Option<String> {
    (!names.is_empty()).then(|| {
        format!(
            "{} node(s) were not scored (a group under 3 members, or every figure disturbed): they are neither flagged nor known to be like the others: {}",
            names.len(),
            some_names(names)
        )
    })
}

/// Members with figures on disturbed samples, which were not compared with their group.
fn disturbed_samples(members: &[Member]) -> Vec<String> {
    let with: Vec<(&str, usize)> = members
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.node.figures.iter().filter(|f| f.disturbed).count(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    const WHY: &str = "under 3 clean ones: a measuring thread lost its CPU, or a team did not start together): they were not compared with the group";

    with.into_iter()
        .map(|(name, short)| format!("{name}: {short} figure(s) rest on disturbed samples ({WHY}"))
        .collect()
}

/// One flagged figure in words.
fn outlier_line(o: &Outlier) -> String {
    format!(
        "{} = {:.4} {} is {:+.1}% from its group's median {:.4} ({}, robust score {:+.1}, {} members)",
        o.label,
        o.value,
        o.unit,
        100.0 * o.deviation,
        o.median,
        o.direction.word(),
        o.score,
        o.n
    ) + if o.slow_phase {
        "; measured while the node's drift probes read it slow: measure it again before acting"
    } else {
        ""
    }
}

/// The flagged figures, node by node (the furthest first): each figure of a node with a few,
/// one line for a node with many (a slow memory channel moves every bandwidth figure).
fn outlier_lines(outliers: &[Outlier]) -> Vec<String> {
    let mut order: Vec<&str> = Vec::new();
    let mut by: std::collections::HashMap<&str, Vec<&Outlier>> = Default::default();
    for o in outliers {
        let v = by.entry(o.member.as_str()).or_default();
        if v.is_empty() {
            order.push(&o.member);
        }
        v.push(o);
    }
    let mut out = Vec::new();
    for m in order.iter().take(MAX_LINES) {
        let v = &by[m];
        if v.len() <= 3 {
            out.extend(v.iter().map(|o| format!("{m}: {}", outlier_line(o))));
            continue;
        }
        let worse = v.iter().filter(|o| o.direction == Direction::Worse).count();
        let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), o| {
            (a.min(o.deviation), b.max(o.deviation))
        });
        out.push(format!(
            "{m}: {} figures stand out ({worse} worse, {} better), {:+.1}% to {:+.1}% from their group's medians; the furthest: {}",
            v.len(),
            v.len() - worse,
            100.0 * lo,
            100.0 * hi,
            outlier_line(v[0])
        ));
    }
    if order.len() > MAX_LINES {
        out.push(format!(
            "… and {} more node(s) with flagged figures: the table of flagged figures, the JSON and the Parquet table hold them all",
            order.len() - MAX_LINES
        ));
    }
    out
}

/// Groups of one and of two: nothing (or too little) to compare with; what sets them apart.
fn lonely(groups: &[Group]) -> Vec<String> {
    let Some(big) = groups.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let small: Vec<&Group> = groups
        .iter()
        .skip(1)
        .filter(|g| g.members.len() < 3)
        .collect();
    for g in small.iter().take(MAX_LINES) {
        let differs: Vec<String> = g
            .fingerprint
            .iter()
            .zip(&big.fingerprint)
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, b)| format!("{} {} (most: {})", a.0, a.1, b.1))
            .collect();
        out.push(format!(
            "{} {} a group of {}: no figure is scored; it differs from the largest group in {}",
            some_names(&g.members),
            if g.members.len() == 1 { "is" } else { "are" },
            g.members.len(),
            if differs.is_empty() {
                "nothing recorded".into()
            } else {
                differs.join("; ")
            }
        ));
    }
    if small.len() > MAX_LINES {
        out.push(format!(
            "… and {} more groups of one or two nodes (the groups table lists them)",
            small.len() - MAX_LINES
        ));
    }
    if (3..5).contains(&big.members.len()) {
        out.push(format!(
            "the largest group has {} members: with so few, one noisy node moves the median and the spread; treat its flags as hints and rerun before acting",
            big.members.len()
        ));
    }
    if big.members.len() < 3 {
        out.push(format!(
            "the largest group has {} member(s): figures are scored only in groups of 3 or more",
            big.members.len()
        ));
    }
    out
}

/// Members whose environment warned of disturbance where most of their group did not.
fn disturbed(rows: &[FleetMember], groups: &[Group]) -> Vec<String> {
    let mut out = Vec::new();
    // Each group's rows, in one pass over the rows however many groups there are.
    let mut by: BTreeMap<usize, Vec<&FleetMember>> = BTreeMap::new();
    for r in rows {
        by.entry(r.group).or_default().push(r);
    }
    for g in groups {
        let in_g = by.remove(&g.id).unwrap_or_default();
        for code in DISTURBING {
            let with: Vec<&&FleetMember> = in_g
                .iter()
                .filter(|r| r.warnings.iter().any(|w| w == code))
                .collect();
            if !with.is_empty() && with.len() * 2 < in_g.len().max(2) {
                let names: Vec<&str> = with.iter().map(|r| r.name.as_str()).collect();
                out.push(format!(
                    "{} warned [{code}] while measuring, unlike most of its group: its figures may be disturbed (see its environment report)",
                    some_names(&names)
                ));
            }
        }
    }
    out
}

/// Members whose DIMMs (part numbers, ranks, vendors) or visible memory differ from their
/// group's most common.
fn inventory(members: &[Member], groups: &[Group]) -> Vec<String> {
    let mut out = Vec::new();
    for in_g in super::outliers::by_group(members, groups) {
        let sig = |m: &Member| -> Option<String> { m.node.dimms.as_deref().map(str::to_string) };
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for m in &in_g {
            if let Some(s) = sig(m) {
                *count.entry(s).or_default() += 1;
            }
        }
        if let Some((common, _)) = count.iter().max_by_key(|(_, n)| **n)
            && count.len() > 1
        {
            for m in in_g
                .iter()
                .filter(|m| sig(m).as_ref().is_some_and(|s| s != common))
            {
                out.push(format!(
                    "{}: DIMM inventory differs from its group's (part numbers, vendors or ranks)",
                    m.name
                ));
            }
        }
        let mem: Vec<(String, f64)> = in_g
            .iter()
            .filter_map(|m| Some((m.name.clone(), m.node.memory_total_bytes? as f64)))
            .collect();
        if mem.len() >= 3 {
            let (med, _) =
                crate::fleet_report::centre(&mem.iter().map(|x| x.1).collect::<Vec<_>>());
            for (name, v) in mem.iter().filter(|(_, v)| *v < 0.98 * med) {
                out.push(format!(
                    "{name}: the kernel sees {:.1}% less memory than its group's median ({}): a DIMM missing, disabled or mapped out?",
                    100.0 * (1.0 - v / med),
                    memsight_core::units::format_bytes(med as u64)
                ));
            }
        }
    }
    out
}

/// Several ranks on one node: they measured at the same time and competed for its memory.
fn crowded(rows: &[FleetMember], statuses: &[(PathBuf, Status)]) -> Vec<String> {
    let mut by_host: BTreeMap<&str, Vec<&FleetMember>> = BTreeMap::new();
    for r in rows {
        by_host.entry(r.host.as_str()).or_default().push(r);
    }
    let mut out: Vec<String> = by_host
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(h, v)| {
            format!(
                "{} results come from host {h}: the ranks ran at the same time and competed for its memory, so their figures are neither independent nor comparable with one rank per node (launch with --ntasks-per-node=1, -ppn 1 or --map-by ppr:1:node)",
                v.len()
            )
        })
        .collect();
    if out.is_empty()
        && let Some((_, s)) = statuses
            .iter()
            .find(|(_, s)| s.local_size.is_some_and(|n| n > 1))
    {
        out.push(format!(
            "the launcher started {} ranks per node: they compete for the same memory",
            s.local_size.unwrap_or(0)
        ));
    }
    out
}
