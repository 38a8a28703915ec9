//! The allocator study's workload: seeded, multi-threaded malloc/free traffic whose live heap is
//! known exactly at every moment, run through the C allocator (`malloc`/`free`, so an allocator
//! preloaded with `LD_PRELOAD` serves it).
//!
//! Each thread owns a list of objects and works in phases. A phase first moves the thread's live
//! bytes to the phase's target (freeing random objects, which leaves survivors scattered through
//! the heap, or allocating), then churns: free a random object, allocate until back at the target,
//! so live bytes stay within one object of it. Threads meet at a barrier between phases. The presets differ in the targets and
//! size ranges per phase:
//! - `steady`: every thread holds its share, sizes from the whole range;
//! - `bursty`: in phase p thread p mod T holds half the total live set, the others share the rest
//!   (the total stays constant) — the glibc-arena pattern of Cloudflare's RocksDB study (Vorobev, 2020);
//! - `cross-thread`: every object is freed by the next thread, not the one that allocated it;
//! - `pinning`: phases alternate between holding the share and keeping 1 in `survivors` objects
//!   alive, with the size range growing 4× every two phases (long-lived small objects pin memory
//!   that later, larger objects cannot reuse);
//! - `size-phases`: the share is constant, the size range alternates small and large.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

/// Workload shapes (written `steady`, `cross-thread` … in results).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Preset {
    Steady,
    Bursty,
    CrossThread,
    Pinning,
    SizePhases,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Steady,
        Preset::Bursty,
        Preset::CrossThread,
        Preset::Pinning,
        Preset::SizePhases,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Steady => "steady",
            Preset::Bursty => "bursty",
            Preset::CrossThread => "cross-thread",
            Preset::Pinning => "pinning",
            Preset::SizePhases => "size-phases",
        }
    }

    pub fn parse(s: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// The workload's parameters (recorded as they are in the allocator study's results).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Workload {
    pub preset: Preset,
    pub threads: usize,
    /// Total live bytes the program holds (its "live heap").
    pub live_bytes: u64,
    /// Object sizes are log-uniform in `min_size ..= max_size`.
    pub min_size: usize,
    pub max_size: usize,
    pub phases: usize,
    /// Free + allocate pairs per thread per phase, after reaching the target.
    pub churn: u64,
    /// `pinning`: keep 1 in this many objects when shrinking.
    pub survivors: u64,
    pub seed: u64,
}

/// What one thread does in one phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseShape {
    pub target_bytes: u64,
    pub min_size: usize,
    pub max_size: usize,
}

impl Workload {
    /// The target and size range of thread `t` in phase `p`.
    pub fn shape(&self, t: usize, p: usize) -> PhaseShape {
        let n = self.threads.max(1) as u64;
        let share = self.live_bytes / n;
        let (lo, hi) = (self.min_size, self.max_size);
        match self.preset {
            Preset::Steady | Preset::CrossThread => PhaseShape {
                target_bytes: share,
                min_size: lo,
                max_size: hi,
            },
            Preset::Bursty => {
                let hot = p % self.threads.max(1) == t;
                let target = if n == 1 {
                    share
                } else if hot {
                    self.live_bytes / 2
                } else {
                    self.live_bytes / 2 / (n - 1)
                };
                PhaseShape {
                    target_bytes: target,
                    min_size: lo,
                    max_size: hi,
                }
            }
            Preset::Pinning => {
                let grow = 4usize
                    .checked_pow((p / 2) as u32)
                    .unwrap_or(usize::MAX)
                    .min(1 << 20);
                let (a, b) = ((lo * grow).min(hi), (lo * grow * 4).min(hi).max(lo));
                PhaseShape {
                    target_bytes: if p.is_multiple_of(2) {
                        share
                    } else {
                        share / self.survivors.max(1)
                    },
                    min_size: a.min(b),
                    max_size: b,
                }
            }
            Preset::SizePhases => {
                let small = (lo, (lo * 16).min(hi));
                let large = ((hi / 16).max(lo), hi);
                let (a, b) = if p.is_multiple_of(2) { small } else { large };
                PhaseShape {
                    target_bytes: share,
                    min_size: a,
                    max_size: b,
                }
            }
        }
    }
}

/// One step of a thread's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Allocate `size` bytes.
    Alloc(usize),
    /// Free the object at this index of the thread's list (swap-removed).
    Free(usize),
}

/// A thread's deterministic decisions: object sizes and which object to free, from its seed.
pub struct Plan {
    rng: Xoshiro256PlusPlus,
}

impl Plan {
    pub fn new(seed: u64, thread: usize) -> Self {
        Plan {
            rng: Xoshiro256PlusPlus::seed_from_u64(
                seed ^ (thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        }
    }

    /// A log-uniform size in `lo ..= hi`, rounded to 8 bytes.
    pub fn size(&mut self, lo: usize, hi: usize) -> usize {
        let (l, h) = ((lo.max(8)) as f64, (hi.max(lo).max(8)) as f64);
        let x = (l.ln() + self.rng.random::<f64>() * (h.ln() - l.ln())).exp();
        ((x as usize).clamp(lo.max(8), hi.max(lo).max(8)) + 7) & !7
    }

    /// An index below `n` (n > 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }
}

/// The ops thread `t` performs in phase `p` given what it holds, as the workload decides them
/// (no memory is touched): used by the runner and by the determinism tests.
pub fn phase_ops(
    w: &Workload,
    plan: &mut Plan,
    held: &mut Vec<usize>,
    t: usize,
    p: usize,
) -> Vec<Op> {
    let s = w.shape(t, p);
    let mut live: u64 = held.iter().map(|&x| x as u64).sum();
    let mut ops = Vec::new();
    while live > s.target_bytes && !held.is_empty() {
        let i = plan.pick(held.len());
        live -= held.swap_remove(i) as u64;
        ops.push(Op::Free(i));
    }
    while live < s.target_bytes {
        let size = plan.size(s.min_size, s.max_size);
        held.push(size);
        live += size as u64;
        ops.push(Op::Alloc(size));
    }
    // Churn at constant live bytes: free one object, then allocate until back at the target
    // (live stays within one object of it).
    for _ in 0..w.churn {
        if !held.is_empty() {
            let i = plan.pick(held.len());
            live -= held.swap_remove(i) as u64;
            ops.push(Op::Free(i));
        }
        while live < s.target_bytes {
            let size = plan.size(s.min_size, s.max_size);
            held.push(size);
            live += size as u64;
            ops.push(Op::Alloc(size));
        }
    }
    ops
}

/// An allocated object.
struct Obj {
    ptr: *mut u8,
    size: usize,
}

// SAFETY: an Obj is exclusively owned by whichever list holds it; malloc'd memory may be freed
// by any thread.
unsafe impl Send for Obj {}

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size.max(1), 16).expect("valid layout")
}

fn alloc(size: usize) -> Option<Obj> {
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { System.alloc(layout(size)) };
    if ptr.is_null() {
        return None;
    }
    // Programs write what they allocate: touch every page (and the last byte) so RSS counts it.
    for off in (0..size).step_by(4096).chain(std::iter::once(size - 1)) {
        // SAFETY: off < size, inside the fresh allocation.
        unsafe { ptr.add(off).write(0x5A) };
    }
    Some(Obj { ptr, size })
}

fn free(o: Obj) {
    // SAFETY: o.ptr came from System.alloc with this layout and is freed once (Obj is moved in).
    unsafe { System.dealloc(o.ptr, layout(o.size)) };
}

/// Progress the runner reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseEnd {
    pub phase: usize,
    pub live_bytes: i64,
    pub seconds: f64,
}

/// Totals of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Totals {
    pub ops: u64,
    pub seconds: f64,
    pub peak_live_bytes: i64,
    /// Live bytes after the final free: 0 unless the allocator failed.
    pub final_live_bytes: i64,
    pub failed_allocations: u64,
}

/// What the threads share: the live-byte account and counters, the barrier between phases and,
/// for cross-thread frees, each thread's inbox of objects handed to it.
struct Shared {
    t0: Instant,
    live: AtomicI64,
    peak: AtomicI64,
    ops: AtomicU64,
    failed: AtomicU64,
    barrier: Barrier,
    inboxes: Vec<Mutex<Vec<Obj>>>,
}

impl Shared {
    fn account(&self, delta: i64) {
        let now = self.live.fetch_add(delta, Ordering::Relaxed) + delta;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    /// Frees what other threads handed to thread `t`.
    fn drain_inbox(&self, t: usize) {
        let batch: Vec<Obj> = std::mem::take(&mut *self.inboxes[t].lock().expect("inbox"));
        for o in batch {
            free(o);
        }
    }
}

/// Runs the workload on `w.threads` threads. `phase_end` runs on one thread after every phase
/// (all threads waiting), e.g. to report progress or call `malloc_trim`. Everything is freed at
/// the end, before `freed` is called; the caller decides when the process exits.
pub fn run(
    w: &Workload,
    phase_end: &(dyn Fn(PhaseEnd) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Totals {
    let t0 = Instant::now();
    let threads = w.threads.max(1);
    let shared = Shared {
        t0,
        live: AtomicI64::new(0),
        peak: AtomicI64::new(0),
        ops: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        barrier: Barrier::new(threads),
        inboxes: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
    };
    std::thread::scope(|s| {
        for t in 0..threads {
            let shared = &shared;
            s.spawn(move || worker(w, shared, t, phase_end, stop));
        }
    });
    Totals {
        ops: shared.ops.load(Ordering::Relaxed),
        seconds: t0.elapsed().as_secs_f64(),
        peak_live_bytes: shared.peak.load(Ordering::Relaxed),
        final_live_bytes: shared.live.load(Ordering::Relaxed),
        failed_allocations: shared.failed.load(Ordering::Relaxed),
    }
}

/// Thread `t`'s part: its phases, each ended at the barrier (where one thread reports), then
/// everything it holds freed, and, once every thread has stopped handing objects on, its inbox.
fn worker(
    w: &Workload,
    sh: &Shared,
    t: usize,
    phase_end: &(dyn Fn(PhaseEnd) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) {
    let mut plan = Plan::new(w.seed, t);
    let mut held: Vec<Obj> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut stopped = false;
    for p in 0..w.phases {
        if !stopped {
            for op in phase_ops(w, &mut plan, &mut sizes, t, p) {
                apply(w, sh, t, op, &mut held, &mut sizes);
            }
        }
        if sh.barrier.wait().is_leader() {
            phase_end(PhaseEnd {
                phase: p,
                live_bytes: sh.live.load(Ordering::Relaxed),
                seconds: sh.t0.elapsed().as_secs_f64(),
            });
        }
        sh.barrier.wait();
        stopped = stopped || stop();
    }
    for o in held.drain(..) {
        sh.account(-(o.size as i64));
        free(o);
    }
    sh.barrier.wait();
    sh.drain_inbox(t);
}

/// Carries out one operation of thread `t`'s plan on the objects it holds.
fn apply(w: &Workload, sh: &Shared, t: usize, op: Op, held: &mut Vec<Obj>, sizes: &mut Vec<usize>) {
    match op {
        Op::Free(i) => {
            let o = held.swap_remove(i);
            sh.account(-(o.size as i64));
            if w.preset == Preset::CrossThread {
                // Handed to the next thread, which frees it.
                let next = (t + 1) % sh.inboxes.len();
                sh.inboxes[next].lock().expect("inbox").push(o);
            } else {
                free(o);
            }
        }
        Op::Alloc(size) => match alloc(size) {
            Some(o) => {
                sh.account(size as i64);
                held.push(o);
            }
            None => {
                sh.failed.fetch_add(1, Ordering::Relaxed);
                // Keep `held` and `sizes` in step.
                sizes.pop();
            }
        },
    }
    sh.ops.fetch_add(1, Ordering::Relaxed);
    if w.preset == Preset::CrossThread {
        sh.drain_inbox(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(preset: Preset) -> Workload {
        Workload {
            preset,
            threads: 4,
            live_bytes: 4 << 20,
            min_size: 16,
            max_size: 16 << 10,
            phases: 6,
            churn: 200,
            survivors: 16,
            seed: 42,
        }
    }

    fn trace(w: &Workload, t: usize) -> Vec<Op> {
        let mut plan = Plan::new(w.seed, t);
        let mut held = Vec::new();
        (0..w.phases)
            .flat_map(|p| phase_ops(w, &mut plan, &mut held, t, p))
            .collect()
    }

    #[test]
    fn same_seed_same_sequence_other_seed_other_sequence() {
        for preset in Preset::ALL {
            let a = w(preset);
            assert_eq!(trace(&a, 1), trace(&a, 1), "{preset:?}");
            let b = Workload {
                seed: 43,
                ..a.clone()
            };
            assert_ne!(trace(&a, 1), trace(&b, 1), "{preset:?}");
            assert_ne!(trace(&a, 0), trace(&a, 1), "threads differ");
        }
    }

    #[test]
    fn bursty_keeps_the_total_constant_while_the_hot_thread_moves() {
        let w = w(Preset::Bursty);
        for p in 0..w.phases {
            let total: u64 = (0..w.threads).map(|t| w.shape(t, p).target_bytes).sum();
            assert!(
                total.abs_diff(w.live_bytes) <= w.threads as u64,
                "phase {p}: {total}"
            );
            assert_eq!(w.shape(p % w.threads, p).target_bytes, w.live_bytes / 2);
        }
    }

    #[test]
    fn sizes_stay_in_range_and_are_log_uniform() {
        let mut plan = Plan::new(1, 0);
        let v: Vec<usize> = (0..20000).map(|_| plan.size(16, 65536)).collect();
        assert!(v.iter().all(|&s| (16..=65536).contains(&s) && s % 8 == 0));
        // Log-uniform: about half below the geometric mean (1024).
        let below = v.iter().filter(|&&s| s < 1024).count() as f64 / v.len() as f64;
        assert!((below - 0.5).abs() < 0.03, "{below}");
    }

    #[test]
    fn live_bytes_are_accounted_exactly() {
        for preset in Preset::ALL {
            let w = Workload {
                phases: 4,
                ..w(preset)
            };
            let ends = Mutex::new(Vec::new());
            let totals = run(&w, &|e| ends.lock().unwrap().push(e), &|| false);
            let ends = ends.into_inner().unwrap();
            assert_eq!(ends.len(), w.phases, "{preset:?}");
            // After each phase every thread sits at its target (within one object).
            for e in &ends {
                let target: u64 = (0..w.threads)
                    .map(|t| w.shape(t, e.phase).target_bytes)
                    .sum();
                let slack = (w.threads * w.max_size) as i64 + 64;
                assert!(
                    (e.live_bytes - target as i64).abs() <= slack,
                    "{preset:?} phase {}: live {} target {target}",
                    e.phase,
                    e.live_bytes
                );
            }
            assert_eq!(totals.final_live_bytes, 0, "{preset:?}: everything freed");
            assert_eq!(totals.failed_allocations, 0);
            assert!(totals.peak_live_bytes as u64 >= w.live_bytes / 2);
            assert!(totals.ops > (w.churn * 2 * w.phases as u64));
        }
    }
}
