//! `memsight bandwidth` flags, and their conversion into the suite's config.

use clap::{Args, ValueEnum};
use memsight_core::env::Environment;
use memsight_core::units::{MIB, parse_size};
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{self as k, GRANULE};

use crate::bandwidth::spec::{DEFAULT_TESTS, parse_test};
use crate::bandwidth::{BandwidthConfig, NONZERO, choose_threads, parse_isa};

#[derive(Debug, Clone, Args)]
pub struct BandwidthArgs {
    /// Tests to run, comma-separated: read, write, write-nt, write-clzero, copy, copy-nt, rmw,
    /// all-reads, stream-triad, stream-triad-like, or DRAM read:write ratios R:W / R:W-nt
    /// (default: all of the named ones and MLC's 3:1, 2:1, 1:1, 1:1-nt, 2:1-nt).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub test: Vec<String>,
    /// Vector width: scalar, sse2, avx2, avx512, neon (default: the widest this CPU has).
    #[arg(long, value_name = "ISA")]
    pub isa: Option<String>,
    /// Threads: a count, `all`, or a CPU list with --cpus.
    #[arg(long, value_name = "N|all", default_value = "all")]
    pub threads: String,
    /// Run on exactly these CPUs (overrides --threads), e.g. 0-3,8.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Also run every test at 1, 2, 4 … threads up to the chosen count.
    #[arg(long)]
    pub scaling: bool,
    /// Working set per thread (default: max(128 MiB, 4 × the last-level caches ÷ threads)).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// One buffer for all threads, each working on its own part, first-touched by the first
    /// thread (all on its node: a program that initialises its data on one thread).
    #[arg(long)]
    pub shared: bool,
    /// Also sweep the working set from inside L1 to DRAM for read, write and copy (one thread).
    #[arg(long)]
    pub sweep: bool,
    /// Bind every buffer to this NUMA node (default: first touch by its thread).
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
    /// Page kind of the buffers: 4k, thp, 2m or 1g.
    #[arg(long, value_name = "KIND", default_value = "thp")]
    pub page_kind: String,
    /// What writes write.
    #[arg(long, value_enum, default_value_t = DataArg::Nonzero)]
    pub pattern: DataArg,
    /// Stop a point once the median's 95% CI is within this fraction of it.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.01)]
    pub target_ci: f64,
    /// Minimum samples per point.
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_samples: u32,
    /// Time budget per point in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub point_budget: f64,
    /// Target duration of one timed sample in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 20.0)]
    pub sample_ms: f64,
    #[command(flatten)]
    pub dax: super::DaxArg,
}

/// What the writes write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataArg {
    /// 0xef bytes (default: real data never travels compressed).
    Nonzero,
    /// Zero bytes.
    Zero,
    /// Both, to show whether zero lines are cheaper (a finding).
    Both,
}

impl BandwidthArgs {
    pub fn config(&self, env: &Environment) -> Result<BandwidthConfig> {
        let a = self;
        let isa = parse_isa(a.isa.as_deref())?;
        let mut skipped = Vec::new();
        let tests = if a.test.is_empty() {
            let mut v = Vec::new();
            for name in DEFAULT_TESTS {
                let t = parse_test(name)?;
                match k::supports(isa, t.store) {
                    Ok(()) => v.push(t),
                    Err(why) => skipped.push(format!("{name}: {why}")),
                }
            }
            v
        } else {
            let mut v = Vec::new();
            for name in &a.test {
                let t = parse_test(name.trim())?;
                k::supports(isa, t.store)
                    .map_err(|why| Error::input(format!("test '{name}': {why}")))?;
                v.push(t);
            }
            v
        };
        let cpus = choose_threads(&a.threads, a.cpus.as_deref(), env)?;
        let n = cpus.len();
        let given = a.size.as_deref().map(parse_size).transpose()?;
        // Sizes that could be memory are sized and labelled from the core's latency curve;
        // sizes within the L2 (per core, reported truthfully even in VMs) need no probe.
        let l2 = env.topology.cache(2).map_or(0, |c| c.size_bytes);
        let reach = if given.is_some_and(|b| b <= l2) && !a.sweep {
            None
        } else {
            Some(memsight_suites::latency::memory::known_or_probe(env)?)
        };
        // Together the threads hold what each core reaches, up to every reported LLC.
        let team_cache = reach.map_or(env.llc_total_bytes(), |r| r.team_cache(n, env));
        let bytes_per_thread =
            given.unwrap_or_else(|| (128 * MIB).max((4 * team_cache).div_ceil(n as u64)));
        let max_arrays = tests.iter().map(|t| t.arrays() as u64).max().unwrap_or(1);
        if bytes_per_thread < max_arrays * GRANULE as u64 {
            return Err(Error::input(format!(
                "--size {bytes_per_thread} B is too small: each thread needs at least {} for its {max_arrays} arrays",
                max_arrays * GRANULE as u64
            )));
        }
        let dax = a.dax.target()?;
        if dax.is_some() && a.node.is_some() {
            return Err(Error::input(
                "--dax and --node exclude each other: DAX memory is where its device is",
            ));
        }
        if dax.is_none() {
            memsight_core::buffer::check_size(bytes_per_thread * n as u64, env)?;
        }
        env.check_node(a.node)?;
        let (rule, sample_ns) =
            crate::sampling::stop_rule(a.target_ci, a.min_samples, a.point_budget, a.sample_ms)?;
        let thread_counts = if a.scaling {
            let mut v: Vec<usize> = std::iter::successors(Some(1usize), |x| Some(x * 2))
                .take_while(|&x| x < n)
                .collect();
            v.push(n);
            v
        } else {
            vec![n]
        };
        let sweep_sizes = if a.sweep {
            crate::latency::log_sizes(16 * 1024, (4 * team_cache).max(256 * MIB), 2, 4096)
        } else {
            Vec::new()
        };
        if let Some(&max) = sweep_sizes.last() {
            memsight_core::buffer::check_size(max, env)?;
        }
        let patterns = match a.pattern {
            DataArg::Nonzero => vec![NONZERO],
            DataArg::Zero => vec![0],
            DataArg::Both => vec![NONZERO, 0],
        };
        Ok(BandwidthConfig {
            tests,
            isa,
            cpus,
            thread_counts,
            bytes_per_thread,
            shared: a.shared,
            interleave: false,
            sweep_sizes,
            node: a.node,
            page_kind: a.page_kind.parse()?,
            patterns,
            rule,
            sample_ns,
            skipped,
            weighted: None,
            dax,
            reach,
        })
    }
}
