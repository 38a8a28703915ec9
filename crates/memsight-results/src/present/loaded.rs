//! Loaded latency: the latency-bandwidth curves (a chart), a summary per mix and each curve's
//! points.

use super::Present;
use crate::figure::{Better, Figure};
use crate::view::num;
use crate::view::{Block, Cell, Lines, Scale, Series, Table, View};
use crate::view::{ci, count, med, percent};
use memsight_suites::loaded::LoadedResults;

impl Present for LoadedResults {
    /// Saturation and knee per curve.
    fn headline(&self) -> Vec<String> {
        self.curves
            .iter()
            .map(|c| {
                format!(
                    "loaded latency ({}): saturation {:.1} GB/s, knee {}",
                    c.mix.name(),
                    c.saturation_gbs,
                    c.knee_gbs
                        .map_or("not reached".to_string(), |k| format!("{k:.1} GB/s"))
                )
            })
            .collect()
    }

    fn view(&self) -> View {
        let series = self
            .curves
            .iter()
            .map(|c| Series {
                name: c.mix.name().to_string(),
                points: c
                    .points
                    .iter()
                    .map(|p| (p.bandwidth_gbs, p.latency_ns.median))
                    .collect(),
                whiskers: c
                    .points
                    .iter()
                    .map(|p| (p.bandwidth_gbs, p.latency_ns.ci_low, p.latency_ns.ci_high))
                    .collect(),
                dashed: false,
            })
            .collect();
        let mut blocks = vec![Block::Lines(
            Lines::new(
                "Loaded latency",
                "total bandwidth, GB/s (estimated DRAM bytes)",
                "chase latency, ns",
                (Scale::Linear, Scale::Linear),
                series,
            ),
            format!(
                "One curve per read:write mix; knee = first point at {}× idle latency.{}",
                self.knee_factor,
                if self.rounds > 1 {
                    format!(
                        " Mixes measured in {} alternating rounds; \"rounds apart\" = (highest − lowest round bandwidth) ÷ their mean.",
                        self.rounds
                    )
                } else {
                    String::new()
                }
            ),
        )];
        let mut summary = Table::new(
            "",
            &[
                "mix",
                "idle ns",
                "saturation GB/s",
                "rounds apart %",
                "knee GB/s",
                "points",
            ],
        );
        for c in &self.curves {
            summary.rows.push(vec![
                Cell::Text(c.mix.name().into()),
                Cell::Num(
                    c.points
                        .first()
                        .map_or("-".into(), |p| med(&p.latency_ns)),
                ),
                Cell::Num(num(c.saturation_gbs)),
                Cell::Num(percent(c.saturation_between_rounds)),
                Cell::Num(c.knee_gbs.map_or("not reached".into(), num)),
                Cell::Num(c.points.len().to_string()),
            ]);
        }
        blocks.push(Block::Table(summary));
        for c in &self.curves {
            let mut t = Table::new(
                &format!(
                    "{} — saturation {:.1} GB/s, knee ({}× idle) {}",
                    c.mix.name(),
                    c.saturation_gbs,
                    self.knee_factor,
                    c.knee_gbs
                        .map_or("not reached".into(), |k| format!("{k:.1} GB/s"))
                ),
                &[
                    "delay cycles",
                    "bandwidth GB/s (DRAM est.)",
                    "bandwidth rounds apart %",
                    "latency ns (median)",
                    "95% CI",
                    "n",
                    "p50 ns",
                    "p90 ns",
                    "p99 ns",
                ],
            );
            for p in &c.points {
                t.rows.push(vec![
                    Cell::Text(p.delay_cycles.map_or("idle".into(), |d| d.to_string())),
                    Cell::Num(num(p.bandwidth_gbs)),
                    Cell::Num(percent(p.bandwidth_between_rounds())),
                    Cell::Num(med(&p.latency_ns)),
                    Cell::Num(ci(&p.latency_ns)),
                    Cell::Num(count(&p.latency_ns)),
                    Cell::Num(p.p50_ns.map_or("-".into(), num)),
                    Cell::Num(p.p90_ns.map_or("-".into(), num)),
                    Cell::Num(p.p99_ns.map_or("-".into(), num)),
                ]);
            }
            blocks.push(Block::Table(t));
        }
        View {
            id: "loaded",
            title: "Loaded latency".into(),
            method: self.method.clone(),
            facts: vec![format!(
                "chase CPU {}, load CPUs {}, node {}",
                self.plan.chase_cpu,
                memsight_core::units::format_list(&self.plan.load_cpus),
                self.plan
                    .node
                    .map_or("of the chasing CPU".into(), |n| n.to_string())
            )],
            blocks,
            findings: self.findings.clone(),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        for c in &self.curves {
            let mix = c.mix.name();
            let mk = mix.replace(' ', "-");
            if let Some(idle) = c.points.first() {
                out.push(Figure::sampled(
                    "loaded-latency",
                    format!("loaded/{mk}/idle"),
                    format!("latency with load threads idle ({mix} curve)"),
                    "ns",
                    Better::Lower,
                    &idle.latency_ns,
                ));
            }
            if let Some(top) = c
                .points
                .iter()
                .max_by(|a, b| a.bandwidth_gbs.total_cmp(&b.bandwidth_gbs))
            {
                out.push(Figure::sampled(
                    "loaded-latency",
                    format!("loaded/{mk}/saturated"),
                    format!(
                        "latency at saturation ({mix}, {:.1} GB/s)",
                        top.bandwidth_gbs
                    ),
                    "ns",
                    Better::Lower,
                    &top.latency_ns,
                ));
            }
            out.push(Figure::scalar(
                "loaded-latency",
                format!("loaded/{mk}/saturation"),
                format!("saturation bandwidth ({mix})"),
                "GB/s (DRAM est.)",
                Better::Higher,
                c.saturation_gbs,
            ));
        }
        out
    }
}

