//! Loaded-latency curves as text.

use super::{ci, heading, num, table};
use crate::loaded::LoadedResults;

/// Prints the results.
pub fn print(r: &LoadedResults) {
    heading("Loaded latency");
    println!("{}", r.method);
    println!(
        "chase CPU {}, load CPUs {:?}, node {:?}",
        r.plan.chase_cpu, r.plan.load_cpus, r.plan.node
    );
    for c in &r.curves {
        let mut t = table(&[
            "delay cycles",
            "bandwidth GB/s (DRAM est.)",
            "latency ns (median)",
            "95% CI",
            "n",
            "p50 ns",
            "p90 ns",
            "p99 ns",
        ]);
        for p in &c.points {
            t.add_row(vec![
                p.delay_cycles.map_or("idle".into(), |d| d.to_string()),
                num(p.bandwidth_gbs),
                num(p.latency_ns.median),
                ci(&p.latency_ns),
                super::count(&p.latency_ns),
                p.p50_ns.map_or("-".into(), num),
                p.p90_ns.map_or("-".into(), num),
                p.p99_ns.map_or("-".into(), num),
            ]);
        }
        println!(
            "\n{} — saturation {:.1} GB/s, knee ({}× idle) {}\n{t}",
            c.mix.name(),
            c.saturation_gbs,
            r.knee_factor,
            c.knee_gbs
                .map_or("not reached".into(), |k| format!("{k:.1} GB/s"))
        );
    }
    super::findings(&r.findings);
}
