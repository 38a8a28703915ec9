//! The memory scan: a heat strip per node (position = address, colour = read bandwidth), one
//! row per range, the error counts, and the findings.

use memsight_core::units::format_bytes;
use memsight_suites::scan::{RangeFigures, ScanResults};

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::{Block, Cell, Heatmap, Table, View, med_to};

fn label(r: &RangeFigures) -> String {
    format!("{:#x}", r.start)
}

/// One strip per node: the node's ranges in address order.
fn strips(s: &ScanResults) -> Block {
    let mut nodes: Vec<Option<usize>> = s.ranges.iter().map(|r| r.node).collect();
    nodes.sort();
    nodes.dedup();
    let width = nodes
        .iter()
        .map(|n| s.ranges.iter().filter(|r| r.node == *n).count())
        .max()
        .unwrap_or(0);
    let values = nodes
        .iter()
        .map(|n| {
            let mut row: Vec<Option<f64>> = s
                .ranges
                .iter()
                .filter(|r| r.node == *n)
                .map(|r| r.read_gbs.as_ref().map(|g| g.median))
                .collect();
            row.resize(width, None);
            row
        })
        .collect();
    Block::Heatmap(Heatmap {
        title: "Read bandwidth by address range".into(),
        subtitle: format!(
            "GB/s of program bytes per {} range, in address order",
            format_bytes(s.granule)
        ),
        corner: "node \\ range".into(),
        rows: nodes
            .iter()
            .map(|n| n.map_or("node ?".into(), |n| format!("node {n}")))
            .collect(),
        cols: (1..=width).map(|i| i.to_string()).collect(),
        values,
        low_is_good: false,
        caption: format!(
            "{} ranges; a cell is one {} range of {} addresses (the table gives each range's start)",
            s.ranges.len(),
            format_bytes(s.granule),
            if s.frames_visible {
                "physical"
            } else {
                "virtual"
            }
        ),
        short: Vec::new(),
    })
}

fn table(s: &ScanResults) -> Table {
    let mut t = Table::new(
        &format!(
            "{} ranges of {} ({} scanned in {:.0} s: {:.1} GB/s of scan)",
            if s.frames_visible {
                "Physical"
            } else {
                "Virtual"
            },
            format_bytes(s.granule),
            format_bytes(s.scanned_bytes),
            s.seconds,
            s.scanned_bytes as f64 / 1e9 / s.seconds.max(1e-9)
        ),
        &[
            "range",
            "scanned",
            "node",
            "blocks",
            "zones",
            "read GB/s",
            "score",
            "latency ns",
            "score",
            "samples (dropped)",
            "",
        ],
    );
    let score = |z: Option<f64>| Cell::Num(z.map_or("-".into(), |z| format!("{z:+.1}")));
    for r in &s.ranges {
        let samples = |x: &Option<memsight_core::stats::Summary>| {
            x.as_ref().map(|s| (s.n, s.dropped)).unwrap_or_default()
        };
        let (n1, d1) = samples(&r.read_gbs);
        let (n2, d2) = samples(&r.latency_ns);
        t.rows.push(vec![
            Cell::Text(label(r)),
            Cell::Num(format_bytes(r.bytes)),
            Cell::Num(r.node.map_or("-".into(), |n| n.to_string())),
            Cell::Text(match (r.blocks.first(), r.blocks.last()) {
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => "-".into(),
            }),
            Cell::Text(
                [
                    r.zones.join(", "),
                    r.cxl_region.clone().unwrap_or_default(),
                    if r.movable {
                        "Movable".into()
                    } else {
                        String::new()
                    },
                ]
                .into_iter()
                .filter(|x| !x.is_empty())
                .collect::<Vec<_>>()
                .join("; "),
            ),
            Cell::Num(r.read_gbs.as_ref().map_or("-".into(), |g| med_to(g, 2))),
            score(r.read_score),
            Cell::Num(r.latency_ns.as_ref().map_or("-".into(), |g| med_to(g, 1))),
            score(r.latency_score),
            Cell::Num(format!("{} ({}) / {} ({})", n1, d1, n2, d2)),
            Cell::Text(
                match (r.flagged, memsight_suites::scan::judged(r)) {
                    (true, _) => "stands out",
                    (false, false) => "too little to judge",
                    _ => "",
                }
                .into(),
            ),
        ]);
    }
    t
}

fn errors(s: &ScanResults) -> Option<Table> {
    if s.memory_errors.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Memory errors (EDAC)",
        &["controller", "DIMM", "location", "corrected", "uncorrected"],
    );
    for m in &s.memory_errors {
        for d in &m.dimms {
            t.rows.push(vec![
                Cell::Text(m.driver_name.clone().unwrap_or_else(|| m.name.clone())),
                Cell::Text(d.label.clone().unwrap_or_else(|| d.name.clone())),
                Cell::Text(d.location.clone().unwrap_or_default()),
                Cell::Num(d.ce.to_string()),
                Cell::Num(d.ue.to_string()),
            ]);
        }
    }
    Some(t)
}

impl Present for ScanResults {
    fn headline(&self) -> Vec<String> {
        let flagged = self.ranges.iter().filter(|r| r.flagged).count();
        vec![format!(
            "scan: {} ranges, {} standing out",
            self.ranges.len(),
            flagged
        )]
    }

    fn view(&self) -> View {
        let mut blocks = vec![strips(self), Block::Table(table(self))];
        blocks.extend(errors(self).map(Block::Table));
        View {
            id: "scan",
            title: "Memory scan by address range".into(),
            method: self.method.clone(),
            facts: vec![format!(
                "DIMM and channel per address: {}",
                self.dimm_mapping
            )],
            blocks,
            findings: crate::view::texts(&self.findings),
        }
    }

    /// Per range: read bandwidth and latency, keyed by the range's start.
    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        let kind = if self.frames_visible { "phys" } else { "virt" };
        for r in &self.ranges {
            let at = format!("{kind}-{:#x}", r.start);
            let kinds = [
                (
                    "read",
                    "read bandwidth",
                    "GB/s (program bytes)",
                    Better::Higher,
                    &r.read_gbs,
                ),
                (
                    "latency",
                    "idle latency",
                    "ns",
                    Better::Lower,
                    &r.latency_ns,
                ),
            ];
            for (key, what, unit, better, s) in kinds {
                if let Some(s) = s {
                    // One figure per physical range: a map, not a figure to follow by name.
                    out.push(
                        Figure::sampled(
                            Key::Scan {
                                address: at.clone(),
                                test: key.to_string(),
                            },
                            format!("{what} of range {:#x}", r.start),
                            unit,
                            better,
                            s,
                        )
                        .on_curve(),
                    );
                }
            }
        }
        out
    }
}
