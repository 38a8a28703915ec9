//! `memsight check`: a verdict of this machine (or a stored result) against a reference, and
//! references made from good runs. Exit 0 on PASS, 1 on FAIL, 3 on INCOMPLETE (with
//! `--format nagios`, the Monitoring Plugins codes 0, 2 and 3).

use std::io::Write;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::Parser;
use memsight_core::Error;
use memsight_core::error::Exit;
use memsight_results::check::{self, CheckReport, Reference, Status, Verdict};
use memsight_results::document::Document;
use memsight_results::history;

use crate::cli::check::{CheckArgs, CheckFormat};
use crate::cli::{Cli, Command, GlobalArgs};
use crate::output;

/// Whether `check` measures this machine (`--reference FILE` without stored results) rather
/// than reading stored results or making a reference.
pub fn live(a: &CheckArgs) -> bool {
    a.make_reference.is_none() && a.results.is_empty()
}

/// `memsight check --make-reference FILE RESULT…`: offline.
pub fn make_reference(a: &CheckArgs, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let docs = a
        .results
        .iter()
        .map(|r| history::resolve(r, &a.db.path()))
        .collect::<Result<Vec<_>, _>>()?;
    let name = a.name.clone().unwrap_or_else(|| {
        docs[0]
            .environment
            .topology
            .cpu_model
            .clone()
            .unwrap_or_else(|| "this kind of node".into())
    });
    let r = check::make::make(&docs, &a.results, name)?;
    memsight_core::files::write_text(path, &r.to_text(path)?)?;
    say!(
        "memsight: wrote {} with {} figure(s) from {} result(s): edit the tolerances to what this kind of node must hold",
        path.display(),
        r.figures.len(),
        docs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `memsight check --reference FILE RESULT` (or `--baseline last:N RESULT`: the runs of its
/// machine before it, from the history): judges a stored result (offline).
pub fn judge_stored(
    a: &CheckArgs,
    g: &GlobalArgs,
    reference: Option<&Reference>,
) -> anyhow::Result<ExitCode> {
    let [one] = a.results.as_slice() else {
        return Err(Error::input("give one result to judge (or none, to measure now)").into());
    };
    let doc = history::resolve(one, &a.db.path())?;
    let report = match (reference, a.baseline) {
        (Some(r), _) => check::judge::judge(r, &doc),
        (None, Some(w)) => {
            let fp = history::fingerprint(&doc.environment);
            check::baseline::from_history(&a.db.path(), &fp, Some(&doc.started), w)?.judge(&doc)
        }
        (None, None) => unreachable!("clap requires a mode"),
    };
    verdict(a, g, &report)
}

/// `memsight check --reference FILE`: measures what the reference needs with `memsight run`
/// (its level, only the suites its figures need), then judges.
pub fn judge_live(
    a: &CheckArgs,
    g: &GlobalArgs,
    judge: &check::baseline::Judge,
    env: memsight_core::env::Environment,
    started: SystemTime,
) -> anyhow::Result<ExitCode> {
    let run_args = run_args(a, judge.reference())?;
    // Without --out the run is measured into a temporary directory removed on every path.
    let scratch: tempfile::TempDir;
    let dir = match &a.out {
        Some(d) => d.clone(),
        None => {
            scratch = tempfile::Builder::new()
                .prefix("memsight-check-")
                .tempdir()?;
            scratch.path().to_path_buf()
        }
    };
    crate::run::check_out_dir(&dir)?;
    let doc: Document = crate::run::measure(&run_args, env, g, started, &dir, true)?;
    if a.out.is_some() {
        crate::run::save(&doc, &dir, None, true)?;
    }
    let code = verdict(a, g, &judge.judge(&doc))?;
    // Judged against the history, the run joins it afterwards: the next check's baseline.
    if a.baseline.is_some() && doc.complete {
        history::History::open(&a.db.path(), true)?.insert(&doc)?;
    }
    Ok(code)
}

/// The `memsight run` flags for the reference's measurement, parsed as if typed.
fn run_args(a: &CheckArgs, r: &Reference) -> anyhow::Result<crate::cli::RunArgs> {
    let mut argv: Vec<String> = vec!["memsight".into(), "run".into(), "--no-history".into()];
    match r.measure.level {
        check::MeasureLevel::Quick => argv.push("--quick".into()),
        check::MeasureLevel::Default => {}
        check::MeasureLevel::Thorough => argv.push("--thorough".into()),
    }
    let suites: Vec<String> = r
        .suites_needed()
        .into_iter()
        .filter(|s| crate::cli::RUN_SUITES.contains(&s.as_str()))
        .collect();
    if !suites.is_empty() {
        argv.push("--only".into());
        argv.push(suites.join(","));
    }
    argv.push("--db".into());
    argv.push(a.db.path().display().to_string());
    if let Some(b) = a.time_budget {
        argv.extend(["--time-budget".into(), b.to_string()]);
    }
    let cli = Cli::try_parse_from(&argv).map_err(|e| {
        Error::input(format!(
            "the reference asks for a measurement memsight cannot make: {}",
            e.kind()
        ))
    })?;
    match cli.command {
        Command::Run(r) => Ok(r),
        _ => unreachable!("parsed as run"),
    }
}

/// Prints the verdict as asked; exit 0 on PASS, 1 on FAIL, 3 on INCOMPLETE (a result that is
/// not whole never passes), or the Monitoring Plugins codes with `--format nagios`.
fn verdict(a: &CheckArgs, g: &GlobalArgs, report: &CheckReport) -> anyhow::Result<ExitCode> {
    let format = if g.json { CheckFormat::Json } else { a.format };
    match format {
        CheckFormat::Table => table(report),
        CheckFormat::Json => println!("{}", serde_json::to_string_pretty(report)?),
        CheckFormat::Junit => check::junit::write(report, std::io::stdout().lock())?,
        CheckFormat::Line => println!("{}", report.line()),
        CheckFormat::Nagios => println!("{}", check::nagios::line(report)),
    }
    if let Some(path) = &g.output {
        let text = serde_json::to_string_pretty(report)? + "\n";
        memsight_core::files::write_text(path, &text)?;
    }
    std::io::stdout().flush()?;
    if format == CheckFormat::Nagios {
        return Ok(ExitCode::from(check::nagios::status(report.verdict)));
    }
    let code = match report.verdict {
        Verdict::Pass => Exit::Ok,
        Verdict::Fail => Exit::Failed,
        Verdict::Incomplete => Exit::System,
    };
    Ok(ExitCode::from(code.code()))
}

fn table(report: &CheckReport) {
    output::heading(&format!("Check against {}", report.reference));
    say!("host {} · result of {}", report.host, report.started);
    let mut t = output::table(&["", "figure", "value", "expected", "margin", "why"]);
    for c in &report.checks {
        t.add_row(vec![
            c.status.word().to_string(),
            c.name.clone(),
            c.value.map_or(String::new(), |v| match c.unit.as_str() {
                "B" => memsight_core::units::format_bytes(v as u64),
                u => format!("{} {u}", sig(v)),
            }),
            c.expected.clone(),
            c.margin_percent
                .map_or(String::new(), |m| format!("{m:+.1}%")),
            if c.status == Status::Pass {
                String::new()
            } else {
                c.reason.clone()
            },
        ]);
    }
    say!("{t}");
    say!("{}", report.summary());
}

fn sig(v: f64) -> String {
    if v.abs() >= 1e6 || v == v.trunc() {
        format!("{v}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}
