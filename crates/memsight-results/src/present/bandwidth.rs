//! Bandwidth: bars by mix and store kind against the DIMM ceilings, the table of points, thread
//! scaling and the working-set sweep.

use std::collections::BTreeSet;

use memsight_core::units::format_bytes;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::{Key, Size};
use crate::view::num;
use crate::view::{Bar, Bars, Block, Cell, Lines, Mark, Scale, Series, Table, View};
use crate::view::{ci, count, med};
use memsight_suites::bandwidth::held::Held;
use memsight_suites::bandwidth::{BandwidthResults, Point};
use memsight_suites::dimms::DimmsResults;
use memsight_suites::measure::memlevel::MemLevel;

/// Bandwidth results, with the DIMM inventory's ceilings when one was read.
pub struct WithCeilings<'a>(pub &'a BandwidthResults, pub Option<&'a DimmsResults>);

impl Present for BandwidthResults {
    fn view(&self) -> View {
        WithCeilings(self, None).view()
    }

    fn figures(&self) -> Vec<Figure> {
        WithCeilings(self, None).figures()
    }

    fn view_in(&self, ctx: &super::Context) -> View {
        WithCeilings(self, ctx.dimms).view()
    }

    /// The best program-bytes figure of the main tests, on the most threads.
    fn headline(&self) -> Vec<String> {
        if let Some(h) = &self.held {
            return vec![format!(
                "held load, GB/s of program bytes on {} thread(s): {} of {:.1} asked ({})",
                self.config.cpus.len(),
                crate::view::med_to(&h.program_gbs, 1),
                h.target_gbs,
                if h.held { "held" } else { "not reached" }
            )];
        }
        let best = |name: &str| {
            self.points
                .iter()
                .filter(|p| p.test.name == name)
                .map(|p| &p.program_gbs)
                .max_by(|a, b| a.median.total_cmp(&b.median))
        };
        let figures: Vec<String> = ["read", "write", "copy", "copy-nt", "stream-triad-like"]
            .iter()
            .filter_map(|n| best(n).map(|s| format!("{n} {}", crate::view::med_to(s, 1))))
            .collect();
        vec![format!(
            "bandwidth, GB/s of program bytes on {} thread(s): {}",
            self.config.cpus.len(),
            figures.join(", ")
        )]
    }
}

/// The table of points; the sweep adds the working set and the level it fits.
fn table(caption: &str, points: &[Point], sweep: bool) -> Table {
    let mut header = vec!["test"];
    if sweep {
        header.extend(["working set", "fits"]);
    }
    header.extend([
        "store",
        "threads",
        "data",
        "GB/s program (median)",
        "95% CI",
        "min–max",
        "GB/s DRAM est.",
        "DRAM R:W",
    ]);
    // Counted DRAM bytes, where the memory controllers could be read.
    let counted = points.iter().any(|p| p.counted_dram.is_some());
    if counted {
        header.extend(["GB/s DRAM counted", "counted ÷ program"]);
    }
    // Alternating rounds: how far the rounds' medians lay apart, beside the samples' CV.
    let rounds = points.iter().any(|p| p.between_rounds.is_some());
    if rounds {
        header.push("rounds apart %");
    }
    header.extend(["CV %", "n"]);
    let mut t = Table::new(caption, &header);
    for p in points {
        let mut row = vec![Cell::Text(p.test.name.clone())];
        if sweep {
            row.push(Cell::Num(format_bytes(p.bytes_per_thread)));
            row.push(Cell::Text(
                p.level.map(|l| l.to_string()).unwrap_or_default(),
            ));
        }
        row.extend([
            Cell::Text(p.test.store.name().to_string()),
            Cell::Num(p.threads.to_string()),
            Cell::Text(p.data()),
            Cell::Num(format!(
                "{}{}",
                med(&p.program_gbs),
                if p.noisy { " (noisy)" } else { "" }
            )),
            Cell::Num(ci(&p.program_gbs)),
            Cell::Num(format!(
                "{}–{}",
                num(p.program_gbs.min),
                num(p.program_gbs.max)
            )),
            // DRAM traffic is only estimated for working sets that live in DRAM.
            Cell::Num(if p.level.is_none_or(|l| l == MemLevel::Memory) {
                med(&p.dram_gbs)
            } else {
                "-".to_string()
            }),
            Cell::Text(p.dram_ratio.clone()),
        ]);
        if counted {
            row.extend(match &p.counted_dram {
                Some(c) => [
                    Cell::Num(num(c.gbs)),
                    Cell::Num(format!("{:.2}", c.per_program_byte)),
                ],
                None => [Cell::Num("-".into()), Cell::Num("-".into())],
            });
        }
        if rounds {
            row.push(Cell::Num(p.between_rounds.map_or("-".into(), |b| {
                format!("{:.1} ({})", 100.0 * b, p.round_medians.len())
            })));
        }
        row.extend([
            Cell::Num(format!("{:.2}", 100.0 * p.program_gbs.cv)),
            Cell::Num(count(&p.program_gbs)),
        ]);
        t.rows.push(row);
    }
    t
}

/// A held load (`--rate`): what was asked and what each second moved.
fn held_blocks(h: &Held) -> Vec<Block> {
    let mut t = Table::new(
        "Held load",
        &[
            "GB/s asked",
            "GB/s program (median second)",
            "95% CI",
            "min–max",
            "GB/s DRAM est.",
            "seconds",
            "schedule restarts",
        ],
    );
    t.rows.push(vec![
        Cell::Num(format!("{:.2}", h.target_gbs)),
        Cell::Num(med(&h.program_gbs)),
        Cell::Num(ci(&h.program_gbs)),
        Cell::Num(format!(
            "{}–{}",
            num(h.program_gbs.min),
            num(h.program_gbs.max)
        )),
        Cell::Num(num(h.dram_gbs)),
        Cell::Num(format!("{:.1}", h.seconds)),
        Cell::Num(h.restarts.to_string()),
    ]);
    let per_second = Series {
        name: "moved".into(),
        points: (h.per_second_gbs.iter().enumerate())
            .map(|(i, &g)| (i as f64 + 1.0, g))
            .collect(),
        ..Default::default()
    };
    let chart = Lines {
        y_from_zero: true,
        ..lines(
            "Held load, each second",
            "second",
            Scale::Count,
            vec![per_second],
            vec![Mark {
                at: h.target_gbs,
                label: format!("asked {:.1} GB/s", h.target_gbs),
            }],
        )
    };
    vec![
        Block::Table(t),
        Block::Lines(
            chart,
            "GB/s of program bytes moved in each whole second.".into(),
        ),
    ]
}

/// The system DRAM peak and, where lower, the fabric's read ceiling, GB/s.
/// The DIMM inventory's ceilings as chart lines: the DRAM peak, and the read ceiling where a
/// fabric or link binds below it.
pub(super) fn ceilings(d: Option<&DimmsResults>) -> Vec<Mark> {
    let Some(d) = d else {
        return Vec::new();
    };
    let peak = d.ceilings.system_dram_mbs as f64 / 1000.0;
    let mut out = vec![Mark {
        at: peak,
        label: format!("DRAM peak {peak:.1} GB/s"),
    }];
    if let Some(f) = d
        .ceilings
        .binding_read_mbs
        .filter(|&f| f < d.ceilings.system_dram_mbs)
    {
        out.push(Mark {
            at: f as f64 / 1000.0,
            label: format!("read ceiling {:.1} GB/s", f as f64 / 1000.0),
        });
    }
    out
}

/// Median GB/s per test over `x`, one series per test name.
fn series(points: &[&Point], x: impl Fn(&Point) -> f64) -> Vec<Series> {
    let names: BTreeSet<&str> = points.iter().map(|p| p.test.name.as_str()).collect();
    names
        .iter()
        .map(|n| Series {
            name: n.to_string(),
            points: points
                .iter()
                .filter(|p| p.test.name == *n)
                .map(|p| (x(p), p.program_gbs.median))
                .collect(),
            ..Default::default()
        })
        .collect()
}

fn lines(
    title: &str,
    x_desc: &str,
    x_scale: Scale,
    series: Vec<Series>,
    marks: Vec<Mark>,
) -> Lines {
    Lines {
        y_marks: marks,
        ..Lines::new(
            title,
            x_desc,
            "GB/s (program bytes)",
            (x_scale, Scale::Linear),
            series,
        )
    }
}

impl Present for WithCeilings<'_> {
    fn view(&self) -> View {
        let (b, marks) = (self.0, ceilings(self.1));
        let mut blocks = Vec::new();
        blocks.extend(mix_bars(b, &marks));
        if !b.points.is_empty() {
            blocks.push(Block::Table(table("", &b.points, false)));
        }
        blocks.extend(scaling_chart(b, marks));
        if let Some(h) = &b.held {
            blocks.extend(held_blocks(h));
        }
        if !b.sweep.is_empty() {
            let sweep: Vec<&Point> = b.sweep.iter().collect();
            blocks.push(Block::Lines(
                lines(
                    "Bandwidth vs working set",
                    "bytes per array (log scale)",
                    Scale::Log2Bytes,
                    series(&sweep, |p| p.array_bytes as f64),
                    Vec::new(),
                ),
                "Median GB/s per working-set size: cache levels, then DRAM.".into(),
            ));
            blocks.push(Block::Table(table(
                "Working-set sweep (1 thread; size = all arrays of the thread)",
                &b.sweep,
                true,
            )));
        }
        View {
            id: "bandwidth",
            title: "Bandwidth".into(),
            method: b.method.clone(),
            facts: Vec::new(),
            blocks,
            findings: crate::view::texts(&b.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        for p in &self.0.points {
            out.push(
                Figure::sampled(
                    Key::Bandwidth {
                        test: p.test.name.clone(),
                        threads: p.threads as u64,
                        pattern: p.pattern.map(|x| x.to_string()),
                    },
                    format!(
                        "{} bandwidth, {} thread(s){}",
                        p.test.name,
                        p.threads,
                        p.pattern.map(|x| format!(", data {x}")).unwrap_or_default()
                    ),
                    "GB/s (program bytes)",
                    Better::Higher,
                    &p.program_gbs,
                )
                .under(conditions(self.0, p)),
            );
        }
        for p in &self.0.sweep {
            out.push(
                Figure::sampled(
                    Key::BandwidthSweep {
                        test: p.test.name.clone(),
                        threads: p.threads as u64,
                        size: Size::of(p.array_bytes),
                    },
                    format!(
                        "{} bandwidth at {} per array",
                        p.test.name,
                        format_bytes(p.array_bytes)
                    ),
                    "GB/s (program bytes)",
                    Better::Higher,
                    &p.program_gbs,
                )
                .under(conditions(self.0, p))
                .on_curve(),
            );
        }
        out
    }
}

/// One bar per test at the most threads measured, program bytes beside the DRAM bytes they
/// cost, against the DIMM ceilings.
fn mix_bars(b: &BandwidthResults, marks: &[Mark]) -> Option<Block> {
    let max_threads = b.points.iter().map(|p| p.threads).max().unwrap_or(1);
    let bars: Vec<Bar> = b
        .points
        .iter()
        .filter(|p| p.threads == max_threads)
        .map(|p| Bar {
            label: if p.zero_data() {
                format!("{} (zeros)", p.test.name)
            } else {
                p.test.name.clone()
            },
            value: p.program_gbs.median,
            low: p.program_gbs.ci_low,
            high: p.program_gbs.ci_high,
            secondary: p
                .level
                .is_none_or(|l| l == MemLevel::Memory)
                .then_some(p.dram_gbs.median),
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let caption = if marks.is_empty() {
        "Median GB/s. No ceiling drawn: the DIMM inventory was not readable on this machine (memsight dimms)."
    } else {
        "Median GB/s; red: theoretical ceilings from the DIMM inventory."
    };
    Some(Block::Bars(
        Bars {
            title: format!("Bandwidth by mix and store kind, {max_threads} thread(s)"),
            x_desc: "GB/s".into(),
            legend: (
                "program bytes (median, 95% CI)".into(),
                "estimated DRAM bytes (RFO counted)".into(),
            ),
            bars,
            marks: marks.to_vec(),
        },
        caption.into(),
    ))
}

/// GB/s against the thread count, where more than one count was measured.
fn scaling_chart(b: &BandwidthResults, marks: Vec<Mark>) -> Option<Block> {
    let counts: BTreeSet<usize> = b.points.iter().map(|p| p.threads).collect();
    if counts.len() <= 1 {
        return None;
    }
    let max = b
        .points
        .iter()
        .map(|p| p.program_gbs.max)
        .fold(0.0, f64::max);
    let scaling: Vec<&Point> = b.points.iter().filter(|p| !p.zero_data()).collect();
    Some(Block::Lines(
        lines(
            "Thread scaling",
            "threads",
            Scale::Count,
            series(&scaling, |p| p.threads as f64),
            // A ceiling far above every figure would flatten the curves: drawn when near.
            marks.into_iter().filter(|m| m.at < 3.0 * max).collect(),
        ),
        "Median GB/s by thread count.".into(),
    ))
}

/// What a bandwidth figure depends on besides its key.
fn conditions(r: &memsight_suites::bandwidth::BandwidthResults, p: &Point) -> String {
    let c = &r.config;
    let memory = r.memory.as_ref().map_or(String::new(), |m| {
        format!(", {} DAX on {}", m.kind.name(), m.filesystem)
    });
    format!(
        "{} per thread{}, {} pages, {}, {}{memory}",
        format_bytes(p.bytes_per_thread),
        if c.shared { " (one shared buffer)" } else { "" },
        c.page_kind,
        match (c.node, c.interleave) {
            (Some(n), _) => format!("node {n}"),
            (None, true) => "interleaved".to_string(),
            (None, false) => "local node".to_string(),
        },
        p.isa.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::Shortfall;

    /// A point whose samples were all disturbed carries the mark in its table cell and in the
    /// run's headline (it showed 19.22 GB/s for 3:1 with no mark).
    #[test]
    fn a_point_on_disturbed_samples_is_marked_where_it_is_shown() {
        let text = include_str!("../../../memsight/tests/data/results/bandwidth.json");
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut r: BandwidthResults = serde_json::from_value(doc["results"].clone()).unwrap();
        let p = r.points.iter_mut().find(|p| p.test.name == "read").unwrap();
        p.program_gbs.shortfall = Some(Shortfall {
            clean: 0,
            wanted: 5,
            disturbed_kept: 5,
            cause: memsight_core::cpuclock::Disturbance::LostCpu,
        });
        let v = r.view();
        let marked = v.blocks.iter().filter_map(|b| match b {
            crate::view::Block::Table(t) => Some(t),
            _ => None,
        });
        let marked = marked.flat_map(|t| &t.rows).any(|row| {
            matches!(&row[0], Cell::Text(n) if n == "read")
                && row
                    .iter()
                    .any(|c| matches!(c, Cell::Num(x) if x.ends_with(" ⚠")))
        });
        assert!(marked, "the read row carries the mark");
        assert!(r.headline()[0].contains(" ⚠"), "{:?}", r.headline());
    }
}
