//! `memsight alloc` and `alloc-worker`: the flags, and the study as a command.

use memsight_suites::measure::progress::Completed;
use std::path::PathBuf;

use memsight_core::env::Environment;
use memsight_kernels::allocwork::{Preset, Workload};
use memsight_suites::alloc::{self, AllocSettings, WorkloadSettings};

use super::values::{duration, size};
use crate::suite::{Outcome, Suite, Ui};

/// The built-in allocator workload.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    /// Workload (default: bursty).
    #[arg(long, value_name = "NAME", value_enum)]
    pub preset: Option<Preset>,
    /// Threads (default per preset: bursty 8, others 4).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Live heap the workload holds in total (default per preset: bursty 256M, others 128M).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub live: Option<u64>,
    /// Smallest object (sizes are log-uniform between the two).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub min_size: Option<u64>,
    /// Largest object.
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub max_size: Option<u64>,
    /// Phases (bursty: each thread is the hot one in turn).
    #[arg(long, value_name = "N")]
    pub phases: Option<usize>,
    /// Free + allocate pairs per thread per phase at constant live bytes.
    #[arg(long, value_name = "N")]
    pub churn: Option<u64>,
    /// pinning: keep 1 in N objects when shrinking.
    #[arg(long, value_name = "N", default_value_t = WorkloadSettings::default().survivors)]
    pub survivors: u64,
    /// Seed of every size and free decision (same seed, same sequence).
    #[arg(long, value_name = "N", default_value_t = WorkloadSettings::default().seed)]
    pub seed: u64,
    /// Call malloc_trim(0) after every phase.
    #[arg(long, hide = true)]
    pub trim: bool,
}

impl WorkerArgs {
    /// The workload (shared by `alloc` and `alloc-worker`): the preset's defaults, with the
    /// flags given, checked.
    pub fn workload(&self) -> memsight_core::Result<Workload> {
        let d = WorkloadSettings::default();
        WorkloadSettings {
            preset: self.preset.map_or(d.preset, Into::into),
            threads: self.threads,
            live: self.live,
            min_size: self.min_size,
            max_size: self.max_size,
            phases: self.phases,
            churn: self.churn,
            survivors: self.survivors,
            seed: self.seed,
        }
        .resolve()
    }
}

/// Allocator study: RSS vs live heap, RSS over time, speed, for glibc (and its knobs),
/// tcmalloc, jemalloc, mimalloc, on a built-in workload or your command (`-- CMD ARGS`).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub worker: WorkerArgs,
    /// Configurations to run, comma-separated (default: all that are installed): glibc,
    /// glibc-arena-1, glibc-arena-2, glibc-trim, glibc-mmap-64k, tcmalloc, jemalloc, mimalloc,
    /// or a NAME given with --allocator.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub configs: Option<Vec<String>>,
    /// Another allocator to preload: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH")]
    pub allocator: Vec<String>,
    /// Runs per configuration.
    #[arg(long, value_name = "N", default_value_t = AllocSettings::default().repeat)]
    pub repeat: usize,
    /// RSS sampling interval.
    #[arg(long, value_name = "MS", default_value_t = AllocSettings::default().interval_ms)]
    pub interval_ms: u64,
    /// Stop a run after this long (the command never exiting is an error in the results).
    #[arg(long, value_name = "S", default_value_t = AllocSettings::default().timeout_s)]
    pub timeout_s: f64,
    /// Kill a run whose RSS exceeds this (default: 8 × live + 1 GiB, at most 90% of available).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub max_rss: Option<u64>,
    /// Also write the study as an HTML page (RSS over time, table, recommendation).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Watch this running process (RSS, glibc arenas, threads over time) instead of starting
    /// anything; reading its heaps' headers needs root or being its parent.
    #[arg(long, value_name = "PID", conflicts_with_all = ["command", "configs", "allocator"])]
    pub pid: Option<u32>,
    /// How long to watch --pid: seconds or 30s, 10m, 2h, 1d.
    #[arg(long = "for", value_name = "DURATION", value_parser = duration, default_value = "60", requires = "pid")]
    pub watch: f64,
    /// Your program and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl Args {
    /// The study's config; the workload is resolved only when no command is given.
    pub fn config(&self) -> memsight_core::Result<AllocSettings> {
        Ok(AllocSettings {
            workload: if self.command.is_empty() && self.pid.is_none() {
                Some(self.worker.workload()?)
            } else {
                None
            },
            configs: self
                .configs
                .as_ref()
                .map(|l| l.iter().map(|s| s.trim().to_string()).collect()),
            allocators: self.allocator.clone(),
            repeat: self.repeat,
            interval_ms: self.interval_ms,
            timeout_s: self.timeout_s,
            max_rss: self.max_rss,
            command: self.command.clone(),
            pid: self.pid,
            watch_s: self.watch,
        })
    }
}

impl Suite for Args {
    /// The figures are the allocators', not the machine's.
    fn warns(&self) -> bool {
        false
    }

    fn html(&self) -> Option<&std::path::Path> {
        self.html.as_deref()
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        let Completed { results, complete } =
            crate::suite::measured::<alloc::Alloc>(self.config()?, env, ui)?;
        let failed = results.configs.iter().any(|c| !c.problems.is_empty());
        Ok(Outcome {
            failure: failed
                .then(|| "some runs failed or were stopped (see the problems column)".into()),
            ..Outcome::of(results, complete)
        })
    }
}
