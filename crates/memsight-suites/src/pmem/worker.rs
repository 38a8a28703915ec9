//! The PMDK work itself, run in a child process (`memsight pmem-worker`) so that a crash inside
//! PMDK ends the child, not memsight, and so the child can be given `PMEM_IS_PMEM_FORCE=1`
//! (flush with CPU instructions instead of msync on a file that is not real PMEM).

mod concurrency_run;
mod volume_run;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use concurrency_run::ConcurrencyRun;
use memsight_core::{Error, Result};
use memsight_kernels::pmemobj::{ClassDesc, Lib, Oid, PmdkError, Pool, XALLOC_ZERO, class_flag};
use serde::{Deserialize, Serialize};
use volume_run::VolumeRun;

/// What a worker does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskKind {
    /// Fill a fresh pool with one object size until PMDK refuses.
    #[default]
    Fill,
    /// Allocating and freeing threads under one arena strategy.
    Concurrency,
    /// MemVerge's workload: allocating threads and transactionally freeing threads until a
    /// total volume was allocated, timed.
    Volume,
    /// The pool's allocation-class table.
    Classes,
}

/// One task for the worker process (`memsight pmem-worker --task JSON`): the parent passes it
/// as JSON, so both sides share this one definition.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Task {
    pub task: TaskKind,
    /// The pool file (set by the parent for every task).
    pub pool: std::path::PathBuf,
    pub pool_size: u64,
    pub object_size: usize,
    pub class_unit: Option<usize>,
    pub class_alignment: usize,
    pub class_units_per_block: u32,
    pub class_header: u32,
    pub sizes: Vec<usize>,
    pub strategy: String,
    pub alloc_threads: usize,
    pub free_threads: usize,
    pub live_fraction: f64,
    pub seconds: f64,
    pub seed: u64,
    /// Volume workload: bytes to allocate in total before stopping.
    #[serde(default)]
    pub volume_bytes: u64,
    /// Volume workload: objects per allocation batch and per freeing transaction.
    #[serde(default)]
    pub batch: usize,
    /// Volume workload: one custom allocation class per object size (as the study did).
    #[serde(default)]
    pub class_per_size: bool,
    /// Volume workload: allocate with POBJ_XALLOC_ZERO.
    #[serde(default)]
    pub zero: bool,
    /// Concurrency study: one class per size whose runs hold about this many bytes (0: PMDK's
    /// built-in classes).
    #[serde(default)]
    pub class_run_bytes: u64,
}

/// What the volume workload reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VolumeReport {
    /// Whether the volume was reached before the time limit.
    pub finished: bool,
    pub seconds: f64,
    pub allocated_bytes: u64,
    pub allocations: u64,
    /// Allocations PMDK refused (each retried until it succeeded or the run ended).
    pub alloc_failures: u64,
    /// Failures that an allocation in another arena satisfied (retry strategy).
    pub rescued: u64,
    /// Freeing transactions that aborted (their batch was retried).
    pub free_failures: u64,
    pub frees: u64,
    /// Sizes whose custom class PMDK refused (they used its built-in classes).
    pub classes_refused: Vec<usize>,
    pub arenas: Option<u32>,
    /// Why an allocating thread gave up before the volume was reached.
    #[serde(default)]
    pub stuck: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FillReport {
    pub objects: u64,
    pub usable_size: Option<usize>,
    /// The class the objects came from (the custom one when given, else the built-in class whose
    /// arithmetic gives the measured usable size).
    pub class: Option<ClassDesc>,
    /// Every class the pool has (built-in ones, and the custom one).
    pub classes: Vec<ClassDesc>,
    pub seconds: f64,
}

/// What a concurrency run reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConcurrencyReport {
    pub allocations: u64,
    /// Allocations the thread's arena refused (the live bytes were below the target).
    pub failures: u64,
    /// Failures that a retry in another arena satisfied (retry strategy).
    pub rescued: u64,
    /// Failures that another arena could have served: the retry's rescues, and for the other
    /// strategies a probe allocation in the other arenas, freed at once. Refused by one arena
    /// while another had room: arena imbalance.
    #[serde(default)]
    pub imbalance: u64,
    /// Failures no arena could serve: the pool had no room for the size (exhaustion).
    #[serde(default)]
    pub exhausted: u64,
    /// Failures by the share of the pool not held by live objects at the time, in whole
    /// percent (index 0 ..= 100).
    #[serde(default)]
    pub free_at_failure: Vec<u64>,
    pub frees: u64,
    pub seconds: f64,
    pub live_bytes_at_end: u64,
    pub arenas: Option<u32>,
}

/// Every class of a pool (ids 0..=254).
pub fn classes(pool: &Pool) -> Vec<ClassDesc> {
    (0..255).filter_map(|i| pool.class(i)).collect()
}

/// The class whose arithmetic yields `usable` for a request of `size`, preferring one unit.
pub fn class_for(classes: &[ClassDesc], size: usize, usable: usize) -> Option<ClassDesc> {
    let fits = |c: &ClassDesc| {
        let h = memsight_kernels::pmemobj::header_bytes(c.header_type) as usize;
        let units = (size + h).div_ceil(c.unit_size.max(1));
        units * c.unit_size - h == usable
    };
    classes
        .iter()
        .filter(|c| fits(c))
        .min_by_key(|c| {
            (size + memsight_kernels::pmemobj::header_bytes(c.header_type) as usize)
                .div_ceil(c.unit_size.max(1))
        })
        .copied()
}

fn custom(a: &Task) -> Option<ClassDesc> {
    a.class_unit.map(|unit| ClassDesc {
        unit_size: unit,
        alignment: a.class_alignment,
        units_per_block: a.class_units_per_block,
        header_type: a.class_header,
        class_id: 0,
    })
}

/// A failed PMDK call as the suite's input error: one line, exit code 2.
pub(super) fn pmdk(e: PmdkError) -> memsight_core::Error {
    memsight_core::Error::input(e.0)
}

/// Fills a fresh pool with objects of one size until PMDK refuses.
pub fn fill(lib: &Lib, path: &Path, a: &Task) -> Result<FillReport> {
    let pool = Pool::create(lib, path, a.pool_size).map_err(pmdk)?;
    let t = Instant::now();
    let class = match custom(a) {
        Some(d) => Some(pool.new_class(d).map_err(pmdk)?),
        None => None,
    };
    let flags = class.map_or(0, |c| class_flag(c.class_id));
    let mut objects = 0u64;
    let mut first: Option<Oid> = None;
    while let Some(oid) = pool.xalloc(a.object_size, flags) {
        first.get_or_insert(oid);
        objects += 1;
    }
    let usable = first.map(|o| pool.usable_size(o));
    let all = classes(&pool);
    let class = class.or_else(|| usable.and_then(|u| class_for(&all, a.object_size, u)));
    Ok(FillReport {
        objects,
        usable_size: usable,
        class,
        classes: all,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// N allocating and M freeing threads at a target live fraction, under a strategy.
pub fn concurrency(lib: &Lib, path: &Path, a: &Task) -> Result<ConcurrencyReport> {
    let pool = Pool::create(lib, path, a.pool_size).map_err(pmdk)?;
    if a.sizes.is_empty() {
        return Err(Error::input("no object sizes"));
    }
    let run_bytes = a.class_run_bytes as usize;
    let largest = if run_bytes > 0 { usize::MAX } else { 0 };
    let (flags, _) = size_classes(&pool, &a.sizes, run_bytes, largest, 0);
    // Arenas for the per-class strategy: one per size (PMDK picks the class by size).
    let (per_size_arena, single) = strategy_arenas(&pool, &a.strategy, a.sizes.len())?;
    let run = ConcurrencyRun::new(&pool, a, flags, per_size_arena, single);
    std::thread::scope(|s| {
        for t in 0..a.alloc_threads {
            let run = &run;
            s.spawn(move || run.allocate(t));
        }
        for t in 0..a.free_threads {
            let run = &run;
            s.spawn(move || run.free(t));
        }
        run.stop_at_deadline();
    });
    Ok(run.report())
}

/// The arenas a strategy binds threads to: one per size for per-class (created first, in size
/// order), one shared by every thread for single.
fn strategy_arenas(pool: &Pool, strategy: &str, sizes: usize) -> Result<(Vec<u32>, Option<u32>)> {
    let per_size = if strategy == "per-class" {
        (0..sizes)
            .map(|_| pool.create_arena().map_err(pmdk))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let single = if strategy == "single" {
        Some(pool.create_arena().map_err(pmdk)?)
    } else {
        None
    };
    Ok((per_size, single))
}

/// One allocation under `strategy`: from the thread's arena (bound per class for per-class),
/// retrying every other arena once for retry. Counts failures and rescues.
fn alloc_one(
    pool: &Pool,
    strategy: &str,
    size: usize,
    flags: u64,
    failures: &AtomicU64,
    rescued: &AtomicU64,
) -> Option<Oid> {
    let got = pool.xalloc(size, flags);
    if got.is_some() {
        return got;
    }
    failures.fetch_add(1, Ordering::Relaxed);
    if strategy == "retry" {
        let again = retry_other_arenas(pool, size, flags);
        if again.is_some() {
            rescued.fetch_add(1, Ordering::Relaxed);
        }
        return again;
    }
    None
}

/// One class per size whose runs hold about `run_bytes` (at least two objects): the object is
/// one unit, no header, page aligned where it is a page multiple, as MemVerge's classes were.
/// Sizes above `largest` get no class (whole chunks from PMDK's default one). Returns each
/// size's allocation flags (`extra` added) and the sizes whose class PMDK refused.
fn size_classes(
    pool: &Pool,
    sizes: &[usize],
    run_bytes: usize,
    largest: usize,
    extra: u64,
) -> (Vec<u64>, Vec<usize>) {
    let mut refused = Vec::new();
    let flags = sizes
        .iter()
        .map(|&size| {
            if size > largest {
                return extra;
            }
            let desc = ClassDesc {
                unit_size: size,
                alignment: if size % 4096 == 0 { 4096 } else { 0 },
                units_per_block: (run_bytes / size).max(2) as u32,
                header_type: memsight_kernels::pmemobj::HEADER_NONE,
                class_id: 0,
            };
            match pool.new_class(desc) {
                Ok(c) => class_flag(c.class_id) | extra,
                Err(_) => {
                    refused.push(size);
                    extra
                }
            }
        })
        .collect();
    (flags, refused)
}

/// The largest object the volume workload gives a run-based class of its own.
pub const RUN_CLASS_MAX: usize = 1 << 20;

/// The volume workload: `alloc_threads` allocate batches of one random power-of-two size
/// each, `free_threads` free whole batches in one transaction each, until `volume_bytes` were
/// allocated and everything is freed, or `seconds` pass. A refused allocation or an aborted
/// freeing transaction is counted and retried; a size the pool refuses while it holds nothing
/// to free ends that thread with the reason.
pub fn volume(lib: &Lib, path: &Path, a: &Task) -> Result<VolumeReport> {
    let pool = Pool::create(lib, path, a.pool_size).map_err(pmdk)?;
    if a.sizes.is_empty() || a.batch == 0 {
        return Err(Error::input("no object sizes or an empty batch"));
    }
    // One class per size where a run can hold it, runs of about 1 MiB (two objects of the
    // largest); larger objects take whole chunks from PMDK's default class, which is what a
    // run-less size gets anyway.
    let zero = if a.zero { XALLOC_ZERO } else { 0 };
    let largest = if a.class_per_size { RUN_CLASS_MAX } else { 0 };
    let (flags, refused) = size_classes(&pool, &a.sizes, RUN_CLASS_MAX, largest, zero);
    let (per_class, single) = strategy_arenas(&pool, &a.strategy, a.sizes.len())?;
    let run = VolumeRun::new(&pool, a, flags, per_class, single);
    std::thread::scope(|s| {
        for t in 0..a.alloc_threads {
            let run = &run;
            s.spawn(move || run.allocate(t));
        }
        for _ in 0..a.free_threads {
            let run = &run;
            s.spawn(move || run.free());
        }
    });
    Ok(run.report(refused))
}

/// The retry strategy: after a failed allocation, try every other arena once, then go back to
/// the thread's own arena.
fn retry_other_arenas(pool: &Pool, size: usize, flags: u64) -> Option<Oid> {
    let home = pool.thread_arena();
    let mut got = None;
    for arena in 1..=pool.arenas().unwrap_or(0) {
        if Some(arena) == home {
            continue;
        }
        pool.set_thread_arena(arena);
        got = pool.xalloc(size, flags);
        if got.is_some() {
            break;
        }
    }
    if let Some(h) = home {
        pool.set_thread_arena(h);
    }
    got
}

/// `memsight pmem-worker`: runs one task and prints its report as one JSON line.
pub fn main(a: &Task) -> Result<()> {
    let lib = Lib::load().map_err(pmdk)?;
    let json = match a.task {
        TaskKind::Fill => serde_json::to_string(&fill(&lib, &a.pool, a)?),
        TaskKind::Concurrency => serde_json::to_string(&concurrency(&lib, &a.pool, a)?),
        TaskKind::Volume => serde_json::to_string(&volume(&lib, &a.pool, a)?),
        TaskKind::Classes => {
            let pool = Pool::create(&lib, &a.pool, a.pool_size).map_err(pmdk)?;
            serde_json::to_string(&classes(&pool))
        }
    }
    .map_err(|e| Error::system(format!("cannot encode: {e}")))?;
    println!("{json}");
    Ok(())
}
