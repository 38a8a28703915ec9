//! Human output: tables and formatted figures. JSON output is the serialised result envelope.

pub mod env;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{ContentArrangement, Table, presets};

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: only errors, the exit code and what was asked for as data are left.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether human output is off.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Plain ASCII output (tables, rules, bullets): stdout is not a terminal (a file, a pipe, a
/// log), `NO_COLOR` is set, or the terminal is dumb.
pub fn plain() -> bool {
    !std::io::stdout().is_terminal()
        || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
        || std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

/// A table in memsight's style.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(if plain() {
        presets::ASCII_FULL_CONDENSED
    } else {
        presets::UTF8_FULL_CONDENSED
    })
    .set_header(header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    // Wrap to the terminal only where there is one of a usable width: under a launcher
    // (mpirun's forwarded output) the reported width can be a few columns, which would squeeze
    // every cell into a letter per line.
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
    let rule = if plain() { "-" } else { "─" };
    say!("\n{title}\n{}", rule.repeat(title.chars().count()));
}

/// A run's headlines and what it skipped: how `memsight run` ends, and `memsight show` of a run.
pub fn run_summary(r: &memsight_results::document::RunResults) {
    heading("Summary");
    for line in &r.summary {
        say!("  {line}");
    }
    for s in &r.skipped {
        say!("  skipped: {s}");
    }
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
        say!("{out}");
    } else {
        say!("{}\n{out}", t.caption);
    }
}

/// Prints findings, one bullet each.
pub fn findings(items: &[String]) {
    if items.is_empty() {
        return;
    }
    say!("\nFindings");
    for f in items {
        say!("  {} {f}", if plain() { "-" } else { "•" });
    }
}

/// Prints a suite's view: heading, method, facts, tables (heatmaps as matrices), findings.
pub fn draw(v: &memsight_results::view::View) {
    use memsight_results::view::Block;
    heading(&v.title);
    say!("{}", v.method);
    for f in &v.facts {
        say!("{f}");
    }
    for b in &v.blocks {
        match b {
            Block::Table(t) => print_table(t),
            // Charts are for the HTML report; their figures are in the tables.
            Block::Lines(..) | Block::Bars(..) | Block::Grid(..) => {}
            Block::Heatmap(h) => print_table(&h.table()),
        }
    }
    findings(&v.findings);
}
