//! A program's profile: memory held and on huge pages over time (a chart), its pages per node
//! against where its threads ran (a table), and the findings with the change to make.

use memsight_core::units::format_bytes;

use super::Present;
use crate::figure::{Better, Figure};
use crate::view::{Block, Cell, Lines, Scale, Series, Table, View};
use memsight_suites::profile::{Ending, ProfileResults};

const MIB: f64 = (1u64 << 20) as f64;

impl Present for ProfileResults {
    fn headline(&self) -> Vec<String> {
        let Some(p) = &self.peak else {
            return Vec::new();
        };
        vec![format!(
            "profile of {}: peak RSS {}, {} on huge pages, {} remote",
            self.command,
            format_bytes(p.held.rss),
            p.huge
                .thp_share()
                .map_or("-".into(), |s| format!("{:.0}%", s * 100.0)),
            self.placement
                .as_ref()
                .and_then(|x| x.remote_share)
                .map_or("-".into(), |s| format!("{:.0}%", s * 100.0)),
        )]
    }

    fn view(&self) -> View {
        let series = |name: &str, f: &dyn Fn(&memsight_suites::profile::procfs::Snapshot) -> u64| Series {
            name: name.into(),
            points: self
                .timeline
                .iter()
                .map(|s| (s.seconds, f(s) as f64 / MIB))
                .collect(),
            ..Default::default()
        };
        let mut held = vec![
            series("RSS", &|s| s.held.rss),
            series("anonymous", &|s| s.held.anon),
            series("anonymous on THP", &|s| s.huge.anon_huge),
            series("swap", &|s| s.held.swap),
        ];
        let cached = self.timeline.iter().any(|s| s.group.is_some());
        if cached {
            held.push(series("page cache (its cgroup)", &|s| {
                s.group.map_or(0, |g| g.page_cache)
            }));
        }
        let mut blocks = vec![Block::Lines(
            Lines::new(
                "Memory held over time",
                "seconds since the start",
                "MiB",
                (Scale::Linear, Scale::Linear),
                held,
            ),
            format!(
                "{} readings of /proc/{}/status and smaps_rollup{}.",
                self.timeline.len(),
                self.pid,
                if cached {
                    ", and of its memory cgroup's memory.stat"
                } else {
                    ""
                }
            ),
        )];
        if let Some(p) = &self.pressure {
            blocks.push(pressure_chart(p));
        }
        if let Some(p) = &self.placement {
            let total: u64 = p.nodes.iter().map(|n| n.bytes).sum::<u64>().max(1);
            let threads: u64 = p.nodes.iter().map(|n| n.thread_samples).sum::<u64>().max(1);
            let mut t = Table::new(
                "pages per node at the peak (numa_maps) against the nodes its threads ran on (thread readings)",
                &[
                    "node",
                    "kind",
                    "pages",
                    "share %",
                    "anonymous",
                    "by a policy",
                    "threads seen %",
                ],
            );
            for n in &p.nodes {
                t.rows.push(vec![
                    Cell::Text(n.node.to_string()),
                    Cell::Text(match (&n.kind, n.cpu_less) {
                        (Some(k), true) => format!("{k}, CPU-less"),
                        (Some(k), false) => k.clone(),
                        (None, true) => "CPU-less".into(),
                        (None, false) => "-".into(),
                    }),
                    Cell::Num(format_bytes(n.bytes)),
                    Cell::Num(format!("{:.1}", 100.0 * n.bytes as f64 / total as f64)),
                    Cell::Num(format_bytes(n.anon_bytes)),
                    Cell::Num(format_bytes(n.policy_bytes)),
                    Cell::Num(format!(
                        "{:.0}",
                        100.0 * n.thread_samples as f64 / threads as f64
                    )),
                ]);
            }
            blocks.push(Block::Table(t));
        }
        View {
            id: "profile",
            title: "Program profile".into(),
            method: self.method.clone(),
            facts: vec![
                format!(
                    "{} (pid {}), {}, {:.1} s, THP mode {}",
                    self.command,
                    self.pid,
                    ending(self.ending),
                    self.seconds,
                    self.thp_mode.as_deref().unwrap_or("unknown")
                ),
                match (&self.counted, &self.not_counted) {
                    (Some(c), _) => format!("DRAM traffic counted: {}", c.source),
                    (None, Some(why)) => why.clone(),
                    (None, None) => "DRAM traffic not counted".into(),
                },
                match (&self.memory_group, &self.no_memory_group) {
                    (Some(g), _) => format!(
                        "page cache and swap read from {} {} (cgroup v{})",
                        if g.own {
                            "the cgroup made for it,"
                        } else {
                            "its cgroup"
                        },
                        g.name,
                        if g.cgroup_v2 { 2 } else { 1 }
                    ),
                    (None, Some(why)) => why.clone(),
                    (None, None) => "page cache charged to it not read".into(),
                },
            ],
            blocks,
            findings: self.findings.clone(),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        let Some(p) = &self.peak else {
            return out;
        };
        let mut bytes = |test: &str, desc: &str, v: u64| {
            out.push(Figure::scalar(
                "profile",
                format!("profile/{test}"),
                desc.to_string(),
                "B",
                Better::Lower,
                v as f64,
            ));
        };
        bytes("peak-rss", "peak resident set of the program", p.held.rss);
        bytes("swap", "program memory in swap at the peak", p.held.swap);
        if let Some(s) = p.huge.thp_share() {
            out.push(Figure::scalar(
                "profile",
                "profile/thp-share".into(),
                "share of anonymous memory on transparent huge pages".into(),
                "%",
                Better::Higher,
                s * 100.0,
            ));
        }
        if let Some(cache) = self
            .timeline
            .iter()
            .filter_map(|s| s.group.map(|g| g.page_cache))
            .max()
        {
            out.push(Figure::scalar(
                "profile",
                "profile/page-cache".into(),
                "most page cache charged to the program's memory cgroup".into(),
                "B",
                Better::Lower,
                cache as f64,
            ));
        }
        if let Some(c) = &self.counted {
            out.push(Figure::scalar(
                "profile",
                "profile/counted-dram".into(),
                "DRAM traffic counted by the memory controllers over its run".into(),
                "GB/s (DRAM counted)",
                Better::Lower,
                c.read_gbs + c.write_gbs,
            ));
        }
        if let Some(r) = self.placement.as_ref().and_then(|x| x.remote_share) {
            out.push(Figure::scalar(
                "profile",
                "profile/remote-share".into(),
                "share of pages on nodes none of its threads ran on".into(),
                "%",
                Better::Lower,
                r * 100.0,
            ));
        }
        out
    }
}

/// The interval each probe reading maps to, over time (a flat reading draws its upper bound on
/// the high line only; a saturated one its lower bound on the low line only).
fn pressure_chart(p: &memsight_suites::profile::PressureTrace) -> Block {
    let mut low = Vec::new();
    let mut high = Vec::new();
    for r in &p.readings {
        let Some(x) = r.pressure else { continue };
        let (lo, hi) = x.bounds();
        if !matches!(x, memsight_suites::profile::pressure::Pressure::Flat { .. }) {
            low.push((r.seconds, lo));
        }
        if hi.is_finite() {
            high.push((r.seconds, hi));
        }
    }
    let series = |name: &str, points| Series {
        name: name.into(),
        points,
        ..Default::default()
    };
    Block::Lines(
        Lines::new(
            "Bandwidth pressure over time",
            "seconds since the start",
            "memory traffic, GB/s (estimated DRAM bytes)",
            (Scale::Linear, Scale::Linear),
            vec![series("at least", low), series("at most", high)],
        ),
        format!(
            "Each 100 ms probe reading read off the loaded-latency curves ({}): the band between the lines holds the machine's memory traffic; a reading on the curves' flat part has only an upper bound.",
            p.family_source
        ),
    )
}

fn ending(e: Ending) -> String {
    match e {
        Ending::Exited(c) => format!("exited with code {c}"),
        Ending::Signalled(s) => format!("killed by signal {s}"),
        Ending::Completed => "watched for the time asked".into(),
        Ending::ProcessExited => "exited during the watch".into(),
        Ending::TimedOut => "stopped at the time limit".into(),
        Ending::Interrupted => "interrupted (Ctrl-C)".into(),
    }
}
