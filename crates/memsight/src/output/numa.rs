//! NUMA matrices as text.

use super::{heading, num, table};
use crate::numa::NumaResults;

fn matrix(r: &NumaResults, title: &str, value: impl Fn(&crate::numa::Cell) -> Option<f64>) {
    let mut header = vec!["CPU node \\ memory".to_string()];
    header.extend(r.columns.iter().map(|c| {
        let mut l = c.label.clone();
        if let Some(k) = &c.kind {
            l += &format!(" ({k})");
        }
        if let Some(t) = c.tier {
            l += &format!(" tier {t}");
        }
        if c.cpu_less {
            l += " [CPU-less]";
        }
        l
    }));
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = table(&refs);
    for (i, row) in r.cells.iter().enumerate() {
        let mut cells = vec![format!(
            "node {} (CPU {})",
            r.plan.initiators[i].node, r.plan.initiators[i].cpu
        )];
        cells.extend(row.iter().map(|c| value(c).map_or("-".to_string(), num)));
        t.add_row(cells);
    }
    println!("{title}\n{t}");
}

/// Prints the results.
pub fn print(r: &NumaResults) {
    heading("NUMA and memory tiers");
    println!("{}", r.method);
    matrix(r, "Latency, ns per load (median)", |c| {
        c.latency_ns.as_ref().map(|s| s.median)
    });
    if r.cells.iter().flatten().any(|c| c.bandwidth_gbs.is_some()) {
        matrix(
            r,
            "Read bandwidth, GB/s (median, all CPUs of the row's node)",
            |c| c.bandwidth_gbs.as_ref().map(|s| s.median),
        );
    }
    if !r.claims.is_empty() {
        let mut t = table(&[
            "node",
            "initiators",
            "claimed read ns",
            "claimed read MB/s",
            "measured ÷ claimed latency",
            "measured ÷ claimed bandwidth",
        ]);
        for c in &r.claims {
            t.add_row(vec![
                c.node.to_string(),
                format!("{:?}", c.initiators),
                c.read_latency_ns.map_or("-".into(), |v| v.to_string()),
                c.read_bandwidth_mbs.map_or("-".into(), |v| v.to_string()),
                c.latency_ratio.map_or("-".into(), |v| format!("{v:.2}")),
                c.bandwidth_ratio.map_or("-".into(), |v| format!("{v:.2}")),
            ]);
        }
        println!("Firmware claims (ACPI HMAT, access class 0)\n{t}");
    }
    super::findings(&r.findings);
}
