//! A program's profile: memory held and on huge pages over time (a chart), its pages per node
//! against where its threads ran (a table), and the findings with the change to make.

use memsight_core::units::format_bytes;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::{Block, Cell, Lines, Scale, Series, Table, View};
use memsight_suites::profile::placement::Placement;
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
        let mut blocks = vec![held_chart(self)];
        if let Some(p) = &self.pressure {
            blocks.push(pressure_chart(p));
        }
        blocks.extend(monitored_chart(self));
        if let Some(p) = &self.placement {
            blocks.push(placement_table(p));
        }
        View {
            id: "profile",
            title: "Program profile".into(),
            method: self.method.clone(),
            facts: facts(self),
            blocks,
            findings: crate::view::texts(&self.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        let Some(p) = &self.peak else {
            return out;
        };
        let mut bytes = |test: &str, desc: &str, v: u64| {
            out.push(Figure::scalar(
                Key::Profile {
                    test: test.to_string(),
                },
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
                Key::Profile {
                    test: "thp-share".into(),
                },
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
                Key::Profile {
                    test: "page-cache".into(),
                },
                "most page cache charged to the program's memory cgroup".into(),
                "B",
                Better::Lower,
                cache as f64,
            ));
        }
        if let Some(m) = &self.monitored {
            out.push(Figure::scalar(
                Key::Profile {
                    test: "monitored-traffic".into(),
                },
                "the program's own memory traffic, counted by resctrl bandwidth monitoring".into(),
                "GB/s (DRAM counted)",
                Better::Lower,
                m.gbs,
            ));
        }
        if let Some(c) = &self.counted {
            out.push(Figure::scalar(
                Key::Profile {
                    test: "counted-dram".into(),
                },
                "DRAM traffic counted by the memory controllers over its run".into(),
                "GB/s (DRAM counted)",
                Better::Lower,
                c.read_gbs + c.write_gbs,
            ));
        }
        if let Some(r) = self.placement.as_ref().and_then(|x| x.remote_share) {
            out.push(Figure::scalar(
                Key::Profile {
                    test: "remote-share".into(),
                },
                "share of pages on nodes none of its threads ran on".into(),
                "%",
                Better::Lower,
                r * 100.0,
            ));
        }
        out
    }
}

/// Memory held over the watch: resident, anonymous, on THP and swapped, and the page cache
/// charged to its cgroup where one was read.
fn held_chart(r: &ProfileResults) -> Block {
    let series =
        |name: &str, f: &dyn Fn(&memsight_suites::profile::procfs::Snapshot) -> u64| Series {
            name: name.into(),
            points: r
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
    let cached = r.timeline.iter().any(|s| s.group.is_some());
    if cached {
        held.push(series("page cache (its cgroup)", &|s| {
            s.group.map_or(0, |g| g.page_cache)
        }));
    }
    Block::Lines(
        Lines::new(
            "Memory held over time",
            "seconds since the start",
            "MiB",
            (Scale::Linear, Scale::Linear),
            held,
        ),
        format!(
            "{} readings of /proc/{}/status and smaps_rollup{}.",
            r.timeline.len(),
            r.pid,
            if cached {
                ", and of its memory cgroup's memory.stat"
            } else {
                ""
            }
        ),
    )
}

/// Where its pages were at the peak beside where its threads ran: the two shares a remote
/// placement shows up as.
fn placement_table(p: &Placement) -> Block {
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
    Block::Table(t)
}

/// What was watched and how it ended, and which of the optional sources (DRAM counters, resctrl
/// monitoring, its memory cgroup) were read, or why not.
fn facts(r: &ProfileResults) -> Vec<String> {
    vec![
        format!(
            "{} (pid {}), {}, {:.1} s, THP mode {}",
            r.command,
            r.pid,
            ending(r.ending),
            r.seconds,
            r.thp_mode.as_deref().unwrap_or("unknown")
        ),
        match (&r.counted, &r.not_counted) {
            (Some(c), _) => format!("DRAM traffic counted: {}", c.source),
            (None, Some(why)) => why.clone(),
            (None, None) => "DRAM traffic not counted".into(),
        },
        match (&r.monitored, &r.not_monitored) {
            (Some(m), _) => format!(
                "its own memory traffic counted by resctrl bandwidth monitoring ({})",
                m.group
            ),
            (None, Some(why)) => why.clone(),
            (None, None) => "its own memory traffic not monitored".into(),
        },
        match (&r.memory_group, &r.no_memory_group) {
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
    ]
}

/// The interval each probe reading maps to, over time (a flat reading draws its upper bound on
/// the high line only; a saturated one its lower bound on the low line only).
fn pressure_chart(p: &memsight_suites::profile::PressureTrace) -> Block {
    let mut low = Vec::new();
    let mut high = Vec::new();
    for r in &p.readings {
        let Some(x) = r.pressure else { continue };
        let (lo, hi) = x.bounds();
        if !matches!(
            x,
            memsight_suites::profile::pressure::Pressure::Flat { .. }
                | memsight_suites::profile::pressure::Pressure::Unbounded { .. }
        ) {
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

/// The program's own traffic between readings, from its resctrl monitoring group's counts.
fn monitored_chart(r: &ProfileResults) -> Option<Block> {
    let counted: Vec<(f64, u64)> = r
        .timeline
        .iter()
        .filter_map(|s| Some((s.seconds, s.monitored_bytes?)))
        .collect();
    let points: Vec<(f64, f64)> = counted
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| {
            let bytes = w[1].1.saturating_sub(w[0].1) as f64;
            (w[1].0, bytes / (w[1].0 - w[0].0) / 1e9)
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    Some(Block::Lines(
        Lines::new(
            "Its own memory traffic over time",
            "seconds since the start",
            "GB/s (DRAM bytes counted by resctrl)",
            (Scale::Linear, Scale::Linear),
            vec![Series {
                name: "counted".into(),
                points,
                ..Default::default()
            }],
        ),
        "Bytes its resctrl monitoring group counted between consecutive readings (the L3's fills from and write-backs to memory for its tasks).".into(),
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::memcg::GroupMemory;
    use memsight_suites::profile::{MemoryGroup, MonitoredTraffic};

    /// A recorded profile given what a machine with resctrl monitoring and a memory cgroup adds:
    /// the traffic chart, the page-cache line and both figures appear, and the facts say where
    /// each came from.
    #[test]
    fn monitored_traffic_and_page_cache_are_drawn_and_kept() {
        let text = include_str!("../../../memsight/tests/data/results/profile.json");
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut r: ProfileResults = serde_json::from_value(doc["results"].clone()).unwrap();
        for (i, s) in r.timeline.iter_mut().enumerate() {
            s.monitored_bytes = Some(i as u64 * 2_000_000_000);
            s.group = Some(GroupMemory {
                page_cache: (i as u64) << 20,
                ..Default::default()
            });
        }
        r.monitored = Some(MonitoredTraffic {
            gbs: 9.5,
            local_share: None,
            bytes: 28_000_000_000,
            seconds: 2.9,
            group: "/sys/fs/resctrl/mon_groups/memsight-9".into(),
        });
        r.memory_group = Some(MemoryGroup {
            name: "/memsight-profile-9".into(),
            cgroup_v2: true,
            own: true,
            processes: 1,
        });
        let v = r.view();
        let charts: Vec<&Lines> = v
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Lines(l, _) => Some(l),
                _ => None,
            })
            .collect();
        assert!(
            charts
                .iter()
                .any(|l| l.title == "Its own memory traffic over time")
        );
        assert!(
            charts
                .iter()
                .flat_map(|l| &l.series)
                .any(|s| s.name == "page cache (its cgroup)")
        );
        assert!(v.facts.iter().any(|f| f.contains("mon_groups/memsight-9")));
        assert!(v.facts.iter().any(|f| f.contains("cgroup v2")));
        let ids: Vec<String> = r.figures().iter().map(|f| f.key.to_string()).collect();
        assert!(
            ids.contains(&"profile/monitored-traffic".to_string())
                && ids.contains(&"profile/page-cache".to_string()),
            "{ids:?}"
        );
    }
}
