//! The run's cross-suite agreement ([`crate::story`]) as a view and summary lines.

use crate::story::{Agreement, findings};
use crate::view::{Block, Cell, Table, View, num};

/// The section: one row per pair judged.
pub fn view(a: &[Agreement]) -> View {
    let mut t = Table::new(
        "Figures of one quantity from two suites",
        &[
            "quantity",
            "stands",
            "value",
            "against",
            "value",
            "ratio",
            "tolerance %",
            "agree",
        ],
    );
    for x in a {
        t.rows.push(vec![
            Cell::Text(x.quantity.clone()),
            Cell::Text(x.stands.key.to_string()),
            Cell::Num(format!("{} {}", num(x.stands.value), x.stands.unit)),
            Cell::Text(x.against.key.to_string()),
            Cell::Num(format!("{} {}", num(x.against.value), x.against.unit)),
            Cell::Num(format!("{:.2}", x.ratio)),
            Cell::Num(format!("{:.0}", 100.0 * x.tolerance)),
            Cell::Text(x.concord().word().into()),
        ]);
    }
    View {
        id: "story",
        title: "One run, one story".into(),
        method: "Where two suites of this run measured the same quantity (read bandwidth of the whole team on its own node; idle memory latency), their figures are set side by side. They agree within 10%, or within their 95% CIs' relative widths added, widened by how far the reference probes saw the quantity move during the run (one core's read rate or the team's, whichever moved more, for bandwidth; idle latency for latency), but never beyond ±25%. Past that, a figure the drift probes put in a slow phase gives way to one measured outside it; otherwise, where the noise and the drift cannot account for the gap, the figure of the suite that measures the quantity on its own stands (the bandwidth suite's read; the ladder's settled memory plateau); where they could, the run cannot tell which stands and says so.".into(),
        facts: Vec::new(),
        blocks: vec![Block::Table(t)],
        findings: findings(a),
    }
}

/// One summary line per pair that disagrees.
pub fn headlines(a: &[Agreement]) -> Vec<String> {
    a.iter()
        .filter(|x| !x.agree)
        .map(|x| {
            let verdict = match x.concord() {
                crate::story::Concord::CannotTell => {
                    "the machine moved too much to tell which stands".to_string()
                }
                _ => format!("the {} figure stands", x.stands.suite),
            };
            format!(
                "one story: {} {} {} ({}) vs {} {} ({}) differ {:.2}×: {verdict} (see the report)",
                x.quantity,
                num(x.stands.value),
                x.stands.unit,
                x.stands.suite,
                num(x.against.value),
                x.against.unit,
                x.against.suite,
                x.ratio.max(1.0 / x.ratio),
            )
        })
        .collect()
}
