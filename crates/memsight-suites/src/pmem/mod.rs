//! `memsight pmem`: how much of a libpmemobj pool objects of one size can use, why, which custom
//! allocation class does better, and how arena strategies change concurrent allocation failures
//! (MemVerge's PMDK talk's (Li and Kang, 2019) experiments, run rather than assumed).
//!
//! Every PMDK call happens in a child process (`pmem-worker`) on a fresh pool file that memsight
//! removes afterwards, whatever happened; the child gets `PMEM_IS_PMEM_FORCE=1` so an emulated pool
//! (a file on /dev/shm or any file system) flushes with CPU instructions instead of msync.

mod checks;
mod findings;
pub mod layout;
mod results;
mod suite;
pub use suite::Pmem;
pub mod search;
pub mod volume;
pub mod worker;

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use checks::check;
use findings::{custom_findings, judge};
pub use results::*;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use memsight_core::env::Environment;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use memsight_kernels::pmemobj::{ClassDesc, header_bytes};

/// How concurrent allocations are spread over PMDK's arenas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Strategy {
    /// PMDK's own: one arena per thread, round robin.
    Default,
    /// Every thread in one arena.
    Single,
    /// One arena per allocation class.
    PerClass,
    /// Default, retrying a failed allocation once.
    Retry,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Default,
        Strategy::Single,
        Strategy::PerClass,
        Strategy::Retry,
    ];

    /// The name results and the worker use.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Default => "default",
            Strategy::Single => "single",
            Strategy::PerClass => "per-class",
            Strategy::Retry => "retry",
        }
    }
}

/// What the persistent-memory study runs.
#[derive(Debug, Clone)]
pub struct PmemSettings {
    /// Directory for the temporary pools; `None`: /dev/shm (emulated) or the temp directory.
    pub dir: Option<PathBuf>,
    /// A pool file to use (must not exist).
    pub pool: Option<PathBuf>,
    pub pool_bytes: u64,
    /// Object sizes to fill with.
    pub sizes: Vec<u64>,
    /// Search allocation classes per size.
    pub search: bool,
    /// Fills verifying each search's best candidates.
    pub verify: usize,
    /// Run the concurrency study.
    pub concurrency: bool,
    /// Arena strategies of the concurrency study.
    pub strategies: Vec<Strategy>,
    pub alloc_threads: usize,
    pub free_threads: usize,
    /// Object sizes of the concurrency study.
    pub mixed_sizes: Vec<u64>,
    /// Live share of the pool the concurrency study keeps.
    pub live_fraction: f64,
    /// Concurrency study: one class per size whose runs hold about this many bytes, as
    /// MemVerge's custom classes did; `None`: a sixteenth of the pool ([`PmemSettings::class_runs`]);
    /// 0: PMDK's built-in classes.
    pub class_run_bytes: Option<u64>,
    pub seconds: f64,
    pub seed: u64,
    /// List the pool's allocation classes and do nothing else.
    pub classes: bool,
    /// A class of one's own: every size of the sweep is filled through it too.
    pub custom: Option<ClassDesc>,
    /// Run MemVerge's volume workload (time to allocate a total volume, per strategy).
    pub volume: bool,
    /// Bytes the volume workload allocates in total; `None`: 32 × the pool.
    pub volume_total: Option<u64>,
    /// Smallest and largest object of the volume workload (powers of two between).
    pub volume_min: u64,
    pub volume_max: u64,
    /// Objects per allocation batch and per freeing transaction.
    pub batch: usize,
    /// Time limit of one strategy's volume run, seconds.
    pub volume_seconds: f64,
    /// Volume workload: have PMDK zero (write and persist) every object it hands out, as an
    /// application that stores data pays for; without it the run times the allocator's
    /// metadata alone.
    pub volume_zero: bool,
    /// Volume workload rounds; the strategies alternate within each round.
    pub volume_rounds: usize,
}

impl PmemSettings {
    /// Bytes a run of the concurrency study's per-size classes holds: as given, else a
    /// sixteenth of the pool, the share MemVerge's 1 MiB class (256 units per run) took of its
    /// 4225761280-byte pool. Runs that large keep room in each arena's active run that the
    /// other arenas cannot use: the imbalance the talk measured.
    pub fn class_runs(&self) -> u64 {
        self.class_run_bytes.unwrap_or(self.pool_bytes / 16)
    }

    /// The volume workload's total.
    pub fn volume_bytes(&self) -> u64 {
        self.volume_total.unwrap_or(32 * self.pool_bytes)
    }
}

impl Default for PmemSettings {
    /// MemVerge's PMDK talk (Li and Kang, 2019) filled a 4225761280-byte pool with these seven
    /// sizes; the default pool is 1 GiB so that the study runs anywhere.
    fn default() -> Self {
        const K: u64 = 1024;
        PmemSettings {
            dir: None,
            pool: None,
            pool_bytes: 1 << 30,
            sizes: vec![512, 4 * K, 16 * K, 64 * K, 256 * K, K * K, 2 * K * K],
            search: false,
            verify: 3,
            concurrency: false,
            strategies: Strategy::ALL.to_vec(),
            // MemVerge's evaluation: 4 allocating and 8 freeing threads.
            alloc_threads: 4,
            free_threads: 8,
            mixed_sizes: vec![4 * K, 64 * K, 256 * K, K * K],
            live_fraction: 0.6,
            class_run_bytes: None,
            seconds: 3.0,
            seed: 1,
            classes: false,
            custom: None,
            volume: false,
            volume_total: None,
            volume_min: 4 * K,
            volume_max: 64 * K * K,
            batch: 16,
            volume_seconds: 300.0,
            volume_zero: false,
            volume_rounds: 3,
        }
    }
}
use worker::{ConcurrencyReport, FillReport};

/// Runs one worker task on a fresh pool at `path`, removing the pool afterwards in every case.
pub(crate) fn child(
    path: &Path,
    task: &worker::Task,
    timeout: Duration,
) -> Result<(String, Option<layout::Chunks>)> {
    let task = worker::Task {
        pool: path.to_path_buf(),
        ..task.clone()
    };
    let json = serde_json::to_string(&task)
        .map_err(|e| Error::system(format!("cannot encode the worker's task: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::system(format!("cannot find memsight's binary: {e}")))?;
    let _ = std::fs::remove_file(path);
    let mut c = Command::new(exe);
    c.arg("pmem-worker")
        .arg("--task")
        .arg(json)
        .env("PMEM_IS_PMEM_FORCE", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut proc = c
        .spawn()
        .map_err(|e| Error::system(format!("cannot start the PMDK worker: {e}")))?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = proc.try_wait().map_err(|e| Error::system(e.to_string()))? {
            break Some(s);
        }
        if t0.elapsed() > timeout || cancel::requested() {
            let _ = proc.kill();
            let _ = proc.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = proc
        .wait_with_output()
        .map_err(|e| Error::system(e.to_string()))?;
    let chunks = (status.as_ref().is_some_and(|s| s.success()))
        .then(|| layout::read(path))
        .flatten();
    let _ = std::fs::remove_file(path);
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    match status {
        None if cancel::requested() => Err(Error::Interrupted),
        None => Err(Error::input(format!(
            "the PMDK worker did not finish in {:.0} s",
            timeout.as_secs_f64()
        ))),
        Some(s) if s.success() => Ok((String::from_utf8_lossy(&out.stdout).into_owned(), chunks)),
        Some(s) => {
            use std::os::unix::process::ExitStatusExt;
            Err(Error::input(match s.signal() {
                Some(sig) => format!("PMDK crashed in the worker (signal {sig}): {stderr}"),
                None => stderr
                    .strip_prefix("memsight: error: ")
                    .unwrap_or(&stderr)
                    .to_string(),
            }))
        }
    }
}

/// Fills a pool once; with `class`, through that custom class.
pub fn fill(
    path: &Path,
    pool: u64,
    size: u64,
    class: Option<&ClassDesc>,
    timeout: Duration,
) -> Result<Fill> {
    let task = worker::Task {
        task: worker::TaskKind::Fill,
        pool_size: pool,
        object_size: size as usize,
        class_unit: class.map(|c| c.unit_size),
        class_units_per_block: class.map_or(0, |c| c.units_per_block),
        class_header: class.map_or(2, |c| c.header_type),
        class_alignment: class.map_or(0, |c| c.alignment),
        ..Default::default()
    };
    let (out, chunks) = child(path, &task, timeout)?;
    let r: FillReport = serde_json::from_str(out.trim()).map_err(|e| {
        Error::system(format!(
            "the PMDK worker said something unexpected ({e}): {out}"
        ))
    })?;
    let mut b = Breakdown {
        objects_bytes: r.objects * size,
        ..Default::default()
    };
    if let Some(c) = &r.class {
        let h = header_bytes(c.header_type);
        let units = (size + h).div_ceil(c.unit_size.max(1) as u64);
        b.header_bytes = r.objects * h;
        b.rounding_bytes = r.objects * (units * c.unit_size as u64 - size - h);
    }
    if let Some(ch) = &chunks {
        b.run_metadata_bytes = Some(ch.run_metadata_bytes);
        b.empty_slot_bytes = Some(ch.empty_slot_bytes);
        b.free_chunk_bytes = Some(ch.free_bytes);
    }
    let accounted = b.objects_bytes
        + b.header_bytes
        + b.rounding_bytes
        + b.run_metadata_bytes.unwrap_or(0)
        + b.empty_slot_bytes.unwrap_or(0)
        + b.free_chunk_bytes.unwrap_or(0);
    b.other_bytes = pool.saturating_sub(accounted);
    Ok(Fill {
        object_bytes: size,
        objects: r.objects,
        utilisation: (r.objects * size) as f64 / pool as f64,
        class: r.class.as_ref().map(Class::of),
        custom_class: class.is_some(),
        usable_bytes: r.usable_size.map(|u| u as u64),
        breakdown: b,
        seconds: r.seconds,
    })
}

fn pool_dir(a: &PmemSettings) -> Result<(PathBuf, bool)> {
    let dir = match (&a.pool, &a.dir) {
        (Some(p), _) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or(PathBuf::from("."), Path::to_path_buf),
        (None, Some(d)) => d.clone(),
        (None, None) if Path::new("/dev/shm").is_dir() => PathBuf::from("/dev/shm"),
        (None, None) => std::env::temp_dir(),
    };
    if !dir.is_dir() {
        return Err(Error::input(format!(
            "pool directory {} does not exist",
            dir.display()
        )));
    }
    // A DAX-mounted file system says so in /proc/mounts.
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let canon = dir.canonicalize().unwrap_or(dir.clone());
    let dax = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 3).then(|| (f[1].to_string(), f[3].contains("dax")))
        })
        .filter(|(m, _)| canon.starts_with(m))
        .max_by_key(|(m, _)| m.len())
        .is_some_and(|(_, dax)| dax);
    Ok((dir, !dax))
}

/// The pool file every task uses in turn (refused when it exists), after checking that the
/// directory has room and PMDK loads.
fn pool_path(a: &PmemSettings, dir: &Path) -> Result<PathBuf> {
    let pool = a.pool_bytes;
    if let Some(free) = memsight_kernels::pmemobj::free_space(dir)
        && free < pool + (64 << 20)
    {
        return Err(Error::input(format!(
            "{} has {} free, not enough for a {} pool: choose --dir or a smaller --pool-size",
            dir.display(),
            format_bytes(free),
            format_bytes(pool)
        )));
    }
    // PMDK must be loadable here (the worker loads it too; this gives the message up front).
    memsight_kernels::pmemobj::Lib::load().map_err(worker::pmdk)?;
    match &a.pool {
        Some(p) if p.exists() => Err(Error::input(format!(
            "{} exists: memsight creates a fresh pool for every fill and never reuses or overwrites a file (an existing pool or not); name a path that does not exist, or use --dir",
            p.display()
        ))),
        Some(p) => Ok(p.clone()),
        None => Ok(dir.join(format!("memsight-pool-{}", std::process::id()))),
    }
}

/// The pool's allocation-class table, as PMDK reports it for a fresh pool.
fn class_table(path: &Path, pool: u64, timeout: Duration) -> Result<Vec<Class>> {
    let task = worker::Task {
        task: worker::TaskKind::Classes,
        pool_size: pool,
        ..Default::default()
    };
    let (out, _) = child(path, &task, timeout)?;
    let descs: Vec<ClassDesc> = serde_json::from_str(out.trim()).map_err(|e| {
        Error::system(format!(
            "the PMDK worker said something unexpected ({e}): {out}"
        ))
    })?;
    Ok(descs.iter().map(Class::of).collect())
}

/// Runs `step` for each item until Ctrl-C; false when interrupted (also when the stop cut the
/// item's worker short: the items before it are kept).
fn each<T, R>(
    items: &[T],
    out: &mut Vec<R>,
    mut step: impl FnMut(&T) -> Result<R>,
) -> Result<bool> {
    for x in items {
        if cancel::requested() {
            return Ok(false);
        }
        match step(x) {
            Ok(r) => out.push(r),
            Err(_) if cancel::requested() => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Runs the study.
pub fn run(a: &PmemSettings, _env: &Environment, tick: Tick<'_>) -> Result<Completed<PmemResults>> {
    check(a)?;
    let pool = a.pool_bytes;
    let (dir, emulated) = pool_dir(a)?;
    let path = pool_path(a, &dir)?;
    let timeout = Duration::from_secs(600);
    let mut r = PmemResults {
        method: method(a, &dir, emulated),
        pool_dir: dir.display().to_string(),
        pool_bytes: pool,
        emulated,
        fills: Vec::new(),
        search: Vec::new(),
        concurrency: Vec::new(),
        classes: Vec::new(),
        custom: Vec::new(),
        volume: Vec::new(),
        findings: Vec::new(),
    };
    if a.classes {
        tick("allocation classes");
        list_classes(&mut r, &path, timeout)?;
        return Ok(Completed::new(r, true));
    }
    let mut complete = each(&a.sizes, &mut r.fills, |&s| {
        tick(&format!("fill {}", format_bytes(s)));
        fill(&path, pool, s, None, timeout)
    })?;
    if let Some(c) = &a.custom
        && complete
    {
        complete = each(&a.sizes, &mut r.custom, |&s| {
            tick(&format!("custom class, fill {}", format_bytes(s)));
            fill(&path, pool, s, Some(c), timeout)
        })?;
    }
    if a.search && complete {
        let fills = r.fills.clone();
        complete = each(&fills, &mut r.search, |f| {
            tick(&format!("search {}", format_bytes(f.object_bytes)));
            Ok(search::search(&path, pool, f, a.verify, timeout))
        })?;
    }
    if a.concurrency && complete {
        complete = each(&a.strategies, &mut r.concurrency, |s| {
            tick(&format!("concurrency {}", s.name()));
            Ok(study(&path, pool, a, s.name(), &a.mixed_sizes, timeout))
        })?;
    }
    if a.volume && complete {
        let (merged, finished) = volume_rounds(a, &path, tick);
        r.volume = merged;
        complete = finished;
    }
    r.findings = judge(&r.fills, &r.search, &r.concurrency);
    r.findings.extend(custom_findings(&r.fills, &r.custom));
    r.findings.extend(volume::findings(&r.volume));
    Ok(Completed::new(r, complete))
}

/// `--classes`: the pool's class table and its one finding, instead of the study.
fn list_classes(r: &mut PmemResults, path: &Path, timeout: Duration) -> Result<()> {
    r.classes = class_table(path, r.pool_bytes, timeout)?;
    r.findings.push(
        format!(
            "{} allocation classes in a fresh pool of {}",
            r.classes.len(),
            format_bytes(r.pool_bytes)
        )
        .into(),
    );
    Ok(())
}

/// The volume workload's rounds, one result per strategy (its median round); false when
/// interrupted. Strategies alternate within each round, so a neighbour's burst falls on all
/// of them.
fn volume_rounds(
    a: &PmemSettings,
    path: &Path,
    tick: Tick<'_>,
) -> (Vec<volume::VolumeResult>, bool) {
    let mut complete = true;
    let mut rounds: Vec<Vec<volume::VolumeResult>> = vec![Vec::new(); a.strategies.len()];
    'rounds: for round in 0..a.volume_rounds {
        for (i, s) in a.strategies.iter().enumerate() {
            if cancel::requested() {
                complete = false;
                break 'rounds;
            }
            tick(&format!(
                "volume workload {}, round {}",
                s.name(),
                round + 1
            ));
            rounds[i].push(volume::run(path, a, s.name()));
        }
    }
    let merged = rounds.into_iter().filter_map(volume::merge).collect();
    (merged, complete)
}

/// How the study ran, in words.
fn method(a: &PmemSettings, dir: &Path, emulated: bool) -> String {
    let medium = if emulated {
        "emulated: not a DAX file system, PMEM_IS_PMEM_FORCE=1"
    } else {
        "DAX file system"
    };
    if a.classes {
        return format!(
            "the allocation classes of a fresh libpmemobj pool of {} in {} ({medium}), as PMDK reads them back (pmemobj_ctl_get of heap.alloc_class.N.desc for every id); the pool is removed afterwards",
            format_bytes(a.pool_bytes),
            dir.display(),
        );
    }
    let mut m = format!(
        "libpmemobj pools of {} in {} ({}), one fresh pool per fill, removed afterwards; fill = pmemobj_xalloc until PMDK refuses; utilisation = objects × size ÷ pool size; the class is PMDK's (matched by the usable size) or the custom one; where the rest went: headers and unit rounding by arithmetic, runs and free chunks from `pmempool info` when installed",
        format_bytes(a.pool_bytes),
        dir.display(),
        if emulated {
            "emulated: not a DAX file system, PMEM_IS_PMEM_FORCE=1"
        } else {
            "DAX file system"
        }
    );
    if a.concurrency {
        let sizes: Vec<String> = a.mixed_sizes.iter().map(|&s| format_bytes(s)).collect();
        m += &format!(
            "; concurrency: {} allocating threads keep {:.0}% of the pool live with objects of {} ({}), {} freeing threads free random objects while the live bytes are above 90% of that, {:.0} s per strategy; a failure is an allocation the thread's arena refused, classed by allocating the same size in every other arena (kept by the retry strategy, freed at once otherwise): imbalance where one could, exhaustion where none could; free at failure = 1 − live bytes ÷ pool",
            a.alloc_threads,
            100.0 * a.live_fraction,
            sizes.join(", "),
            match a.class_runs() {
                0 => "PMDK's built-in classes".to_string(),
                r => format!(
                    "a class per size, one object per unit, no header, runs of about {}",
                    format_bytes(r)
                ),
            },
            a.free_threads,
            a.seconds
        );
    }
    if a.volume {
        m += &format!(
            "; volume workload: {} allocating and {} freeing threads, objects of every power of two from {} to {} (each up to {} from a class of its own: one unit, no header; larger ones whole chunks), {}, {} per batch, each batch freed in one transaction (pmemobj_tx_free), until {} were allocated and freed; time to finish per strategy (limit {:.0} s), the median of {} rounds in which the strategies alternate",
            a.alloc_threads,
            a.free_threads,
            format_bytes(a.volume_min),
            format_bytes(
                volume::sizes(a.volume_min, a.volume_max, a.pool_bytes)
                    .last()
                    .copied()
                    .unwrap_or(a.volume_min)
            ),
            format_bytes(worker::RUN_CLASS_MAX as u64),
            if a.volume_zero {
                "every object zeroed and persisted by PMDK (POBJ_XALLOC_ZERO)"
            } else {
                "objects not written (allocator metadata and logs only)"
            },
            a.batch,
            format_bytes(a.volume_bytes()),
            a.volume_seconds,
            a.volume_rounds
        );
    }
    m
}

fn study(
    path: &Path,
    pool: u64,
    a: &PmemSettings,
    strategy: &str,
    sizes: &[u64],
    timeout: Duration,
) -> StrategyResult {
    let task = worker::Task {
        task: worker::TaskKind::Concurrency,
        pool_size: pool,
        strategy: strategy.into(),
        alloc_threads: a.alloc_threads,
        free_threads: a.free_threads,
        live_fraction: a.live_fraction,
        seconds: a.seconds,
        seed: a.seed,
        sizes: sizes.iter().map(|&s| s as usize).collect(),
        class_run_bytes: a.class_runs(),
        ..Default::default()
    };
    let empty = |e: String| StrategyResult {
        strategy: strategy.into(),
        allocations: 0,
        failures: 0,
        rescued: 0,
        imbalance: 0,
        exhausted: 0,
        free_at_failure: None,
        failure_rate: 0.0,
        allocations_per_s: 0.0,
        arenas: None,
        error: Some(e),
    };
    match child(path, &task, timeout) {
        Err(e) => empty(e.to_string()),
        Ok((out, _)) => match serde_json::from_str::<ConcurrencyReport>(out.trim()) {
            Err(e) => empty(format!("unexpected worker output ({e})")),
            Ok(r) => StrategyResult {
                strategy: strategy.into(),
                allocations: r.allocations,
                failures: r.failures,
                rescued: r.rescued,
                imbalance: r.imbalance,
                exhausted: r.exhausted,
                free_at_failure: results::FreeAtFailure::of(&r.free_at_failure),
                failure_rate: r.failures as f64 / (r.allocations + r.failures).max(1) as f64,
                allocations_per_s: r.allocations as f64 / r.seconds.max(1e-9),
                arenas: r.arenas,
                error: None,
            },
        },
    }
}
