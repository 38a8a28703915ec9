//! Human output: tables and formatted figures. JSON output is the serialised result envelope.

pub mod env;

use comfy_table::{ContentArrangement, Table, presets};

/// A table in memsight's style.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_header(header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    // Wrap to the terminal only where there is one of a usable width: under a launcher
    // (mpirun's forwarded output) the reported width can be a few columns, which would squeeze
    // every cell into a letter per line.
    use std::io::IsTerminal;
    let wide = t.width().is_some_and(|w| w >= 60);
    t.set_content_arrangement(if std::io::stdout().is_terminal() && wide {
        ContentArrangement::Dynamic
    } else {
        ContentArrangement::Disabled
    });
    t
}

/// Prints a section heading.
pub fn heading(title: &str) {
    println!("\n{title}\n{}", "─".repeat(title.chars().count()));
}

/// Prints a table of the view, its caption above it.
fn print_table(t: &memsight_results::view::Table) {
    use memsight_results::view::Cell;
    let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
    let mut out = table(&header);
    for r in &t.rows {
        out.add_row(r.iter().map(|c| match c {
            Cell::Text(x) | Cell::Num(x) => x.clone(),
            Cell::Link { text, href } => format!("{text} ({href})"),
        }));
    }
    if t.caption.is_empty() {
        println!("{out}");
    } else {
        println!("{}\n{out}", t.caption);
    }
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
pub fn draw(v: &memsight_results::view::View) {
    use memsight_results::view::Block;
    heading(&v.title);
    println!("{}", v.method);
    for f in &v.facts {
        println!("{f}");
    }
    for b in &v.blocks {
        match b {
            Block::Table(t) => print_table(t),
            // Charts are for the HTML report; their figures are in the tables.
            Block::Lines(..) | Block::Bars(..) | Block::DimmMap(..) => {}
            Block::Heatmap(h) => print_table(&h.table()),
        }
    }
    findings(&v.findings);
}
