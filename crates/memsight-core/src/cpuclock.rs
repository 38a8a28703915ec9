//! Did a measuring thread keep its CPU, and did a team work together?
//!
//! A sample is only worth keeping if the thread that took it ran for the whole of it. On shared
//! machines a thread loses its CPU now and then: the guest's scheduler runs something else on it,
//! or the host runs another guest on the vCPU (steal time). Either way wall time goes on while
//! the thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`, the scheduler's `sum_exec_runtime`)
//! stands still, so `wall − cpu` is the time the thread did not run. Host steal shows up there
//! only where the guest kernel accounts it (`CONFIG_PARAVIRT_TIME_ACCOUNTING` with a steal-time
//! clock, as KVM guests have); interrupts only with `CONFIG_IRQ_TIME_ACCOUNTING`. Neither a busy
//! SMT sibling nor a slower clock takes CPU time away, so neither is detected here.
//!
//! A team of threads is timed over the span in which all of them worked, from the earliest start
//! to the latest end ([`TeamClock`]): a thread that starts late cannot make the others' bytes
//! look concurrent with its own.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A sample is disturbed when its thread lost more than this fraction of the wall time…
pub const LOST_FRACTION: f64 = 0.02;
/// …and at least this many ns (below it, clock reads and a timer tick dominate).
pub const LOST_MIN_NS: u64 = 20_000;
/// A team sample is staggered when its threads' starts lie further apart than this fraction of
/// the span (and [`LOST_MIN_NS`]).
pub const SKEW_FRACTION: f64 = 0.02;

/// What disturbed a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Disturbance {
    /// A measuring thread did not run for part of the sample (CPU time < wall time).
    LostCpu,
    /// The team's threads did not start together.
    Staggered,
}

impl Disturbance {
    pub fn describe(self) -> &'static str {
        match self {
            Disturbance::LostCpu => "a measuring thread lost its CPU",
            Disturbance::Staggered => "the team's threads did not start together",
        }
    }
}

/// CPU time the calling thread has run, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on every Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A running stopwatch that also reads the thread's CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    wall: Instant,
    cpu_ns: u64,
}

/// One timed stretch of one thread.
#[derive(Debug, Clone, Copy)]
pub struct Lap {
    pub start: Instant,
    pub wall_ns: u64,
    pub cpu_ns: u64,
}

impl Watch {
    pub fn start() -> Self {
        // CPU time first, wall second: the wall interval then lies inside the CPU interval's
        // reads and cannot come out shorter than the CPU time by the cost of a read.
        let cpu_ns = thread_cpu_ns();
        Watch {
            wall: Instant::now(),
            cpu_ns,
        }
    }

    pub fn stop(&self) -> Lap {
        let wall_ns = self.wall.elapsed().as_nanos() as u64;
        let cpu_ns = thread_cpu_ns().saturating_sub(self.cpu_ns);
        Lap {
            start: self.wall,
            wall_ns: wall_ns.max(1),
            cpu_ns,
        }
    }
}

impl Lap {
    /// Wall time in which the thread did not run, ns.
    pub fn lost_ns(&self) -> u64 {
        self.wall_ns.saturating_sub(self.cpu_ns)
    }

    /// Whether the thread lost enough of its CPU for the sample to be dropped.
    pub fn lost_cpu(&self) -> bool {
        lost_too_much(self.lost_ns(), self.wall_ns)
    }

    pub fn disturbance(&self) -> Option<Disturbance> {
        self.lost_cpu().then_some(Disturbance::LostCpu)
    }
}

fn lost_too_much(lost_ns: u64, wall_ns: u64) -> bool {
    lost_ns > LOST_MIN_NS && lost_ns as f64 > LOST_FRACTION * wall_ns as f64
}

/// Times `f` on the calling thread.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Lap) {
    let w = Watch::start();
    let out = f();
    (out, w.stop())
}

/// Per-thread start and end times of one team sample, in ns since a shared origin.
pub struct TeamClock {
    origin: Instant,
    starts: Vec<AtomicU64>,
    ends: Vec<AtomicU64>,
    lost: Vec<AtomicU64>,
}

/// One team sample as a whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TeamSpan {
    /// Earliest start to latest end, ns: the time the bytes of every thread took together.
    pub ns: f64,
    /// Latest start minus earliest start, ns.
    pub skew_ns: f64,
    /// The most CPU time any one thread lost, ns.
    pub lost_ns: f64,
    /// Whether any thread lost its CPU beyond the tolerance (judged against its own lap).
    pub lost_cpu: bool,
}

impl TeamSpan {
    pub fn disturbance(&self) -> Option<Disturbance> {
        if self.lost_cpu {
            Some(Disturbance::LostCpu)
        } else if self.skew_ns > (LOST_MIN_NS as f64).max(SKEW_FRACTION * self.ns) {
            Some(Disturbance::Staggered)
        } else {
            None
        }
    }
}

impl TeamClock {
    pub fn new(threads: usize) -> Self {
        let zeros = || (0..threads).map(|_| AtomicU64::new(0)).collect();
        TeamClock {
            origin: Instant::now(),
            starts: zeros(),
            ends: zeros(),
            lost: zeros(),
        }
    }

    /// Runs `f` on thread `i` and records its lap as that thread's part of the current sample.
    pub fn time(&self, i: usize, f: impl FnOnce()) {
        let w = Watch::start();
        f();
        self.record(i, &w.stop());
    }

    /// Stores thread `i`'s lap of the current sample.
    pub fn record(&self, i: usize, lap: &Lap) {
        let start = lap.start.saturating_duration_since(self.origin).as_nanos() as u64;
        self.starts[i].store(start, Ordering::SeqCst);
        self.ends[i].store(start + lap.wall_ns, Ordering::SeqCst);
        let flag = if lap.lost_cpu() { 1 << 63 } else { 0 };
        self.lost[i].store(lap.lost_ns() | flag, Ordering::SeqCst);
    }

    /// The span of the sample every thread recorded last. Call after all have recorded (e.g.
    /// after a barrier).
    pub fn span(&self) -> TeamSpan {
        let load = |v: &Vec<AtomicU64>| -> Vec<u64> {
            v.iter().map(|x| x.load(Ordering::SeqCst)).collect()
        };
        let (starts, ends, lost) = (load(&self.starts), load(&self.ends), load(&self.lost));
        let first = starts.iter().copied().min().unwrap_or(0);
        let last_start = starts.iter().copied().max().unwrap_or(0);
        let end = ends.iter().copied().max().unwrap_or(0);
        let mask = (1u64 << 63) - 1;
        TeamSpan {
            ns: end.saturating_sub(first).max(1) as f64,
            skew_ns: last_start.saturating_sub(first) as f64,
            lost_ns: lost.iter().map(|l| l & mask).max().unwrap_or(0) as f64,
            lost_cpu: lost.iter().any(|l| l >> 63 == 1),
        }
    }
}

/// A barrier that spins, so that the threads it releases start within a few hundred ns of each
/// other (a futex wake-up takes tens of µs in a guest, and with span timing that gap would
/// count against the team). After long waits it yields, so an oversubscribed CPU still moves.
/// Inside [`crate::pin::run_team`] it lets go when a member panicked.
pub struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    pub fn new(threads: usize) -> Self {
        SpinBarrier {
            threads: threads.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            // A member that panicked never arrives: leave with the rest of the team (checked now
            // and then, so the release stays a few hundred ns).
            if spins % 256 == 255 {
                crate::teambarrier::leave_if_aborted();
            }
            if spins < 1 << 16 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spin_for(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn a_busy_thread_keeps_its_cpu_and_a_sleeping_one_does_not() {
        // A spinning thread may still be preempted (other tests run beside this one on a shared
        // machine): the best of 20 short laps keeps most of its CPU.
        let busy = (0..20)
            .map(|_| timed(|| spin_for(Duration::from_millis(1))).1)
            .min_by_key(|l| l.lost_ns())
            .unwrap();
        assert!(busy.cpu_ns > 0);
        assert!(busy.lost_ns() < busy.wall_ns / 2, "{busy:?}");
        let (_, asleep) = timed(|| std::thread::sleep(Duration::from_millis(5)));
        assert!(asleep.lost_cpu(), "{asleep:?}");
        assert_eq!(asleep.disturbance(), Some(Disturbance::LostCpu));
    }

    #[test]
    fn tolerance_ignores_tiny_losses() {
        assert!(!lost_too_much(10_000, 100_000));
        assert!(!lost_too_much(30_000, 10_000_000));
        assert!(lost_too_much(300_000, 10_000_000));
    }

    /// One thread leaves late (held back before it starts its stopwatch, as a preempted thread
    /// leaving a barrier is): the span covers both threads' work, so bytes ÷ span can never
    /// exceed what the threads achieve together. Thread 1 starts only once thread 0 has stopped
    /// its watch, so the ordering holds however late either thread is scheduled on a busy
    /// machine: no sleep decides it.
    #[test]
    fn a_staggered_thread_lengthens_the_span() {
        let clock = TeamClock::new(2);
        let work = Duration::from_millis(4);
        let (done, wait) = std::sync::mpsc::channel::<Lap>();
        let laps: Vec<Lap> = std::thread::scope(|s| {
            let clock = &clock;
            let first = s.spawn(move || {
                let (_, lap) = timed(|| spin_for(work));
                clock.record(0, &lap);
                done.send(lap).unwrap();
                lap
            });
            let second = s.spawn(move || {
                let _ = wait.recv().unwrap();
                let (_, lap) = timed(|| spin_for(work));
                clock.record(1, &lap);
                lap
            });
            vec![first.join().unwrap(), second.join().unwrap()]
        });
        let span = clock.span();
        let walls: f64 = laps.iter().map(|l| l.wall_ns as f64).sum();
        assert!(span.ns >= walls, "{span:?} {laps:?}");
        assert!(span.skew_ns >= laps[0].wall_ns as f64, "{span:?} {laps:?}");
        // Starts further apart than the threshold, or a lap that lost its CPU: either way
        // the sample is marked.
        assert!(span.disturbance().is_some(), "{span:?}");
    }

    #[test]
    fn spin_barrier_releases_every_round() {
        let b = SpinBarrier::new(3);
        let count = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 0..100 {
                        b.wait();
                        // Nobody is more than one round ahead of the others.
                        let c = count.fetch_add(1, Ordering::SeqCst);
                        assert!(c / 3 <= round + 1, "{c} {round}");
                        b.wait();
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 300);
    }
}
