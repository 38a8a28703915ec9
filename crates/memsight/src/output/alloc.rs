//! Tables of `memsight alloc`.

use memsight_core::stats::Summary;
use memsight_core::units::format_bytes;

use super::{findings, heading, table};
use crate::alloc::AllocResults;

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

fn ratio(s: &Option<Summary>) -> String {
    s.as_ref().map_or("-".into(), |s| {
        if s.n > 1 {
            format!("{:.2}× ({:.2}–{:.2})", s.median, s.min, s.max)
        } else {
            format!("{:.2}×", s.median)
        }
    })
}

pub fn print(r: &AllocResults) {
    heading("Allocator study");
    println!("{}", r.method);
    if let Some(cmd) = &r.command {
        println!("command: {}", cmd.join(" "));
    }
    let mut t = table(&[
        "configuration",
        "allocator seen",
        "runs",
        "peak RSS",
        "RSS ÷ live (end)",
        "peak RSS ÷ peak live",
        "RSS after free",
        "Mops/s",
        "wall s",
        "problems",
    ]);
    for c in &r.configs {
        let seen: Vec<String> = c
            .runs
            .iter()
            .filter_map(|x| x.allocator_seen.clone())
            .collect();
        t.add_row(vec![
            c.config.name.clone(),
            seen.first().cloned().unwrap_or_else(|| "-".into()),
            c.runs.len().to_string(),
            bytes(&c.peak_rss),
            ratio(&c.rss_over_live),
            ratio(&c.peak_rss_over_peak_live),
            bytes(&c.after_free_rss),
            c.ops_per_s
                .as_ref()
                .map_or("-".into(), |s| format!("{:.2}", s.median / 1e6)),
            c.wall_s
                .as_ref()
                .map_or("-".into(), |s| format!("{:.2}", s.median)),
            c.problems.join("; "),
        ]);
    }
    println!("{t}");
    for c in &r.configs {
        if let Some(run) = c.runs.first()
            && !run.stats.is_empty()
        {
            let s: Vec<String> = run
                .stats
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k} = {}",
                        if k.contains("narenas") || k.contains("chunks") {
                            format!("{v:.0}")
                        } else {
                            format_bytes(*v as u64)
                        }
                    )
                })
                .collect();
            println!("  {} reports: {}", c.config.name, s.join(", "));
        }
    }
    if !r.recommendation.is_empty() {
        println!("\nRecommendation");
        for x in &r.recommendation {
            println!("  • {x}");
        }
    }
    findings(&r.findings);
    for s in &r.skipped {
        println!("  skipped: {s}");
    }
}
