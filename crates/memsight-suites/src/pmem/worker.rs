//! The PMDK work itself, run in a child process (`memsight pmem-worker`) so that a crash inside
//! PMDK ends the child, not memsight, and so the child can be given `PMEM_IS_PMEM_FORCE=1`
//! (flush with CPU instructions instead of msync on a file that is not real PMEM).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_core::{Error, Result};
use memsight_kernels::pmemobj::{ClassDesc, Lib, Oid, PmdkError, Pool, XALLOC_ZERO, class_flag};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;
use serde::{Deserialize, Serialize};

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
    let sizes: Vec<usize> = a.sizes.clone();
    if sizes.is_empty() {
        return Err(Error::input("no object sizes"));
    }
    let strategy = a.strategy.as_str();
    let run = a.class_run_bytes as usize;
    let (flags, _) = size_classes(&pool, &sizes, run, if run > 0 { usize::MAX } else { 0 }, 0);
    // Arenas for the per-class strategy: one per size (PMDK picks the class by size).
    let per_size_arena: Vec<u32> = if strategy == "per-class" {
        sizes
            .iter()
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
    let target = (a.pool_size as f64 * a.live_fraction) as u64;
    let live = AtomicU64::new(0);
    let allocations = AtomicU64::new(0);
    let failures = AtomicU64::new(0);
    let rescued = AtomicU64::new(0);
    let (imbalance, exhausted) = (AtomicU64::new(0), AtomicU64::new(0));
    let free_at_failure: Vec<AtomicU64> = (0..=100).map(|_| AtomicU64::new(0)).collect();
    let frees = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let held: Mutex<Vec<(Oid, usize)>> = Mutex::new(Vec::new());
    let t0 = Instant::now();
    let deadline = Duration::from_secs_f64(a.seconds);
    std::thread::scope(|s| {
        for t in 0..a.alloc_threads {
            let (pool, sizes, live, held, stop) = (&pool, &sizes, &live, &held, &stop);
            let (allocations, failures, rescued) = (&allocations, &failures, &rescued);
            let (imbalance, exhausted, free_at_failure) =
                (&imbalance, &exhausted, &free_at_failure);
            let (per_size_arena, flags) = (&per_size_arena, &flags);
            s.spawn(move || {
                let mut rng =
                    Xoshiro256PlusPlus::seed_from_u64(a.seed ^ ((t as u64 + 1) * 0x9E37_79B9));
                if let Some(id) = single {
                    pool.set_thread_arena(id);
                }
                while !stop.load(Ordering::Relaxed) && t0.elapsed() < deadline {
                    if live.load(Ordering::Relaxed) >= target {
                        std::thread::yield_now();
                        continue;
                    }
                    let k = rng.random_range(0..sizes.len());
                    let size = sizes[k];
                    if let Some(&arena) = per_size_arena.get(k) {
                        pool.set_thread_arena(arena);
                    }
                    let mut got = pool.xalloc(size, flags[k]);
                    if got.is_none() {
                        failures.fetch_add(1, Ordering::Relaxed);
                        let free = 1.0 - live.load(Ordering::Relaxed) as f64 / a.pool_size as f64;
                        let pct = (100.0 * free).round().clamp(0.0, 100.0) as usize;
                        free_at_failure[pct].fetch_add(1, Ordering::Relaxed);
                        let elsewhere = if a.strategy == "retry" {
                            got = retry_other_arenas(pool, size, flags[k]);
                            rescued.fetch_add(u64::from(got.is_some()), Ordering::Relaxed);
                            got.is_some()
                        } else {
                            // Could another arena have served it? Allocate there, free at once.
                            retry_other_arenas(pool, size, flags[k])
                                .map(|oid| pool.free(oid))
                                .is_some()
                        };
                        let kind = if elsewhere { imbalance } else { exhausted };
                        kind.fetch_add(1, Ordering::Relaxed);
                    }
                    match got {
                        Some(oid) => {
                            allocations.fetch_add(1, Ordering::Relaxed);
                            live.fetch_add(size as u64, Ordering::Relaxed);
                            held.lock().expect("held").push((oid, size));
                        }
                        None => std::thread::yield_now(),
                    }
                }
            });
        }
        for t in 0..a.free_threads {
            let (pool, live, held, stop, frees) = (&pool, &live, &held, &stop, &frees);
            s.spawn(move || {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(a.seed ^ 0xF00D ^ t as u64);
                while !stop.load(Ordering::Relaxed) && t0.elapsed() < deadline {
                    // Free while above 90% of the target, keeping the pool near the live fraction.
                    if live.load(Ordering::Relaxed) < target / 10 * 9 {
                        std::thread::yield_now();
                        continue;
                    }
                    let victim = {
                        let mut h = held.lock().expect("held");
                        if h.is_empty() {
                            None
                        } else {
                            let i = rng.random_range(0..h.len());
                            Some(h.swap_remove(i))
                        }
                    };
                    if let Some((oid, size)) = victim {
                        pool.free(oid);
                        live.fetch_sub(size as u64, Ordering::Relaxed);
                        frees.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        std::thread::sleep(deadline);
        stop.store(true, Ordering::Relaxed);
    });
    Ok(ConcurrencyReport {
        allocations: allocations.into_inner(),
        failures: failures.into_inner(),
        rescued: rescued.into_inner(),
        imbalance: imbalance.into_inner(),
        exhausted: exhausted.into_inner(),
        free_at_failure: free_at_failure
            .into_iter()
            .map(AtomicU64::into_inner)
            .collect(),
        frees: frees.into_inner(),
        seconds: t0.elapsed().as_secs_f64(),
        live_bytes_at_end: live.into_inner(),
        arenas: pool.arenas(),
    })
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
    let strategy = a.strategy.as_str();
    // One class per size where a run can hold it, runs of about 1 MiB (two objects of the
    // largest); larger objects take whole chunks from PMDK's default class, which is what a
    // run-less size gets anyway.
    let zero = if a.zero { XALLOC_ZERO } else { 0 };
    let largest = if a.class_per_size { RUN_CLASS_MAX } else { 0 };
    let (flags, refused) = size_classes(&pool, &a.sizes, RUN_CLASS_MAX, largest, zero);
    let per_class: Vec<u32> = if strategy == "per-class" {
        (0..a.sizes.len())
            .map(|_| pool.create_arena().map_err(pmdk))
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let single = match strategy {
        "single" => Some(pool.create_arena().map_err(pmdk)?),
        _ => None,
    };
    let allocated = AtomicU64::new(0);
    let (allocations, failures, rescued) =
        (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let (frees, free_failures) = (AtomicU64::new(0), AtomicU64::new(0));
    let allocating = AtomicU64::new(a.alloc_threads as u64);
    // Objects allocated and not yet freed: a refusal while it is zero cannot be waited out.
    let live = AtomicU64::new(0);
    let stuck: Mutex<Option<String>> = Mutex::new(None);
    let queue: Mutex<Vec<Vec<Oid>>> = Mutex::new(Vec::new());
    let t0 = Instant::now();
    let limit = Duration::from_secs_f64(a.seconds);
    let late = || t0.elapsed() > limit;
    std::thread::scope(|s| {
        for t in 0..a.alloc_threads {
            let (pool, queue, allocated, allocating) = (&pool, &queue, &allocated, &allocating);
            let (allocations, failures, rescued) = (&allocations, &failures, &rescued);
            let (per_class, flags, late, live, stuck) = (&per_class, &flags, &late, &live, &stuck);
            s.spawn(move || {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(a.seed ^ ((t as u64 + 1) << 32));
                if let Some(id) = single {
                    pool.set_thread_arena(id);
                }
                let mut empty_refusals = 0u32;
                'work: while allocated.load(Ordering::Relaxed) < a.volume_bytes
                    && !late()
                    && stuck.lock().expect("stuck").is_none()
                {
                    let k = rng.random_range(0..a.sizes.len());
                    if let Some(&arena) = per_class.get(k) {
                        pool.set_thread_arena(arena);
                    }
                    let hand_over = |batch: Vec<Oid>| {
                        allocations.fetch_add(batch.len() as u64, Ordering::Relaxed);
                        allocated.fetch_add((batch.len() * a.sizes[k]) as u64, Ordering::Relaxed);
                        queue.lock().expect("queue").push(batch);
                    };
                    // A batch is `a.batch` objects; parts handed over early count towards it.
                    let mut batch = Vec::with_capacity(a.batch);
                    let mut handed = 0;
                    while handed + batch.len() < a.batch {
                        match alloc_one(pool, strategy, a.sizes[k], flags[k], failures, rescued) {
                            Some(oid) => {
                                live.fetch_add(1, Ordering::Relaxed);
                                empty_refusals = 0;
                                batch.push(oid);
                            }
                            None if late() || stuck.lock().expect("stuck").is_some() => {
                                hand_over(batch);
                                break 'work;
                            }
                            // Full: hand over what this batch holds, so the freeing threads
                            // can make room (a thread that kept it could wait forever), and try
                            // again after a pause that leaves them the CPU.
                            None => {
                                if !batch.is_empty() {
                                    handed += batch.len();
                                    hand_over(std::mem::take(&mut batch));
                                }
                                if allocated.load(Ordering::Relaxed) >= a.volume_bytes {
                                    break 'work;
                                }
                                if live.load(Ordering::Relaxed) == 0 {
                                    empty_refusals += 1;
                                }
                                if empty_refusals >= 1000 {
                                    *stuck.lock().expect("stuck") = Some(format!(
                                        "PMDK refused {} objects with nothing left to free (the pool cannot hold one)",
                                        memsight_core::units::format_bytes(a.sizes[k] as u64)
                                    ));
                                    break 'work;
                                }
                                std::thread::sleep(Duration::from_micros(50));
                            }
                        }
                    }
                    hand_over(batch);
                }
                allocating.fetch_sub(1, Ordering::Relaxed);
            });
        }
        for _ in 0..a.free_threads {
            let (pool, queue, allocating, frees, free_failures, late, live) = (
                &pool,
                &queue,
                &allocating,
                &frees,
                &free_failures,
                &late,
                &live,
            );
            s.spawn(move || {
                loop {
                    let batch = queue.lock().expect("queue").pop();
                    match batch {
                        Some(b) => match pool.tx_free_all(&b) {
                            Ok(()) => {
                                frees.fetch_add(b.len() as u64, Ordering::Relaxed);
                                live.fetch_sub(b.len() as u64, Ordering::Relaxed);
                            }
                            Err(_) => {
                                free_failures.fetch_add(1, Ordering::Relaxed);
                                queue.lock().expect("queue").insert(0, b);
                                if late() {
                                    break;
                                }
                                std::thread::sleep(Duration::from_micros(50));
                            }
                        },
                        None if allocating.load(Ordering::Relaxed) == 0 || late() => break,
                        None => std::thread::sleep(Duration::from_micros(50)),
                    }
                }
            });
        }
    });
    let left = queue.into_inner().expect("queue");
    let stuck = stuck.into_inner().expect("stuck");
    Ok(VolumeReport {
        finished: allocated.load(Ordering::Relaxed) >= a.volume_bytes
            && left.is_empty()
            && stuck.is_none(),
        seconds: t0.elapsed().as_secs_f64(),
        allocated_bytes: allocated.into_inner(),
        allocations: allocations.into_inner(),
        alloc_failures: failures.into_inner(),
        rescued: rescued.into_inner(),
        free_failures: free_failures.into_inner(),
        frees: frees.into_inner(),
        classes_refused: refused,
        arenas: pool.arenas(),
        stuck,
    })
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
