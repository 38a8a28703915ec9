//! `memsight latency` flags, and their conversion into the suite's config.

use clap::{Args, ValueEnum};
use memsight_core::buffer::PageKind;
use memsight_core::env::Environment;
use memsight_core::units::{parse_cpu_list, parse_size};
use memsight_core::{Error, Result};
use memsight_kernels::chain::Pattern;

use crate::latency::{LadderConfig, log_sizes};

#[derive(Debug, Clone, Args)]
pub struct LatencyArgs {
    /// Smallest working set (e.g. 4K).
    #[arg(long, value_name = "SIZE", default_value = "4K")]
    pub min_size: String,
    /// Largest working set. Default: the ladder ends once its memory plateau has held for two
    /// octaves, at most at 4 × the largest cache the OS reports (at least 64 MiB).
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
    /// Every step also writes the line it visits (multichase's incr chase): the latency of a
    /// dependent read-modify-write, whose dirty lines cost a write-back each.
    #[arg(long)]
    pub write: bool,
    #[command(flatten)]
    pub dax: super::DaxArg,
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

impl LatencyArgs {
    /// Turns command-line arguments into a validated plan. Errors are input errors naming the fix.
    pub fn config(&self, env: &Environment) -> Result<LadderConfig> {
        let a = self;
        let min = parse_size(&a.min_size)?;
        let max = match &a.max_size {
            Some(s) => parse_size(s)?,
            None => memsight_suites::reach::ladder_cap(env),
        };
        let stride = parse_size(&a.stride)? as usize;
        if stride < 64 || !stride.is_power_of_two() {
            return Err(Error::input(format!(
                "stride {stride} B is not supported: use a power of two of at least 64 (a cache line), e.g. 128"
            )));
        }
        if min < stride as u64 {
            return Err(Error::input(format!(
                "--min-size {min} B is smaller than the stride ({stride} B): use at least {stride}"
            )));
        }
        if max < min {
            return Err(Error::input(format!(
                "--max-size ({max} B) is smaller than --min-size ({min} B): swap them or raise --max-size"
            )));
        }
        let page_kind: PageKind = a.page_kind.parse()?;
        let dax = a.dax.target()?;
        if dax.is_some() && a.node.is_some() {
            return Err(Error::input(
                "--dax and --node exclude each other: DAX memory is where its device is",
            ));
        }
        // DAX memory comes in its own pages: no huge-page twin for the TLB cost.
        let tlb_compare = !a.no_tlb && page_kind == PageKind::Base4K && dax.is_none();
        // Both ladders' buffers exist at once: check the total before allocating anything.
        let buffers = if tlb_compare { 2 } else { 1 };
        if dax.is_none() {
            memsight_core::buffer::check_size(max * buffers, env)?;
        }
        let cpus = match &a.cpu {
            Some(list) => parse_cpu_list(list)?,
            None => vec![*env.allowed_cpus.first().ok_or_else(|| {
                Error::input("this process may not run on any CPU (empty cpuset)")
            })?],
        };
        memsight_core::pin::validate_cpus(&cpus, &env.allowed_cpus)?;
        env.check_node(a.node)?;
        let (rule, sample_ns) =
            crate::sampling::stop_rule(a.target_ci, a.min_samples, a.point_budget, a.sample_ms)?;
        let pattern = match a.pattern {
            PatternArg::Window => Pattern::Window {
                window_bytes: a.window_pages as usize * 4096,
            },
            PatternArg::Random => Pattern::Random,
            PatternArg::Stride => Pattern::Stride,
        };
        Ok(LadderConfig {
            sizes: log_sizes(min, max, a.points_per_octave, stride as u64),
            stride,
            pattern,
            page_kind,
            tlb_compare,
            max_parallel: a.parallel as usize,
            cpus,
            node: a.node,
            interleave: false,
            rule,
            sample_ns,
            seed: a.seed,
            write: a.write,
            dax,
            stop_at_memory: a.max_size.is_none(),
        })
    }
}
