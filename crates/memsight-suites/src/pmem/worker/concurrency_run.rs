//! The concurrency study's threads: allocating ones that keep the pool at a live fraction,
//! freeing ones that free random objects, counting failures by their cause.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_kernels::pmemobj::{Oid, Pool};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

use super::{ConcurrencyReport, Task, retry_other_arenas};

/// What the concurrency run's threads share: the pool set up for the strategy, and the counts
/// they add to, read once when every thread has ended.
pub(super) struct ConcurrencyRun<'p> {
    pool: &'p Pool<'p>,
    a: &'p Task,
    flags: Vec<u64>,
    per_size_arena: Vec<u32>,
    single: Option<u32>,
    /// Live bytes the allocating threads keep the pool at.
    target: u64,
    live: AtomicU64,
    allocations: AtomicU64,
    failures: AtomicU64,
    rescued: AtomicU64,
    imbalance: AtomicU64,
    exhausted: AtomicU64,
    free_at_failure: Vec<AtomicU64>,
    frees: AtomicU64,
    stop: AtomicBool,
    held: Mutex<Vec<(Oid, usize)>>,
    t0: Instant,
    deadline: Duration,
}

impl<'p> ConcurrencyRun<'p> {
    pub(super) fn new(
        pool: &'p Pool<'p>,
        a: &'p Task,
        flags: Vec<u64>,
        per_size_arena: Vec<u32>,
        single: Option<u32>,
    ) -> Self {
        ConcurrencyRun {
            pool,
            a,
            flags,
            per_size_arena,
            single,
            target: (a.pool_size as f64 * a.live_fraction) as u64,
            live: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            rescued: AtomicU64::new(0),
            imbalance: AtomicU64::new(0),
            exhausted: AtomicU64::new(0),
            free_at_failure: (0..=100).map(|_| AtomicU64::new(0)).collect(),
            frees: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            held: Mutex::new(Vec::new()),
            t0: Instant::now(),
            deadline: Duration::from_secs_f64(a.seconds),
        }
    }

    /// Waits out the run's time, then tells every thread to stop.
    pub(super) fn stop_at_deadline(&self) {
        std::thread::sleep(self.deadline);
        self.stop.store(true, Ordering::Relaxed);
    }

    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed) && self.t0.elapsed() < self.deadline
    }

    /// One allocating thread: random sizes while the live bytes are below the target.
    pub(super) fn allocate(&self, t: usize) {
        let (pool, a) = (self.pool, self.a);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(a.seed ^ ((t as u64 + 1) * 0x9E37_79B9));
        if let Some(id) = self.single {
            pool.set_thread_arena(id);
        }
        while self.running() {
            if self.live.load(Ordering::Relaxed) >= self.target {
                std::thread::yield_now();
                continue;
            }
            let k = rng.random_range(0..a.sizes.len());
            let size = a.sizes[k];
            if let Some(&arena) = self.per_size_arena.get(k) {
                pool.set_thread_arena(arena);
            }
            let mut got = pool.xalloc(size, self.flags[k]);
            if got.is_none() {
                got = self.refused(size, self.flags[k]);
            }
            match got {
                Some(oid) => {
                    self.allocations.fetch_add(1, Ordering::Relaxed);
                    self.live.fetch_add(size as u64, Ordering::Relaxed);
                    self.held.lock().expect("held").push((oid, size));
                }
                None => std::thread::yield_now(),
            }
        }
    }

    /// Counts a refused allocation, with the pool's free share at the time, and classes it by
    /// whether another arena could serve the size. Returns the retry strategy's rescue.
    pub(super) fn refused(&self, size: usize, flags: u64) -> Option<Oid> {
        let (pool, a) = (self.pool, self.a);
        self.failures.fetch_add(1, Ordering::Relaxed);
        let free = 1.0 - self.live.load(Ordering::Relaxed) as f64 / a.pool_size as f64;
        let pct = (100.0 * free).round().clamp(0.0, 100.0) as usize;
        self.free_at_failure[pct].fetch_add(1, Ordering::Relaxed);
        let mut got = None;
        let elsewhere = if a.strategy == "retry" {
            got = retry_other_arenas(pool, size, flags);
            self.rescued
                .fetch_add(u64::from(got.is_some()), Ordering::Relaxed);
            got.is_some()
        } else {
            // Could another arena have served it? Allocate there, free at once.
            retry_other_arenas(pool, size, flags)
                .map(|oid| pool.free(oid))
                .is_some()
        };
        let kind = if elsewhere {
            &self.imbalance
        } else {
            &self.exhausted
        };
        kind.fetch_add(1, Ordering::Relaxed);
        got
    }

    /// One freeing thread: random live objects while the live bytes are above 90% of the target.
    pub(super) fn free(&self, t: usize) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.a.seed ^ 0xF00D ^ t as u64);
        while self.running() {
            // Free while above 90% of the target, keeping the pool near the live fraction.
            if self.live.load(Ordering::Relaxed) < self.target / 10 * 9 {
                std::thread::yield_now();
                continue;
            }
            let victim = {
                let mut h = self.held.lock().expect("held");
                if h.is_empty() {
                    None
                } else {
                    let i = rng.random_range(0..h.len());
                    Some(h.swap_remove(i))
                }
            };
            if let Some((oid, size)) = victim {
                self.pool.free(oid);
                self.live.fetch_sub(size as u64, Ordering::Relaxed);
                self.frees.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(super) fn report(self) -> ConcurrencyReport {
        ConcurrencyReport {
            allocations: self.allocations.into_inner(),
            failures: self.failures.into_inner(),
            rescued: self.rescued.into_inner(),
            imbalance: self.imbalance.into_inner(),
            exhausted: self.exhausted.into_inner(),
            free_at_failure: self
                .free_at_failure
                .into_iter()
                .map(AtomicU64::into_inner)
                .collect(),
            frees: self.frees.into_inner(),
            seconds: self.t0.elapsed().as_secs_f64(),
            live_bytes_at_end: self.live.into_inner(),
            arenas: self.pool.arenas(),
        }
    }
}
