//! The PMDK work itself, run in a child process (`memsight pmem-worker`) so that a crash inside
//! PMDK ends the child, not memsight, and so the child can be given `PMEM_IS_PMEM_FORCE=1`
//! (flush with CPU instructions instead of msync on a file that is not real PMEM).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_core::{Error, Result};
use memsight_kernels::pmemobj::{ClassDesc, Lib, Oid, PmdkError, Pool, class_flag};
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
}

/// What a fill reports.
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
    /// Allocations PMDK refused although the live bytes were below the pool's proven capacity.
    pub failures: u64,
    /// Failures that a retry in another arena satisfied (retry strategy).
    pub rescued: u64,
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
    let frees = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let held: Mutex<Vec<(Oid, usize)>> = Mutex::new(Vec::new());
    let t0 = Instant::now();
    let deadline = Duration::from_secs_f64(a.seconds);
    std::thread::scope(|s| {
        for t in 0..a.alloc_threads {
            let (pool, sizes, live, held, stop) = (&pool, &sizes, &live, &held, &stop);
            let (allocations, failures, rescued) = (&allocations, &failures, &rescued);
            let per_size_arena = &per_size_arena;
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
                    let mut got = pool.xalloc(size, 0);
                    if got.is_none() {
                        failures.fetch_add(1, Ordering::Relaxed);
                        if a.strategy == "retry" {
                            got = retry_other_arenas(pool, size);
                            if got.is_some() {
                                rescued.fetch_add(1, Ordering::Relaxed);
                            }
                        }
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
        frees: frees.into_inner(),
        seconds: t0.elapsed().as_secs_f64(),
        live_bytes_at_end: live.into_inner(),
        arenas: pool.arenas(),
    })
}

/// The retry strategy: after a failed allocation, try every other arena once, then go back to
/// the thread's own arena.
fn retry_other_arenas(pool: &Pool, size: usize) -> Option<Oid> {
    let home = pool.thread_arena();
    let mut got = None;
    for arena in 1..=pool.arenas().unwrap_or(0) {
        if Some(arena) == home {
            continue;
        }
        pool.set_thread_arena(arena);
        got = pool.xalloc(size, 0);
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
    }
    .map_err(|e| Error::system(format!("cannot encode: {e}")))?;
    println!("{json}");
    Ok(())
}
