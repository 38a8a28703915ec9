//! STREAM-compatible results as text, in STREAM's layout plus the engine's statistics.

use memsight_core::units::format_bytes;

use super::{ci, heading, num, table};
use crate::stream::StreamResults;

/// Prints the results.
pub fn print(r: &StreamResults) {
    heading("STREAM-compatible kernels");
    println!("{}", r.label);
    let c = &r.config;
    println!(
        "Array size = {} elements, Offset = {} elements; memory per array = {}, total = {}",
        c.elements,
        c.offset,
        format_bytes(r.array_bytes),
        format_bytes(r.total_bytes)
    );
    println!(
        "Each kernel run {} times; the first is excluded. {} thread(s) on CPUs {}; {} kernels, {:?} stores, {} pages.",
        c.ntimes,
        c.cpus.len(),
        memsight_core::units::format_list(&c.cpus),
        c.isa.name(),
        c.store,
        c.page_kind
    );
    let mut t = table(&[
        "Function",
        "Best Rate MB/s",
        "Avg time s",
        "Min time s",
        "Max time s",
        "GB/s median",
        "95% CI",
        "n",
        "DRAM est. GB/s (best)",
    ]);
    for k in &r.kernels {
        t.add_row(vec![
            format!("{}:", k.function),
            format!("{:.1}", k.best_rate_mbs),
            format!("{:.6}", k.avg_time_s),
            format!("{:.6}", k.min_time_s),
            format!("{:.6}", k.max_time_s),
            num(k.gbs.median),
            ci(&k.gbs),
            super::count(&k.gbs),
            num(k.dram_bytes as f64 / k.min_time_s / 1e9),
        ]);
    }
    println!("{t}");
    for w in &r.warnings {
        println!("  ! {w}");
    }
    match &r.validation {
        Some(v) => println!("{}", v.message),
        None => println!("not validated: the run was interrupted"),
    }
}
