//! NUMA and memory tiers: latency and bandwidth matrices (heatmaps) and the firmware's claims.

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::{Key, Place};
use crate::view::{Block, Cell, Heatmap, Table, View, percent};
use memsight_core::stats::Summary;
use memsight_suites::numa::NumaResults;

/// One figure of every cell, as a matrix of medians and a matrix of the cells whose figure
/// rests on too few clean samples.
type Matrix = (Vec<Vec<Option<f64>>>, Vec<Vec<bool>>);

fn matrix(
    r: &NumaResults,
    value: impl Fn(&memsight_suites::numa::Cell) -> Option<&Summary>,
) -> Matrix {
    let medians = r
        .cells
        .iter()
        .map(|row| row.iter().map(|c| value(c).map(|s| s.median)).collect())
        .collect();
    let short = r
        .cells
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| value(c).is_some_and(Summary::rests_on_disturbed))
                .collect()
        })
        .collect();
    (medians, short)
}

impl Present for NumaResults {
    fn view(&self) -> View {
        let rows: Vec<String> = self
            .plan
            .initiators
            .iter()
            .map(|i| format!("node {} (CPU {})", i.node, i.cpu))
            .collect();
        let cols: Vec<String> = self.columns.iter().map(|c| c.label.clone()).collect();
        let mut blocks = heatmaps(self, &rows, &cols);
        if let Some(t) = claims_table(self) {
            blocks.push(Block::Table(t));
        }
        if let Some(t) = rounds_table(self, &rows, &cols) {
            blocks.push(Block::Table(t));
        }
        if let Some(t) = distance_table(self) {
            blocks.push(Block::Table(t));
        }
        let columns = described_columns(self);
        View {
            id: "numa",
            title: "NUMA and memory tiers".into(),
            method: self.method.clone(),
            facts: if columns.is_empty() {
                Vec::new()
            } else {
                vec![format!("memory columns: {}", columns.join("; "))]
            },
            blocks,
            findings: crate::view::texts(&self.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        for (ri, row) in self.cells.iter().enumerate() {
            let Some(init) = self.plan.initiators.get(ri) else {
                continue;
            };
            for (ci, cell) in row.iter().enumerate() {
                let Some(col) = self.columns.get(ci) else {
                    continue;
                };
                let colkey = col.label.replace(' ', "");
                if let Some(s) = &cell.latency_ns {
                    out.push(Figure::sampled(
                        Key::Numa {
                            cpu_node: init.node as u64,
                            node: Place(colkey.clone()),
                            test: "latency".into(),
                            kernel: None,
                        },
                        format!("latency, CPUs of node {} → {}", init.node, col.label),
                        "ns",
                        Better::Lower,
                        s,
                    ));
                }
                if let Some(s) = &cell.bandwidth_gbs {
                    out.push(Figure::sampled(
                        Key::Numa {
                            cpu_node: init.node as u64,
                            node: Place(colkey.clone()),
                            test: "bandwidth".into(),
                            kernel: None,
                        },
                        format!("read bandwidth, CPUs of node {} → {}", init.node, col.label),
                        "GB/s (program bytes)",
                        Better::Higher,
                        s,
                    ));
                }
                for k in &cell.kernels {
                    out.push(Figure::sampled(
                        Key::Numa {
                            cpu_node: init.node as u64,
                            node: Place(colkey.clone()),
                            test: "bandwidth".into(),
                            kernel: Some(k.test.to_string()),
                        },
                        format!(
                            "{} bandwidth, CPUs of node {} → {}",
                            k.test, init.node, col.label
                        ),
                        "GB/s (program bytes)",
                        Better::Higher,
                        &k.gbs,
                    ));
                }
            }
        }
        out
    }
}

/// The latency matrix, then one bandwidth matrix per kernel that has a figure, read first and
/// the rest in the order the cells hold them.
fn heatmaps(r: &NumaResults, rows: &[String], cols: &[String]) -> Vec<Block> {
    let heat = |title: &str, subtitle: &str, (values, short), low_is_good, caption: &str| {
        Block::Heatmap(Heatmap {
            title: title.into(),
            subtitle: subtitle.into(),
            corner: "CPU node \\ memory".into(),
            rows: rows.to_vec(),
            cols: cols.to_vec(),
            values,
            low_is_good,
            caption: caption.into(),
            short,
        })
    };
    let mut blocks = vec![heat(
        "NUMA latency",
        "ns per load (median)",
        matrix(r, |c| c.latency_ns.as_ref()),
        true,
        "Chase latency from each CPU node (rows) to memory bound to each node (columns).",
    )];
    let mut tests = vec!["read".to_string()];
    for k in r.cells.iter().flatten().flat_map(|c| &c.kernels) {
        if !tests.contains(&k.test) {
            tests.push(k.test.clone());
        }
    }
    for test in &tests {
        let bw = matrix(r, |c| c.gbs(test));
        if !bw.0.iter().flatten().any(Option::is_some) {
            continue;
        }
        blocks.push(heat(
            &format!("NUMA {test} bandwidth"),
            "GB/s of program bytes (median, all CPUs of the row's node)",
            bw,
            false,
            &bandwidth_caption(test),
        ));
    }
    blocks
}

/// What a bandwidth matrix's bytes are: write kernels move more (or exactly) the bytes shown.
fn bandwidth_caption(test: &str) -> String {
    match test {
        "read" => "Read bandwidth with every CPU of the row's node.".to_string(),
        "write" => "Write bandwidth (regular stores) with every CPU of the row's node; DRAM also reads every line for ownership, so it moves about twice these bytes.".to_string(),
        "write-nt" => "Non-temporal write bandwidth with every CPU of the row's node: no read for ownership, program bytes are DRAM bytes.".to_string(),
        other => format!("{other} with every CPU of the row's node."),
    }
}

/// What the firmware (HMAT) claims per node beside what was measured there.
fn claims_table(r: &NumaResults) -> Option<Table> {
    if r.claims.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Firmware claims (ACPI HMAT, access class 0)",
        &[
            "node",
            "initiators",
            "claimed read ns",
            "claimed read MB/s",
            "claimed write MB/s",
            "measured ÷ claimed latency",
            "measured ÷ claimed read bandwidth",
            "NT write ÷ claimed write",
        ],
    );
    for c in &r.claims {
        t.rows.push(vec![
            Cell::Text(c.node.to_string()),
            Cell::Text(memsight_core::units::format_list(&c.initiators)),
            Cell::Num(c.read_latency_ns.map_or("-".into(), |v| v.to_string())),
            Cell::Num(c.read_bandwidth_mbs.map_or("-".into(), |v| v.to_string())),
            Cell::Num(c.write_bandwidth_mbs.map_or("-".into(), |v| v.to_string())),
            Cell::Num(c.latency_ratio.map_or("-".into(), |v| format!("{v:.2}"))),
            Cell::Num(c.bandwidth_ratio.map_or("-".into(), |v| format!("{v:.2}"))),
            Cell::Num(
                c.write_bandwidth_ratio
                    .map_or("-".into(), |v| format!("{v:.2}")),
            ),
        ]);
    }
    Some(t)
}

/// The memory columns that are more than a plain node (a kind, a tier, no CPUs), described.
fn described_columns(r: &NumaResults) -> Vec<String> {
    r.columns
        .iter()
        .filter(|c| c.kind.is_some() || c.tier.is_some() || c.cpu_less)
        .map(|c| {
            let mut l = c.label.clone();
            if let Some(k) = &c.kind {
                l += &format!(" ({k})");
            }
            if let Some(t) = c.tier {
                l += &format!(" tier {t}");
            }
            if c.cpu_less {
                l += " [CPU-less]";
            }
            l
        })
        .collect()
}

/// The firmware's node distances beside what was measured: per measured cell, the SLIT
/// ratio (distance ÷ the row's local distance) and the measured latency ratio (the cell's
/// latency ÷ the row's local latency), which the SLIT claims to predict.
fn distance_table(r: &NumaResults) -> Option<Table> {
    let d = r.distances.as_ref()?;
    let mut t = Table::new(
        "Node distances (ACPI SLIT; 10 = a node to itself) beside measured latency",
        &[
            "CPUs of node",
            "memory node",
            "SLIT distance",
            "SLIT ÷ local",
            "measured latency ÷ local",
        ],
    );
    for (ri, init) in r.plan.initiators.iter().enumerate() {
        let row = r.cells.get(ri)?;
        let latency = |node: usize| {
            let ci = r.columns.iter().position(|c| c.node == Some(node))?;
            row.get(ci)?.latency_ns.as_ref().map(|s| s.median)
        };
        let local = latency(init.node);
        for target in &d.nodes {
            let Some(dist) = d.between(init.node, *target) else {
                continue;
            };
            let own = d.between(init.node, init.node).unwrap_or(10).max(1);
            let measured = match (latency(*target), local) {
                (Some(x), Some(l)) if l > 0.0 => format!("{:.2}", x / l),
                _ => "-".into(),
            };
            t.rows.push(vec![
                Cell::Text(init.node.to_string()),
                Cell::Text(target.to_string()),
                Cell::Num(dist.to_string()),
                Cell::Num(format!("{:.2}", f64::from(dist) / f64::from(own))),
                Cell::Num(measured),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// How far each cell's figures moved between the alternating rounds; none with one round.
fn rounds_table(r: &NumaResults, rows: &[String], cols: &[String]) -> Option<Table> {
    let measured = |c: &&memsight_suites::numa::Cell| {
        c.latency_between_rounds.is_some() || c.bandwidth_between_rounds.is_some()
    };
    if !r.cells.iter().flatten().any(|c| measured(&c)) {
        return None;
    }
    let mut t = Table::new(
        "Between rounds: (highest − lowest round median) ÷ median",
        &["CPU node", "memory", "latency apart %", "read apart %"],
    );
    for (row, cells) in rows.iter().zip(&r.cells) {
        for (col, c) in cols.iter().zip(cells) {
            t.rows.push(vec![
                Cell::Text(row.clone()),
                Cell::Text(col.clone()),
                Cell::Num(percent(c.latency_between_rounds)),
                Cell::Num(percent(c.bandwidth_between_rounds)),
            ]);
        }
    }
    Some(t)
}
