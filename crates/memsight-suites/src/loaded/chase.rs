//! The measuring team: one thread chases, the others generate traffic in a mix at a delay the
//! chaser sets; the mixes are measured in alternating rounds.

use crate::measure::progress::Tick;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_core::buffer::{Buffer, BufferRequest};
use memsight_core::env::Environment;
use memsight_core::stats::{StopRule, sample_until};
use memsight_core::{Result, cancel};
use memsight_kernels::chase::Chains;
use memsight_kernels::loadgen::{TrafficMix, generate};

use super::{CurvePoint, LoadedSettings, MIXES};

/// Shared state of the load threads.
struct Traffic {
    delay: AtomicU64,
    paused: AtomicBool,
    quit: AtomicBool,
    visits: Vec<AtomicU64>,
    mix: AtomicU64,
}

impl Traffic {
    fn new(load_threads: usize) -> Self {
        Traffic {
            delay: AtomicU64::new(0),
            paused: AtomicBool::new(true),
            quit: AtomicBool::new(false),
            visits: (0..load_threads).map(|_| AtomicU64::new(0)).collect(),
            mix: AtomicU64::new(0),
        }
    }

    fn visits(&self) -> u64 {
        self.visits.iter().map(|v| v.load(Ordering::Relaxed)).sum()
    }

    /// Load bandwidth in GB/s of DRAM bytes over `window`.
    fn probe(&self, mix: TrafficMix, window: Duration) -> f64 {
        let v0 = self.visits();
        let t = Instant::now();
        std::thread::sleep(window);
        let dv = self.visits() - v0;
        (dv * mix.dram_bytes()) as f64 / t.elapsed().as_nanos() as f64
    }

    fn set(&self, delay: Option<u64>) {
        match delay {
            None => self.paused.store(true, Ordering::SeqCst),
            Some(d) => {
                self.delay.store(d, Ordering::SeqCst);
                self.paused.store(false, Ordering::SeqCst);
            }
        }
    }

    fn set_mix(&self, mix: TrafficMix) {
        let index = MIXES.iter().position(|m| *m == mix).expect("known mix");
        self.mix.store(index as u64, Ordering::SeqCst);
    }
}

/// What the team measures.
pub(super) struct Team<'a> {
    pub a: &'a LoadedSettings,
    pub env: &'a Environment,
    pub mixes: &'a [TrafficMix],
    /// The chasing CPU first, then the load CPUs.
    pub cpus: &'a [usize],
    /// Chase working set, bytes.
    pub size: u64,
    /// The whole stop rule of a point (every round's share together).
    pub rule: StopRule,
    pub tick: Tick<'a>,
}

/// Each point's rounds, per mix (`[mix][point][round]`).
pub(super) type Taken = Vec<Vec<Vec<CurvePoint>>>;

/// Runs the team. Returns every point's rounds per mix, and whether every round ran.
pub(super) fn measure(t: &Team) -> Result<(Taken, bool)> {
    let traffic = Traffic::new(t.cpus.len() - 1);
    let mut out = (Vec::new(), false);
    let results = memsight_core::pin::run_team(t.cpus, |i, _, barrier| {
        if i > 0 {
            let req = BufferRequest {
                bytes: t.a.load_bytes,
                kind: t.a.page_kind,
                node: t.a.node,
                dax: t.a.dax,
            };
            return load_thread(&traffic, i - 1, req, t.env, barrier);
        }
        chase_thread(t, &traffic, barrier)
    })?;
    for r in results {
        if let Some(taken) = r? {
            out = taken;
        }
    }
    Ok(out)
}

/// The chasing thread's instruments: its chain, the loads per sample, the TSC's rate.
struct Chaser<'b> {
    chains: Chains<'b>,
    per_sample: u64,
    ticks: Option<f64>,
}

/// The chasing thread: round 1 measures each mix's idle and saturated points and finds by
/// bisection the delays of points spread evenly in bandwidth between them; each later round
/// measures every mix at those delays again, mix after mix (A B C A B C …), so that a change
/// in the machine touches every curve alike. Stops the load threads when done.
fn chase_thread(
    t: &Team,
    traffic: &Traffic,
    barrier: &memsight_core::pin::TeamBarrier,
) -> Result<Option<(Taken, bool)>> {
    let req = BufferRequest {
        bytes: t.size,
        kind: t.a.page_kind,
        node: t.a.node,
        dax: t.a.dax,
    };
    // However the chase ends (done, failed, interrupted or panicked), the load threads stop:
    // they generate traffic until told to.
    let _stop = StopTraffic(traffic);
    let buf = Buffer::allocate(req, t.env);
    barrier.wait();
    let mut buf = buf?;
    let (chains, per_sample) =
        crate::measure::chase::sampling_chain(&mut buf.as_mut_slice()[..t.size as usize], 0x5eed);
    let mut ch = Chaser {
        chains,
        per_sample,
        ticks: memsight_kernels::pingpong::tsc_ticks_per_ns(20),
    };
    let n = t.a.rounds.max(1);
    let rule = t.rule.per_round(n);
    let mut taken: Taken = vec![Vec::new(); t.mixes.len()];
    for r in 0..n {
        for (slots, &mix) in taken.iter_mut().zip(t.mixes) {
            traffic.set_mix(mix);
            let round = Round { rule: &rule, r, n };
            let done = if r == 0 {
                calibrate(t, traffic, &mut ch, mix, &round, slots)
            } else {
                again(t, traffic, &mut ch, mix, &round, slots)
            };
            if !done || cancel::requested() {
                return Ok(Some((taken, false)));
            }
        }
    }
    Ok(Some((taken, true)))
}

/// Which round, of how many, under which share of the stop rule.
struct Round<'a> {
    rule: &'a StopRule,
    r: usize,
    n: usize,
}

/// Round 1 of a mix: idle, saturation, then the delays of points evenly spaced in bandwidth
/// between them. Each point starts its own slot. Whether the mix ran to its end.
fn calibrate(
    t: &Team,
    traffic: &Traffic,
    ch: &mut Chaser<'_>,
    mix: TrafficMix,
    round: &Round,
    slots: &mut Vec<Vec<CurvePoint>>,
) -> bool {
    let Some(idle) = point(t, traffic, ch, mix, None, round) else {
        return false;
    };
    let lo = idle.bandwidth_gbs;
    slots.push(vec![idle]);
    let Some(max) = point(t, traffic, ch, mix, Some(0), round) else {
        return false;
    };
    let hi = max.bandwidth_gbs;
    slots.push(vec![max]);
    let n = t.a.points as usize;
    for k in 1..n.saturating_sub(1) {
        if cancel::requested() {
            return false;
        }
        let target = lo + (hi - lo) * k as f64 / (n - 1) as f64;
        let delay = find_delay(traffic, mix, target);
        match point(t, traffic, ch, mix, Some(delay), round) {
            Some(p) => slots.push(vec![p]),
            None => return false,
        }
    }
    true
}

/// A later round of a mix: every point again at the delay round 1 chose.
fn again(
    t: &Team,
    traffic: &Traffic,
    ch: &mut Chaser<'_>,
    mix: TrafficMix,
    round: &Round,
    slots: &mut [Vec<CurvePoint>],
) -> bool {
    for slot in slots {
        let delay = slot[0].delay_cycles;
        match point(t, traffic, ch, mix, delay, round) {
            Some(p) => slot.push(p),
            None => return false,
        }
        if cancel::requested() {
            return false;
        }
    }
    true
}

/// One point: the traffic at `delay` (None: load threads idle) runs `settle_ms`, then the chase
/// latency is sampled while the load threads' visits are counted over the same window. None
/// when interrupted.
fn point(
    t: &Team,
    traffic: &Traffic,
    ch: &mut Chaser<'_>,
    mix: TrafficMix,
    delay: Option<u64>,
    round: &Round,
) -> Option<CurvePoint> {
    traffic.set(delay);
    std::thread::sleep(Duration::from_millis(t.a.settle_ms));
    let v0 = traffic.visits();
    let t0 = Instant::now();
    let mut chase_loads = 0u64;
    let per_sample = ch.per_sample;
    let sampled = sample_until(round.rule, || {
        chase_loads += per_sample;
        crate::measure::chase::chase_sample(&mut ch.chains, per_sample)
    })?;
    let ns = t0.elapsed().as_nanos() as f64;
    let dv = traffic.visits() - v0;
    let bandwidth_gbs = (dv * mix.dram_bytes() + 64 * chase_loads) as f64 / ns;
    let (p50, p90, p99, step) = percentiles(&mut ch.chains, ch.ticks);
    let of = crate::measure::sampling::round_label(round.r, round.n);
    (t.tick)(&format!("{}: {bandwidth_gbs:.1} GB/s{of}", mix.name()));
    Some(CurvePoint {
        delay_cycles: delay,
        bandwidth_gbs,
        latency_ns: sampled.summary,
        p50_ns: p50,
        p90_ns: p90,
        p99_ns: p99,
        tsc_step_ns: step,
        round_bandwidths_gbs: Vec::new(),
        round_latencies_ns: Vec::new(),
        between_rounds: None,
    })
}

/// Tells the load threads to stop when dropped.
struct StopTraffic<'a>(&'a Traffic);

impl Drop for StopTraffic<'_> {
    fn drop(&mut self) {
        self.0.quit.store(true, Ordering::SeqCst);
        self.0.paused.store(true, Ordering::SeqCst);
    }
}

/// A load thread: its own buffer, first-touched here; generates the current mix while the
/// traffic is not paused, until told to quit.
fn load_thread(
    traffic: &Traffic,
    index: usize,
    req: BufferRequest,
    env: &Environment,
    barrier: &memsight_core::pin::TeamBarrier,
) -> Result<Option<(Taken, bool)>> {
    let mut buf = Buffer::allocate(req, env);
    if let Ok(b) = buf.as_mut() {
        b.touch();
    }
    barrier.wait();
    let mut buf = buf?;
    while !traffic.quit.load(Ordering::SeqCst) {
        if traffic.paused.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let mix = MIXES[traffic.mix.load(Ordering::SeqCst) as usize];
        generate(
            buf.as_mut_slice(),
            mix,
            &traffic.delay,
            &traffic.paused,
            &traffic.visits[index],
        );
    }
    Ok(None)
}

/// Bisection on log(delay) for the delay whose load bandwidth is closest to `target` GB/s.
fn find_delay(traffic: &Traffic, mix: TrafficMix, target: f64) -> u64 {
    let (mut lo, mut hi) = (1.0f64, 1_000_000.0f64);
    for _ in 0..8 {
        let mid = (lo * hi).sqrt();
        traffic.set(Some(mid as u64));
        std::thread::sleep(Duration::from_millis(10));
        let bw = traffic.probe(mix, Duration::from_millis(25));
        if bw > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt() as u64
}

/// The four figures [`percentiles`] gives: p50, p90, p99 and the TSC's step, ns.
type Percentiles = (Option<f64>, Option<f64>, Option<f64>, Option<f64>);

/// p50/p90/p99 of 2000 single chase steps, ns, each timed with the fenced TSC, and the TSC's
/// step (the smallest difference between two readings of empty pairs that differ).
fn percentiles(chains: &mut Chains, ticks: Option<f64>) -> Percentiles {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = ticks {
        use memsight_kernels::pingpong::tsc;
        // The timer's own cost: the median of empty fenced pairs, subtracted from every step.
        let mut empty: Vec<u64> = (0..200)
            .map(|_| {
                let t0 = tsc::now();
                tsc::now() - t0
            })
            .collect();
        empty.sort_unstable();
        let overhead = empty[empty.len() / 2] as f64;
        let step = empty
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|&d| d > 0)
            .min()
            .map(|d| d as f64 / t);
        let mut v: Vec<f64> = (0..2000)
            .map(|_| {
                let t0 = tsc::now();
                chains.run(1);
                (((tsc::now() - t0) as f64 - overhead) / t).max(0.0)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| Some(v[((v.len() - 1) as f64 * p) as usize]);
        return (q(0.5), q(0.9), q(0.99), step);
    }
    let _ = (chains, ticks);
    (None, None, None, None)
}
