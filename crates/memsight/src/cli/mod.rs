//! Command-line interface: what the user can ask for.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod bandwidth;
mod c2c;
mod dimms;
mod latency;
mod loaded;
mod numa;
mod rowbuffer;
mod stream;
pub use bandwidth::BandwidthArgs;
pub use c2c::C2cArgs;
pub use dimms::DimmsArgs;
pub use latency::LatencyArgs;
pub use loaded::LoadedArgs;
pub use numa::NumaArgs;
pub use rowbuffer::RowbufferArgs;
pub use stream::StreamArgs;

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
    /// Read the topology from an hwloc XML export instead of this machine (planning and
    /// reporting only; measurements still run here).
    #[arg(long, global = true, value_name = "FILE")]
    pub topology_xml: Option<PathBuf>,
    /// Never show a progress bar.
    #[arg(long, global = true)]
    pub no_progress: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One-command characterisation: every suite that applies here within a time budget; writes
    /// run.json and report.html to a directory per run and stores the run in the history.
    Run(RunArgs),
    /// Machine, topology and state report, with warnings for what distorts measurements.
    Env,
    /// Latency ladder: pointer-chase latency from L1 to DRAM, cache levels, TLB cost and
    /// memory-level parallelism.
    Latency(LatencyArgs),
    /// Bandwidth by kernel, read:write mix, store kind and data, with thread scaling and a
    /// working-set sweep.
    Bandwidth(BandwidthArgs),
    /// STREAM-compatible kernels (Copy, Scale, Add, Triad) under STREAM's rules, validated.
    Stream(StreamArgs),
    /// Core-to-core latency: cache-line transfers between pairs of CPUs (modified and clean).
    C2c(C2cArgs),
    /// Latency and bandwidth matrices: every CPU node × every memory node (CPU-less included),
    /// interleaved memory, and what the firmware claims.
    Numa(NumaArgs),
    /// Loaded latency: latency vs bandwidth curves, one per read:write mix, with the knee and
    /// saturation bandwidth.
    LoadedLatency(LoadedArgs),
    /// Row-buffer conflicts and physical page mapping: STREAM offset sweeps on contiguous and
    /// demand-paged memory, dip detection and period prediction, a row-conflict probe, advice.
    Rowbuffer(RowbufferArgs),
    /// Allocator study: RSS vs live heap, RSS over time, speed, for glibc (and its knobs),
    /// tcmalloc, jemalloc, mimalloc, on a built-in workload or your command (`-- CMD ARGS`).
    Alloc(AllocArgs),
    /// (internal) The allocator workload, run in a child process by `memsight alloc`.
    #[command(hide = true)]
    AllocWorker(AllocWorkerArgs),
    /// Persistent-memory pool study (PMDK libpmemobj): utilisation by object size, allocation
    /// class search, concurrent allocation failures by arena strategy.
    Pmem(PmemArgs),
    /// (internal) One PMDK task in a child process, run by `memsight pmem`.
    #[command(hide = true)]
    PmemWorker(PmemWorkerArgs),
    /// DIMM inventory from SMBIOS (dmidecode): slots, sizes, types, speeds, ranks, widths, vendors;
    /// or, with --plan, a what-if for memory you have not bought yet.
    Dimms(DimmsArgs),
    /// List the runs stored in the history database.
    History(HistoryArgs),
    /// Compare two runs figure by figure: change and whether it is beyond the noise.
    Compare(CompareArgs),
    /// Re-render the HTML report of a stored run or a result file.
    Report(ReportArgs),
    /// Export a stored run as CSV (figures or samples) or JSON.
    Export(ExportArgs),
    /// Print the JSON Schema of the result files.
    Schema,
}

/// The built-in allocator workload.
#[derive(Debug, Clone, Args)]
pub struct AllocWorkerArgs {
    /// Workload: steady, bursty, cross-thread, pinning, size-phases.
    #[arg(long, value_name = "NAME", default_value = "bursty")]
    pub preset: String,
    /// Threads (default per preset: bursty 8, others 4).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Live heap the workload holds in total (default per preset: bursty 256M, others 128M).
    #[arg(long, value_name = "SIZE")]
    pub live: Option<String>,
    /// Smallest object (sizes are log-uniform between the two).
    #[arg(long, value_name = "SIZE")]
    pub min_size: Option<String>,
    /// Largest object.
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// Phases (bursty: each thread is the hot one in turn).
    #[arg(long, value_name = "N")]
    pub phases: Option<usize>,
    /// Free + allocate pairs per thread per phase at constant live bytes.
    #[arg(long, value_name = "N")]
    pub churn: Option<u64>,
    /// pinning: keep 1 in N objects when shrinking.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub survivors: u64,
    /// Seed of every size and free decision (same seed, same sequence).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Call malloc_trim(0) after every phase.
    #[arg(long, hide = true)]
    pub trim: bool,
}

#[derive(Debug, Clone, Args)]
pub struct AllocArgs {
    #[command(flatten)]
    pub worker: AllocWorkerArgs,
    /// Configurations to run (default: all that are installed): glibc, glibc-arena-1,
    /// glibc-arena-2, glibc-trim, glibc-mmap-64k, tcmalloc, jemalloc, mimalloc.
    #[arg(long, value_name = "LIST")]
    pub configs: Option<String>,
    /// Another allocator to preload: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH")]
    pub allocator: Vec<String>,
    /// Runs per configuration.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub repeat: usize,
    /// RSS sampling interval.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    pub interval_ms: u64,
    /// Stop a run after this long (the command never exiting is an error in the results).
    #[arg(long, value_name = "S", default_value_t = 120.0)]
    pub timeout_s: f64,
    /// Kill a run whose RSS exceeds this (default: 8 × live + 1 GiB, at most 90% of available).
    #[arg(long, value_name = "SIZE")]
    pub max_rss: Option<String>,
    /// Also write the study as an HTML page (RSS over time, table, recommendation).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Your program and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct PmemArgs {
    /// Directory for the temporary pools: a DAX-mounted PMEM file system, or any file system
    /// (emulated; default /dev/shm). Pools are always removed.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The pool file to use (must not exist; created and removed for every fill), e.g. on a
    /// DAX-mounted file system. Default: a file in --dir.
    #[arg(long, value_name = "FILE", conflicts_with = "dir")]
    pub pool: Option<PathBuf>,
    /// Pool size (the seed used 4225761280).
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub pool_size: String,
    /// Object sizes for the utilisation sweep (default: the seed's seven).
    #[arg(long, value_name = "LIST", default_value = "512,4K,16K,64K,256K,1M,2M")]
    pub sizes: String,
    /// Search custom allocation classes for each size and verify the best by a fill.
    #[arg(long)]
    pub search: bool,
    /// Candidates verified by a real fill per size.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub verify: usize,
    /// Run the concurrency study (arena strategies).
    #[arg(long)]
    pub concurrency: bool,
    /// Strategies: default, single, per-class, retry.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "default,single,per-class,retry"
    )]
    pub strategies: String,
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub alloc_threads: usize,
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub free_threads: usize,
    /// Object sizes of the concurrency study.
    #[arg(long, value_name = "LIST", default_value = "4K,64K,256K,1M")]
    pub mixed_sizes: String,
    /// Live bytes kept, as a fraction of the pool.
    #[arg(long, value_name = "F", default_value_t = 0.6)]
    pub live_fraction: f64,
    /// Seconds per strategy.
    #[arg(long, value_name = "S", default_value_t = 3.0)]
    pub seconds: f64,
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Also write the study as an HTML page (utilisation chart, tables, findings).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct PmemWorkerArgs {
    #[arg(long)]
    pub task: String,
    #[arg(long)]
    pub pool: PathBuf,
    #[arg(long)]
    pub pool_size: u64,
    #[arg(long, default_value_t = 0)]
    pub object_size: usize,
    #[arg(long)]
    pub class_unit: Option<usize>,
    #[arg(long, default_value_t = 0)]
    pub class_alignment: usize,
    #[arg(long, default_value_t = 0)]
    pub class_units_per_block: u32,
    #[arg(long, default_value_t = 2)]
    pub class_header: u32,
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    #[arg(long, default_value = "default")]
    pub strategy: String,
    #[arg(long, default_value_t = 1)]
    pub alloc_threads: usize,
    #[arg(long, default_value_t = 0)]
    pub free_threads: usize,
    #[arg(long, default_value_t = 0.5)]
    pub live_fraction: f64,
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
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
        self.db.clone().unwrap_or_else(crate::history::default_path)
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
    /// Store these result files (run.json or run directories) in the history first.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub import: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a run id, `latest`, `latest~N`, a run.json or a run directory.
    pub a: String,
    /// The run compared with it (same forms).
    pub b: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Also write the comparison as HTML to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Show only the figures that changed beyond the noise.
    #[arg(long)]
    pub changed: bool,
    /// Smallest change, in percent, that can count as real (run-to-run drift on a shared
    /// machine exceeds either run's own spread).
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0)]
    pub min_change: f64,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run id, `latest`, `latest~N`, a run.json or a run directory.
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Where to write the HTML (default: report.html beside a result file, else
    /// ./memsight-report-ID.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One row per figure: key, label, unit, median, CI, n, min, max, CV.
    Csv,
    /// One row per sample (long format), for distributions.
    SamplesCsv,
    /// The stored result document.
    Json,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run id, `latest`, `latest~N`, a run.json or a run directory.
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub to: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// About 15 s: a coarse latency ladder and the main bandwidth tests.
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
    /// Take the DIMM inventory from this `dmidecode` text or `--dump-bin` file (for machines
    /// whose SMBIOS tables memsight cannot read, e.g. without root).
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
    #[command(flatten)]
    pub latency: LatencyArgs,
}

