//! Bandwidth results as text.

use memsight_core::units::format_bytes;

use super::{ci, heading, num, table};
use crate::bandwidth::{BandwidthResults, Point};

fn rows(points: &[Point], sweep: bool) -> comfy_table::Table {
    let mut header = vec!["test"];
    if sweep {
        header.extend(["working set", "fits"]);
    }
    header.extend([
        "store",
        "threads",
        "GB/s program (median)",
        "95% CI",
        "best",
        "GB/s DRAM est.",
        "DRAM R:W",
        "data",
        "CV %",
        "n",
    ]);
    let mut t = table(&header);
    for p in points {
        let mut row = vec![p.test.name.clone()];
        if sweep {
            row.push(format_bytes(p.bytes_per_thread));
            row.push(p.level.clone().unwrap_or_default());
        }
        row.extend([
            format!("{:?}", p.test.store).to_lowercase(),
            p.threads.to_string(),
            format!(
                "{}{}",
                num(p.program_gbs.median),
                if p.noisy { " (noisy)" } else { "" }
            ),
            ci(&p.program_gbs),
            num(p.program_gbs.max),
            // DRAM traffic is only estimated for working sets that live in DRAM.
            if p.level.as_deref().is_none_or(|l| l == "DRAM") {
                num(p.dram_gbs.median)
            } else {
                "-".to_string()
            },
            p.dram_ratio.clone(),
            match p.pattern.as_deref() {
                None if p.test.op == crate::bandwidth::spec::Op::Read => "-".to_string(),
                None if matches!(p.test.op, crate::bandwidth::spec::Op::Mix { writes: 0, .. }) => {
                    "-".to_string()
                }
                None => "from sources".to_string(),
                Some("0x0000000000000000") => "zeros".to_string(),
                Some(x) => x.to_string(),
            },
            format!("{:.2}", 100.0 * p.program_gbs.cv),
            super::count(&p.program_gbs),
        ]);
        t.add_row(row);
    }
    t
}

/// Prints the bandwidth results.
pub fn print(r: &BandwidthResults) {
    heading("Bandwidth");
    println!("{}", r.method);
    if !r.points.is_empty() {
        println!("{}", rows(&r.points, false));
    }
    if !r.sweep.is_empty() {
        println!(
            "Working-set sweep (1 thread; size = all arrays of the thread)\n{}",
            rows(&r.sweep, true)
        );
    }
    super::findings(&r.findings);
}
