//! Loaded latency: how memory latency grows with the bandwidth other cores draw.
//!
//! One pinned thread chases a pointer chain over a DRAM-sized buffer; every other chosen CPU runs
//! a load generator ([`memsight_kernels::loadgen`]) that visits one line at a time in a read:write
//! mix and spins a number of cycles between visits. Instead of MLC's fixed delay list (most of
//! whose points sit at saturation), the delays are chosen per mix so the points spread evenly in
//! bandwidth between idle and saturation: idle and delay 0 are measured first, then for each
//! target bandwidth the delay is found by bisection on a log scale with short probes. At each
//! point the traffic runs `--settle-ms` before sampling; then the chase latency is sampled with
//! the engine's stop rule while the load threads' visits are counted over the same window, and
//! on x86_64 2000 single chase steps are timed with the TSC for p50/p90/p99.
//!
//! Bandwidth per point = load visits × DRAM bytes per visit (regular stores add a read for
//! ownership) + the chase's own 64 B per load, over the sampling window (GB/s, 10⁹ B/s).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_core::buffer::{Buffer, BufferRequest};
use memsight_core::env::Environment;
use memsight_core::stats::{Summary, sample_until};
use memsight_core::units::MIB;
use memsight_core::{Error, Result, cancel};
use memsight_kernels::chain::Pattern;
use memsight_kernels::chase::Chains;
use memsight_kernels::loadgen::{TrafficMix, generate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::buffer::{DaxTarget, PageKind};

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Traffic mixes, one curve each; empty: all five.
    pub mixes: Vec<TrafficMix>,
    /// Points per curve, idle and saturation included.
    pub points: u32,
    /// The knee is where latency first reaches this multiple of idle latency.
    pub knee: f64,
    /// The first chases, the others load; `None`: every allowed CPU.
    pub cpus: Option<Vec<usize>>,
    /// Bind the buffers to this node; `None`: the chasing CPU's node.
    pub node: Option<usize>,
    /// Chase working set; `None`: max(4 × LLC, 256 MiB).
    pub chase_bytes: Option<u64>,
    /// Buffer per load thread.
    pub load_bytes: u64,
    pub page_kind: PageKind,
    /// Time the traffic runs before each point is sampled.
    pub settle_ms: u64,
    /// Of the latency samples per point.
    pub sampling: crate::sampling::Sampling,
    /// Map every buffer from this DAX device or directory instead (`--dax`).
    pub dax: Option<&'static DaxTarget>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mixes: Vec::new(),
            points: 8,
            knee: 2.0,
            cpus: None,
            node: None,
            chase_bytes: None,
            load_bytes: 96 * MIB,
            page_kind: PageKind::Thp,
            settle_ms: 100,
            sampling: crate::sampling::Sampling {
                target_ci: 0.01,
                min_samples: 7,
                point_budget: 0.4,
                sample_ms: 2.0,
            },
            dax: None,
        }
    }
}

/// One point of a curve.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CurvePoint {
    /// Cycles each load thread spins between line visits (None: load threads idle).
    pub delay_cycles: Option<u64>,
    /// Total estimated DRAM bandwidth, load threads and chase, GB/s.
    pub bandwidth_gbs: f64,
    /// Chase latency, ns per load (median, CI, samples).
    pub latency_ns: Summary,
    /// Per-access latency percentiles from TSC-timed single steps, ns (x86_64).
    pub p50_ns: Option<f64>,
    pub p90_ns: Option<f64>,
    pub p99_ns: Option<f64>,
}

/// One curve.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Curve {
    pub mix: TrafficMix,
    /// Points sorted by bandwidth, idle first.
    pub points: Vec<CurvePoint>,
    /// Bandwidth where latency first reaches `knee_factor` × idle, GB/s.
    pub knee_gbs: Option<f64>,
    /// Highest bandwidth reached, GB/s.
    pub saturation_gbs: f64,
}

/// The `loaded-latency` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoadedResults {
    pub method: String,
    pub plan: crate::plan::LoadedPlan,
    pub knee_factor: f64,
    pub curves: Vec<Curve>,
    /// The DAX device or file the buffers were mapped from (`--dax`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<memsight_core::buffer::FileBacking>,
    pub findings: Vec<String>,
}

/// Shared state of the load threads.
struct Traffic {
    delay: AtomicU64,
    paused: AtomicBool,
    quit: AtomicBool,
    visits: Vec<AtomicU64>,
    mix: AtomicU64,
}

const MIXES: [TrafficMix; 5] = [
    TrafficMix::Reads,
    TrafficMix::R3W1,
    TrafficMix::R2W1,
    TrafficMix::R1W1Nt,
    TrafficMix::NtWrites,
];

impl Traffic {
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
}

/// Runs every curve. Returns results and whether it completed.
pub fn run(
    a: &Config,
    env: &Environment,
    machine: &crate::machine::Machine,
    tick: &(dyn Fn(&str) + Sync),
) -> Result<(LoadedResults, bool)> {
    let mixes: Vec<TrafficMix> = if a.mixes.is_empty() {
        MIXES.to_vec()
    } else {
        a.mixes.clone()
    };
    if let Some(list) = &a.cpus {
        memsight_core::pin::validate_cpus(list, &env.allowed_cpus)?;
    }
    let cpus = a.cpus.clone().unwrap_or_else(|| env.allowed_cpus.clone());
    let plan = crate::plan::loaded_plan(&env.topology, &cpus, a.node)?;
    env.check_node(plan.node.filter(|_| a.node.is_some()))?;
    if !(a.knee > 1.0 && a.knee.is_finite()) {
        return Err(Error::input("--knee must be a factor above 1, e.g. 2"));
    }
    let (rule, _) = a.sampling.rule()?;
    let (size, in_memory) = machine.working_set(a.chase_bytes, env)?;
    let load_size = a.load_bytes;
    if load_size < 3 * 4096 {
        return Err(Error::input("--load-size must be at least 12K"));
    }
    memsight_core::buffer::check_size(size + load_size * plan.load_cpus.len() as u64, env)?;
    let page_kind = a.page_kind;
    let node = a.node;
    let traffic = Traffic {
        delay: AtomicU64::new(0),
        paused: AtomicBool::new(true),
        quit: AtomicBool::new(false),
        visits: plan.load_cpus.iter().map(|_| AtomicU64::new(0)).collect(),
        mix: AtomicU64::new(0),
    };
    let settle = Duration::from_millis(a.settle_ms);
    let mut all = vec![plan.chase_cpu];
    all.extend(&plan.load_cpus);
    let mut complete = true;
    let results =
        memsight_core::pin::run_team(&all, |i, _, barrier| -> Result<Option<Vec<Curve>>> {
            if i > 0 {
                let req = BufferRequest {
                    bytes: load_size,
                    kind: page_kind,
                    node,
                    dax: a.dax,
                };
                return load_thread(&traffic, i - 1, req, env, barrier);
            }
            let chase = Chase {
                a,
                env,
                traffic: &traffic,
                mixes: &mixes,
                size,
                rule: &rule,
                settle,
                tick,
            };
            chase_thread(&chase, barrier)
        })?;
    let mut curves = Vec::new();
    for r in results {
        if let Some(c) = r? {
            curves = c;
        }
    }
    if curves.len() < mixes.len() || curves.iter().any(|c| c.points.len() < a.points as usize) {
        complete = false;
    }
    let mut findings = findings(&curves, a.knee);
    let mut method = method(a, &plan, size) + &format!(" Chase working set: {in_memory}.");
    let memory = a.dax.map(|d| d.probe()).transpose()?;
    if let Some(m) = &memory {
        method += &format!(" Memory: {}.", m.describe());
        findings.extend(crate::dax_finding(m));
    }
    Ok((
        LoadedResults {
            method,
            plan,
            knee_factor: a.knee,
            curves,
            memory,
            findings,
        },
        complete,
    ))
}

/// What the chasing thread needs.
struct Chase<'a> {
    a: &'a Config,
    env: &'a Environment,
    traffic: &'a Traffic,
    mixes: &'a [TrafficMix],
    /// Chase working set, bytes.
    size: u64,
    rule: &'a memsight_core::stats::StopRule,
    /// Traffic time before each point.
    settle: Duration,
    tick: &'a (dyn Fn(&str) + Sync),
}

/// The chasing thread: for each mix, idle and saturated points, then delays found by bisection
/// for points evenly spaced in bandwidth; stops the load threads when done.
fn chase_thread(
    c: &Chase,
    barrier: &memsight_core::pin::TeamBarrier,
) -> Result<Option<Vec<Curve>>> {
    let req = BufferRequest {
        bytes: c.size,
        kind: c.a.page_kind,
        node: c.a.node,
        dax: c.a.dax,
    };
    // However the chase ends (done, failed, interrupted or panicked), the load threads stop:
    // they generate traffic until told to.
    let _stop = StopTraffic(c.traffic);
    let buf = Buffer::allocate(req, c.env);
    barrier.wait();
    let mut buf = buf?;
    let elements = c.size as usize / 128;
    let mut chains = Chains::build(
        &mut buf.as_mut_slice()[..c.size as usize],
        elements,
        128,
        Pattern::Window {
            window_bytes: 64 * 4096,
        },
        1,
        0x5eed,
    );
    let per_sample = {
        let t = chains.time(elements as u64);
        ((2e6 / (t.as_nanos() as f64 / elements as f64)) as u64).max(1000)
    };
    let ticks = memsight_kernels::pingpong::tsc_ticks_per_ns(20);
    let mut curves = Vec::new();
    for &mix in c.mixes {
        c.traffic.mix.store(
            MIXES.iter().position(|m| *m == mix).expect("known mix") as u64,
            Ordering::SeqCst,
        );
        let mut measure = |delay: Option<u64>| -> Option<CurvePoint> {
            c.traffic.set(delay);
            std::thread::sleep(c.settle);
            let v0 = c.traffic.visits();
            let t0 = Instant::now();
            let mut chase_loads = 0u64;
            let sampled = sample_until(c.rule, || {
                chase_loads += per_sample;
                crate::latency::ladder::chase_sample(&mut chains, per_sample)
            })?;
            let ns = t0.elapsed().as_nanos() as f64;
            let dv = c.traffic.visits() - v0;
            let bandwidth_gbs = (dv * mix.dram_bytes() + 64 * chase_loads) as f64 / ns;
            let (p50, p90, p99) = percentiles(&mut chains, ticks);
            (c.tick)(&format!("{}: {:.1} GB/s", mix.name(), bandwidth_gbs));
            Some(CurvePoint {
                delay_cycles: delay,
                bandwidth_gbs,
                latency_ns: sampled.summary,
                p50_ns: p50,
                p90_ns: p90,
                p99_ns: p99,
            })
        };
        let mut points = Vec::new();
        let Some(idle) = measure(None) else { break };
        points.push(idle);
        let Some(max) = measure(Some(0)) else { break };
        let (lo, hi) = (points[0].bandwidth_gbs, max.bandwidth_gbs);
        points.push(max);
        // Targets evenly spaced in bandwidth between idle and saturation.
        let n = c.a.points as usize;
        for k in 1..n.saturating_sub(1) {
            if cancel::requested() {
                break;
            }
            let target = lo + (hi - lo) * k as f64 / (n - 1) as f64;
            let delay = find_delay(c.traffic, mix, target);
            match measure(Some(delay)) {
                Some(p) => points.push(p),
                None => break,
            }
        }
        curves.push(curve(mix, points, c.a.knee));
        if cancel::requested() {
            break;
        }
    }
    Ok(Some(curves))
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
) -> Result<Option<Vec<Curve>>> {
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

/// A curve from its points: sorted by bandwidth, the knee (first point at `knee` × idle
/// latency) and the saturation bandwidth.
fn curve(mix: TrafficMix, mut points: Vec<CurvePoint>, knee: f64) -> Curve {
    points.sort_by(|x, y| x.bandwidth_gbs.total_cmp(&y.bandwidth_gbs));
    let idle_ns = points
        .iter()
        .find(|p| p.delay_cycles.is_none())
        .map_or(0.0, |p| p.latency_ns.median);
    let knee_gbs = points
        .iter()
        .find(|p| p.latency_ns.median >= knee * idle_ns)
        .map(|p| p.bandwidth_gbs);
    let saturation_gbs = points.iter().map(|p| p.bandwidth_gbs).fold(0.0, f64::max);
    Curve {
        mix,
        points,
        knee_gbs,
        saturation_gbs,
    }
}

/// How the curves were measured, in words.
fn method(a: &Config, plan: &crate::plan::LoadedPlan, size: u64) -> String {
    format!(
        "one thread chases a {} chain (128 B stride, random within 256 KiB windows, {} pages) on CPU {}; {} load thread(s) on CPUs {} each visit one line at a time of their own {} buffer in the mix's pattern with a delay (cycles) between visits; delays chosen by bisection so {} points spread evenly in bandwidth from idle to saturation; {} ms of traffic before each point; latency = median ns per chase load (engine stop rule); bandwidth = load visits × DRAM bytes per visit (RFO included) + chase bytes, GB/s; p50/p90/p99 from 2000 TSC-timed single steps with the timer's own cost (median of empty timed pairs) subtracted.",
        memsight_core::units::format_bytes(size),
        a.page_kind.name(),
        plan.chase_cpu,
        plan.load_cpus.len(),
        memsight_core::units::format_list(&plan.load_cpus),
        memsight_core::units::format_bytes(a.load_bytes),
        a.points,
        a.settle_ms
    )
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

/// p50/p90/p99 of 2000 single chase steps, ns, each timed with the fenced TSC.
fn percentiles(chains: &mut Chains, ticks: Option<f64>) -> (Option<f64>, Option<f64>, Option<f64>) {
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
        let mut v: Vec<f64> = (0..2000)
            .map(|_| {
                let t0 = tsc::now();
                chains.run(1);
                (((tsc::now() - t0) as f64 - overhead) / t).max(0.0)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| Some(v[((v.len() - 1) as f64 * p) as usize]);
        return (q(0.5), q(0.9), q(0.99));
    }
    let _ = (chains, ticks);
    (None, None, None)
}

fn findings(curves: &[Curve], knee: f64) -> Vec<String> {
    let mut out = Vec::new();
    for c in curves {
        let idle = c.points.iter().find(|p| p.delay_cycles.is_none());
        let top = c.points.last();
        if let (Some(i), Some(t)) = (idle, top) {
            out.push(format!(
                "{}: idle {:.0} ns; at {:.1} GB/s (saturation) {:.0} ns ({:.1}×){}",
                c.mix.name(),
                i.latency_ns.median,
                c.saturation_gbs,
                t.latency_ns.median,
                t.latency_ns.median / i.latency_ns.median,
                match c.knee_gbs {
                    Some(k) => format!("; latency reaches {knee}× idle at {k:.1} GB/s (the knee)"),
                    None => format!("; latency never reached {knee}× idle: the load threads cannot saturate memory"),
                }
            ));
            // Queueing never makes a miss cheaper: a loaded point clearly below idle means the
            // idle point was disturbed, or ran while a clock the traffic raises was low (Intel's
            // uncore/mesh frequency follows traffic), so the curve's ratios to idle mislead.
            if let Some(low) = c
                .points
                .iter()
                .filter(|p| p.delay_cycles.is_some())
                .min_by(|a, b| a.latency_ns.median.total_cmp(&b.latency_ns.median))
                .filter(|p| p.latency_ns.median < BELOW_IDLE * i.latency_ns.median)
            {
                out.push(format!(
                    "{}: at {:.1} GB/s latency was {:.0} ns, {:.2}× the idle {:.0} ns: queueing cannot make a miss cheaper, so either the idle point was disturbed or the traffic raised a clock the idle chase ran without (Intel's uncore frequency follows traffic); the ratios to idle above are not to be acted on: measure again",
                    c.mix.name(),
                    low.bandwidth_gbs,
                    low.latency_ns.median,
                    low.latency_ns.median / i.latency_ns.median,
                    i.latency_ns.median
                ));
            }
        }
    }
    out
}

/// A loaded point this far below idle latency is a measurement error, not a property of memory.
const BELOW_IDLE: f64 = 0.9;

#[cfg(test)]
mod tests {
    use super::*;

    fn point(delay: Option<u64>, gbs: f64, ns: f64) -> CurvePoint {
        CurvePoint {
            delay_cycles: delay,
            bandwidth_gbs: gbs,
            latency_ns: memsight_core::stats::summarize(&[ns]),
            p50_ns: None,
            p90_ns: None,
            p99_ns: None,
        }
    }

    /// The knee is the first bandwidth at which latency reaches the factor × idle; saturation
    /// is the highest bandwidth, whatever order the points came in.
    #[test]
    fn knee_and_saturation_of_a_curve() {
        let points = vec![
            point(Some(10), 40.0, 260.0),
            point(None, 1.0, 100.0),
            point(Some(100), 20.0, 130.0),
            point(Some(30), 35.0, 210.0),
        ];
        let c = curve(TrafficMix::Reads, points, 2.0);
        assert_eq!(c.points[0].delay_cycles, None, "idle first");
        assert_eq!(c.knee_gbs, Some(35.0));
        assert_eq!(c.saturation_gbs, 40.0);
        let f = findings(std::slice::from_ref(&c), 2.0);
        assert!(
            f[0].contains("idle 100 ns")
                && f[0].contains("(2.6×)")
                && f[0].contains("at 35.0 GB/s (the knee)"),
            "{f:?}"
        );
    }

    #[test]
    fn a_curve_without_a_knee_says_the_load_could_not_saturate() {
        let c = curve(
            TrafficMix::R2W1,
            vec![point(None, 1.0, 100.0), point(Some(0), 30.0, 150.0)],
            2.0,
        );
        assert_eq!(c.knee_gbs, None);
        let f = findings(&[c], 2.0);
        assert!(f[0].contains("never reached 2× idle"), "{f:?}");
    }

    /// A loaded point below idle latency cannot be: it is called a disturbed idle point.
    #[test]
    fn a_loaded_point_below_idle_is_called_an_error() {
        let c = curve(
            TrafficMix::Reads,
            vec![point(None, 1.0, 123.0), point(Some(0), 30.4, 97.0)],
            2.0,
        );
        let f = findings(&[c], 2.0);
        assert!(
            f.iter()
                .any(|x| x.contains("0.79× the idle 123 ns") && x.contains("not to be acted on")),
            "{f:?}"
        );
        let c = curve(
            TrafficMix::Reads,
            vec![point(None, 1.0, 100.0), point(Some(0), 30.0, 96.0)],
            2.0,
        );
        assert_eq!(
            findings(&[c], 2.0).len(),
            1,
            "within the noise: no such finding"
        );
    }
}
