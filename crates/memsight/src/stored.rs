//! Commands on stored runs: `history`, `compare`, `report` and `export`. None of them measures.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use memsight_core::Error;

use crate::cli::{
    CompareArgs, ExportArgs, ExportFormat, GlobalArgs, HistoryArgs, ReportArgs, ShowArgs,
};
use crate::output::{heading, table};
use crate::report;
use memsight_results::document as results;
use memsight_results::history::compare;
use memsight_results::history::{self, History, export};

/// `memsight history`.
pub fn history(a: &HistoryArgs, g: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let path = a.db.path();
    let mut h = History::open(&path, !a.import.is_empty())?;
    for f in &a.import {
        let doc = results::read(f)?;
        let id = h.insert(&doc)?;
        eprintln!(
            "memsight: stored {} (memsight {}) as {id}",
            f.display(),
            doc.command
        );
    }
    if a.changes {
        return changes(&h, a, g);
    }
    let rows = h.list(a.host.as_deref(), a.limit)?;
    if g.json {
        let doc = history::series::HistoryReport::new(&path, &rows);
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    heading(&format!("Run history ({})", path.display()));
    if rows.is_empty() {
        say!("nothing stored yet: `memsight run` adds a run, `history --import FILE` any result");
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = table(&history::series::RUN_COLUMNS);
    t.add_rows(history::series::run_rows(&rows));
    say!("{t}");
    Ok(ExitCode::SUCCESS)
}

/// `memsight history --changes`: each summary figure's change points, per machine.
fn changes(h: &History, a: &HistoryArgs, g: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let o = history::changes::Options {
        max_p: a.max_p,
        min_runs: a.min_runs as usize,
        min_change: a.min_change / 100.0,
    };
    let found = h.changes(a.host.as_deref(), "run", a.key.as_deref(), &o)?;
    if let Some(path) = &a.prometheus {
        memsight_core::files::write_atomic(path, |out| {
            history::prometheus::change_points(&found, "run", out)
        })?;
    }
    if g.json {
        let doc = history::series::ChangesReport::new(h.path(), &o, &found);
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    heading(&format!("Change points ({})", h.path().display()));
    let rows = history::series::change_rows(&found);
    if !rows.is_empty() {
        let mut t = table(&history::series::CHANGE_COLUMNS);
        t.add_rows(rows);
        say!("{t}");
    }
    say!("{}", history::series::steady_line(&found, &o));
    Ok(ExitCode::SUCCESS)
}

/// `memsight compare A B`.
pub fn compare(a: &CompareArgs, g: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let db = a.db.path();
    let run_a = history::resolve(&a.a, &db)?;
    let run_b = history::resolve(&a.b, &db)?;
    let floor = match a.min_change {
        None => compare::Floor::Samples,
        Some(x) if (0.0..=1000.0).contains(&x) => compare::Floor::Fixed(x / 100.0),
        Some(x) => {
            return Err(Error::input(format!(
                "--min-change {x} is not a percentage between 0 and 1000"
            ))
            .into());
        }
    };
    let c = compare::compare(&a.a, &run_a, &a.b, &run_b, floor, a.all_figures)?;
    if let Some(path) = &a.html {
        memsight_core::files::write_text(path, &report::render_comparison(&c))?;
    }
    if g.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        for w in &c.warnings {
            eprintln!("memsight: warning: {w}");
        }
        heading(&format!(
            "A = {} (memsight {}, {}, {})   B = {} (memsight {}, {}, {})",
            c.a.label,
            c.a.command,
            c.a.host,
            c.a.started,
            c.b.label,
            c.b.command,
            c.b.host,
            c.b.started
        ));
        say!("{}", c.method);
        let mut t = table(&compare::COLUMNS);
        t.add_rows(c.table_rows(a.changed));
        say!("{t}");
        say!("{}", c.tally());
        for r in c.rows.iter().filter(|r| r.note.is_some()) {
            say!("  {}: {}", r.label, r.note.as_deref().unwrap_or_default());
        }
        if let Some(p) = &a.html {
            say!("HTML: {}", p.display());
        }
    }
    if let Some(path) = &g.output {
        memsight_core::files::write_text(path, &serde_json::to_string_pretty(&c)?)?;
    }
    Ok(match a.fail_on_regression {
        Some(pct) => {
            let (exit, line) = memsight_results::check::gate::regression(&c, pct);
            eprintln!("{line}");
            ExitCode::from(exit.code())
        }
        None => ExitCode::SUCCESS,
    })
}

/// Where `report` writes by default: beside a result file, else in the current directory.
fn default_report_path(reference: &str) -> PathBuf {
    let p = Path::new(reference);
    if p.exists() {
        let file = results::resolve(p);
        if let Some(dir) = file.parent() {
            return dir.join("report.html");
        }
    }
    PathBuf::from(format!(
        "memsight-report-{}.html",
        reference.replace(['/', '~'], "-")
    ))
}

/// `memsight report RUN`.
pub fn report(a: &ReportArgs) -> anyhow::Result<ExitCode> {
    let doc = history::resolve(&a.run, &a.db.path())?;
    let path = a
        .html
        .clone()
        .unwrap_or_else(|| default_report_path(&a.run));
    memsight_core::files::write_text(&path, &report::render(&doc))
        .map_err(|e| Error::input(format!("{e}; choose another file with --html")))?;
    say!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `memsight show RUN`: the terminal view of a stored result, as its command printed it.
pub fn show(a: &ShowArgs, g: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let doc = history::resolve(&a.run, &a.db.path())?;
    if g.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    for v in doc.results.views(&doc.environment.topology.caches) {
        crate::output::draw(&v);
    }
    if let results::Results::Run(r) = &doc.results {
        crate::output::run_summary(r);
    }
    Ok(ExitCode::SUCCESS)
}

/// `memsight export RUN`. With `--to`, the file is written beside its final path and renamed
/// into place, so that a reader (node_exporter's textfile collector) sees the old file or the
/// new one, never half of one.
pub fn export(a: &ExportArgs) -> anyhow::Result<ExitCode> {
    if a.format == ExportFormat::Parquet && a.to.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::input(
            "Parquet is binary: give --to FILE, or redirect the output to a file",
        )
        .into());
    }
    if let Some(to) = &a.to {
        memsight_core::files::check_destination(to)?;
    }
    let doc = history::resolve(&a.run, &a.db.path())?;
    let Some(path) = &a.to else {
        let mut out = std::io::stdout().lock();
        write_export(a, &doc, &mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    if a.format == ExportFormat::Prometheus {
        history::prometheus::refuse_second_file(path, &doc.command)?;
    }
    memsight_core::files::write_atomic(path, |out| write_export(a, &doc, out))?;
    Ok(ExitCode::SUCCESS)
}

fn write_export(
    a: &ExportArgs,
    doc: &results::Document,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    match a.format {
        ExportFormat::Csv => export::figures_csv(doc, &mut *out)?,
        ExportFormat::SamplesCsv => export::samples_csv(doc, &mut *out)?,
        ExportFormat::Prometheus => export::prometheus(doc, a.all_figures, &mut *out)?,
        ExportFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, doc)?;
            writeln!(out)?;
        }
        // One result's table is small: built in memory, then written (stdout's lock cannot
        // be handed to the Parquet writer's thread-safe sink).
        ExportFormat::Parquet => {
            out.write_all(&memsight_results::table::write_document(doc, Vec::new())?)?
        }
    }
    Ok(())
}
