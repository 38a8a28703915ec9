//! `memsight alloc` and `alloc-worker` flags, and their conversion into the suite's config.

use std::path::PathBuf;

use clap::Args;
use memsight_core::units::{format_bytes, parse_size};
use memsight_core::{Error, Result};
use memsight_kernels::allocwork::{Preset, Workload};

use crate::alloc::{Config, preset_defaults};

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

impl AllocWorkerArgs {
    /// The workload from the command line (shared by `alloc` and `alloc-worker`).
    pub fn workload(&self) -> Result<Workload> {
        let a = self;
        let preset = Preset::parse(&a.preset).ok_or_else(|| {
            Error::input(format!(
                "unknown preset '{}': {}",
                a.preset,
                Preset::ALL.map(|p| p.name()).join(", ")
            ))
        })?;
        let (threads, live, lo, hi, phases, churn) = preset_defaults(preset);
        let w = Workload {
            preset,
            threads: a.threads.unwrap_or(threads),
            live_bytes: a
                .live
                .as_deref()
                .map(parse_size)
                .transpose()?
                .unwrap_or(live),
            min_size: a
                .min_size
                .as_deref()
                .map(parse_size)
                .transpose()?
                .map_or(lo, |v| v as usize),
            max_size: a
                .max_size
                .as_deref()
                .map(parse_size)
                .transpose()?
                .map_or(hi, |v| v as usize),
            phases: a.phases.unwrap_or(phases),
            churn: a.churn.unwrap_or(churn),
            survivors: a.survivors,
            seed: a.seed,
        };
        if !(1..=1024).contains(&w.threads) {
            return Err(Error::input("--threads must be 1 … 1024"));
        }
        if w.min_size == 0 || w.min_size > w.max_size || w.max_size > (1 << 30) {
            return Err(Error::input(format!(
                "object sizes {} … {}: need 1 B ≤ min ≤ max ≤ 1 GiB",
                w.min_size, w.max_size
            )));
        }
        if w.live_bytes < w.max_size as u64 * w.threads as u64 {
            return Err(Error::input(format!(
                "--live {} is too small for {} threads of objects up to {}",
                format_bytes(w.live_bytes),
                w.threads,
                format_bytes(w.max_size as u64)
            )));
        }
        if !(1..=10_000).contains(&w.phases) || w.survivors == 0 || w.churn > 100_000_000 {
            return Err(Error::input(
                "--phases must be 1 … 10000, --survivors at least 1, --churn at most 1e8",
            ));
        }
        Ok(w)
    }
}

impl AllocArgs {
    /// The study's config; the workload is resolved only when no command is given.
    pub fn config(&self) -> Result<Config> {
        Ok(Config {
            workload: if self.command.is_empty() {
                Some(self.worker.workload()?)
            } else {
                None
            },
            configs: self
                .configs
                .as_ref()
                .map(|l| l.split(',').map(|s| s.trim().to_string()).collect()),
            allocators: self.allocator.clone(),
            repeat: self.repeat,
            interval_ms: self.interval_ms,
            timeout_s: self.timeout_s,
            max_rss: self.max_rss.as_deref().map(parse_size).transpose()?,
            command: self.command.clone(),
        })
    }
}
