//! `memsight pmem` and `pmem-worker`: the flags, and the study as a command.

use std::path::PathBuf;

use memsight_core::Result;
use memsight_core::env::Environment;
use memsight_kernels::pmemobj::{ClassDesc, HEADER_COMPACT, HEADER_LEGACY, HEADER_NONE};
use memsight_suites::pmem::worker::Task;
use memsight_suites::pmem::{self, PmemSettings, Strategy};

use super::values::size;
use crate::suite::{Outcome, Suite, Ui};

/// Persistent-memory pool study (PMDK libpmemobj): utilisation by object size, the class table,
/// a class of your own and the class search, concurrent allocation failures and the volume
/// workload by arena strategy.
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
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = crate::cli::values::size_text(PmemSettings::default().pool_bytes))]
    pub pool_size: u64,
    /// Object sizes for the utilisation sweep (the seven of MemVerge's PMDK talk, Li and Kang
    /// 2019).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size, default_values = crate::cli::values::sizes_text(&PmemSettings::default().sizes))]
    pub sizes: Vec<u64>,
    /// Search custom allocation classes for each size and verify the best by a fill.
    #[arg(long)]
    pub search: bool,
    /// Candidates verified by a real fill per size.
    #[arg(long, value_name = "N", default_value_t = PmemSettings::default().verify)]
    pub verify: usize,
    /// Run the concurrency study (arena strategies).
    #[arg(long)]
    pub concurrency: bool,
    /// Strategies (default: all).
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub strategies: Vec<Strategy>,
    #[arg(long, value_name = "N", default_value_t = PmemSettings::default().alloc_threads)]
    pub alloc_threads: usize,
    #[arg(long, value_name = "N", default_value_t = PmemSettings::default().free_threads)]
    pub free_threads: usize,
    /// Object sizes of the concurrency study.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size, default_values = crate::cli::values::sizes_text(&PmemSettings::default().mixed_sizes))]
    pub mixed_sizes: Vec<u64>,
    /// Live bytes kept, as a fraction of the pool.
    #[arg(long, value_name = "F", default_value_t = PmemSettings::default().live_fraction)]
    pub live_fraction: f64,
    /// Concurrency study: one allocation class per object size whose runs hold about SIZE, as
    /// MemVerge's custom classes did (default: a sixteenth of the pool, the share its 1 MiB
    /// class of 256 units took).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub class_runs: Option<u64>,
    /// Concurrency study: PMDK's built-in allocation classes instead of one class per size.
    #[arg(long, conflicts_with = "class_runs")]
    pub builtin_classes: bool,
    /// Seconds per strategy.
    #[arg(long, value_name = "S", default_value_t = PmemSettings::default().seconds)]
    pub seconds: f64,
    #[arg(long, value_name = "N", default_value_t = PmemSettings::default().seed)]
    pub seed: u64,
    /// List the allocation classes of a fresh pool (id, unit size, units per run, header,
    /// alignment), as `heap.alloc_class.N.desc` gives them, and do nothing else.
    #[arg(long, conflicts_with_all = ["class", "volume", "search", "concurrency"])]
    pub classes: bool,
    /// A class of your own, filled with every size of --sizes beside PMDK's classes, e.g.
    /// MemVerge's `unit=1M,units=256,align=4K,header=none` (header: none, compact, legacy).
    #[arg(long, value_name = "SPEC", value_parser = class_spec)]
    pub class: Option<ClassSpec>,
    /// Run MemVerge's volume workload per strategy: --alloc-threads allocate batches of
    /// power-of-two objects (each size its own class), --free-threads free batches in
    /// transactions, until --volume-total was allocated; reports the time to finish.
    #[arg(long)]
    pub volume: bool,
    /// Bytes the volume workload allocates in total (default: 32 × the pool).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub volume_total: Option<u64>,
    /// Smallest object of the volume workload.
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = crate::cli::values::size_text(PmemSettings::default().volume_min))]
    pub volume_min: u64,
    /// Largest object of the volume workload (at most a sixteenth of the pool).
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = crate::cli::values::size_text(PmemSettings::default().volume_max))]
    pub volume_max: u64,
    /// Objects per allocation batch and per freeing transaction.
    #[arg(long, value_name = "N", default_value_t = PmemSettings::default().batch)]
    pub batch: usize,
    /// Time limit of one strategy's volume run, seconds.
    #[arg(long, value_name = "S", default_value_t = PmemSettings::default().volume_seconds)]
    pub volume_seconds: f64,
    /// Volume workload: have PMDK zero and persist every object (POBJ_XALLOC_ZERO), so the
    /// time includes writing the data as an application would.
    #[arg(long)]
    pub volume_zero: bool,
    /// Volume workload rounds (strategies alternate; the median round is reported).
    #[arg(long, value_name = "N", default_value_t = PmemSettings::default().volume_rounds)]
    pub volume_rounds: usize,
    /// Also write the study as an HTML page (utilisation chart, tables, findings).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// An allocation class given on the command line.
#[derive(Debug, Clone, Copy)]
pub struct ClassSpec(ClassDesc);

/// `unit=SIZE,units=N[,align=SIZE][,header=none|compact|legacy]`.
fn class_spec(s: &str) -> std::result::Result<ClassSpec, String> {
    let mut d = ClassDesc {
        header_type: HEADER_COMPACT,
        ..Default::default()
    };
    for part in s.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}': write KEY=VALUE (unit, units, align, header)"))?;
        match k.trim() {
            "unit" => d.unit_size = size(v)? as usize,
            "units" => {
                d.units_per_block = v
                    .trim()
                    .parse()
                    .map_err(|_| format!("units={v}: a whole number of units per run"))?
            }
            "align" => d.alignment = size(v)? as usize,
            "header" => {
                d.header_type = match v.trim() {
                    "none" => HEADER_NONE,
                    "compact" => HEADER_COMPACT,
                    "legacy" => HEADER_LEGACY,
                    other => return Err(format!("header={other}: none, compact or legacy")),
                }
            }
            other => {
                return Err(format!(
                    "'{other}': the keys are unit, units, align, header"
                ));
            }
        }
    }
    if d.unit_size == 0 || d.units_per_block == 0 {
        return Err("give at least unit=SIZE and units=N, e.g. unit=1M,units=256".into());
    }
    Ok(ClassSpec(d))
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
    pub fn config(&self) -> PmemSettings {
        PmemSettings {
            dir: self.dir.clone(),
            pool: self.pool.clone(),
            pool_bytes: self.pool_size,
            sizes: self.sizes.clone(),
            search: self.search,
            verify: self.verify,
            concurrency: self.concurrency,
            strategies: if self.strategies.is_empty() {
                PmemSettings::default().strategies
            } else {
                self.strategies.to_vec()
            },
            alloc_threads: self.alloc_threads,
            free_threads: self.free_threads,
            mixed_sizes: self.mixed_sizes.clone(),
            live_fraction: self.live_fraction,
            class_run_bytes: if self.builtin_classes {
                Some(0)
            } else {
                self.class_runs
            },
            seconds: self.seconds,
            seed: self.seed,
            classes: self.classes,
            custom: self.class.map(|c| c.0),
            volume: self.volume,
            volume_total: self.volume_total,
            volume_min: self.volume_min,
            volume_max: self.volume_max,
            batch: self.batch,
            volume_seconds: self.volume_seconds,
            volume_zero: self.volume_zero,
            volume_rounds: self.volume_rounds,
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
        crate::suite::command::<pmem::Pmem>(self.config(), env, ui)
    }
}
