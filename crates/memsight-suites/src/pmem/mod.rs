//! `memsight pmem`: how much of a libpmemobj pool objects of one size can use, why, which custom
//! allocation class does better, and how arena strategies change concurrent allocation failures
//! (MemVerge's PMDK talk's (Li and Kang, 2019) experiments, run rather than assumed).
//!
//! Every PMDK call happens in a child process (`pmem-worker`) on a fresh pool file that memsight
//! removes afterwards, whatever happened; the child gets `PMEM_IS_PMEM_FORCE=1` so an emulated pool
//! (a file on /dev/shm or any file system) flushes with CPU instructions instead of msync.

pub mod layout;
pub mod search;
pub mod worker;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use memsight_core::env::Environment;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use memsight_kernels::pmemobj::{ClassDesc, MIN_POOL, header_bytes, header_name};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How concurrent allocations are spread over PMDK's arenas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
pub struct Config {
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
    pub seconds: f64,
    pub seed: u64,
}

impl Default for Config {
    /// MemVerge's PMDK talk (Li and Kang, 2019) filled a 4225761280-byte pool with these seven
    /// sizes; the default pool is 1 GiB so that the study runs anywhere.
    fn default() -> Self {
        const K: u64 = 1024;
        Config {
            dir: None,
            pool: None,
            pool_bytes: 1 << 30,
            sizes: vec![512, 4 * K, 16 * K, 64 * K, 256 * K, K * K, 2 * K * K],
            search: false,
            verify: 3,
            concurrency: false,
            strategies: Strategy::ALL.to_vec(),
            alloc_threads: 4,
            free_threads: 2,
            mixed_sizes: vec![4 * K, 64 * K, 256 * K, K * K],
            live_fraction: 0.6,
            seconds: 3.0,
            seed: 1,
        }
    }
}
use worker::{ConcurrencyReport, FillReport};

/// An allocation class as reported.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Class {
    pub id: u32,
    pub unit_size: u64,
    pub units_per_block: u32,
    pub alignment: u64,
    pub header: String,
}

impl Class {
    fn of(d: &ClassDesc) -> Self {
        Class {
            id: d.class_id,
            unit_size: d.unit_size as u64,
            units_per_block: d.units_per_block,
            alignment: d.alignment as u64,
            header: header_name(d.header_type).into(),
        }
    }
}

/// Where a pool's bytes went.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Breakdown {
    pub objects_bytes: u64,
    /// Allocation headers.
    pub header_bytes: u64,
    /// Units rounded up past header + object.
    pub rounding_bytes: u64,
    /// From `pmempool info`: bytes in runs beyond their slots (run header, bitmap, tail).
    pub run_metadata_bytes: Option<u64>,
    /// From `pmempool info`: slots of runs that stayed empty (partly filled runs, bitmap limits).
    pub empty_slot_bytes: Option<u64>,
    /// From `pmempool info`: whole chunks left free (stranded: too small for another run or object).
    pub free_chunk_bytes: Option<u64>,
    /// Pool header, zone and chunk headers, and what is not accounted above.
    pub other_bytes: u64,
}

/// One fill of a fresh pool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Fill {
    pub object_bytes: u64,
    pub objects: u64,
    /// objects × size ÷ pool size.
    pub utilisation: f64,
    pub class: Option<Class>,
    pub custom_class: bool,
    pub usable_bytes: Option<u64>,
    pub breakdown: Breakdown,
    pub seconds: f64,
}

/// The best custom class found for a size.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    pub object_bytes: u64,
    pub default_utilisation: Option<f64>,
    /// Candidates verified by a fill: predicted vs measured utilisation.
    pub verified: Vec<(Class, f64, Option<f64>)>,
    pub best: Option<Fill>,
    /// Candidates whose fill fell short of the arithmetic, or PMDK rejected: what the quirks were.
    pub quirks: Vec<String>,
    /// The C to use.
    pub ctl_set: Option<String>,
}

/// One strategy of the concurrency study.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StrategyResult {
    pub strategy: String,
    pub allocations: u64,
    pub failures: u64,
    pub rescued: u64,
    pub failure_rate: f64,
    pub allocations_per_s: f64,
    pub arenas: Option<u32>,
    pub error: Option<String>,
}

/// The command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PmemResults {
    pub method: String,
    pub pool_dir: String,
    pub pool_bytes: u64,
    pub emulated: bool,
    pub fills: Vec<Fill>,
    pub search: Vec<SearchResult>,
    pub concurrency: Vec<StrategyResult>,
    pub findings: Vec<String>,
}

/// Runs one worker task on a fresh pool at `path`, removing the pool afterwards in every case.
fn child(
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
        None if cancel::requested() => Err(Error::input("interrupted")),
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

fn pool_dir(a: &Config) -> Result<(PathBuf, bool)> {
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

/// Refuses a config PMDK or the study cannot work with, in one line naming the option.
fn check(a: &Config) -> Result<()> {
    let pool = a.pool_bytes;
    if pool < MIN_POOL {
        return Err(Error::input(format!(
            "--pool-size {}: PMDK's minimum pool is {}",
            format_bytes(pool),
            format_bytes(MIN_POOL)
        )));
    }
    let sizes = &a.sizes;
    if let Some(bad) = sizes.iter().find(|&&s| s == 0 || s > pool / 2) {
        return Err(Error::input(format!(
            "--sizes: {} is not a usable object size for a {} pool (1 B … half the pool)",
            format_bytes(*bad),
            format_bytes(pool)
        )));
    }
    if sizes.is_empty() || a.mixed_sizes.is_empty() {
        return Err(Error::input(
            "--sizes and --mixed-sizes need at least one size",
        ));
    }
    if a.alloc_threads == 0 || a.alloc_threads > 1024 || a.free_threads > 1024 {
        return Err(Error::input(
            "--alloc-threads must be 1 … 1024, --free-threads 0 … 1024",
        ));
    }
    if !(0.05..=0.95).contains(&a.live_fraction) {
        return Err(Error::input("--live-fraction must be within 0.05 … 0.95"));
    }
    Ok(())
}

/// Runs the study.
pub fn run(
    a: &Config,
    _env: &Environment,
    tick: &(dyn Fn(&str) + Sync),
) -> Result<(PmemResults, bool)> {
    check(a)?;
    let pool = a.pool_bytes;
    let sizes = a.sizes.clone();
    let mixed = a.mixed_sizes.clone();
    let strategies: Vec<&str> = a.strategies.iter().map(|s| s.name()).collect();
    let (dir, emulated) = pool_dir(a)?;
    if let Some(free) = memsight_kernels::pmemobj::free_space(&dir)
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
    let path = match &a.pool {
        Some(p) => {
            if p.exists() {
                return Err(Error::input(format!(
                    "{} exists: memsight creates a fresh pool for every fill and never reuses or overwrites a file (an existing pool or not); name a path that does not exist, or use --dir",
                    p.display()
                )));
            }
            p.clone()
        }
        None => dir.join(format!("memsight-pool-{}", std::process::id())),
    };
    let timeout = Duration::from_secs(600);
    let mut fills = Vec::new();
    let mut complete = true;
    for &s in &sizes {
        if cancel::requested() {
            complete = false;
            break;
        }
        tick(&format!("fill {}", format_bytes(s)));
        fills.push(fill(&path, pool, s, None, timeout)?);
    }
    let mut searches = Vec::new();
    if a.search {
        for f in &fills {
            if cancel::requested() {
                complete = false;
                break;
            }
            tick(&format!("search {}", format_bytes(f.object_bytes)));
            searches.push(search::search(&path, pool, f, a.verify, timeout));
        }
    }
    let mut concurrency = Vec::new();
    if a.concurrency {
        for &strategy in &strategies {
            if cancel::requested() {
                complete = false;
                break;
            }
            tick(&format!("concurrency {strategy}"));
            concurrency.push(study(&path, pool, a, strategy, &mixed, timeout));
        }
    }
    let findings = judge(&fills, &searches, &concurrency);
    let method = format!(
        "libpmemobj pools of {} in {} ({}), one fresh pool per fill, removed afterwards; fill = pmemobj_xalloc until PMDK refuses; utilisation = objects × size ÷ pool size; the class is PMDK's (matched by the usable size) or the custom one; where the rest went: headers and unit rounding by arithmetic, runs and free chunks from `pmempool info` when installed",
        format_bytes(pool),
        dir.display(),
        if emulated {
            "emulated: not a DAX file system, PMEM_IS_PMEM_FORCE=1"
        } else {
            "DAX file system"
        }
    );
    Ok((
        PmemResults {
            method,
            pool_dir: dir.display().to_string(),
            pool_bytes: pool,
            emulated,
            fills,
            search: searches,
            concurrency,
            findings,
        },
        complete,
    ))
}

fn study(
    path: &Path,
    pool: u64,
    a: &Config,
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
        ..Default::default()
    };
    let empty = |e: String| StrategyResult {
        strategy: strategy.into(),
        allocations: 0,
        failures: 0,
        rescued: 0,
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
                failure_rate: r.failures as f64 / (r.allocations + r.failures).max(1) as f64,
                allocations_per_s: r.allocations as f64 / r.seconds.max(1e-9),
                arenas: r.arenas,
                error: None,
            },
        },
    }
}

fn judge(fills: &[Fill], searches: &[SearchResult], conc: &[StrategyResult]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(worst) = fills
        .iter()
        .min_by(|a, b| a.utilisation.total_cmp(&b.utilisation))
    {
        out.push(format!(
            "lowest utilisation: {} objects fill {:.1}% of the pool{}",
            format_bytes(worst.object_bytes),
            worst.utilisation * 100.0,
            worst.class.as_ref().map_or(String::new(), |c| format!(
                " (class {}: {} B units, {} per run, {} header)",
                c.id, c.unit_size, c.units_per_block, c.header
            ))
        ));
    }
    for s in searches {
        if let (Some(d), Some(b)) = (s.default_utilisation, &s.best)
            && b.utilisation > d + 0.005
        {
            out.push(format!(
                "{}: a custom class raises utilisation from {:.1}% to {:.1}%",
                format_bytes(s.object_bytes),
                d * 100.0,
                b.utilisation * 100.0
            ));
        }
    }
    let base = conc
        .iter()
        .find(|c| c.strategy == "default" && c.error.is_none());
    for c in conc.iter().filter(|c| c.error.is_none()) {
        if c.failures > 0 || base.is_some_and(|b| b.failures > 0) {
            out.push(format!(
                "{}: {} of {} allocations failed while the pool was below its live target ({:.3}%), {:.0} allocations/s{}",
                c.strategy,
                c.failures,
                c.allocations + c.failures,
                c.failure_rate * 100.0,
                c.allocations_per_s,
                if c.rescued > 0 { format!(", {} rescued by another arena", c.rescued) } else { String::new() }
            ));
        }
    }
    out
}
