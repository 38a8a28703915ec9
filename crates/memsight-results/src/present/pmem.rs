//! Persistent-memory pool study: utilisation by object size (bars and a breakdown table),
//! custom allocation classes, concurrent allocation by arena strategy, findings.

use memsight_core::units::format_bytes;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::{Bar, Bars, Block, Cell, Mark, Table, View};
use memsight_suites::pmem::{Fill, PmemResults};

/// Where each fill's pool went: objects, headers, rounding and the rest, as shares of the pool.
fn fills(r: &PmemResults, caption: &str, rows: &[&Fill]) -> Table {
    let pct = |x: u64| format!("{:.1}%", 100.0 * x as f64 / r.pool_bytes.max(1) as f64);
    let mut t = Table::new(
        caption,
        &[
            "object",
            "objects",
            "utilisation",
            "class (unit × per run, header)",
            "headers",
            "rounding",
            "run metadata",
            "empty slots",
            "free chunks",
            "other",
        ],
    );
    for f in rows {
        let b = &f.breakdown;
        t.rows.push(vec![
            Cell::Num(format_bytes(f.object_bytes)),
            Cell::Num(f.objects.to_string()),
            Cell::Num(format!("{:.1}%", f.utilisation * 100.0)),
            Cell::Text(f.class.as_ref().map_or("-".into(), |c| {
                format!(
                    "{}{}: {} B × {}, {}",
                    if f.custom_class { "custom " } else { "" },
                    c.id,
                    c.unit_size,
                    c.units_per_block,
                    c.header
                )
            })),
            Cell::Num(pct(b.header_bytes)),
            Cell::Num(pct(b.rounding_bytes)),
            Cell::Num(b.run_metadata_bytes.map_or("-".into(), pct)),
            Cell::Num(b.empty_slot_bytes.map_or("-".into(), pct)),
            Cell::Num(b.free_chunk_bytes.map_or("-".into(), pct)),
            Cell::Num(pct(b.other_bytes)),
        ]);
    }
    t
}

fn utilisation_chart(r: &PmemResults) -> Block {
    let bars: Vec<Bar> = r
        .fills
        .iter()
        .map(|f| Bar {
            label: format_bytes(f.object_bytes),
            value: f.utilisation * 100.0,
            low: f.utilisation * 100.0,
            high: f.utilisation * 100.0,
            secondary: r
                .search
                .iter()
                .find(|x| x.object_bytes == f.object_bytes)
                .and_then(|x| x.best.as_ref())
                .map(|b| b.utilisation * 100.0),
        })
        .collect();
    Block::Bars(
        Bars {
            title: format!(
                "Pool utilisation by object size ({} pool)",
                format_bytes(r.pool_bytes)
            ),
            x_desc: "% of the pool holding objects".into(),
            legend: (
                "PMDK's allocation class".into(),
                "best custom class (verified by a fill)".into(),
            ),
            bars,
            marks: vec![Mark {
                at: 100.0,
                label: "whole pool".into(),
            }],
        },
        "One fresh pool per fill, filled until PMDK refuses; custom classes from --search.".into(),
    )
}

fn concurrency(r: &PmemResults) -> Table {
    let mut t = Table::new(
        "Concurrent allocation by arena strategy (a failure is imbalance when another arena could serve the size, exhaustion when none could; free: the share of the pool not held by live objects at the failures)",
        &[
            "strategy",
            "allocations",
            "failures",
            "failure rate",
            "imbalance",
            "exhaustion",
            "free at failure (median, least)",
            "rescued",
            "allocs/s",
            "arenas",
            "error",
        ],
    );
    for c in &r.concurrency {
        t.rows.push(vec![
            Cell::Text(c.strategy.clone()),
            Cell::Num(c.allocations.to_string()),
            Cell::Num(c.failures.to_string()),
            Cell::Num(format!("{:.3}%", c.failure_rate * 100.0)),
            Cell::Num(c.imbalance.to_string()),
            Cell::Num(c.exhausted.to_string()),
            Cell::Num(c.free_at_failure.map_or("-".into(), |f| {
                format!("{:.0}%, {:.0}%", 100.0 * f.median, 100.0 * f.least)
            })),
            Cell::Num(c.rescued.to_string()),
            Cell::Num(format!("{:.0}", c.allocations_per_s)),
            Cell::Num(c.arenas.map_or("-".into(), |a| a.to_string())),
            Cell::Text(c.error.clone().unwrap_or_default()),
        ]);
    }
    t
}

/// The allocation-class table (`--classes`), as `heap.alloc_class.N.desc` reports it.
fn classes(r: &PmemResults) -> Table {
    let mut t = Table::new(
        "Allocation classes of a fresh pool (units per run: '-' for a class of whole chunks, which has no runs; alignment: '-' where PMDK aligns only to the unit)",
        &[
            "id",
            "unit size B",
            "units per run",
            "header",
            "alignment B",
        ],
    );
    let or_dash = |x: u64| {
        if x == 0 {
            "-".to_string()
        } else {
            x.to_string()
        }
    };
    for c in &r.classes {
        t.rows.push(vec![
            Cell::Num(c.id.to_string()),
            Cell::Num(c.unit_size.to_string()),
            Cell::Num(or_dash(c.units_per_block as u64)),
            Cell::Text(c.header.clone()),
            Cell::Num(or_dash(c.alignment)),
        ]);
    }
    t
}

/// "1.102–1.403 s (3)": the rounds' range and count.
fn round_range(rounds: &[f64]) -> String {
    let lo = rounds.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rounds.iter().copied().fold(0f64, f64::max);
    match rounds.len() {
        0 => "-".into(),
        1 => "1".into(),
        n => format!("{lo:.3}–{hi:.3} s ({n})"),
    }
}

/// The volume workload: time to finish per strategy.
fn volume(r: &PmemResults) -> Table {
    let mut t = Table::new(
        "Volume workload by arena strategy (time to allocate and free the total)",
        &[
            "strategy",
            "finished",
            "seconds",
            "rounds",
            "allocated",
            "allocations",
            "refused",
            "rescued",
            "aborted frees",
            "arenas",
            "error",
        ],
    );
    for v in &r.volume {
        t.rows.push(vec![
            Cell::Text(v.strategy.clone()),
            Cell::Text(if v.finished { "yes" } else { "no" }.into()),
            Cell::Num(format!("{:.3}", v.seconds)),
            Cell::Text(round_range(&v.round_seconds)),
            Cell::Num(format_bytes(v.allocated_bytes)),
            Cell::Num(v.allocations.to_string()),
            Cell::Num(v.alloc_failures.to_string()),
            Cell::Num(v.rescued.to_string()),
            Cell::Num(v.free_failures.to_string()),
            Cell::Num(v.arenas.map_or("-".into(), |a| a.to_string())),
            Cell::Text(v.error.clone().unwrap_or_default()),
        ]);
    }
    t
}

impl Present for PmemResults {
    fn view(&self) -> View {
        let mut blocks = Vec::new();
        if !self.fills.is_empty() {
            blocks.push(utilisation_chart(self));
            blocks.push(Block::Table(fills(
                self,
                &format!(
                    "Utilisation by object size (share of the {} pool)",
                    format_bytes(self.pool_bytes)
                ),
                &self.fills.iter().collect::<Vec<_>>(),
            )));
        }
        if !self.classes.is_empty() {
            blocks.push(Block::Table(classes(self)));
        }
        if !self.custom.is_empty() {
            blocks.push(Block::Table(fills(
                self,
                "Through the class given (--class)",
                &self.custom.iter().collect::<Vec<_>>(),
            )));
        }
        let mut findings = Vec::new();
        if !self.search.is_empty() {
            let best: Vec<&Fill> = self.search.iter().filter_map(|s| s.best.as_ref()).collect();
            if best.is_empty() {
                findings.push("no custom class beat PMDK's own classes".to_string());
            } else {
                blocks.push(Block::Table(fills(
                    self,
                    "Custom allocation classes (best verified by a fill)",
                    &best,
                )));
            }
            for s in &self.search {
                if let (Some(code), Some(_)) = (&s.ctl_set, &s.best) {
                    findings.push(format!("{}: {code}", format_bytes(s.object_bytes)));
                }
                for q in &s.quirks {
                    findings.push(format!("{} quirk: {q}", format_bytes(s.object_bytes)));
                }
            }
        }
        if !self.concurrency.is_empty() {
            blocks.push(Block::Table(concurrency(self)));
        }
        if !self.volume.is_empty() {
            blocks.push(Block::Table(volume(self)));
        }
        findings.extend(crate::view::texts(&self.findings));
        View {
            id: "pmem",
            title: if self.fills.is_empty() && !self.classes.is_empty() {
                "Persistent-memory pool: allocation classes"
            } else {
                "Persistent-memory pool utilisation"
            }
            .into(),
            method: self.method.clone(),
            facts: Vec::new(),
            blocks,
            findings,
        }
    }

    /// Utilisation per object size (PMDK's class and the best custom one), failure rate per
    /// arena strategy.
    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        for f in &self.fills {
            out.push(Figure::scalar(
                Key::PmemClass {
                    bytes: f.object_bytes,
                    test: "utilisation".into(),
                },
                format!(
                    "pool utilisation with {} objects",
                    format_bytes(f.object_bytes)
                ),
                "fraction",
                Better::Higher,
                f.utilisation,
            ));
        }
        for s in &self.search {
            if let Some(b) = &s.best {
                out.push(Figure::scalar(
                    Key::PmemClass {
                        bytes: s.object_bytes,
                        test: "custom-utilisation".into(),
                    },
                    format!(
                        "pool utilisation with {} objects, best custom class",
                        format_bytes(s.object_bytes)
                    ),
                    "fraction",
                    Better::Higher,
                    b.utilisation,
                ));
            }
        }
        for v in self.volume.iter().filter(|v| v.finished) {
            out.push(Figure::scalar(
                Key::PmemVolume {
                    strategy: v.strategy.to_string(),
                    test: "seconds".into(),
                },
                format!(
                    "time to allocate and free {} in the volume workload, {} strategy",
                    format_bytes(v.allocated_bytes),
                    v.strategy
                ),
                "s",
                Better::Lower,
                v.seconds,
            ));
        }
        for c in &self.concurrency {
            out.push(Figure::scalar(
                Key::PmemConcurrency {
                    strategy: c.strategy.to_string(),
                    test: "failure-rate".into(),
                },
                format!("allocation failure rate, {} strategy", c.strategy),
                "fraction",
                Better::Lower,
                c.failure_rate,
            ));
        }
        out
    }
}
