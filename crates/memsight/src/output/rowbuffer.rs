//! Tables of `memsight rowbuffer`.

use memsight_core::units::format_bytes;

use super::{findings, heading, num, table};
use crate::rowbuffer::RowbufferResults;

pub fn print(r: &RowbufferResults) {
    heading("Row-buffer conflicts and physical page mapping");
    println!("{}", r.method);
    let mut t = table(&[
        "kernel",
        "memory",
        "pages",
        "rep",
        "physical runs (median / longest)",
        "GB/s median",
        "min",
        "max",
        "dips",
        "period",
    ]);
    for c in &r.curves {
        let v: Vec<f64> = c.points.iter().map(|p| p.gbs.median).collect();
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
        let phys = match &c.buffer.physical {
            Some(p) if p.frames_visible => format!(
                "{} runs ({} / {})",
                p.runs.unwrap_or(0),
                p.median_run_bytes.map_or("-".into(), format_bytes),
                p.longest_run_bytes.map_or("-".into(), format_bytes)
            ),
            Some(_) => "frames hidden (not root)".into(),
            None => "-".into(),
        };
        t.add_row(vec![
            c.kernel.name().to_string(),
            c.memory.name().to_string(),
            c.buffer.kind.to_string(),
            (c.rep + 1).to_string(),
            phys,
            num(c.detection.baseline_gbs),
            num(lo),
            num(hi),
            c.detection.dips.len().to_string(),
            c.detection.period_bytes.map_or("-".into(), |p| {
                format!(
                    "{}{}",
                    format_bytes(p),
                    if c.detection.regular {
                        ""
                    } else {
                        " (irregular)"
                    }
                )
            }),
        ]);
    }
    println!("{t}");
    let mut s = table(&[
        "kernel",
        "memory",
        "peak GB/s",
        "median",
        "worst",
        "CV",
        "points",
        "dips",
    ]);
    for x in &r.summaries {
        s.add_row(vec![
            x.kernel.name().to_string(),
            x.memory.name().to_string(),
            num(x.peak_gbs),
            num(x.median_gbs),
            num(x.worst_gbs),
            format!("{:.1}%", x.cv * 100.0),
            x.points.to_string(),
            x.dips.to_string(),
        ]);
    }
    println!("\nOver all offsets and repetitions (medians per point):\n{s}");
    if let Some(p) = &r.prediction {
        println!(
            "\nPrediction ({}): bank cycle {} → COPY dips every {} of OFFSET. {}",
            p.source,
            format_bytes(p.bank_cycle_bytes),
            format_bytes(p.offset_period_bytes),
            p.verdict
        );
    }
    if let Some(p) = &r.probe {
        println!(
            "\nRow-conflict probe ({} pages, bits 6..{}, {} pairs): {}",
            p.page_kind, p.max_bit, p.pairs_timed, p.message
        );
    }
    if let Some(f) = &r.fragmentation {
        println!(
            "\nFragmentation: held {} with every other 4 KiB page freed ({} scattered free pages)",
            format_bytes(f.held_bytes),
            format_bytes(f.released_bytes)
        );
    }
    if !r.advice.is_empty() {
        println!("\nAdvice");
        for a in &r.advice {
            println!("  • {a}");
        }
    }
    findings(&r.findings);
    for s in &r.skipped {
        println!("  skipped: {s}");
    }
}
