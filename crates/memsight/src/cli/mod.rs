//! Command-line interface: what the user can ask for. Every suite's flags live in its own file,
//! `cli/<suite>.rs`, declared here from the registry (`memsight_results::with_suites!`) together
//! with its command; the commands that do not measure are written out below.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

// The suites' flags, one file each (the registry, `memsight_results::with_suites!`, lists them
// in run order); declared here, outside any macro, so that rustfmt and the reader see them.
pub mod alloc;
pub mod bandwidth;
pub mod c2c;
pub mod coherence;
pub mod dimms;
pub mod latency;
pub mod loaded;
pub mod numa;
pub mod pmem;
pub mod profile;
pub mod rowbuffer;
pub mod scan;
pub mod stream;
pub mod tiers;

pub mod check;
pub mod in_run;
pub mod sampling;
pub mod values;

/// Declares every suite's command, and the one generic dispatch over them.
macro_rules! suite_commands {
    ($($m:ident $variant:ident $name:literal $tm:ident :: $tn:ident $(, run $field:ident)?;)*) => {
        /// The commands of the suites, in the registry's order (their help is the flags'
        /// doc comment).
        #[derive(Debug, Subcommand)]
        pub enum SuiteCommand {
            $($variant($m::Args),)*
        }

        /// The suites `memsight run` runs, by command name, in its order.
        pub const RUN_SUITES: &[&str] = &[$($( { let _ = stringify!($field); $name }, )?)*];

        impl SuiteCommand {
            /// The suite behind the command.
            pub fn suite(&self) -> &dyn crate::suite::Suite {
                match self {
                    $(SuiteCommand::$variant(a) => a,)*
                }
            }

            /// The command's name (`rowbuffer`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(SuiteCommand::$variant(_) => $name,)*
                }
            }
        }
    };
}

memsight_results::with_suites!(suite_commands);

/// A command line clap refused, as one line naming the problem (exit 2); help and version are
/// printed as clap prints them.
pub fn refuse(e: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let line = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("For more information") && !l.starts_with("Usage:")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    eprintln!("memsight: error: {line}");
    // A monitoring plugin answers every time: a command line it cannot read is UNKNOWN (3)
    // with its reason on the status line, never the CRITICAL (2) a usage error's code would
    // read as there.
    if memsight_results::check::nagios::asked_for(std::env::args().skip(1)) {
        println!(
            "{}",
            memsight_results::check::nagios::unknown(&format!("usage: {line}"))
        );
        return std::process::ExitCode::from(memsight_results::check::nagios::status(
            memsight_results::check::Verdict::Incomplete,
        ));
    }
    std::process::ExitCode::from(2)
}

/// `--dax PATH`: file-backed memory for the commands that measure on one buffer kind.
#[derive(Debug, Clone, Default, Args)]
pub struct DaxArg {
    /// Map the buffers from persistent or CXL memory through DAX: a devdax device (/dev/daxX.Y)
    /// or a directory on a DAX file system (memsight creates and removes its own files). A tmpfs
    /// directory such as /dev/shm emulates DAX, and every figure then says so.
    #[arg(long, value_name = "PATH")]
    pub dax: Option<PathBuf>,
}

impl DaxArg {
    /// Opens the target, once per process.
    pub fn target(
        &self,
    ) -> memsight_core::Result<Option<&'static memsight_core::buffer::DaxTarget>> {
        self.dax
            .as_deref()
            .map(memsight_core::buffer::DaxTarget::open)
            .transpose()
    }
}

/// Measure, model and explain a computer's memory system.
#[derive(Debug, Parser)]
#[command(name = "memsight", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Print the versioned JSON result on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Also write the JSON result to this file.
    #[arg(short, long, global = true, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Read the topology from an hwloc XML export (`lstopo --of xml`, hwloc 2 or 3) instead of
    /// this machine (planning and reporting only; measurements still run here).
    #[arg(long, global = true, value_name = "FILE")]
    pub topology_xml: Option<PathBuf>,
    /// Never show a progress bar.
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// Print no tables, findings or summaries (no progress bar either): errors go to stderr, the
    /// exit code says how it went, and what was asked for as data (--json, -o, exports) is
    /// still written.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One-command characterisation: every suite that applies here within a time budget; writes
    /// run.json and report.html to a directory per run and stores the run in the history.
    Run(RunArgs),
    /// Machine, topology and state report, with warnings for what distorts measurements.
    Env,
    #[command(flatten)]
    Suite(SuiteCommand),
    /// (internal) The allocator workload, run in a child process by `memsight alloc`.
    #[command(hide = true)]
    AllocWorker(alloc::WorkerArgs),
    /// (internal) One PMDK task in a child process, run by `memsight pmem`.
    #[command(hide = true)]
    PmemWorker(pmem::WorkerArgs),
    /// Fleet report of a directory of results (one per node): nodes grouped by hardware, the
    /// figures that stand out within a group, faults; terminal table, JSON, --html page.
    Fleet(FleetArgs),
    /// List the results stored in the history database (runs, and results imported with
    /// --import).
    History(HistoryArgs),
    /// Judge this machine (or a stored result) against a reference of what its kind of node
    /// should measure: one line per check, exit 1 when one fails; or write a reference from
    /// good runs (--make-reference).
    Check(check::CheckArgs),
    /// Compare two results figure by figure (runs, or any two results of one command): change
    /// and whether it is beyond the noise.
    Compare(CompareArgs),
    /// Re-render the HTML report of a stored result or a result file.
    Report(ReportArgs),
    /// Show a stored result or a result file on the terminal, as the command that measured it
    /// printed it (tables, findings, a run's summary).
    Show(ShowArgs),
    /// Export a stored result or a result file as CSV (figures or samples) or JSON.
    Export(ExportArgs),
    /// Print a JSON Schema (draft 2020-12): of the result files (default), of `memsight check`'s
    /// reference files, or of its verdict.
    Schema(SchemaArgs),
    /// Print the shell completion script for SHELL (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Write the man pages (memsight.1 and one per command) into a directory.
    Manpages(ManpagesArgs),
}

/// What `memsight schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    /// Every result file (the envelope and each command's results).
    Result,
    /// A reference file of `memsight check`.
    Reference,
    /// The verdict `memsight check --json` prints.
    Check,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which documents the schema describes.
    #[arg(long, value_enum, default_value_t = SchemaOf::Result)]
    pub of: SchemaOf,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash (save as /usr/share/bash-completion/completions/memsight), zsh
    /// (_memsight in a directory of $fpath), fish (~/.config/fish/completions/memsight.fish).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManpagesArgs {
    /// Directory to write memsight.1 and memsight-COMMAND.1 into (created if missing).
    pub dir: PathBuf,
}

/// Where the run history lives.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// History database (default: $MEMSIGHT_DB, else ~/.local/share/memsight/history.sqlite).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database path to use.
    pub fn path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(default_path)
    }
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only runs of this host.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// At most this many runs, newest first.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Store these result files in the history first: run directories, run.json, or the JSON
    /// any measuring command writes with -o.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub import: Vec<PathBuf>,
    /// The runs where each summary figure's level moved and stayed (E-Divisive, t-test), per
    /// machine, instead of the list of runs.
    #[arg(long)]
    pub changes: bool,
    /// With --changes: only the figures this `check` selector matches (`bandwidth/*/2t`).
    #[arg(long, value_name = "SELECT", requires = "changes")]
    pub key: Option<String>,
    /// With --changes: keep a change whose t-test p (times its possible places) is below this.
    #[arg(long, value_name = "P", default_value_t = 0.001, requires = "changes", value_parser = memsight_results::history::changes::probability)]
    pub max_p: f64,
    /// With --changes: the fewest runs a level may have, each side of a change.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "changes", value_parser = clap::value_parser!(u64).range(2..))]
    pub min_runs: u64,
    /// With --changes: report only changes of the mean of at least this many percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 0.0, requires = "changes", value_parser = percent)]
    pub min_change: f64,
    /// With --changes: also write each figure's last change point for the textfile collector.
    #[arg(long, value_name = "FILE", requires = "changes")]
    pub prometheus: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a stored id, `latest`, `latest~N`, a result file or a run directory.
    pub a: String,
    /// The result compared with it (same forms): same command as A, or a run against one of
    /// its suites.
    pub b: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Also write the comparison as HTML to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Show only the figures that changed beyond the noise.
    #[arg(long)]
    pub changed: bool,
    /// Smallest change, in percent, that can count as real, for every figure (default: each
    /// figure's own noise floor, twice the larger robust spread of its samples, at least 1%).
    #[arg(long, value_name = "PERCENT")]
    pub min_change: Option<f64>,
    /// Exit 1 when B made a figure worse beyond the noise (and, given =PERCENT, by at least that
    /// much): for CI pipelines and regression gates.
    #[arg(long, value_name = "PERCENT", num_args = 0..=1, require_equals = true, default_missing_value = "0", value_parser = percent)]
    pub fail_on_regression: Option<f64>,
    /// Compare (and gate on) every figure, curve points too: each working set of a latency
    /// ladder or bandwidth sweep, each access size and range. By default only the summary
    /// figures (plateaus, team bandwidths, STREAM, saturation, NUMA cells, c2c).
    #[arg(long)]
    pub all_figures: bool,
}

/// A percentage from 0 to 1000.
fn percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1000.0).contains(&x) => Ok(x),
        _ => Err(format!("'{s}' is not a percentage between 0 and 1000")),
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A stored id, `latest`, `latest~N`, a result file or a run directory.
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Where to write the HTML (default: report.html beside a result file, else
    /// ./memsight-report-ID.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A stored id, `latest`, `latest~N`, a result file or a run directory.
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One row per figure: key, suite, its dimensions as columns (test, cpu, threads, node,
    /// working_set_bytes, mix …), label, unit, median, CI, n, min, max, CV.
    Csv,
    /// One row per sample (long format), for distributions.
    SamplesCsv,
    /// The stored result document.
    Json,
    /// Prometheus text exposition format (for node_exporter's textfile collector): one family
    /// per quantity in base units (memsight_latency_seconds, memsight_bandwidth_bytes_per_second
    /// …) labelled with suite, test, cpu, threads, node, working_set_bytes …; a fleet report
    /// gives every node's headline figures.
    Prometheus,
    /// One long Parquet table, a row per figure (host, key, its dimensions as typed columns,
    /// unit, value, CI, doubt marks, start time), for DuckDB, pandas, polars or Spark. Binary:
    /// give --to FILE or redirect stdout. A fleet report's table: `memsight fleet DIR
    /// --parquet FILE`.
    Parquet,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A stored id, `latest`, `latest~N`, a result file or a run directory.
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
    /// Write to this file instead of stdout, atomically (a temporary file renamed into place):
    /// a reader sees the old file or the new one, never part of one. For node_exporter's
    /// textfile directory: one file per command (`memsight-run.prom`, `memsight-latency.prom`);
    /// two results of one command in one directory write the same series.
    #[arg(long, value_name = "FILE")]
    pub to: Option<PathBuf>,
    /// Prometheus: every figure, curve points too (each working set of a ladder or sweep, each
    /// physical range), whose label sets change from run to run. By default the summary figures.
    #[arg(long)]
    pub all_figures: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A coarse latency ladder and the main bandwidth tests: 6–10 s on a 2-CPU machine
    /// (the default level about 50 s, --thorough about 4 min; more CPUs and NUMA nodes take
    /// longer).
    #[arg(long, conflicts_with = "thorough")]
    pub quick: bool,
    /// Every suite at full resolution: all bandwidth tests with thread scaling and zero-vs-data
    /// writes, every loaded-latency mix, the full ladder.
    #[arg(long)]
    pub thorough: bool,
    /// Directory for this run's results (default: ./memsight-results/HOST-TIME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store the run in the history database.
    #[arg(long)]
    pub no_history: bool,
    /// Do not take the reference probes that measure how the memory available to this machine
    /// moved during the run (about 0.1 s each: at the start, after every suite, at the end and
    /// every 5 s within a suite).
    #[arg(long)]
    pub no_drift: bool,
    /// Take the DIMM inventory from this `dmidecode` text or `--dump-bin` file (for machines
    /// whose SMBIOS tables memsight cannot read, e.g. without root).
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
    /// Run only these suites (comma-separated); the others are listed as not selected.
    #[arg(long, value_name = "SUITES", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(RUN_SUITES))]
    pub only: Vec<String>,
    /// Run every suite but these (comma-separated).
    #[arg(long, value_name = "SUITES", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(RUN_SUITES))]
    pub skip: Vec<String>,
    /// Print each suite's predicted time and the total, from its settings and this machine (or
    /// --topology-xml), and exit without measuring.
    #[arg(long, visible_alias = "dry-run", conflicts_with = "fleet")]
    pub plan: bool,
    /// Fit the run to this time (e.g. 45s): suites are left out, the studies and matrices first,
    /// until the predicted time fits; refused when latency and bandwidth alone do not.
    #[arg(long, value_name = "DURATION", value_parser = values::duration)]
    pub time_budget: Option<f64>,
    #[command(flatten, next_help_heading = "Fleet mode")]
    pub fleet: FleetRankArgs,
    #[command(
        flatten,
        next_help_heading = "Latency ladder (also used by every suite that needs it)"
    )]
    pub latency: latency::Args,
}

/// One rank of a fleet (`run --fleet`, `rowbuffer --fleet`).
#[derive(Debug, Clone, Args)]
pub struct FleetRankArgs {
    /// Fleet mode: this process is one rank of a launcher (srun, mpirun, mpiexec); its result
    /// goes under DIR (a shared file system), and rank 0 waits for the others and writes
    /// DIR/JOB/fleet.json and fleet.html. No history is stored.
    #[arg(long, value_name = "DIR")]
    pub fleet: Option<PathBuf>,
    /// In fleet mode, how long rank 0 waits for the others after its own run, seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 600,
        requires = "fleet"
    )]
    pub fleet_timeout: u64,
}

/// `memsight fleet DIR`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// A directory of memsight results (searched 4 levels deep): a `run --fleet` directory, or
    /// results gathered any other way (pdsh, Ansible, a cron job copying files).
    pub dir: PathBuf,
    /// Robust score beyond which a figure is flagged (Iglewicz & Hoaglin recommend 3.5).
    #[arg(long, value_name = "SCORE", default_value_t = 3.5)]
    pub threshold: f64,
    /// Smallest relative distance from the group median that is flagged (0.05 = 5%).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05)]
    pub min_change: f64,
    /// Also write the fleet page (HTML) to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Score every point of the latency and bandwidth curves too, not only their summaries.
    #[arg(long)]
    pub all_figures: bool,
    /// Exit 1 (after writing every report) when a node stands out worse than its group or a
    /// member has a fault: for health checks and cron jobs.
    #[arg(long)]
    pub fail_on_outliers: bool,
    /// The number of nodes whose results should be there: fewer usable results exit 1 (after
    /// the report), so that a health check notices results that never arrived. Without it, a
    /// directory with no usable result at all exits 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub expect: Option<u64>,
    /// Most results the directory may hold: a larger fleet is refused, never read in part (the
    /// analysis holds about 10 KiB a node, so a million nodes want about 10 GiB).
    #[arg(long, value_name = "N", default_value_t = memsight_results::fleet::FleetOptions::DEFAULT.max_nodes as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_nodes: u64,
    /// Write each node's compact summary beside every full result that has none
    /// (`run.summary.json`, a few KiB): later analyses read the summaries alone. `run --fleet`
    /// writes them itself.
    #[arg(long)]
    pub summarise: bool,
    /// Also write every node's figures as one long Parquet table to this file (host, group,
    /// figure key and its dimensions, unit, value, CI, doubt marks, flagged), for DuckDB,
    /// pandas, polars or Spark.
    #[arg(long, value_name = "FILE")]
    pub parquet: Option<PathBuf>,
    /// List every node in the terminal table and the page, and every row of the flagged
    /// figures and faults; by default, beyond 40 nodes, only the flagged and unscored nodes
    /// (at most 200 rows a table).
    #[arg(long)]
    pub all_nodes: bool,
}

impl FleetArgs {
    /// The analysis settings, validated.
    pub fn strictness(&self) -> memsight_core::Result<memsight_results::fleet::FleetOptions> {
        if !(self.threshold > 0.0 && self.threshold.is_finite()) {
            return Err(memsight_core::Error::input(
                "--threshold must be a positive score, e.g. 3.5",
            ));
        }
        if !(0.0..1.0).contains(&self.min_change) {
            return Err(memsight_core::Error::input(
                "--min-change must be a fraction from 0 to 1, e.g. 0.05",
            ));
        }
        Ok(memsight_results::fleet::FleetOptions {
            threshold: self.threshold,
            min_change: self.min_change,
            curves: self.all_figures,
            max_nodes: usize::try_from(self.max_nodes).unwrap_or(usize::MAX),
            summarise: self.summarise,
        })
    }
}

/// Where the history lives unless `--db` says otherwise: `$MEMSIGHT_DB`, else the user's data
/// directory (`~/.local/share/memsight/history.sqlite` on Linux).
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MEMSIGHT_DB") {
        return PathBuf::from(p);
    }
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("memsight")
        .join("history.sqlite")
}
