//! Tables of `memsight pmem`.

use memsight_core::units::format_bytes;

use super::{findings, heading, table};
use crate::pmem::{Fill, PmemResults};

fn pct(part: u64, whole: u64) -> String {
    format!("{:.1}%", 100.0 * part as f64 / whole.max(1) as f64)
}

fn fills(r: &PmemResults, rows: &[&Fill]) {
    let mut t = table(&[
        "object",
        "objects",
        "utilisation",
        "class (unit × per run, header)",
        "headers",
        "rounding",
        "run metadata",
        "empty slots",
        "free chunks",
        "other",
    ]);
    for f in rows {
        let b = &f.breakdown;
        let opt = |x: Option<u64>| x.map_or("-".to_string(), |v| pct(v, r.pool_bytes));
        t.add_row(vec![
            format_bytes(f.object_bytes),
            f.objects.to_string(),
            format!("{:.1}%", f.utilisation * 100.0),
            f.class.as_ref().map_or("-".into(), |c| {
                format!(
                    "{}{}: {} B × {}, {}",
                    if f.custom_class { "custom " } else { "" },
                    c.id,
                    c.unit_size,
                    c.units_per_block,
                    c.header
                )
            }),
            pct(b.header_bytes, r.pool_bytes),
            pct(b.rounding_bytes, r.pool_bytes),
            opt(b.run_metadata_bytes),
            opt(b.empty_slot_bytes),
            opt(b.free_chunk_bytes),
            pct(b.other_bytes, r.pool_bytes),
        ]);
    }
    println!("{t}");
}

pub fn print(r: &PmemResults) {
    heading("Persistent-memory pool study (libpmemobj)");
    println!("{}", r.method);
    println!(
        "\nUtilisation by object size (share of the {} pool):",
        format_bytes(r.pool_bytes)
    );
    fills(r, &r.fills.iter().collect::<Vec<_>>());
    if !r.search.is_empty() {
        println!("\nCustom allocation classes (best verified by a fill):");
        let best: Vec<&Fill> = r.search.iter().filter_map(|s| s.best.as_ref()).collect();
        if best.is_empty() {
            println!("  no custom class beat PMDK's own classes");
        } else {
            fills(r, &best);
        }
        for s in &r.search {
            if let (Some(code), Some(_)) = (&s.ctl_set, &s.best) {
                println!("  {}: {code}", format_bytes(s.object_bytes));
            }
            for q in &s.quirks {
                println!("  {} quirk: {q}", format_bytes(s.object_bytes));
            }
        }
    }
    if !r.concurrency.is_empty() {
        let mut t = table(&[
            "strategy",
            "allocations",
            "failures",
            "failure rate",
            "rescued",
            "allocs/s",
            "arenas",
            "error",
        ]);
        for c in &r.concurrency {
            t.add_row(vec![
                c.strategy.clone(),
                c.allocations.to_string(),
                c.failures.to_string(),
                format!("{:.3}%", c.failure_rate * 100.0),
                c.rescued.to_string(),
                format!("{:.0}", c.allocations_per_s),
                c.arenas.map_or("-".into(), |a| a.to_string()),
                c.error.clone().unwrap_or_default(),
            ]);
        }
        println!("\nConcurrent allocation by arena strategy:\n{t}");
    }
    findings(&r.findings);
}
