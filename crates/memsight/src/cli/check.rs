//! Flags of `memsight check`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::DbArgs;

/// How the verdict is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// One line per check and a summary line.
    Table,
    /// The verdict as JSON (also with --json).
    Json,
    /// JUnit XML, for CI systems and ReFrame.
    Junit,
    /// One line, for NHC and Slurm's HealthCheckProgram: the verdict and the first failure.
    Line,
    /// A Monitoring Plugins (Nagios, Icinga, Naemon) status line with perfdata; the exit status
    /// follows that convention: 0 OK (PASS), 2 CRITICAL (FAIL), 3 UNKNOWN (INCOMPLETE).
    Nagios,
}

/// `memsight check`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["reference", "make_reference", "baseline"])))]
pub struct CheckArgs {
    /// Judge against this reference (JSON, or TOML when it ends in .toml).
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    /// Judge against this machine's own history instead of a reference: `last:N`, the N newest
    /// complete runs before the judged one (each figure at their median, allowed to be worse by
    /// 4 robust standard deviations of those runs, at least 5%). Measuring now, the run joins
    /// the history after it is judged.
    #[arg(long, value_name = "last:N", conflicts_with_all = ["reference", "make_reference"])]
    pub baseline: Option<memsight_results::check::baseline::Window>,
    /// Write a reference from the RESULTs (good runs of one kind of node) to FILE (TOML when
    /// it ends in .toml), for you to edit.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "reference",
        requires = "results"
    )]
    pub make_reference: Option<PathBuf>,
    /// With --reference: the result to judge (a stored id, `latest`, `latest~N`, a result file
    /// or a run directory); without one, memsight measures what the reference needs. With
    /// --make-reference: one or more results.
    #[arg(value_name = "RESULT")]
    pub results: Vec<String>,
    /// The kind of node, written into a new reference (`compute node, 2× EPYC 9654`).
    #[arg(long, value_name = "TEXT", requires = "make_reference")]
    pub name: Option<String>,
    /// How to print the verdict.
    #[arg(long, value_enum, default_value_t = CheckFormat::Table)]
    pub format: CheckFormat,
    /// When measuring: keep the result (run.json and report.html) in this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// When measuring: fit the run to this time (`memsight run --time-budget`, e.g. 45s under
    /// Slurm's 60 s limit); a figure the reference needs that the budget left out makes the
    /// verdict INCOMPLETE, and a budget latency and bandwidth cannot meet is refused (exit 2).
    #[arg(long, value_name = "DURATION", value_parser = super::values::duration)]
    pub time_budget: Option<f64>,
    #[command(flatten)]
    pub db: DbArgs,
}
