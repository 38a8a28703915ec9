//! The fleet report: nodes × headline figures with outliers marked, the distribution of each
//! headline figure across nodes, the outliers named, groups, faults, and a link to every node's
//! own report.

use super::Present;
use crate::figure::Figure;
use crate::fleet_report::{Direction, Flags, FleetResults};
use crate::key::Key;
use crate::view::{Bar, Bars, Block, Cell, Mark, Table, View, num};

/// Up to this many nodes the report has a row (and a bar) for each; beyond, the flagged nodes'
/// rows and each group's distributions, unless every row is asked for (`--all-nodes`).
const MAX_ROWS: usize = 40;

/// Groups whose headline figures are drawn (the largest first).
const CHARTED_GROUPS: usize = 4;

/// Rows a table of a large fleet shows (nodes, flagged figures, faults) unless every row is
/// asked for; the JSON and the Parquet table hold them all.
const MAX_LISTED: usize = 200;

/// Groups the groups and distributions tables show, the largest first.
const MAX_GROUPS: usize = 20;

impl FleetResults {
    /// Cuts a table to its first `limit` rows, saying how many there were, unless every row
    /// was asked for (`--all-nodes`): the one place that flag lifts the cut.
    fn cap(&self, mut t: Table, limit: usize) -> Table {
        let n = t.rows.len();
        if !self.all_nodes && n > limit {
            t.rows.truncate(limit);
            t.caption.push_str(&format!(
                " — the first {limit} of {n} rows (--all-nodes for every one; the JSON and the Parquet table hold them all)"
            ));
        }
        t
    }

    /// Whether every node gets a row.
    fn every_row(&self) -> bool {
        self.all_nodes || self.members.len() <= MAX_ROWS
    }

    fn nodes_table(&self, flags: &Flags) -> Table {
        let mut header = vec!["node".to_string(), "group".into()];
        header.extend(
            self.headline
                .iter()
                .map(|h| format!("{} {}", h.name, h.unit)),
        );
        header.push("report".into());
        let refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let flagged: std::collections::HashSet<&str> =
            self.outliers.iter().map(|o| o.member.as_str()).collect();
        let unscored: std::collections::HashSet<&str> =
            self.unscored.iter().map(String::as_str).collect();
        let every = self.every_row();
        let caption = if every {
            "Nodes (▲ worse, ▽ better than the group beyond the threshold)".to_string()
        } else {
            // Nodes never compared are listed too: an aggregate must not pass them as alike.
            format!(
                "Flagged nodes: {} of {}, and {} not scored (▲ worse, ▽ better than the group beyond the threshold; --all-nodes lists every node)",
                flagged.len(),
                self.members.len(),
                unscored.len()
            )
        };
        let mut t = Table::new(&caption, &refs);
        for m in self.members.iter().filter(|m| {
            every || flagged.contains(m.name.as_str()) || unscored.contains(m.name.as_str())
        }) {
            t.rows.push(self.node_row(m, flags));
        }
        self.cap(t, MAX_LISTED.max(MAX_ROWS))
    }

    fn node_row(&self, m: &crate::fleet_report::FleetMember, flags: &Flags) -> Vec<Cell> {
        let mut row = vec![Cell::Text(m.name.clone()), Cell::Num(m.group.to_string())];
        for h in &self.headline {
            let mark = match flags.get(&(m.name.as_str(), &h.key)) {
                Some(Direction::Worse) => " ▲",
                Some(Direction::Better) => " ▽",
                None => "",
            };
            row.push(Cell::Num(
                m.headline_of(&h.key)
                    .map_or("-".into(), |v| format!("{}{mark}", num(v))),
            ));
        }
        row.push(match &m.report {
            Some(r) => Cell::Link {
                text: "report".into(),
                href: r.clone(),
            },
            None => Cell::Text(m.path.clone()),
        });
        row
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
                Cell::Num(format!(
                    "{:+.1}% {}{}",
                    100.0 * o.deviation,
                    o.direction.word(),
                    if o.slow_phase { " ⚠ slow phase" } else { "" }
                )),
                Cell::Num(format!("{:+.1}", o.score)),
                Cell::Num(o.n.to_string()),
            ]);
        }
        self.cap(t, MAX_LISTED)
    }

    /// Each group's headline figures as distributions (the JSON holds every scored figure's).
    fn distributions_table(&self) -> Table {
        let mut t = Table::new(
            "Figures across each group (median, quartiles, range; disturbed figures left out)",
            &[
                "group",
                "figure",
                "n",
                "median",
                "IQR",
                "min – max",
                "flagged",
            ],
        );
        let headline: std::collections::HashSet<&Key> =
            self.headline.iter().map(|h| &h.key).collect();
        for d in self
            .distributions
            .iter()
            .filter(|d| headline.contains(&d.key))
        {
            t.rows.push(vec![
                Cell::Num(d.group.to_string()),
                Cell::Text(format!("{} ({})", d.label, d.unit)),
                Cell::Num(d.n.to_string()),
                Cell::Num(num(d.median)),
                Cell::Num(format!("{} – {}", num(d.q1), num(d.q3))),
                Cell::Num(format!("{} – {}", num(d.min), num(d.max))),
                Cell::Text(if d.flagged.is_empty() {
                    "-".into()
                } else {
                    crate::fleet_report::some_names(&d.flagged)
                }),
            ]);
        }
        t
    }

    fn groups_table(&self) -> Table {
        let mut groups = Table::new(
            "Groups (nodes expected to perform alike)",
            &["group", "nodes", "members", "fingerprint"],
        );
        for g in self.groups.iter().take(MAX_GROUPS) {
            // A large group's members are its count: names belong to the flagged.
            let names = if g.members.len() <= 8 {
                g.members.join(", ")
            } else {
                "-".into()
            };
            groups.rows.push(vec![
                Cell::Num(g.id.to_string()),
                Cell::Num(g.members.len().to_string()),
                Cell::Text(names),
                Cell::Text(g.describe()),
            ]);
        }
        if self.groups.len() > MAX_GROUPS {
            let rest = &self.groups[MAX_GROUPS..];
            groups.caption.push_str(&format!(
                " — the {MAX_GROUPS} largest; {} more group(s) of {} node(s) in the JSON",
                rest.len(),
                rest.iter().map(|g| g.members.len()).sum::<usize>()
            ));
        }
        groups
    }

    /// The headline figures of the largest groups: a bar per node in a small group, a
    /// histogram in a large one, flagged nodes named.
    fn charts(&self, flags: &Flags) -> Vec<Block> {
        let mut out = Vec::new();
        for g in self
            .groups
            .iter()
            .filter(|g| g.members.len() >= 3)
            .take(CHARTED_GROUPS)
        {
            for h in &self.headline {
                // The conditions most of the group measured under.
                let Some(d) = self
                    .distributions
                    .iter()
                    .filter(|d| d.group == g.id && d.key == h.key)
                    .max_by_key(|d| d.n)
                else {
                    continue;
                };
                if d.n <= MAX_ROWS {
                    out.push(self.node_bars(h, d, flags));
                } else if d.max > d.min {
                    // (Nodes that all read alike have no spread to draw: the table says so.)
                    let flagged: Vec<(&str, f64)> = self
                        .outliers
                        .iter()
                        .filter(|o| o.group == d.group && o.key == d.key)
                        .map(|o| (o.member.as_str(), o.value))
                        .collect();
                    out.push(histogram(h, d, &flagged));
                }
            }
        }
        out
    }

    /// A bar per node of one group, the group median marked.
    fn node_bars(
        &self,
        h: &crate::fleet_report::Headline,
        d: &crate::fleet_report::Distribution,
        flags: &Flags,
    ) -> Block {
        let mut bars: Vec<Bar> = self
            .members
            .iter()
            .filter(|m| m.group == d.group)
            .filter_map(|m| {
                let v = m.headline_of(&h.key)?;
                let flagged = flags.contains_key(&(m.name.as_str(), &h.key));
                Some(Bar {
                    label: format!("{}{}", m.name, if flagged { " ⚑" } else { "" }),
                    value: v,
                    low: v,
                    high: v,
                    secondary: None,
                })
            })
            .collect();
        bars.sort_by(|a, b| a.value.total_cmp(&b.value));
        Block::Bars(
            Bars {
                title: format!("{} across group {}", h.name, d.group),
                x_desc: h.unit.clone(),
                legend: (h.key.to_string(), String::new()),
                bars,
                marks: vec![Mark {
                    at: d.median,
                    label: "group median".into(),
                }],
            },
            format!(
                "{} ({}) of every node of group {}, flagged nodes marked ⚑.",
                h.name, h.key, d.group
            ),
        )
    }
}

/// One headline figure over a large group: nodes per bin, the median and the flagged nodes
/// named in the caption.
fn histogram(
    h: &crate::fleet_report::Headline,
    d: &crate::fleet_report::Distribution,
    flagged: &[(&str, f64)],
) -> Block {
    let bins = d.bins.len().max(1);
    let width = (d.max - d.min) / bins as f64;
    let bars = d
        .bins
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let a = d.min + i as f64 * width;
            // A flagged node's bin is named: one node among thousands draws no visible bar.
            let here: Vec<&str> = flagged
                .iter()
                .filter(|(_, v)| (((v - d.min) / width) as usize).min(bins - 1) == i)
                .map(|(m, _)| *m)
                .collect();
            let mark = if here.is_empty() {
                String::new()
            } else {
                format!(" ⚑ {}", crate::fleet_report::some_names(&here))
            };
            Bar {
                label: format!("{}–{} {}{mark}", num(a), num(a + width), h.unit),
                value: f64::from(n),
                low: f64::from(n),
                high: f64::from(n),
                secondary: None,
            }
        })
        .collect();
    Block::Bars(
        Bars {
            title: format!("{} across the {} nodes of group {}", h.name, d.n, d.group),
            x_desc: "nodes".into(),
            legend: (h.key.to_string(), String::new()),
            bars,
            marks: Vec::new(),
        },
        format!(
            "{} ({}): nodes per bin; median {} {}, IQR {} – {}; flagged: {}.",
            h.name,
            h.key,
            num(d.median),
            h.unit,
            num(d.q1),
            num(d.q3),
            if d.flagged.is_empty() {
                "none".to_string()
            } else {
                crate::fleet_report::some_names(&d.flagged)
            }
        ),
    )
}

impl Present for FleetResults {
    fn view(&self) -> View {
        let flags = self.flags();
        let mut blocks = vec![Block::Table(self.nodes_table(&flags))];
        if !self.outliers.is_empty() {
            blocks.push(Block::Table(self.outliers_table()));
        }
        blocks.push(Block::Table(self.groups_table()));
        if !self.distributions.is_empty() {
            blocks.push(Block::Table(self.distributions_table()));
        }
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
            blocks.push(Block::Table(self.cap(t, MAX_LISTED)));
        }
        blocks.extend(self.charts(&flags));
        let mut facts = vec![format!(
            "{}: {} result(s) in {} group(s), {} not scored, {} figure(s) flagged, {} fault(s); threshold: robust score {} and {:.0}% from the median",
            self.directory,
            self.members.len(),
            self.groups.len(),
            self.unscored.len(),
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
                let Some(v) = m.headline_of(&h.key) else {
                    continue;
                };
                let label = format!("{} of {}", h.name, m.name);
                // A headline no key family reads (a newer memsight's) keeps its figure too.
                let key = Key::Fleet {
                    member: m.name.clone(),
                    figure: Box::new(h.key.clone()),
                };
                out.push(h.figure(key, label, v));
            }
        }
        out
    }
}
