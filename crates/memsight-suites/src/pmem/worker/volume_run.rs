//! The volume workload's threads: allocating ones that hand batches over, freeing ones that
//! free each batch in one transaction.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_kernels::pmemobj::{Oid, Pool};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

use super::{Task, VolumeReport, alloc_one};

/// What the volume workload's threads share: the pool set up for the strategy, the batches
/// waiting to be freed, and the counts, read once when every thread has ended.
pub(super) struct VolumeRun<'p> {
    pool: &'p Pool<'p>,
    a: &'p Task,
    flags: Vec<u64>,
    per_class: Vec<u32>,
    single: Option<u32>,
    allocated: AtomicU64,
    allocations: AtomicU64,
    failures: AtomicU64,
    rescued: AtomicU64,
    frees: AtomicU64,
    free_failures: AtomicU64,
    /// Allocating threads still running: the freeing threads stop once it is zero and the
    /// queue is empty.
    allocating: AtomicU64,
    /// Objects allocated and not yet freed: a refusal while it is zero cannot be waited out.
    live: AtomicU64,
    stuck: Mutex<Option<String>>,
    queue: Mutex<Vec<Vec<Oid>>>,
    t0: Instant,
    limit: Duration,
}

impl<'p> VolumeRun<'p> {
    pub(super) fn new(
        pool: &'p Pool<'p>,
        a: &'p Task,
        flags: Vec<u64>,
        per_class: Vec<u32>,
        single: Option<u32>,
    ) -> Self {
        VolumeRun {
            pool,
            a,
            flags,
            per_class,
            single,
            allocated: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            rescued: AtomicU64::new(0),
            frees: AtomicU64::new(0),
            free_failures: AtomicU64::new(0),
            allocating: AtomicU64::new(a.alloc_threads as u64),
            live: AtomicU64::new(0),
            stuck: Mutex::new(None),
            queue: Mutex::new(Vec::new()),
            t0: Instant::now(),
            limit: Duration::from_secs_f64(a.seconds),
        }
    }

    fn late(&self) -> bool {
        self.t0.elapsed() > self.limit
    }

    fn is_stuck(&self) -> bool {
        self.stuck.lock().expect("stuck").is_some()
    }

    /// One allocating thread: batches of random sizes until the volume is reached, time is up
    /// or a thread is stuck.
    pub(super) fn allocate(&self, t: usize) {
        let a = self.a;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(a.seed ^ ((t as u64 + 1) << 32));
        if let Some(id) = self.single {
            self.pool.set_thread_arena(id);
        }
        let mut empty_refusals = 0u32;
        while self.allocated.load(Ordering::Relaxed) < a.volume_bytes
            && !self.late()
            && !self.is_stuck()
        {
            let k = rng.random_range(0..a.sizes.len());
            if let Some(&arena) = self.per_class.get(k) {
                self.pool.set_thread_arena(arena);
            }
            if !self.batch(k, &mut empty_refusals) {
                break;
            }
        }
        self.allocating.fetch_sub(1, Ordering::Relaxed);
    }

    /// Queues the objects for the freeing threads and counts them as allocated.
    fn hand_over(&self, k: usize, batch: Vec<Oid>) {
        self.allocations
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.allocated
            .fetch_add((batch.len() * self.a.sizes[k]) as u64, Ordering::Relaxed);
        self.queue.lock().expect("queue").push(batch);
    }

    /// Allocates one batch of size `k` and hands it over; false when the thread is to stop.
    fn batch(&self, k: usize, empty_refusals: &mut u32) -> bool {
        let a = self.a;
        let size = a.sizes[k];
        // A batch is `a.batch` objects; parts handed over early count towards it.
        let mut batch = Vec::with_capacity(a.batch);
        let mut handed = 0;
        while handed + batch.len() < a.batch {
            match alloc_one(
                self.pool,
                &a.strategy,
                size,
                self.flags[k],
                &self.failures,
                &self.rescued,
            ) {
                Some(oid) => {
                    self.live.fetch_add(1, Ordering::Relaxed);
                    *empty_refusals = 0;
                    batch.push(oid);
                }
                None if self.late() || self.is_stuck() => {
                    self.hand_over(k, batch);
                    return false;
                }
                // Full: hand over what this batch holds, so the freeing threads can make room
                // (a thread that kept it could wait forever), and try again after a pause that
                // leaves them the CPU.
                None => {
                    if !batch.is_empty() {
                        handed += batch.len();
                        self.hand_over(k, std::mem::take(&mut batch));
                    }
                    if self.allocated.load(Ordering::Relaxed) >= a.volume_bytes {
                        return false;
                    }
                    if self.live.load(Ordering::Relaxed) == 0 {
                        *empty_refusals += 1;
                    }
                    if *empty_refusals >= 1000 {
                        *self.stuck.lock().expect("stuck") = Some(format!(
                            "PMDK refused {} objects with nothing left to free (the pool cannot hold one)",
                            memsight_core::units::format_bytes(size as u64)
                        ));
                        return false;
                    }
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        }
        self.hand_over(k, batch);
        true
    }

    /// One freeing thread: whole batches, one transaction each (an aborted one is put back at
    /// the far end of the queue), until the allocating threads are done and the queue is empty.
    pub(super) fn free(&self) {
        loop {
            let batch = self.queue.lock().expect("queue").pop();
            match batch {
                Some(b) => match self.pool.tx_free_all(&b) {
                    Ok(()) => {
                        self.frees.fetch_add(b.len() as u64, Ordering::Relaxed);
                        self.live.fetch_sub(b.len() as u64, Ordering::Relaxed);
                    }
                    Err(_) => {
                        self.free_failures.fetch_add(1, Ordering::Relaxed);
                        self.queue.lock().expect("queue").insert(0, b);
                        if self.late() {
                            break;
                        }
                        std::thread::sleep(Duration::from_micros(50));
                    }
                },
                None if self.allocating.load(Ordering::Relaxed) == 0 || self.late() => break,
                None => std::thread::sleep(Duration::from_micros(50)),
            }
        }
    }

    pub(super) fn report(self, refused: Vec<usize>) -> VolumeReport {
        let left = self.queue.into_inner().expect("queue");
        let stuck = self.stuck.into_inner().expect("stuck");
        VolumeReport {
            finished: self.allocated.load(Ordering::Relaxed) >= self.a.volume_bytes
                && left.is_empty()
                && stuck.is_none(),
            seconds: self.t0.elapsed().as_secs_f64(),
            allocated_bytes: self.allocated.into_inner(),
            allocations: self.allocations.into_inner(),
            alloc_failures: self.failures.into_inner(),
            rescued: self.rescued.into_inner(),
            free_failures: self.free_failures.into_inner(),
            frees: self.frees.into_inner(),
            classes_refused: refused,
            arenas: self.pool.arenas(),
            stuck,
        }
    }
}
