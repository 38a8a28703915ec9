//! Command-line interface: what the user can ask for.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// One-command characterisation: environment report and latency ladder (more suites as
    /// they land).
    Run(RunArgs),
    /// Machine, topology and state report, with warnings for what distorts measurements.
    Env,
    /// Latency ladder: pointer-chase latency from L1 to DRAM, cache levels, TLB cost and
    /// memory-level parallelism.
    Latency(LatencyArgs),
    /// Print the JSON Schema of the result files.
    Schema,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Shorter run: fewer points per octave and no MLP sweep.
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub latency: LatencyArgs,
}

/// Order in which the chase visits lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PatternArg {
    /// Random inside a window of pages, windows in random order (multichase; default).
    Window,
    /// Random over the whole working set (includes TLB misses with small pages).
    Random,
    /// Fixed stride, increasing addresses (lmbench lat_mem_rd; prefetchers hide latency).
    Stride,
}

#[derive(Debug, Clone, Args)]
pub struct LatencyArgs {
    /// Smallest working set (e.g. 4K).
    #[arg(long, value_name = "SIZE", default_value = "4K")]
    pub min_size: String,
    /// Largest working set (default: 4 × the last-level cache, at least 64 MiB).
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// Working-set sizes per doubling.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub points_per_octave: u32,
    /// Distance between chased elements in bytes (≥ 64; 128 avoids adjacent-line prefetch).
    #[arg(long, value_name = "BYTES", default_value = "128")]
    pub stride: String,
    /// Visit order.
    #[arg(long, value_enum, default_value_t = PatternArg::Window)]
    pub pattern: PatternArg,
    /// Window size for the window pattern, in 4 KiB pages.
    #[arg(long, value_name = "PAGES", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=262144))]
    pub window_pages: u32,
    /// Page kind of the main ladder: 4k, thp, 2m (hugetlb) or 1g (hugetlb).
    #[arg(long, value_name = "KIND", default_value = "4k")]
    pub page_kind: String,
    /// Skip the second ladder on huge pages (TLB cost).
    #[arg(long)]
    pub no_tlb: bool,
    /// Largest number of parallel chases for the memory-level-parallelism sweep (1 = none).
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub parallel: u32,
    /// CPUs to measure from, one ladder each (default: the first allowed CPU), e.g. 0 or 0,8.
    #[arg(long, value_name = "LIST")]
    pub cpu: Option<String>,
    /// Bind the buffers to this NUMA node (default: first touch, i.e. the CPU's local node).
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
    /// Stop sampling a point once the median's 95% CI is within this fraction of it.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.01)]
    pub target_ci: f64,
    /// Minimum samples per point.
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: u32,
    /// Time budget per point in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.3)]
    pub point_budget: f64,
    /// Target duration of one timed sample in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2.0)]
    pub sample_ms: f64,
    /// Seed of the chain permutations (runs are reproducible for a seed).
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
}
