//! `memsight pmem` and `pmem-worker`: the flags, and the study as a command.

use std::path::PathBuf;

use clap::ValueEnum;
use memsight_core::Result;
use memsight_core::env::Environment;
use memsight_suites::pmem::worker::Task;
use memsight_suites::pmem::{self, Config, Strategy};

use super::values::size;
use crate::suite::{Outcome, Suite, Ui};

/// Persistent-memory pool study (PMDK libpmemobj): utilisation by object size, allocation
/// class search, concurrent allocation failures by arena strategy.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Directory for the temporary pools: a DAX-mounted PMEM file system, or any file system
    /// (emulated; default /dev/shm). Pools are always removed.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The pool file to use (must not exist; created and removed for every fill), e.g. on a
    /// DAX-mounted file system. Default: a file in --dir.
    #[arg(long, value_name = "FILE", conflicts_with = "dir")]
    pub pool: Option<PathBuf>,
    /// Pool size (MemVerge's PMDK talk, Li and Kang 2019, used 4225761280).
    #[arg(long, value_name = "SIZE", value_parser = size, default_value_t = Config::default().pool_bytes)]
    pub pool_size: u64,
    /// Object sizes for the utilisation sweep (the seven of MemVerge's PMDK talk, Li and Kang
    /// 2019).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size, default_values_t = Config::default().sizes)]
    pub sizes: Vec<u64>,
    /// Search custom allocation classes for each size and verify the best by a fill.
    #[arg(long)]
    pub search: bool,
    /// Candidates verified by a real fill per size.
    #[arg(long, value_name = "N", default_value_t = Config::default().verify)]
    pub verify: usize,
    /// Run the concurrency study (arena strategies).
    #[arg(long)]
    pub concurrency: bool,
    /// Strategies (default: all).
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub strategies: Vec<StrategyArg>,
    #[arg(long, value_name = "N", default_value_t = Config::default().alloc_threads)]
    pub alloc_threads: usize,
    #[arg(long, value_name = "N", default_value_t = Config::default().free_threads)]
    pub free_threads: usize,
    /// Object sizes of the concurrency study.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size, default_values_t = Config::default().mixed_sizes)]
    pub mixed_sizes: Vec<u64>,
    /// Live bytes kept, as a fraction of the pool.
    #[arg(long, value_name = "F", default_value_t = Config::default().live_fraction)]
    pub live_fraction: f64,
    /// Seconds per strategy.
    #[arg(long, value_name = "S", default_value_t = Config::default().seconds)]
    pub seconds: f64,
    #[arg(long, value_name = "N", default_value_t = Config::default().seed)]
    pub seed: u64,
    /// Also write the study as an HTML page (utilisation chart, tables, findings).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// An arena strategy of the concurrency study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    Default,
    Single,
    PerClass,
    Retry,
}

impl From<StrategyArg> for Strategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Default => Strategy::Default,
            StrategyArg::Single => Strategy::Single,
            StrategyArg::PerClass => Strategy::PerClass,
            StrategyArg::Retry => Strategy::Retry,
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    /// The task as JSON (`memsight_suites::pmem::worker::Task`), written by `memsight pmem`.
    #[arg(long, value_name = "JSON")]
    pub task: String,
}

impl WorkerArgs {
    /// The task the worker runs.
    pub fn task(&self) -> Result<Task> {
        serde_json::from_str(&self.task)
            .map_err(|e| memsight_core::Error::input(format!("--task is not a worker task: {e}")))
    }
}

impl Args {
    /// The study's config (the suite checks the ranges).
    pub fn config(&self) -> Config {
        Config {
            dir: self.dir.clone(),
            pool: self.pool.clone(),
            pool_bytes: self.pool_size,
            sizes: self.sizes.clone(),
            search: self.search,
            verify: self.verify,
            concurrency: self.concurrency,
            strategies: if self.strategies.is_empty() {
                Config::default().strategies
            } else {
                self.strategies.iter().map(|&s| s.into()).collect()
            },
            alloc_threads: self.alloc_threads,
            free_threads: self.free_threads,
            mixed_sizes: self.mixed_sizes.clone(),
            live_fraction: self.live_fraction,
            seconds: self.seconds,
            seed: self.seed,
        }
    }
}

impl Suite for Args {
    /// PMDK's pools are files: a recorded topology does not stop the study.
    fn live(&self) -> bool {
        false
    }

    fn html(&self) -> Option<&std::path::Path> {
        self.html.as_deref()
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        let cfg = self.config();
        let (results, complete) = ui.progress(None, |tick| pmem::run(&cfg, env, tick))?;
        Ok(Outcome::of(results, complete))
    }
}
