//! The latency ladder: latency against working set (a chart, and a table per CPU), the cache
//! levels found in the curve, the TLB cost and memory-level parallelism.

use memsight_core::buffer::BufferReport;
use memsight_core::topology::CacheGroup;
use memsight_core::units::format_bytes;
use memsight_suites::measure::memlevel::MemLevel;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::{Key, Size};
use crate::view::num;
use crate::view::{Block, Cell, Lines, Mark, Scale, Series, Table, View};
use crate::view::{ci, count, med};
use memsight_suites::latency::levels::{self, Plateau};
use memsight_suites::latency::{CpuLadder, LatencyResults};

/// Ladder results, with the cache sizes the OS reports drawn on the charts.
pub struct WithCaches<'a>(pub &'a LatencyResults, pub &'a [CacheGroup]);

impl Present for LatencyResults {
    fn view(&self) -> View {
        WithCaches(self, &[]).view()
    }

    fn view_in(&self, ctx: &super::Context) -> View {
        WithCaches(self, ctx.caches).view()
    }

    /// The first CPU's levels.
    fn headline(&self) -> Vec<String> {
        self.ladders
            .first()
            .map(|l| {
                let levels: Vec<String> = l
                    .levels
                    .plateaus
                    .iter()
                    // A shoulder between two levels is in the table, not in the one line.
                    .filter(|p| p.name != MemLevel::Unmatched)
                    .map(|p| format!("{} {:.1} ns", p.name, p.ns))
                    .collect();
                format!("latency (CPU {}): {}", l.cpu, levels.join(", "))
            })
            .into_iter()
            .collect()
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        // What a ladder's figures depend on besides CPU and size: the access pattern, the stride
        // and the pages.
        let pattern = serde_json::to_string(&self.method.pattern).unwrap_or_default();
        for l in &self.ladders {
            let mut conditions = format!(
                "pattern {pattern}, stride {} B, {} pages",
                self.method.stride_bytes, l.main.buffer.kind
            );
            if self.method.write {
                conditions += ", write chase";
            }
            if let Some(f) = &l.main.buffer.file {
                conditions += &format!(", {} DAX", f.kind.name());
            }
            for p in &l.main.points {
                out.push(
                    Figure::sampled(
                        Key::LatencyPoint {
                            cpu: l.cpu as u64,
                            size: Size::of(p.size_bytes),
                        },
                        format!(
                            "load latency, CPU {}, {} working set",
                            l.cpu,
                            format_bytes(p.size_bytes)
                        ),
                        "ns",
                        Better::Lower,
                        &p.ns,
                    )
                    .under(conditions.clone())
                    .on_curve(),
                );
            }
            // Unmatched plateaus are not levels (a finding names them), and one CPU can have
            // several: they have no key of their own.
            for p in l
                .levels
                .plateaus
                .iter()
                .filter(|p| p.name != MemLevel::Unmatched)
            {
                out.push(plateau_figure(l, p).under(conditions.clone()));
            }
            out.extend(curve_figures(l));
        }
        out
    }
}

/// A ladder's curves besides its points: the TLB cost by size and the misses overlapped by
/// chain count.
fn curve_figures(l: &CpuLadder) -> Vec<Figure> {
    let mut out = Vec::new();
    for t in &l.tlb {
        out.push(
            Figure::scalar(
                Key::Tlb {
                    cpu: l.cpu as u64,
                    size: Size::of(t.size_bytes),
                },
                format!(
                    "TLB cost (small − huge pages), CPU {}, {}",
                    l.cpu,
                    format_bytes(t.size_bytes)
                ),
                "ns",
                Better::Lower,
                t.cost_ns,
            )
            .on_curve(),
        );
    }
    if let Some(m) = &l.mlp {
        // A round shorter than one miss is an error, not a figure to follow.
        for p in m.valid() {
            out.push(
                Figure::scalar(
                    Key::Mlp {
                        cpu: l.cpu as u64,
                        chains: p.k as u64,
                    },
                    format!("misses overlapped with {} chains, CPU {}", p.k, l.cpu),
                    "misses",
                    Better::Higher,
                    p.overlap,
                )
                .on_curve(),
            );
        }
    }
    out
}

/// A plateau's latency as a summary figure, with the latencies of the sizes it rests on as its
/// samples (the clean sizes in its range within the plateau's band; for memory, its last two
/// octaves, where its figure is read), so that `compare` can judge it.
fn plateau_figure(l: &CpuLadder, p: &Plateau) -> Figure {
    let key = Key::LatencyLevel {
        cpu: l.cpu as u64,
        level: p.name.to_string(),
    };
    let label = format!(
        "{} plateau latency, CPU {} (median of {} points)",
        p.name, l.cpu, p.points
    );
    let from = if p.name == MemLevel::Memory {
        p.first_bytes.max(p.last_bytes / 4)
    } else {
        p.first_bytes
    };
    let members: Vec<f64> = l
        .main
        .points
        .iter()
        .filter(|q| q.size_bytes >= from && q.size_bytes <= p.last_bytes)
        .filter(|q| !q.ns.rests_on_disturbed())
        .map(|q| q.ns.median)
        .filter(|ns| (ns / p.ns - 1.0).abs() <= levels::TOLERANCE)
        .collect();
    if members.len() >= 3 {
        let mut f = Figure::sampled(
            key,
            label,
            "ns",
            Better::Lower,
            &memsight_core::stats::summarize(&members),
        );
        f.value = p.ns;
        f
    } else {
        Figure::scalar(key, label, "ns", Better::Lower, p.ns)
    }
}

/// Page kind as verified, and physical contiguity where frames are visible.
fn describe(b: &BufferReport) -> String {
    if let Some(f) = &b.file {
        return f.describe();
    }
    let mut s = format!("{} pages (requested {})", b.kind, b.requested);
    if let Some(f) = b.huge_fraction {
        s += &format!(", {:.0}% on huge pages (smaps)", 100.0 * f);
    }
    if let Some(n) = b.bound_node {
        s += &format!(", bound to node {n}");
    }
    match &b.physical {
        Some(p) if p.frames_visible => {
            s += &format!(
                ", {} physically contiguous run(s), longest {} (pagemap)",
                p.runs.unwrap_or(0),
                p.longest_run_bytes.map_or("?".into(), format_bytes)
            )
        }
        Some(_) => s += ", physical frames hidden (not root)",
        None => {}
    }
    s
}

/// The clock a CPU's cycles figures come from, or why there are none.
fn clock_line(l: &CpuLadder) -> String {
    let c = &l.core_clock;
    let kind = c
        .core_type
        .as_ref()
        .map(|t| format!(" ({t} core)"))
        .unwrap_or_default();
    match (&c.ghz, &c.disputed) {
        (Some(g), _) => format!(
            "CPU {}{kind} · core clock {} GHz (95% CI {}, n={}; {})",
            l.cpu,
            num(g.median),
            ci(g),
            g.n,
            c.method
        ),
        (None, Some(why)) => format!("CPU {}{kind} · {why}", l.cpu),
        (None, None) => format!("CPU {}{kind} · core clock not measured", l.cpu),
    }
}

/// One CPU's ladder: its header (clock, buffers, warnings) as the caption.
fn ladder_table(l: &CpuLadder) -> Table {
    let mut caption = vec![
        clock_line(l),
        format!("buffer: {}", describe(&l.main.buffer)),
    ];
    if let Some(h) = &l.huge {
        caption.push(format!("TLB comparison buffer: {}", describe(&h.buffer)));
    }
    for w in l
        .main
        .buffer
        .warnings
        .iter()
        .chain(l.huge.iter().flat_map(|h| h.buffer.warnings.iter()))
    {
        caption.push(format!("  ! {w}"));
    }
    let mut header = vec![
        "working set",
        "ns/load (median)",
        "95% CI",
        "cycles",
        "min–max ns",
        "CV %",
        "robust CV %",
        "outliers",
        "n",
    ];
    if l.huge.is_some() {
        header.extend(["huge-page ns", "TLB cost ns"]);
    }
    let mut t = Table::new(&caption.join("\n"), &header);
    for p in &l.main.points {
        let mut row = vec![
            Cell::Num(format_bytes(p.size_bytes)),
            Cell::Num(format!(
                "{}{}",
                med(&p.ns),
                if p.noisy { " (noisy)" } else { "" }
            )),
            Cell::Num(ci(&p.ns)),
            Cell::Num(p.cycles.map_or("-".into(), |c| format!("{c:.1}"))),
            Cell::Num(format!("{}–{}", num(p.ns.min), num(p.ns.max))),
            Cell::Num(format!("{:.2}", 100.0 * p.ns.cv)),
            Cell::Num(format!("{:.2}", 100.0 * p.ns.robust_cv)),
            Cell::Num(p.ns.outliers.to_string()),
            Cell::Num(count(&p.ns)),
        ];
        if let Some(tlb) = l.tlb.iter().find(|t| t.size_bytes == p.size_bytes) {
            row.push(Cell::Num(num(tlb.huge_ns)));
            row.push(Cell::Num(format!(
                "{}{}",
                num(tlb.cost_ns),
                if tlb.significant { "" } else { " (~0)" }
            )));
        } else if l.huge.is_some() {
            row.extend([Cell::Num("-".into()), Cell::Num("-".into())]);
        }
        t.rows.push(row);
    }
    t
}

/// The cache levels found in one CPU's curve.
fn levels_table(l: &CpuLadder) -> Option<Table> {
    if l.levels.plateaus.is_empty() {
        return None;
    }
    let mut t = Table::new(
        &format!(
            "CPU {}: levels detected from the curve (plateau = sizes within ±12% of one latency)",
            l.cpu
        ),
        &[
            "level",
            "latency ns",
            "cycles",
            "plateau",
            "points",
            "OS reports",
        ],
    );
    for p in &l.levels.plateaus {
        t.rows.push(vec![
            Cell::Text(p.name.to_string()),
            Cell::Num(num(p.ns)),
            Cell::Num(p.cycles.map_or("-".into(), |c| format!("{c:.1}"))),
            Cell::Text(format!(
                "{} – {}",
                format_bytes(p.first_bytes),
                format_bytes(p.last_bytes)
            )),
            Cell::Num(p.points.to_string()),
            Cell::Text(p.reported_bytes.map_or("-".into(), format_bytes)),
        ]);
    }
    Some(t)
}

/// One CPU's memory-level-parallelism sweep.
fn mlp_table(l: &CpuLadder) -> Option<Table> {
    let mlp = l.mlp.as_ref()?;
    let mut t = Table::new(
        &format!(
            "CPU {}: memory-level parallelism at {} on {} pages",
            l.cpu,
            format_bytes(mlp.size_bytes),
            mlp.page_kind
        ),
        &[
            "parallel chains k",
            "ns per round (median)",
            "95% CI",
            "ns per load",
            "loads overlapped",
            "n",
        ],
    );
    for p in &mlp.points {
        t.rows.push(vec![
            Cell::Num(p.k.to_string()),
            Cell::Num(med(&p.round_ns)),
            Cell::Num(ci(&p.round_ns)),
            Cell::Num(num(p.ns_per_load)),
            Cell::Num(if p.impossible {
                "error: round < one miss".into()
            } else {
                format!("{:.2}", p.overlap)
            }),
            Cell::Num(count(&p.round_ns)),
        ]);
    }
    if !mlp.basis.is_empty() {
        t.caption.push_str(&format!(". {}", mlp.basis));
    }
    Some(t)
}

/// The ladders' curves, small and huge pages.
fn curves(r: &LatencyResults) -> Vec<Series> {
    let mut series = Vec::new();
    for ladder in &r.ladders {
        let pts = &ladder.main.points;
        series.push(Series {
            name: format!("CPU {} ({})", ladder.cpu, ladder.main.buffer.kind),
            points: pts
                .iter()
                .map(|p| (p.size_bytes as f64, p.ns.median))
                .collect(),
            whiskers: pts
                .iter()
                .map(|p| (p.size_bytes as f64, p.ns.ci_low, p.ns.ci_high))
                .collect(),
            dashed: false,
        });
        if let Some(h) = &ladder.huge {
            series.push(Series {
                name: format!("CPU {} ({})", ladder.cpu, h.buffer.kind),
                points: h
                    .points
                    .iter()
                    .map(|p| (p.size_bytes as f64, p.ns.median))
                    .collect(),
                whiskers: Vec::new(),
                dashed: true,
            });
        }
    }
    series
}

fn chart(
    title: &str,
    x: &str,
    y: &str,
    scales: (Scale, Scale),
    series: Vec<Series>,
    marks: &[Mark],
) -> Lines {
    Lines {
        x_marks: marks.to_vec(),
        ..Lines::new(title, x, y, scales, series)
    }
}

impl Present for WithCaches<'_> {
    fn view(&self) -> View {
        let r = self.0;
        let m = &r.method;
        let marks: Vec<Mark> = self
            .1
            .iter()
            .filter(|c| c.kind != "instruction")
            .map(|c| Mark {
                at: c.size_bytes as f64,
                label: format!("L{} {}", c.level, format_bytes(c.size_bytes)),
            })
            .collect();
        let mut blocks = Vec::new();
        let series = curves(r);
        if !series.is_empty() {
            blocks.push(Block::Lines(
                chart(
                    "Load latency vs working set",
                    "working set (log scale)",
                    "ns per load (log scale)",
                    (Scale::Log2Bytes, Scale::Log10),
                    series,
                    &marks,
                ),
                "Median ns per dependent load with its 95% CI; grey lines: cache sizes the OS reports (per instance). Dashed: the huge-page ladder.".into(),
            ));
        }
        for l in &r.ladders {
            blocks.push(Block::Table(ladder_table(l)));
            blocks.extend(levels_table(l).map(Block::Table));
        }
        blocks.extend(tlb_chart(r, &marks));
        blocks.extend(mlp_chart(r));
        for l in &r.ladders {
            blocks.extend(mlp_table(l).map(Block::Table));
        }
        View {
            id: "latency",
            title: "Latency ladder".into(),
            method: m.description.clone(),
            facts: vec![format!(
                "timer: {} (granularity {} ns, read {} ns; samples ≥ {:.1} ms)",
                m.timer.source,
                num(m.timer.granularity_ns),
                num(m.timer.read_cost_ns),
                m.sample_ns / 1e6
            )],
            blocks,
            findings: crate::view::texts(&r.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        self.0.figures()
    }
}

/// The page walk's cost per load against the working set, one line per CPU that measured it.
fn tlb_chart(r: &LatencyResults, marks: &[Mark]) -> Option<Block> {
    let tlb: Vec<Series> = r
        .ladders
        .iter()
        .filter(|x| !x.tlb.is_empty())
        .map(|x| Series {
            name: format!("CPU {}", x.cpu),
            points: x
                .tlb
                .iter()
                .map(|t| (t.size_bytes as f64, t.cost_ns))
                .collect(),
            ..Default::default()
        })
        .collect();
    if tlb.is_empty() {
        return None;
    }
    Some(Block::Lines(
        chart(
            "TLB cost: small-page minus huge-page latency",
            "working set (log scale)",
            "extra ns per load",
            (Scale::Log2Bytes, Scale::Linear),
            tlb,
            marks,
        ),
        "Same chase on 4 KiB and on huge pages, measured interleaved; the difference is the page walk.".into(),
    ))
}

/// Misses in flight against the number of interleaved chains, one line per CPU.
fn mlp_chart(r: &LatencyResults) -> Option<Block> {
    let mlp: Vec<Series> = r
        .ladders
        .iter()
        .filter_map(|x| x.mlp.as_ref().map(|m| (x.cpu, m)))
        .map(|(cpu, m)| Series {
            name: format!("CPU {cpu}, {}", format_bytes(m.size_bytes)),
            points: m.valid().map(|p| (p.k as f64, p.overlap)).collect(),
            ..Default::default()
        })
        .collect();
    if mlp.is_empty() {
        return None;
    }
    Some(Block::Lines(
        chart(
            "Memory-level parallelism",
            "independent chains",
            "misses in flight (overlap)",
            (Scale::Count, Scale::Linear),
            mlp,
            &[],
        ),
        "k interleaved chases: single-chain latency × k ÷ round time. A straight line means the core overlaps every miss.".into(),
    ))
}
