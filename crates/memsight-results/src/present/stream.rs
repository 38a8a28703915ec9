//! STREAM-compatible results: STREAM's table plus the engine's statistics.

use memsight_core::units::format_bytes;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::num;
use crate::view::{Block, Cell, Table, View};
use crate::view::{ci, count, med};
use memsight_suites::stream::StreamResults;

impl Present for StreamResults {
    fn view(&self) -> View {
        let c = &self.config;
        let mut findings: Vec<String> = self.warnings.iter().map(|w| format!("! {w}")).collect();
        findings.push(match &self.validation {
            Some(v) => v.message.clone(),
            None => "not validated: the run was interrupted".into(),
        });
        findings.extend(crate::view::texts(&self.findings));
        let mut blocks = vec![Block::Table(kernels_table(self))];
        if !self.widths.is_empty() {
            blocks.push(Block::Table(widths_table(self)));
        }
        View {
            id: "stream",
            title: "STREAM-compatible kernels".into(),
            method: self.label.clone(),
            facts: vec![
                format!(
                    "Array size = {} elements, Offset = {} elements; memory per array = {}, total = {}",
                    c.elements,
                    c.offset,
                    format_bytes(self.array_bytes),
                    format_bytes(self.total_bytes)
                ),
                format!(
                    "Each kernel run {} times; the first is excluded. {} thread(s) on CPUs {}; {} kernels, {} stores, {} pages.",
                    c.ntimes,
                    c.cpus.len(),
                    memsight_core::units::format_list(&c.cpus),
                    c.isa.name(),
                    c.store.name(),
                    c.page_kind
                ),
            ],
            blocks,
            findings,
        }
    }

    fn figures(&self) -> Vec<Figure> {
        self.kernels
            .iter()
            .map(|k| {
                Figure::sampled(
                    Key::Stream {
                        test: k.function.to_lowercase(),
                    },
                    format!(
                        "STREAM {} (program bytes as STREAM counts them)",
                        k.function
                    ),
                    "GB/s",
                    Better::Higher,
                    &k.gbs,
                )
                .under(format!(
                    "{} elements per array, offset {}, {} threads, {} stores, {} pages",
                    self.config.elements,
                    self.config.offset,
                    self.config.cpus.len(),
                    self.config.store.name(),
                    self.config.page_kind
                ))
            })
            .collect()
    }
}

/// STREAM's own table (its columns, its rounding), then the engine's statistics of the same runs.
fn kernels_table(r: &StreamResults) -> Table {
    let mut t = Table::new(
        "",
        &[
            "Function",
            "Best Rate MB/s",
            "Avg time s",
            "Min time s",
            "Max time s",
            "GB/s median",
            "95% CI",
            "n",
            "DRAM est. GB/s (best)",
        ],
    );
    for k in &r.kernels {
        t.rows.push(vec![
            Cell::Text(format!("{}:", k.function)),
            Cell::Num(format!("{:.1}", k.best_rate_mbs)),
            Cell::Num(format!("{:.6}", k.avg_time_s)),
            Cell::Num(format!("{:.6}", k.min_time_s)),
            Cell::Num(format!("{:.6}", k.max_time_s)),
            Cell::Num(med(&k.gbs)),
            Cell::Num(ci(&k.gbs)),
            Cell::Num(count(&k.gbs)),
            Cell::Num(num(k.dram_bytes as f64 / k.min_time_s / 1e9)),
        ]);
    }
    t
}

/// The vector widths tried before the timed runs, the one used marked.
fn widths_table(r: &StreamResults) -> Table {
    let mut w = Table::new(
        "Triad by vector width on these arrays, before the timed runs (alternating passes)",
        &["width", "GB/s median", "95% CI", "min–max", "n"],
    );
    for x in &r.widths {
        let s = &x.triad_gbs;
        w.rows.push(vec![
            Cell::Text(format!(
                "{}{}",
                x.isa.name(),
                if x.isa == r.config.isa { " (used)" } else { "" }
            )),
            Cell::Num(med(s)),
            Cell::Num(ci(s)),
            Cell::Num(format!("{}–{}", num(s.min), num(s.max))),
            Cell::Num(count(s)),
        ]);
    }
    w
}
