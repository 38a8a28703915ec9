//! Allocator study: RSS over time (a chart), one row per configuration, what each allocator
//! reports about itself, the recommendation and findings.

use memsight_core::stats::Summary;
use memsight_core::units::format_bytes;

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::{Block, Cell, Lines, Scale, Series, Table, View};
use memsight_suites::alloc::AllocResults;
use memsight_suites::alloc::arenas::ArenaSample;
use memsight_suites::alloc::attach::ProcessWatch;

/// Bytes, with the range over runs when there were several.
fn bytes(s: &Option<Summary>) -> String {
    s.as_ref().map_or("-".into(), |s| {
        if s.n > 1 {
            format!(
                "{} ({}–{})",
                format_bytes(s.median as u64),
                format_bytes(s.min as u64),
                format_bytes(s.max as u64)
            )
        } else {
            format_bytes(s.median as u64)
        }
    })
}

/// A ratio, with the range over runs when there were several.
fn ratio(s: Option<&Summary>) -> String {
    s.map_or("-".into(), |s| {
        if s.n > 1 {
            format!("{:.2}× ({:.2}–{:.2})", s.median, s.min, s.max)
        } else {
            format!("{:.2}×", s.median)
        }
    })
}

fn rss_chart(r: &AllocResults) -> Block {
    let mut series: Vec<Series> = r
        .configs
        .iter()
        .filter_map(|c| c.runs.first().map(|run| (c, run)))
        .map(|(c, run)| Series {
            name: c.config.name.clone(),
            points: run
                .rss
                .iter()
                .map(|x| (x.seconds, x.rss_bytes as f64 / (1u64 << 20) as f64))
                .collect(),
            ..Default::default()
        })
        .collect();
    if let Some(run) = r.configs.first().and_then(|c| c.runs.first())
        && !run.phases.is_empty()
    {
        series.push(Series {
            name: "live heap (workload)".into(),
            points: run
                .phases
                .iter()
                .map(|p| (p.seconds, p.live_bytes as f64 / (1u64 << 20) as f64))
                .collect(),
            dashed: true,
            ..Default::default()
        });
    }
    Block::Lines(
        Lines::new(
            "Resident memory over time",
            "seconds since start",
            "RSS, MiB",
            (Scale::Linear, Scale::Linear),
            series,
        ),
        "VmRSS of the child, first run of each configuration; dashed: the live heap the workload held at each phase end.".into(),
    )
}

fn configs(r: &AllocResults) -> Table {
    let mut t = Table::new(
        "arenas: glibc's most at once (the main one included, counted from outside the process), jemalloc's own count; tcmalloc and mimalloc have none (per-thread caches and heaps); threads: most at once",
        &[
            "configuration",
            "allocator seen",
            "runs",
            "peak RSS",
            "RSS ÷ live (end)",
            "peak RSS ÷ live set",
            "RSS after free",
            "Mops/s",
            "wall s",
            "arenas (threads)",
            "problems",
        ],
    );
    for c in &r.configs {
        let seen = c.runs.iter().find_map(|x| x.allocator_seen.clone());
        t.rows.push(vec![
            Cell::Text(c.config.name.clone()),
            Cell::Text(seen.unwrap_or_else(|| "-".into())),
            Cell::Num(c.runs.len().to_string()),
            Cell::Num(bytes(&c.peak_rss)),
            Cell::Num(ratio(c.rss_over_live.as_ref())),
            Cell::Num(ratio(c.live_set_ratio())),
            Cell::Num(bytes(&c.after_free_rss)),
            Cell::Num(
                c.ops_per_s
                    .as_ref()
                    .map_or("-".into(), |s| format!("{:.2}", s.median / 1e6)),
            ),
            Cell::Num(
                c.wall_s
                    .as_ref()
                    .map_or("-".into(), |s| format!("{:.2}", s.median)),
            ),
            Cell::Num(match (&c.arenas, &c.threads) {
                (Some(a), Some(t)) => format!("{:.0} ({:.0})", a.median, t.median),
                (Some(a), None) => format!("{:.0}", a.median),
                (None, Some(t)) => format!("- ({:.0})", t.median),
                (None, None) => "-".into(),
            }),
            Cell::Text(c.problems.join("; ")),
        ]);
    }
    t
}

/// What each allocator says about itself (first run).
fn reports(r: &AllocResults) -> Vec<String> {
    r.configs
        .iter()
        .filter_map(|c| {
            let run = c.runs.first().filter(|run| !run.stats.is_empty())?;
            let s: Vec<String> = run
                .stats
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k} = {}",
                        if memsight_kernels::allocstats::is_count(k) {
                            format!("{v:.0}")
                        } else {
                            format_bytes(*v as u64)
                        }
                    )
                })
                .collect();
            Some(format!("{} reports: {}", c.config.name, s.join(", ")))
        })
        .collect()
}

/// A watched process: RSS, and arenas with threads, over time.
fn process_blocks(w: &ProcessWatch) -> Vec<Block> {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let rss = Series {
        name: format!("pid {}", w.pid),
        points: w
            .rss
            .iter()
            .map(|s| (s.seconds, mib(s.rss_bytes)))
            .collect(),
        ..Default::default()
    };
    let mut blocks = vec![Block::Lines(
        Lines::new(
            "Resident memory over time",
            "seconds since the watch began",
            "RSS, MiB",
            (Scale::Linear, Scale::Linear),
            vec![rss],
        ),
        "VmRSS of the watched process.".into(),
    )];
    let counts = |name: &str, f: &dyn Fn(&ArenaSample) -> Option<u32>| Series {
        name: name.into(),
        points: w
            .arenas
            .iter()
            .filter_map(|s| f(s).map(|v| (s.seconds, f64::from(v))))
            .collect(),
        ..Default::default()
    };
    let series: Vec<Series> = [
        counts("arenas", &|s| s.arenas),
        counts("arena heaps (64 MiB)", &|s| Some(s.heaps)),
        counts("threads", &|s| s.threads),
    ]
    .into_iter()
    .filter(|s| !s.points.is_empty())
    .collect();
    if !series.is_empty() {
        blocks.push(Block::Lines(
            Lines::new(
                "glibc arenas and threads over time",
                "seconds since the watch began",
                "count",
                (Scale::Linear, Scale::Linear),
                series,
            ),
            "Arenas (the main one included) confirmed by their heaps' headers; heaps from the process's mappings.".into(),
        ));
    }
    blocks
}

impl Present for AllocResults {
    fn view(&self) -> View {
        let mut facts: Vec<String> = self
            .command
            .iter()
            .map(|cmd| format!("command: {}", cmd.join(" ")))
            .collect();
        facts.extend(reports(self));
        let mut findings: Vec<String> = self
            .recommendation
            .iter()
            .map(|x| x.tagged("recommendation: ").text)
            .collect();
        findings.extend(crate::view::texts(&self.findings));
        findings.extend(self.skipped.iter().map(|x| format!("skipped: {x}")));
        View {
            id: "alloc",
            title: "Allocators: memory held vs live heap".into(),
            method: self.method.clone(),
            facts,
            blocks: match &self.process {
                Some(w) => process_blocks(w),
                None => vec![rss_chart(self), Block::Table(configs(self))],
            },
            findings,
        }
    }

    /// Per configuration: peak RSS over peak live heap, RSS after free, and speed.
    fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        if let Some(g) = self.process.as_ref().and_then(|w| w.rss_growth_per_hour) {
            out.push(Figure::scalar(
                Key::AllocProcess {
                    test: "rss-growth".into(),
                },
                "watched process: RSS trend (least-squares slope)".to_string(),
                "B/h",
                Better::Lower,
                g,
            ));
        }
        for c in &self.configs {
            let name = &c.config.name;
            if let Some(s) = &c.peak_rss_over_peak_live {
                out.push(Figure::sampled(
                    Key::Alloc {
                        allocator: name.to_string(),
                        test: "peak-rss-over-live".into(),
                    },
                    format!("{name}: peak RSS ÷ peak live heap"),
                    "×",
                    Better::Lower,
                    s,
                ));
            }
            if let Some(s) = &c.peak_rss_over_live_set {
                out.push(Figure::sampled(
                    Key::Alloc {
                        allocator: name.to_string(),
                        test: "peak-rss-over-live-set".into(),
                    },
                    format!("{name}: peak RSS ÷ the workload's live set"),
                    "×",
                    Better::Lower,
                    s,
                ));
            }
            if let Some(s) = &c.after_free_rss {
                out.push(Figure::sampled(
                    Key::Alloc {
                        allocator: name.to_string(),
                        test: "rss-after-free".into(),
                    },
                    format!("{name}: RSS after everything was freed"),
                    "B",
                    Better::Lower,
                    s,
                ));
            }
            if let Some(s) = &c.ops_per_s {
                out.push(Figure::sampled(
                    Key::Alloc {
                        allocator: name.to_string(),
                        test: "ops".into(),
                    },
                    format!("{name}: allocator operations per second"),
                    "ops/s",
                    Better::Higher,
                    s,
                ));
            }
        }
        out
    }
}
