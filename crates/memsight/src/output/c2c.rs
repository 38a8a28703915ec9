//! Core-to-core results as text: the matrices and the pair statistics.

use super::{ci, heading, num, table};
use crate::c2c::C2cResults;

fn matrix(title: &str, cpus: &[usize], m: &[Vec<Option<f64>>]) {
    let mut header = vec!["from \\ to".to_string()];
    header.extend(cpus.iter().map(|c| format!("CPU {c}")));
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = table(&refs);
    for (i, row) in m.iter().enumerate() {
        let mut r = vec![format!("CPU {}", cpus[i])];
        r.extend(row.iter().map(|v| v.map_or("·".to_string(), num)));
        t.add_row(r);
    }
    println!("{title}\n{t}");
}

/// Prints the results.
pub fn print(r: &C2cResults) {
    heading("Core-to-core latency");
    println!("{}", r.method);
    println!("CPUs: {:?} ({})", r.cpus, r.selection);
    matrix(
        "Modified line, one-way transfer, ns (median)",
        &r.cpus,
        &r.modified,
    );
    if r.clean.iter().flatten().any(Option::is_some) {
        matrix(
            "Clean line, load by row CPU from column CPU's cache, ns (median)",
            &r.cpus,
            &r.clean,
        );
    }
    let mut t = table(&[
        "pair",
        "modified ns",
        "95% CI",
        "n",
        "clean a←b ns",
        "clean b←a ns",
    ]);
    for p in &r.pairs {
        t.add_row(vec![
            format!("{} ↔ {}", p.a, p.b),
            num(p.modified_ns.median),
            ci(&p.modified_ns),
            super::count(&p.modified_ns),
            p.clean_a_from_b_ns
                .as_ref()
                .map_or("-".into(), |s| format!("{} ({})", num(s.median), ci(s))),
            p.clean_b_from_a_ns
                .as_ref()
                .map_or("-".into(), |s| format!("{} ({})", num(s.median), ci(s))),
        ]);
    }
    println!("{t}");
    super::findings(&r.findings);
}
