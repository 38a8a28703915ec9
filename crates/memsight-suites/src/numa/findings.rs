//! What the matrices say: local against interleaved and the farthest node per row, CPU-less
//! memory, and measured against the firmware's claims.

use super::placement::{Initiator, NumaPlan};
use memsight_core::finding::{Cited, Finding};

use super::{Cell, Claim, Column, claim_cell};

/// The findings of the matrices, in the order the report lists them.
pub(super) fn findings(
    plan: &NumaPlan,
    columns: &[Column],
    cells: &[Vec<Cell>],
    claims: &[Claim],
) -> Vec<Finding> {
    let mut out = Vec::new();
    if plan.targets.len() == 1 && plan.initiators.len() == 1 {
        out.push(Finding::unsampled(format!(
            "this machine has one NUMA node with memory (node {}): the matrix is one cell, and interleaving changes nothing",
            plan.targets[0].node
        )));
    }
    // Local vs remote vs interleaved, per row.
    for (r, init) in plan.initiators.iter().enumerate() {
        let Some(row) = cells.get(r) else { continue };
        out.extend(row_finding(plan, columns, init, row));
    }
    for c in columns.iter().filter(|c| c.cpu_less) {
        out.push(Finding::unsampled(format!(
            "{} is CPU-less memory ({}): it appears only as a column",
            c.label,
            c.kind.as_deref().unwrap_or("kind not reported")
        )));
    }
    for c in claims {
        out.extend(claim_findings(plan, columns, cells, c));
    }
    if claims.is_empty() {
        out.push(Finding::unsampled("the firmware publishes no latency/bandwidth claims here (no ACPI HMAT access0 attributes in sysfs)"));
    }
    out
}

/// One row's latency to its own node, interleaved (what a NUMA-unaware program gets) and to the
/// farthest node; none on one node, or where the local or interleaved cell has no latency.
fn row_finding(
    plan: &NumaPlan,
    columns: &[Column],
    init: &Initiator,
    row: &[Cell],
) -> Option<Finding> {
    let lat = |c: usize| row.get(c).and_then(|x| x.latency_ns.as_ref());
    let local = columns.iter().position(|c| c.node == Some(init.node));
    let inter = columns.len() - 1;
    let worst = (0..columns.len() - 1)
        .filter(|&c| lat(c).is_some())
        .max_by(|&a, &b| lat(a).unwrap().median.total_cmp(&lat(b).unwrap().median));
    let (Some(lc), Some(i)) = (local, lat(inter)) else {
        return None;
    };
    let l = lat(lc)?;
    if plan.targets.len() <= 1 {
        return None;
    }
    let far = worst.and_then(lat).unwrap_or(l);
    let name = |c: usize| format!("CPU node {} → {} latency", init.node, columns[c].label);
    let mut cites = vec![
        Cited::of(name(lc), "ns", l),
        Cited::of(name(inter), "ns", i),
    ];
    if let Some(w) = worst {
        cites.push(Cited::of(name(w), "ns", far));
    }
    Some(Finding::citing(
        format!(
            "CPU node {}: local {:.1} ns, interleaved (NUMA-unaware) {:.1} ns ({:+.0}%), farthest node {:.1} ns",
            init.node,
            l.median,
            i.median,
            100.0 * (i.median / l.median - 1.0),
            far.median
        ),
        cites,
    ))
}

/// Measured against claimed for one node's claim: latency, read and NT-write bandwidth, each
/// where its ratio exists.
fn claim_findings(
    plan: &NumaPlan,
    columns: &[Column],
    cells: &[Vec<Cell>],
    c: &Claim,
) -> Vec<Finding> {
    // The measured side of a claim: the figure of the one cell its ratio came from.
    let cell = claim_cell(plan, columns, cells, c);
    let sides = [
        (
            c.latency_ratio,
            cell.and_then(|x| x.latency_ns.as_ref()),
            "latency",
            "ns",
            format!(
                "what the firmware claims ({} ns)",
                c.read_latency_ns.unwrap_or(0)
            ),
        ),
        (
            c.bandwidth_ratio,
            cell.and_then(|x| x.bandwidth_gbs.as_ref()),
            "read bandwidth",
            "GB/s",
            format!(
                "the firmware's claim ({} MB/s)",
                c.read_bandwidth_mbs.unwrap_or(0)
            ),
        ),
        (
            c.write_bandwidth_ratio,
            cell.and_then(|x| x.gbs("write-nt")),
            "NT-write bandwidth",
            "GB/s",
            format!(
                "the firmware's write claim ({} MB/s)",
                c.write_bandwidth_mbs.unwrap_or(0)
            ),
        ),
    ];
    let mut out = Vec::new();
    for (ratio, figure, what, unit, claim) in sides {
        let Some(r) = ratio else { continue };
        let cites = figure
            .map(|s| Cited::of(format!("node {} {what}", c.node), unit, s))
            .into_iter()
            .collect();
        out.push(Finding::citing(
            format!("node {}: measured {what} is {r:.2}× {claim}", c.node),
            cites,
        ));
    }
    out
}
