//! `memsight pmem` and `pmem-worker` flags, and their conversion into the suite's config.

use std::path::PathBuf;

use clap::Args;
use memsight_core::Result;
use memsight_core::units::parse_size;

use crate::pmem::worker::Task;
use crate::pmem::{Config, parse_list};

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
    /// Pool size (MemVerge's PMDK talk, Li and Kang 2019, used 4225761280).
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub pool_size: String,
    /// Object sizes for the utilisation sweep (default: the seven of MemVerge's PMDK talk, Li and Kang 2019).
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
    /// The task as JSON (`memsight_suites::pmem::worker::Task`), written by `memsight pmem`.
    #[arg(long, value_name = "JSON")]
    pub task: String,
}

impl PmemWorkerArgs {
    /// The task the worker runs.
    pub fn task(&self) -> Result<Task> {
        serde_json::from_str(&self.task)
            .map_err(|e| memsight_core::Error::input(format!("--task is not a worker task: {e}")))
    }
}

impl PmemArgs {
    /// The study's config: sizes and lists parsed (the suite checks their ranges).
    pub fn config(&self) -> Result<Config> {
        Ok(Config {
            dir: self.dir.clone(),
            pool: self.pool.clone(),
            pool_bytes: parse_size(&self.pool_size)?,
            sizes: parse_list(&self.sizes, "--sizes")?,
            search: self.search,
            verify: self.verify,
            concurrency: self.concurrency,
            strategies: self
                .strategies
                .split(',')
                .map(|s| s.trim().to_string())
                .collect(),
            alloc_threads: self.alloc_threads,
            free_threads: self.free_threads,
            mixed_sizes: parse_list(&self.mixed_sizes, "--mixed-sizes")?,
            live_fraction: self.live_fraction,
            seconds: self.seconds,
            seed: self.seed,
        })
    }
}
