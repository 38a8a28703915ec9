//! The run's drift series ([`memsight_suites::probes`]): a chart of the reference probes over
//! the run with the suites' spans, a table, and one summary line.

use memsight_suites::probes::DriftSeries;

use crate::view::{Block, Cell, Lines, Mark, Scale, Series, Table, View, num};

/// The drift section of a run's report and terminal output.
pub fn view(d: &DriftSeries) -> View {
    let mut blocks = Vec::new();
    blocks.extend(probes_chart(d));
    blocks.push(Block::Table(probes_table(d)));
    let mut facts = vec![format!(
        "{} probes over {} suites",
        d.probes.len(),
        d.phases.len()
    )];
    if let Some(v) = &d.verdict {
        facts.push(format!(
            "read rate highest ÷ lowest {:.2}× (probes' own spread {:.1}%), idle latency {:.2}×",
            v.bandwidth_ratio,
            100.0 * v.noise,
            v.latency_ratio
        ));
        if let Some(t) = &v.team {
            facts.push(format!(
                "the team's read rate highest ÷ lowest {:.2}× ({:.1}–{:.1} GB/s)",
                t.bandwidth_ratio, t.low_gbs, t.best_gbs
            ));
        }
    }
    View {
        id: "drift",
        title: "Drift during the run".into(),
        method: d.method.clone(),
        facts,
        blocks,
        findings: d.findings.clone(),
    }
}

/// The probes' read rate over the run with where each suite began: needs two usable probes to
/// draw a line.
fn probes_chart(d: &DriftSeries) -> Option<Block> {
    let usable: Vec<_> = d.probes.iter().filter(|p| p.read_gbs.is_finite()).collect();
    if usable.len() < 2 {
        return None;
    }
    let series = vec![Series {
        name: format!("read, CPU {}", d.cpu),
        points: usable.iter().map(|p| (p.at_s, p.read_gbs)).collect(),
        whiskers: usable
            .iter()
            .map(|p| (p.at_s, p.read_gbs * (1.0 - p.read_spread), p.read_gbs))
            .collect(),
        dashed: false,
    }];
    let chart = Lines {
        x_marks: d
            .phases
            .iter()
            .map(|ph| Mark {
                at: ph.from_s,
                label: ph.suite.clone(),
            })
            .collect(),
        ..Lines::new(
            "One core's memory bandwidth during the run",
            "seconds since the run started",
            "GB/s (program bytes, best of 3 passes)",
            (Scale::Linear, Scale::Linear),
            series,
        )
    };
    Some(Block::Lines(
        chart,
        "Each point is a reference probe (whiskers: the range of its passes); grey lines: where each suite began. A fall that other probes do not share is the machine moving, not the suite."
            .into(),
    ))
}

/// Every probe, unusable ones included (their figures shown as `-`).
fn probes_table(d: &DriftSeries) -> Table {
    let mut t = Table::new(
        "Reference probes",
        &[
            "s",
            "where",
            "read GB/s",
            "spread %",
            "team read GB/s",
            "idle ns",
            "dropped",
        ],
    );
    for p in &d.probes {
        let opt = |x: f64, f: fn(f64) -> String| if x.is_finite() { f(x) } else { "-".into() };
        t.rows.push(vec![
            Cell::Num(format!("{:.1}", p.at_s)),
            Cell::Text(p.label.clone()),
            Cell::Num(opt(p.read_gbs, num)),
            Cell::Num(format!("{:.1}", 100.0 * p.read_spread)),
            Cell::Num(opt(p.team_read_gbs.unwrap_or(f64::NAN), num)),
            Cell::Num(opt(p.latency_ns, |x| format!("{x:.0}"))),
            Cell::Num(p.dropped.to_string()),
        ]);
    }
    t
}

/// The summary's line: how far the machine moved, and which suites measured in its slow phase.
pub fn headline(d: &DriftSeries) -> Option<String> {
    let v = d.verdict.as_ref()?;
    let team = v.team.as_ref().filter(|t| t.moved).map(|t| {
        format!(
            "; the CPUs' bandwidth together moved {:.2}× ({} measured in its slow phase)",
            t.bandwidth_ratio,
            names(&t.slow)
        )
    });
    let team = team.unwrap_or_default();
    if !v.moved {
        return Some(format!(
            "drift: one core's memory bandwidth stayed within {:.0}% over {} reference probes{team}",
            100.0 * (v.bandwidth_ratio - 1.0),
            v.usable
        ));
    }
    Some(format!(
        "drift: one core's memory bandwidth moved {:.2}× during the run (slowest {:.0}–{:.0} s); {} measured in the slow phase{team}",
        v.bandwidth_ratio,
        v.slow_from_s.unwrap_or(f64::NAN),
        v.slow_to_s.unwrap_or(f64::NAN),
        names(&v.slow)
    ))
}

fn names(slow: &[memsight_suites::probes::Affected]) -> String {
    if slow.is_empty() {
        "no suite".to_string()
    } else {
        slow.iter()
            .map(|a| a.suite.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
