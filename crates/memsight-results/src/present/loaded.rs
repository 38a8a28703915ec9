//! Loaded latency: the latency-bandwidth curves (one chart for the whole read-share family, with
//! the DIMM inventory's ceilings where it was read), a summary per mix and each curve's points.

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::num;
use crate::view::{Block, Cell, Lines, Scale, Series, Table, View};
use crate::view::{ci, count, med, percent};
use memsight_suites::dimms::DimmsResults;
use memsight_suites::loaded::{Curve, LoadedResults};

/// Loaded-latency results, with the DIMM inventory's ceilings when one was read.
pub struct WithCeilings<'a>(pub &'a LoadedResults, pub Option<&'a DimmsResults>);

/// A curve's name with its share of DRAM bytes read: "2:1 (67% read)".
fn label(c: &Curve) -> String {
    format!("{} ({:.0}% read)", c.mix.name(), c.mix.read_share() * 100.0)
}

impl Present for LoadedResults {
    fn view(&self) -> View {
        WithCeilings(self, None).view()
    }

    fn view_in(&self, ctx: &super::Context) -> View {
        WithCeilings(self, ctx.dimms).view()
    }

    fn figures(&self) -> Vec<Figure> {
        figures(self)
    }

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
}

impl Present for WithCeilings<'_> {
    fn figures(&self) -> Vec<Figure> {
        figures(self.0)
    }

    fn view(&self) -> View {
        let (this, dimms) = (self.0, self.1);
        let peak = dimms.map(|d| d.ceilings.system_dram_mbs as f64 / 1000.0);
        let mut blocks = vec![curves_chart(this, dimms)];
        blocks.push(Block::Table(summary(this, peak)));
        for c in &this.curves {
            blocks.push(Block::Table(curve_table(this, c)));
        }
        let mut facts = vec![format!(
            "chase CPU {}, load CPUs {}, node {}",
            this.plan.chase_cpu,
            memsight_core::units::format_list(&this.plan.load_cpus),
            this.plan
                .node
                .map_or("of the chasing CPU".into(), |n| n.to_string())
        )];
        facts.extend(tsc_grid(this));
        View {
            id: "loaded",
            title: "Loaded latency".into(),
            method: this.method.clone(),
            facts,
            blocks,
            findings: crate::view::texts(&this.findings),
        }
    }
}

/// Every mix's curve on one chart, with the DIMM inventory's ceilings as vertical lines.
fn curves_chart(this: &LoadedResults, dimms: Option<&DimmsResults>) -> Block {
    // A ceiling the curves reach less than a quarter of would squeeze them into a corner of
    // the chart (the CPUs measured were a small part of the machine): the summary's share of
    // the peak says it instead.
    let top = this
        .curves
        .iter()
        .map(|c| c.saturation_gbs)
        .fold(0.0, f64::max);
    let marks: Vec<_> = super::bandwidth::ceilings(dimms)
        .into_iter()
        .filter(|m| m.at <= 4.0 * top)
        .collect();
    let series = this
        .curves
        .iter()
        .map(|c| Series {
            name: label(c),
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
    let mut chart = Lines::new(
        "Loaded latency",
        "total bandwidth, GB/s (estimated DRAM bytes)",
        "chase latency, ns",
        (Scale::Linear, Scale::Linear),
        series,
    );
    let chart_marks: Vec<String> = marks.iter().map(|m| m.label.clone()).collect();
    chart.x_marks = marks;
    chart.x_to_marks = true;
    Block::Lines(
        chart,
        format!(
            "One curve per read:write mix, labelled with its share of DRAM bytes read (regular stores read each line for ownership first, so they reach 50% at most; NT stores go below); knee = first point at {}× idle latency.{}{}",
            this.knee_factor,
            if this.rounds > 1 {
                format!(
                    " Mixes measured in {} alternating rounds; \"rounds apart\" = (highest − lowest round bandwidth) ÷ their mean.",
                    this.rounds
                )
            } else {
                String::new()
            },
            if !chart_marks.is_empty() {
                " Vertical lines: the DIMM inventory's theoretical ceilings."
            } else {
                ""
            }
        ),
    )
}

/// One curve's points, idle first, with the latency percentiles at each.
fn curve_table(this: &LoadedResults, c: &Curve) -> Table {
    let mut t = Table::new(
        &format!(
            "{} — saturation {:.1} GB/s, knee ({}× idle) {}",
            c.mix.name(),
            c.saturation_gbs,
            this.knee_factor,
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
    t
}

/// Where the TSC the percentiles were timed with steps coarser than 2% of the latencies: the
/// percentiles lie on its grid, so a p50 may stand up to a step from the median beside it.
fn tsc_grid(r: &LoadedResults) -> Option<String> {
    let points = r.curves.iter().flat_map(|c| c.points.iter());
    let (step, ns) = points
        .filter_map(|p| Some((p.tsc_step_ns?, p.latency_ns.median)))
        .max_by(|a, b| (a.0 / a.1).total_cmp(&(b.0 / b.1)))?;
    (step > 0.02 * ns).then(|| {
        format!(
            "the p50/p90/p99 columns time single loads with the TSC, which steps {step:.1} ns here: they lie on that grid, so a p50 can stand up to {step:.0} ns from the median latency beside it (the median times thousands of loads at once and has no such step)"
        )
    })
}

/// One row per curve: idle latency, saturation (and its share of the DRAM peak, where known),
/// how far the rounds lay apart, the knee.
fn summary(r: &LoadedResults, peak: Option<f64>) -> Table {
    let mut header = vec!["mix", "DRAM read %", "idle ns", "saturation GB/s"];
    if peak.is_some() {
        header.push("of DRAM peak %");
    }
    header.extend(["rounds apart %", "knee GB/s", "points"]);
    let mut t = Table::new("", &header);
    for c in &r.curves {
        let mut row = vec![
            Cell::Text(c.mix.name().into()),
            Cell::Num(format!("{:.0}", c.mix.read_share() * 100.0)),
            Cell::Num(c.points.first().map_or("-".into(), |p| med(&p.latency_ns))),
            Cell::Num(num(c.saturation_gbs)),
        ];
        if let Some(p) = peak {
            row.push(Cell::Num(format!("{:.0}", 100.0 * c.saturation_gbs / p)));
        }
        row.extend([
            Cell::Num(percent(c.saturation_between_rounds)),
            Cell::Num(c.knee_gbs.map_or("not reached".into(), num)),
            Cell::Num(c.points.len().to_string()),
        ]);
        t.rows.push(row);
    }
    t
}

fn figures(r: &LoadedResults) -> Vec<Figure> {
    let mut out = Vec::new();
    for c in &r.curves {
        let mix = c.mix.name();
        let mk = mix.replace(' ', "-");
        if let Some(idle) = c.points.first() {
            out.push(Figure::sampled(
                Key::Loaded {
                    mix: mk.clone(),
                    statistic: "idle".into(),
                },
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
                Key::Loaded {
                    mix: mk.clone(),
                    statistic: "saturated".into(),
                },
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
            Key::Loaded {
                mix: mk.clone(),
                statistic: "saturation".into(),
            },
            format!("saturation bandwidth ({mix})"),
            "GB/s (DRAM est.)",
            Better::Higher,
            c.saturation_gbs,
        ));
    }
    out
}
