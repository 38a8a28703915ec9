//! The fleet report: nodes × headline figures with outliers marked, the distribution of each
//! headline figure across nodes, the outliers named, groups, faults, and a link to every node's
//! own report.

use super::Present;
use crate::figure::{Better, Figure};
use crate::fleet_report::Direction;
use crate::fleet_report::FleetResults;
use crate::key::Key;
use crate::view::{Bar, Bars, Block, Cell, Mark, Table, View, num};

impl FleetResults {
    /// The outlier of `member` on `key`, if flagged.
    fn flag(&self, member: &str, key: &str) -> Option<Direction> {
        self.outliers
            .iter()
            .find(|o| o.member == member && o.key == key)
            .map(|o| o.direction)
    }

    /// Members flagged on `key`.
    fn flagged(&self, key: &str) -> Vec<String> {
        self.outliers
            .iter()
            .filter(|o| o.key == key)
            .map(|o| o.member.clone())
            .collect()
    }

    fn nodes_table(&self) -> Table {
        let mut header = vec!["node".to_string(), "group".into()];
        header.extend(
            self.headline
                .iter()
                .map(|h| format!("{} {}", h.name, h.unit)),
        );
        header.push("report".into());
        let refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(
            "Nodes (▲ worse, ▽ better than the group beyond the threshold)",
            &refs,
        );
        for m in &self.members {
            let mut row = vec![Cell::Text(m.name.clone()), Cell::Num(m.group.to_string())];
            for h in &self.headline {
                let mark = match self.flag(&m.name, &h.key) {
                    Some(Direction::Worse) => " ▲",
                    Some(Direction::Better) => " ▽",
                    None => "",
                };
                row.push(Cell::Num(
                    m.headline
                        .get(&h.key)
                        .map_or("-".into(), |v| format!("{}{mark}", num(*v))),
                ));
            }
            row.push(match &m.report {
                Some(r) => Cell::Link {
                    text: "report".into(),
                    href: r.clone(),
                },
                None => Cell::Text(m.path.clone()),
            });
            t.rows.push(row);
        }
        t
    }

    fn outliers_table(&self) -> Table {
        let mut t = Table::new(
            "Figures that stand out within their group",
            &[
                "node",
                "figure",
                "value",
                "group median",
                "deviation",
                "robust score",
                "n",
            ],
        );
        for o in &self.outliers {
            t.rows.push(vec![
                Cell::Text(o.member.clone()),
                Cell::Text(format!("{} ({})", o.label, o.unit)),
                Cell::Num(num(o.value)),
                Cell::Num(num(o.median)),
                Cell::Num(format!("{:+.1}% {:?}", 100.0 * o.deviation, o.direction).to_lowercase()),
                Cell::Num(format!("{:+.1}", o.score)),
                Cell::Num(o.n.to_string()),
            ]);
        }
        t
    }

    /// One chart per headline figure: a bar per node, the group medians marked.
    fn distributions(&self) -> Vec<Block> {
        let mut out = Vec::new();
        for h in &self.headline {
            let mut bars: Vec<Bar> = self
                .members
                .iter()
                .filter_map(|m| {
                    let v = *m.headline.get(&h.key)?;
                    let mark = if self.flag(&m.name, &h.key).is_some() {
                        " ⚑"
                    } else {
                        ""
                    };
                    Some(Bar {
                        label: format!("{}{mark}", m.name),
                        value: v,
                        low: v,
                        high: v,
                        secondary: None,
                    })
                })
                .collect();
            if bars.len() < 2 {
                continue;
            }
            bars.sort_by(|a, b| a.value.total_cmp(&b.value));
            let values: Vec<f64> = bars.iter().map(|b| b.value).collect();
            let (median, _) = crate::fleet_report::centre(&values);
            if bars.len() > MAX_BARS {
                out.push(histogram(h, &values, median, &self.flagged(&h.key)));
                continue;
            }
            out.push(Block::Bars(
                Bars {
                    title: format!("{} across nodes", h.name),
                    x_desc: h.unit.clone(),
                    legend: (h.key.clone(), String::new()),
                    bars,
                    marks: vec![Mark {
                        at: median,
                        label: "fleet median".into(),
                    }],
                },
                format!(
                    "{} ({}) of every node, flagged nodes marked ⚑.",
                    h.name, h.key
                ),
            ));
        }
        out
    }
}

/// Above this many nodes a headline figure is drawn as a histogram, not a bar per node.
const MAX_BARS: usize = 40;

/// The distribution of one headline figure over many nodes: 20 equal bins, the median marked,
/// the flagged nodes named in the caption.
fn histogram(
    h: &crate::fleet_report::Headline,
    values: &[f64],
    median: f64,
    flagged: &[String],
) -> Block {
    const BINS: usize = 20;
    let (lo, hi) = (values[0], values[values.len() - 1]);
    let width = ((hi - lo) / BINS as f64).max(f64::MIN_POSITIVE);
    let mut counts = [0usize; BINS];
    for v in values {
        counts[(((v - lo) / width) as usize).min(BINS - 1)] += 1;
    }
    let bars = counts
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let a = lo + i as f64 * width;
            Bar {
                label: format!("{}–{} {}", num(a), num(a + width), h.unit),
                value: n as f64,
                low: n as f64,
                high: n as f64,
                secondary: None,
            }
        })
        .collect();
    Block::Bars(
        Bars {
            title: format!("{} across {} nodes", h.name, values.len()),
            x_desc: "nodes".into(),
            legend: (h.key.clone(), String::new()),
            bars,
            marks: Vec::new(),
        },
        format!(
            "{} ({}): nodes per bin; median {} {}; flagged: {}.",
            h.name,
            h.key,
            num(median),
            h.unit,
            if flagged.is_empty() {
                "none".to_string()
            } else {
                flagged.join(", ")
            }
        ),
    )
}

impl Present for FleetResults {
    fn view(&self) -> View {
        let mut blocks = vec![Block::Table(self.nodes_table())];
        if !self.outliers.is_empty() {
            blocks.push(Block::Table(self.outliers_table()));
        }
        let mut groups = Table::new(
            "Groups (nodes expected to perform alike)",
            &["group", "nodes", "fingerprint"],
        );
        for g in &self.groups {
            groups.rows.push(vec![
                Cell::Num(g.id.to_string()),
                Cell::Text(g.members.join(", ")),
                Cell::Text(
                    g.fingerprint
                        .iter()
                        .map(|(k, v)| format!("{k}: {v}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            ]);
        }
        blocks.push(Block::Table(groups));
        if !self.faults.is_empty() {
            let mut t = Table::new(
                "Faults (members without a usable result)",
                &["who", "fault", "reason"],
            );
            for f in &self.faults {
                t.rows.push(vec![
                    Cell::Text(f.who.clone()),
                    Cell::Text(f.kind.describe().to_string()),
                    Cell::Text(f.reason.clone()),
                ]);
            }
            blocks.push(Block::Table(t));
        }
        blocks.extend(self.distributions());
        let mut facts = vec![format!(
            "{}: {} result(s) in {} group(s), {} figure(s) flagged, {} fault(s); threshold: robust score {} and {:.0}% from the median",
            self.directory,
            self.members.len(),
            self.groups.len(),
            self.outliers.len(),
            self.faults.len(),
            self.threshold,
            100.0 * self.min_change
        )];
        if let Some(n) = self.expected {
            facts.push(format!("the launcher started {n} rank(s)"));
        }
        View {
            id: "fleet",
            title: "Fleet".into(),
            method: self.method.clone(),
            facts,
            blocks,
            findings: self.findings.clone(),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        for m in &self.members {
            for h in &self.headline {
                let Some(v) = m.headline.get(&h.key) else {
                    continue;
                };
                let label = format!("{} of {}", h.name, m.name);
                let better = if h.lower_is_better {
                    Better::Lower
                } else {
                    Better::Higher
                };
                out.push(match Key::parse(&h.key) {
                    Some(figure) => {
                        let key = Key::Fleet {
                            member: m.name.clone(),
                            figure: Box::new(figure),
                        };
                        Figure::scalar(key, label, &h.unit, better, *v)
                    }
                    // A headline no key family reads (a newer memsight's) keeps its figure.
                    None => Figure::untyped(
                        &format!("fleet/{}/{}", m.name, h.key),
                        label,
                        &h.unit,
                        better,
                        *v,
                    ),
                });
            }
        }
        out
    }
}
