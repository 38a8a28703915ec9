//! Core-to-core latency: the modified-line matrix (a heatmap), the clean-line matrix and the
//! pair statistics.

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::{Block, Cell, Heatmap, Table, View};
use crate::view::{ci, count, med};
use memsight_suites::c2c::C2cResults;

impl Present for C2cResults {
    /// The first pair's modified-line transfer.
    fn headline(&self) -> Vec<String> {
        self.pairs
            .first()
            .map(|p| {
                format!(
                    "core-to-core: CPU {} ↔ {} {} ns (modified line{})",
                    p.a,
                    p.b,
                    crate::view::med_to(&p.modified_ns, 0),
                    match self.turn {
                        memsight_suites::c2c::Turn::Atomic => "",
                        memsight_suites::c2c::Turn::LoadStore => ", load then store",
                    }
                )
            })
            .into_iter()
            .collect()
    }

    fn view(&self) -> View {
        let labels: Vec<String> = self.cpus.iter().map(|c| format!("CPU {c}")).collect();
        let mut blocks = vec![Block::Heatmap(Heatmap {
            title: format!("One-way transfer, {}", self.turn.name()),
            subtitle: "ns (median) between the row's and the column's CPU".into(),
            corner: "from \\ to".into(),
            rows: labels.clone(),
            cols: labels.clone(),
            values: self.modified.clone(),
            low_is_good: true,
            caption: format!("CPUs chosen: {}", self.selection),
            short: Vec::new(),
        })];
        if self.clean.iter().flatten().any(Option::is_some) {
            // A table in both renderers: the report keeps one chart per matrix kind.
            let clean = Heatmap {
                title: "Clean line, load by the row's CPU from the column CPU's cache".into(),
                subtitle: "ns (median)".into(),
                corner: "from \\ to".into(),
                rows: labels.clone(),
                cols: labels.clone(),
                values: self.clean.clone(),
                low_is_good: true,
                caption: String::new(),
                short: Vec::new(),
            };
            blocks.push(Block::Table(clean.table()));
        }
        let mut pairs = Table::new(
            "",
            &[
                "pair",
                "modified ns",
                "95% CI",
                "n",
                "load then store ns",
                "clean a←b ns",
                "clean b←a ns",
            ],
        );
        let clean = |s: &Option<memsight_core::stats::Summary>| {
            Cell::Num(
                s.as_ref()
                    .map_or("-".into(), |s| format!("{} ({})", med(s), ci(s))),
            )
        };
        for p in &self.pairs {
            pairs.rows.push(vec![
                Cell::Text(format!("{} ↔ {}", p.a, p.b)),
                Cell::Num(med(&p.modified_ns)),
                Cell::Num(ci(&p.modified_ns)),
                Cell::Num(count(&p.modified_ns)),
                clean(&p.load_store_ns),
                clean(&p.clean_a_from_b_ns),
                clean(&p.clean_b_from_a_ns),
            ]);
        }
        blocks.push(Block::Table(pairs));
        View {
            id: "c2c",
            title: "Core-to-core latency".into(),
            method: self.method.clone(),
            facts: vec![format!(
                "CPUs: {} ({})",
                memsight_core::units::format_list(&self.cpus),
                self.selection
            )],
            blocks,
            findings: crate::view::texts(&self.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        // A turn changed from load-then-store to one atomic transfer in schema 4: the condition
        // keeps compare from judging one against the other under the same key.
        let turn = match self.turn {
            memsight_suites::c2c::Turn::Atomic => "atomic turn",
            memsight_suites::c2c::Turn::LoadStore => "",
        };
        for p in &self.pairs {
            out.push(
                Figure::sampled(
                    Key::C2c {
                        cpu: p.a as u64,
                        peer: p.b as u64,
                        test: "modified".into(),
                    },
                    format!("modified-line transfer, CPU {} ↔ {}", p.a, p.b),
                    "ns",
                    Better::Lower,
                    &p.modified_ns,
                )
                .under(turn.to_string()),
            );
            if let Some(s) = &p.load_store_ns {
                out.push(Figure::sampled(
                    Key::C2c {
                        cpu: p.a as u64,
                        peer: p.b as u64,
                        test: "load-store".into(),
                    },
                    format!("load-then-store handoff, CPU {} ↔ {}", p.a, p.b),
                    "ns",
                    Better::Lower,
                    s,
                ));
            }
            for (dir, s) in [
                ("clean-a-from-b", &p.clean_a_from_b_ns),
                ("clean-b-from-a", &p.clean_b_from_a_ns),
            ] {
                if let Some(s) = s {
                    let (x, y) = if dir == "clean-a-from-b" {
                        (p.a, p.b)
                    } else {
                        (p.b, p.a)
                    };
                    out.push(Figure::sampled(
                        Key::C2c {
                            cpu: x as u64,
                            peer: y as u64,
                            test: "clean".into(),
                        },
                        format!("CPU {x} loads a clean line from CPU {y}"),
                        "ns",
                        Better::Lower,
                        s,
                    ));
                }
            }
        }
        out
    }
}
