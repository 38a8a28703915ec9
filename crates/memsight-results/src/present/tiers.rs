//! Memory tiers: one table per tier, the granularity curves, the near-memory sweep and the
//! weighted-interleave sweep.

use memsight_core::stats::Summary;
use memsight_core::units::{format_bytes, format_list};
use memsight_kernels::granular::Access;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::{Key, Place, Size};
use crate::view::{Block, Cell, Lines, Scale, Series, Table, View, med, med_to, num};
use memsight_suites::tiers::TiersResults;
use memsight_suites::tiers::measure::{MemTarget, TargetFigures};
use memsight_suites::tiers::sweeps::{NearSweep, WeightedSweep};

fn opt(s: &Option<Summary>) -> Cell {
    Cell::Num(s.as_ref().map_or("-".into(), med))
}

fn optf(v: Option<f64>) -> Cell {
    Cell::Num(v.map_or("-".into(), num))
}

const HEADER: [&str; 12] = [
    "memory",
    "kind",
    "read ns",
    "write ns",
    "read GB/s",
    "write GB/s",
    "NT write GB/s",
    "knee GB/s",
    "read granule",
    "write granule",
    "claimed read ns",
    "claimed read GB/s",
];

/// One row of a tier table.
fn row(r: &TiersResults, t: &TargetFigures) -> Vec<Cell> {
    let claim = match t.target {
        MemTarget::Node { node } => r
            .plan
            .nodes()
            .find(|n| n.node == node)
            .and_then(|n| n.claim.clone()),
        MemTarget::Dax { .. } => None,
    };
    let gran = |g: Option<usize>| Cell::Num(g.map_or("-".into(), |g| format!("{g} B")));
    vec![
        Cell::Text(t.target.label()),
        Cell::Text(t.kind.clone().unwrap_or_else(|| "-".into())),
        opt(&t.read_latency_ns),
        opt(&t.write_latency_ns),
        opt(&t.read_gbs),
        opt(&t.write_gbs),
        opt(&t.write_nt_gbs),
        // No knee up to saturation: latency never doubled; say how far the traffic went.
        match (t.knee_gbs, t.saturation_gbs) {
            (None, Some(s)) => Cell::Num(format!("> {}", num(s))),
            (k, _) => optf(k),
        },
        gran(t.read_granule),
        gran(t.write_granule),
        optf(
            claim
                .as_ref()
                .and_then(|c| c.read_latency_ns)
                .map(|v| v as f64),
        ),
        optf(
            claim
                .as_ref()
                .and_then(|c| c.read_bandwidth_mbs)
                .map(|v| v as f64 / 1000.0),
        ),
    ]
}

/// Bandwidth per block size, one series per access, every CPU of the target.
/// Idle latency by access size: one row per block.
fn block_latency(t: &TargetFigures) -> Option<Block> {
    if t.block_latency.is_empty() {
        return None;
    }
    let mut table = Table::new(
        &format!(
            "{}: idle latency by access size (each chase step reads a whole block)",
            t.target.label()
        ),
        &["block", "ns (median)", "95% CI", "samples", "× 64 B"],
    );
    let base = t.block_latency.first().map(|b| b.ns.median);
    for b in &t.block_latency {
        table.rows.push(vec![
            Cell::Text(format!("{} B", b.block_bytes)),
            Cell::Num(med_to(&b.ns, 1)),
            Cell::Num(format!("{:.1}–{:.1}", b.ns.ci_low, b.ns.ci_high)),
            Cell::Num(b.ns.n.to_string()),
            Cell::Num(base.map_or("-".into(), |x| format!("{:.2}", b.ns.median / x))),
        ]);
    }
    Some(Block::Table(table))
}

fn granularity(t: &TargetFigures) -> Vec<Block> {
    if t.granularity.is_empty() {
        return Vec::new();
    }
    let max = t.cpus.len();
    let mut table = Table::new(
        &format!(
            "{}: random whole-block accesses, GB/s of program bytes (median; 1 thread / {max} threads)",
            t.target.label()
        ),
        &["block", "read", "write", "NT write", "write + persist"],
    );
    let mut blocks: Vec<usize> = t.granularity.iter().map(|p| p.block_bytes).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let at = |a: Access, b: usize, n: usize| {
        t.granularity
            .iter()
            .find(|p| p.access == a && p.block_bytes == b && p.threads == n)
            .map(|p| p.gbs.median)
    };
    // Table cells carry the ⚠ of a point resting on disturbed samples, as the footer counts.
    let cell = |a: Access, b: usize, n: usize| {
        t.granularity
            .iter()
            .find(|p| p.access == a && p.block_bytes == b && p.threads == n)
            .map(|p| format!("{}{}", num(p.gbs.median), p.gbs.mark()))
    };
    for &b in &blocks {
        let mut cells = vec![Cell::Text(format!("{b} B"))];
        for a in Access::ALL {
            let one = cell(a, b, 1).unwrap_or_else(|| "-".into());
            let all = cell(a, b, max).unwrap_or_else(|| "-".into());
            cells.push(Cell::Num(if max > 1 {
                format!("{one} / {all}")
            } else {
                one
            }));
        }
        table.rows.push(cells);
    }
    let series = Access::ALL
        .iter()
        .map(|&a| Series {
            name: a.name().to_string(),
            points: blocks
                .iter()
                .filter_map(|&b| Some((b as f64, at(a, b, max)?)))
                .collect(),
            ..Default::default()
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let chart = Lines::new(
        format!("{}: bandwidth per random block", t.target.label()),
        "block size",
        "GB/s",
        (Scale::Log2Bytes, Scale::Linear),
        series,
    );
    vec![
        Block::Table(table),
        Block::Lines(
            chart,
            "Random whole-block accesses with every CPU: where the read curve stops rising steeply is the medium's access unit.".into(),
        ),
    ]
}

fn near_blocks(n: &NearSweep) -> Vec<Block> {
    let a = &n.analysis;
    let mut t = Table::new(
        &format!(
            "Working set against {} of near memory (node {}, CPUs {})",
            format_bytes(a.near_bytes),
            n.node,
            format_list(&n.cpus)
        ),
        &[
            "working set",
            "latency ns",
            "read GB/s",
            "read GB/s, 1 CPU",
            "2:1 mix GB/s",
            "miss rate (latency)",
            "miss rate (read bandwidth)",
            "miss rate (2:1 mix)",
            "ideal miss rate",
        ],
    );
    let pct = |v: Option<f64>| Cell::Num(v.map_or("-".into(), |v| format!("{:.0}%", 100.0 * v)));
    for p in &n.points {
        t.rows.push(vec![
            Cell::Text(format_bytes(p.size_bytes)),
            Cell::Num(med(&p.latency_ns)),
            opt(&p.read_gbs),
            opt(&p.read_gbs_one),
            opt(&p.mix_gbs),
            pct(p.miss_latency),
            pct(p.miss_bandwidth),
            pct(p.miss_mix),
            pct(Some(p.miss_ideal)),
        ]);
    }
    let lat = Series {
        name: "latency".into(),
        points: n
            .points
            .iter()
            .map(|p| (p.size_bytes as f64, p.latency_ns.median))
            .collect(),
        ..Default::default()
    };
    let mut chart = Lines::new(
        "Latency per working set",
        "working set",
        "ns",
        (Scale::Log2Bytes, Scale::Linear),
        vec![lat],
    );
    chart.x_marks.push(crate::view::Mark {
        at: a.near_bytes as f64,
        label: "near memory".into(),
    });
    let bw = Series {
        name: "read bandwidth".into(),
        points: n
            .points
            .iter()
            .filter_map(|p| Some((100.0 * p.miss_latency?, p.read_gbs.as_ref()?.median)))
            .collect(),
        ..Default::default()
    };
    let miss = Lines::new(
        "Read bandwidth against near-memory miss rate",
        "miss rate, % (from latency)",
        "GB/s",
        (Scale::Linear, Scale::Linear),
        vec![bw],
    );
    vec![
        Block::Table(t),
        Block::Lines(chart, "Where latency leaves the near plateau, the working set no longer fits the near memory.".into()),
        Block::Lines(miss, "As in Intel's Optane talk (Looi and Xu, Hot Chips 2019): bandwidth falls as the miss rate rises.".into()),
    ]
}

fn weighted_block(w: &WeightedSweep) -> Block {
    let mut t = Table::new(
        &format!(
            "Weighted interleave, node {}:{} pages (placed by {}), GB/s of program bytes",
            w.fast,
            w.slow,
            w.mechanism.describe()
        ),
        &["ratio", "read GB/s", "2:1 GB/s", "note"],
    );
    for p in &w.points {
        let mut note = Vec::new();
        if Some(p.ratio) == w.best_read {
            note.push("best read");
        }
        if Some(p.ratio) == w.best_mix {
            note.push("best 2:1");
        }
        if Some(p.ratio) == w.measured_ratio {
            note.push("measured-bandwidth ratio");
        }
        if Some(p.ratio) == w.claimed_ratio {
            note.push("HMAT ratio");
        }
        t.rows.push(vec![
            Cell::Text(p.ratio.to_string()),
            opt(&p.read_gbs),
            opt(&p.mix_gbs),
            Cell::Text(note.join(", ")),
        ]);
    }
    Block::Table(t)
}

/// The near-memory and interleave plans in words.
fn plan_facts(r: &TiersResults) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(n) = &r.plan.near {
        out.push(format!(
            "near memory: {} in front of node {} ({}); working sets {} to {} ({} sizes){}",
            format_bytes(n.bytes),
            n.node,
            n.source.describe(),
            n.sizes.first().map_or("-".into(), |&s| format_bytes(s)),
            n.sizes.last().map_or("-".into(), |&s| format_bytes(s)),
            n.sizes.len(),
            n.capped
                .as_ref()
                .map_or(String::new(), |c| format!("; {c}"))
        ));
    }
    if let Some(w) = &r.plan.weighted {
        let ratios: Vec<String> = w.ratios.iter().map(|r| r.to_string()).collect();
        out.push(format!(
            "weighted interleave: node {} (fast) with node {} (slow), from CPUs {}, ratios {} (placed by {}{})",
            w.fast,
            w.slow,
            format_list(&w.cpus),
            ratios.join(", "),
            w.mechanism.describe(),
            w.claimed.map_or(String::new(), |c| format!("; HMAT suggests {c}"))
        ));
    }
    out
}

/// The keyed figures of one target.
fn target_figures(t: &TargetFigures) -> Vec<Figure> {
    let cond = match &t.target {
        MemTarget::Dax { backing } => {
            format!("{} DAX on {}", backing.kind.name(), backing.filesystem)
        }
        MemTarget::Node { .. } => format!("CPUs {}", format_list(&t.cpus)),
    };
    let mut out = idle_figures(t, &cond);
    let k = t.target.key();
    let l = t.target.label();
    for b in &t.block_latency {
        out.push(
            Figure::sampled(
                Key::TiersBlockLatency {
                    node: Place(k.clone()),
                    block: b.block_bytes as u64,
                },
                format!("idle latency of {}-byte reads, {l}", b.block_bytes),
                "ns",
                Better::Lower,
                &b.ns,
            )
            .under(cond.clone())
            .on_curve(),
        );
    }
    if let Some(v) = t.knee_gbs {
        out.push(
            Figure::scalar(
                Key::Tiers {
                    node: Place(k.clone()),
                    test: "knee".into(),
                },
                format!("loaded-latency knee, {l}"),
                "GB/s (estimated DRAM bytes)",
                Better::Higher,
                v,
            )
            .under(cond.clone()),
        );
    }
    out.extend(granularity_figures(t, &cond));
    out
}

/// A target's idle latencies and bandwidths, those it measured.
fn idle_figures(t: &TargetFigures, cond: &str) -> Vec<Figure> {
    let k = t.target.key();
    let l = t.target.label();
    let sampled: [(&str, &str, &str, Better, &Option<Summary>); 5] = [
        (
            "read-latency",
            "idle read latency",
            "ns",
            Better::Lower,
            &t.read_latency_ns,
        ),
        (
            "write-latency",
            "idle write (RMW) latency",
            "ns",
            Better::Lower,
            &t.write_latency_ns,
        ),
        (
            "read-bw",
            "read bandwidth",
            "GB/s (program bytes)",
            Better::Higher,
            &t.read_gbs,
        ),
        (
            "write-bw",
            "write bandwidth",
            "GB/s (program bytes)",
            Better::Higher,
            &t.write_gbs,
        ),
        (
            "write-nt-bw",
            "non-temporal write bandwidth",
            "GB/s (program bytes)",
            Better::Higher,
            &t.write_nt_gbs,
        ),
    ];
    sampled
        .into_iter()
        .filter_map(|(key, what, unit, better, s)| {
            let s = s.as_ref()?;
            Some(
                Figure::sampled(
                    Key::Tiers {
                        node: Place(k.clone()),
                        test: key.to_string(),
                    },
                    format!("{what}, {l}"),
                    unit,
                    better,
                    s,
                )
                .under(cond.to_string()),
            )
        })
        .collect()
}

/// The access-granularity curve: random reads or writes of each block size and thread count.
fn granularity_figures(t: &TargetFigures, cond: &str) -> Vec<Figure> {
    let k = t.target.key();
    let l = t.target.label();
    t.granularity
        .iter()
        .map(|p| {
            Figure::sampled(
                Key::TiersAccess {
                    node: Place(k.clone()),
                    test: format!("random-{}", p.access.name()),
                    block: Size::of(p.block_bytes as u64),
                    threads: p.threads as u64,
                },
                format!(
                    "random {} of {} B blocks, {} thread(s), {l}",
                    p.access.name(),
                    p.block_bytes,
                    p.threads
                ),
                "GB/s (program bytes)",
                Better::Higher,
                &p.gbs,
            )
            .under(format!(
                "{cond}, {} per thread",
                format_bytes(p.bytes_per_thread)
            ))
            .on_curve()
        })
        .collect()
}

impl Present for TiersResults {
    /// Each measured target's idle read latency and read bandwidth.
    fn headline(&self) -> Vec<String> {
        let parts: Vec<String> = self
            .targets
            .iter()
            .map(|f| {
                let med = |s: &Option<memsight_core::stats::Summary>| {
                    s.as_ref().map_or("-".to_string(), |s| med_to(s, 1))
                };
                format!(
                    "{} ({}) {} ns, {} GB/s",
                    f.target.label(),
                    f.kind.as_deref().unwrap_or("kind not reported"),
                    med(&f.read_latency_ns),
                    med(&f.read_gbs)
                )
            })
            .collect();
        vec![format!(
            "memory tiers (read latency, read bandwidth): {}",
            parts.join("; ")
        )]
    }

    fn view(&self) -> View {
        let mut blocks = Vec::new();
        let mut facts = Vec::new();
        for (i, tier) in self.plan.tiers.iter().enumerate() {
            let mut t = Table::new(&format!("Tier {}: {}", i + 1, tier.label), &HEADER);
            for f in self.targets.iter().filter(|f| f.tier == Some(i)) {
                t.rows.push(row(self, f));
            }
            for n in &tier.nodes {
                facts.push(format!(
                    "{}: node {} ({}, {}{}) measured from CPUs {} (node {})",
                    tier.label,
                    n.node,
                    n.kind.as_deref().unwrap_or("kind not reported"),
                    format_bytes(n.memory_bytes),
                    if n.cpu_less { ", CPU-less" } else { "" },
                    format_list(&n.cpus),
                    n.initiator
                ));
            }
            if !t.rows.is_empty() {
                blocks.push(Block::Table(t));
            }
        }
        facts.extend(plan_facts(self));
        let dax: Vec<&TargetFigures> = self.targets.iter().filter(|f| f.tier.is_none()).collect();
        if !dax.is_empty() {
            let mut t = Table::new("DAX memory", &HEADER);
            for f in &dax {
                t.rows.push(row(self, f));
                if let MemTarget::Dax { backing } = &f.target {
                    facts.push(backing.describe());
                }
            }
            blocks.push(Block::Table(t));
        }
        for f in &self.targets {
            blocks.extend(block_latency(f));
            blocks.extend(granularity(f));
        }
        if let Some(n) = &self.near {
            blocks.extend(near_blocks(n));
        }
        if let Some(w) = &self.weighted {
            blocks.push(weighted_block(w));
        }
        View {
            id: "tiers",
            title: "Memory tiers".into(),
            method: self.method.clone(),
            facts,
            blocks,
            findings: crate::view::texts(&self.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out: Vec<Figure> = self.targets.iter().flat_map(target_figures).collect();
        if let Some(n) = &self.near {
            for p in &n.points {
                out.push(
                    Figure::sampled(
                        Key::TiersNear {
                            size: Size::of(p.size_bytes),
                            test: "latency".into(),
                        },
                        format!(
                            "latency at {} against near memory",
                            format_bytes(p.size_bytes)
                        ),
                        "ns",
                        Better::Lower,
                        &p.latency_ns,
                    )
                    .on_curve(),
                );
            }
        }
        if let Some(w) = &self.weighted {
            for p in &w.points {
                if let Some(s) = &p.read_gbs {
                    out.push(
                        Figure::sampled(
                            Key::TiersWeighted {
                                placement: format!("{}-{}", p.ratio.near, p.ratio.far),
                                test: "read".into(),
                            },
                            format!(
                                "read bandwidth, pages {} on nodes {}:{}",
                                p.ratio, w.fast, w.slow
                            ),
                            "GB/s (program bytes)",
                            Better::Higher,
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
