//! Human output: tables and formatted figures. JSON output is the serialised result envelope.

pub mod env;

use comfy_table::{ContentArrangement, Table, presets};
use memsight_core::stats::Summary;

/// A table in memsight's style.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    t
}

/// A figure with adaptive precision.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// `lo–hi` of a summary's CI.
pub fn ci(s: &Summary) -> String {
    format!("{}–{}", num(s.ci_low), num(s.ci_high))
}

/// A figure's sample count, with the samples dropped as disturbed and a mark when too few clean
/// samples were left (the reason is in the JSON and the HTML report).
pub fn count(s: &Summary) -> String {
    let mut out = s.n.to_string();
    if s.dropped > 0 {
        out.push_str(&format!(" (−{} dropped)", s.dropped));
    }
    if let Some(short) = &s.shortfall {
        out.push_str(&format!(" ⚠ {} clean", short.clean));
    }
    out
}

/// Prints a section heading.
pub fn heading(title: &str) {
    println!("\n{title}\n{}", "─".repeat(title.chars().count()));
}

/// Prints findings, one bullet each.
pub fn findings(items: &[String]) {
    if items.is_empty() {
        return;
    }
    println!("\nFindings");
    for f in items {
        println!("  • {f}");
    }
}

/// Prints a suite's view: heading, method, facts, tables (heatmaps as matrices), findings.
pub fn draw(v: &crate::view::View) {
    use crate::view::{Block, Cell};
    heading(&v.title);
    println!("{}", v.method);
    for f in &v.facts {
        println!("{f}");
    }
    for b in &v.blocks {
        match b {
            Block::Table(t) => {
                let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
                let mut out = table(&header);
                for r in &t.rows {
                    out.add_row(r.iter().map(|c| match c {
                        Cell::Text(x) | Cell::Num(x) => x.clone(),
                    }));
                }
                if t.caption.is_empty() {
                    println!("{out}");
                } else {
                    println!("{}\n{out}", t.caption);
                }
            }
            // Charts are for the HTML report; their figures are in the tables.
            Block::Lines(..) | Block::Bars(..) | Block::DimmMap(..) => {}
            Block::Heatmap(h) => {
                let mut header = vec![h.corner.clone()];
                header.extend(h.cols.iter().cloned());
                let refs: Vec<&str> = header.iter().map(String::as_str).collect();
                let mut out = table(&refs);
                for (label, row) in h.rows.iter().zip(&h.values) {
                    let mut r = vec![label.clone()];
                    r.extend(row.iter().map(|v| v.map_or("·".to_string(), num)));
                    out.add_row(r);
                }
                println!("{}, {}\n{out}", h.title, h.subtitle);
            }
        }
    }
    findings(&v.findings);
}
