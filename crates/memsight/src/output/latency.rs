//! The latency ladder as text.

use memsight_core::units::format_bytes;

use super::{ci, heading, num, table};
use crate::latency::{CpuLadder, LatencyResults};

/// Prints the ladder results.
pub fn print(r: &LatencyResults) {
    let m = &r.method;
    heading("Latency ladder");
    println!("{}", m.description);
    println!(
        "timer: {} (granularity {} ns, read {} ns; samples ≥ {:.1} ms)",
        m.timer.source,
        num(m.timer.granularity_ns),
        num(m.timer.read_cost_ns),
        m.sample_ns / 1e6
    );
    for l in &r.ladders {
        print_cpu(l);
    }
    super::findings(&r.findings);
}

fn print_cpu(l: &CpuLadder) {
    let c = &l.core_clock.ghz;
    println!(
        "\nCPU {} · core clock {} GHz (95% CI {}, n={}; {})",
        l.cpu,
        num(c.median),
        ci(c),
        c.n,
        l.core_clock.method
    );
    let b = &l.main.buffer;
    println!("buffer: {}", describe(b));
    if let Some(h) = &l.huge {
        println!("TLB comparison buffer: {}", describe(&h.buffer));
    }
    for w in b
        .warnings
        .iter()
        .chain(l.huge.iter().flat_map(|h| h.buffer.warnings.iter()))
    {
        println!("  ! {w}");
    }
    let mut header = vec![
        "working set",
        "ns/load (median)",
        "95% CI",
        "cycles",
        "min–max ns",
        "CV %",
        "robust CV %",
        "outliers",
        "n",
    ];
    if l.huge.is_some() {
        header.extend(["huge-page ns", "TLB cost ns"]);
    }
    let mut t = table(&header);
    for p in &l.main.points {
        let mut row = vec![
            format_bytes(p.size_bytes),
            format!(
                "{}{}",
                num(p.ns.median),
                if p.noisy { " (noisy)" } else { "" }
            ),
            ci(&p.ns),
            p.cycles.map_or("?".into(), |c| format!("{c:.1}")),
            format!("{}–{}", num(p.ns.min), num(p.ns.max)),
            format!("{:.2}", 100.0 * p.ns.cv),
            format!("{:.2}", 100.0 * p.ns.robust_cv),
            p.ns.outliers.to_string(),
            super::count(&p.ns),
        ];
        if let Some(tlb) = l.tlb.iter().find(|t| t.size_bytes == p.size_bytes) {
            row.push(num(tlb.huge_ns));
            row.push(format!(
                "{}{}",
                num(tlb.cost_ns),
                if tlb.significant { "" } else { " (~0)" }
            ));
        } else if l.huge.is_some() {
            row.extend(["-".to_string(), "-".to_string()]);
        }
        t.add_row(row);
    }
    println!("{t}");

    if !l.levels.plateaus.is_empty() {
        let mut t = table(&["level", "latency ns", "cycles", "plateau", "OS reports"]);
        for p in &l.levels.plateaus {
            t.add_row(vec![
                p.name.clone(),
                num(p.ns),
                format!("{:.1}", p.cycles),
                format!(
                    "{} – {}",
                    format_bytes(p.first_bytes),
                    format_bytes(p.last_bytes)
                ),
                p.reported_bytes.map_or("-".into(), format_bytes),
            ]);
        }
        println!(
            "Levels detected from the curve (plateau = sizes within ±12% of one latency)\n{t}"
        );
    }
    if let Some(mlp) = &l.mlp {
        let mut t = table(&[
            "parallel chains k",
            "ns per round (median)",
            "95% CI",
            "ns per load",
            "loads overlapped",
            "n",
        ]);
        for p in &mlp.points {
            t.add_row(vec![
                p.k.to_string(),
                num(p.round_ns.median),
                ci(&p.round_ns),
                num(p.ns_per_load),
                format!("{:.2}", p.overlap),
                super::count(&p.round_ns),
            ]);
        }
        println!(
            "Memory-level parallelism at {} on {} pages\n{t}",
            format_bytes(mlp.size_bytes),
            mlp.page_kind
        );
    }
}

/// Page kind as verified, and physical contiguity where frames are visible.
fn describe(b: &memsight_core::buffer::BufferReport) -> String {
    let mut s = format!("{} pages (requested {})", b.kind, b.requested);
    if let Some(f) = b.huge_fraction {
        s += &format!(", {:.0}% on huge pages (smaps)", 100.0 * f);
    }
    if let Some(n) = b.bound_node {
        s += &format!(", bound to node {n}");
    }
    match &b.physical {
        Some(p) if p.frames_visible => {
            s += &format!(
                ", {} physically contiguous run(s), longest {} (pagemap)",
                p.runs.unwrap_or(0),
                p.longest_run_bytes.map_or("?".into(), format_bytes)
            )
        }
        Some(_) => s += ", physical frames hidden (not root)",
        None => {}
    }
    s
}
