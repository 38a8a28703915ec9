//! The pointer chase every latency figure is measured with: a chain over a working set,
//! flushed, warmed by one lap and timed in samples until the stop rule is met; a ladder's climb
//! over sizes on one buffer; one chase point on a pinned CPU (NUMA cells, tier latencies); and
//! short samples of a chain beside a load (loaded latency, profile's probe).

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::cpuclock::timed;
use memsight_core::env::Environment;
use memsight_core::stats::{Sampled, StopReason, StopRule, Summary, Taken, sample_until};
use memsight_core::{Result, cancel};
use memsight_kernels::chain::Pattern;
use memsight_kernels::chase::Chains;
use memsight_kernels::flush;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Everything the ladder needs, resolved and validated.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LadderConfig {
    pub sizes: Vec<u64>,
    pub stride: usize,
    pub pattern: Pattern,
    pub page_kind: PageKind,
    /// Run a second ladder on huge pages for the TLB cost.
    pub tlb_compare: bool,
    /// Largest k of the MLP sweep (1 = no sweep).
    pub max_parallel: usize,
    pub cpus: Vec<usize>,
    pub node: Option<usize>,
    /// Interleave the buffers over every allowed node (NUMA-unaware placement) instead.
    #[serde(default)]
    pub interleave: bool,
    pub rule: StopRule,
    pub sample_ns: f64,
    pub seed: u64,
    /// Every step also writes the line it visits (multichase `incr`): the write latency.
    #[serde(default)]
    pub write: bool,
    /// Map the buffer from this DAX device or directory instead (`--dax`).
    #[serde(skip)]
    #[schemars(skip)]
    pub dax: Option<&'static memsight_core::buffer::DaxTarget>,
    /// End the ladder once its memory plateau has held ([`crate::measure::reach`]): the default, where
    /// no `--max-size` forces the sizes.
    #[serde(default)]
    pub stop_at_memory: bool,
    /// Bytes every step reads (a whole aligned block, one word per line); 0: the pointer only.
    #[serde(default)]
    pub block: usize,
}

impl LadderConfig {
    /// One CPU's chase at the given sizes with the default method (128 B stride, random within
    /// 256 KiB windows, 2 ms samples), no TLB twin and no MLP sweep: the memory-latency point
    /// other suites (NUMA cells, memory tiers) measure. Callers set `node`, `write`, `dax`.
    pub fn chase_point(sizes: &[u64], cpu: usize, page_kind: PageKind, rule: StopRule) -> Self {
        LadderConfig {
            sizes: sizes.iter().map(|s| s / 128 * 128).collect(),
            stride: 128,
            pattern: Pattern::Window {
                window_bytes: 64 * 4096,
            },
            page_kind,
            tlb_compare: false,
            max_parallel: 1,
            cpus: vec![cpu],
            node: None,
            interleave: false,
            rule,
            sample_ns: 2e6,
            seed: 0x5eed,
            write: false,
            dax: None,
            stop_at_memory: false,
            block: 0,
        }
    }
}

/// One measured point.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    pub size_bytes: u64,
    /// Elements on the chain (`size ÷ stride`).
    pub elements: u64,
    /// Loads per sample.
    pub loads_per_sample: u64,
    /// Nanoseconds per load.
    pub ns: Summary,
    /// Median in core cycles (ns × measured clock).
    pub cycles: Option<f64>,
    pub stop: memsight_core::stats::StopReason,
    /// True when the CI did not converge and stayed wider than 5%: treat the figure as noise.
    pub noisy: bool,
}

impl Point {
    pub fn new(size: u64, elements: u64, loads: u64, s: Sampled, ghz: Option<f64>) -> Self {
        Point {
            size_bytes: size,
            elements,
            loads_per_sample: loads,
            cycles: ghz.map(|g| s.summary.median * g),
            noisy: s.is_noisy(),
            stop: s.stop,
            ns: s.summary,
        }
    }
}

/// A ladder's (size, median ns) curve.
pub fn curve(points: &[Point]) -> Vec<(u64, f64)> {
    clean(points)
        .iter()
        .map(|p| (p.size_bytes, p.ns.median))
        .collect()
}

/// The points levels are read from: those resting on clean samples, while they are at least
/// half the ladder (a point resting on disturbed samples is slower than the machine, so it
/// reads as a step or lifts a plateau that is not there); all of them otherwise.
pub fn clean(points: &[Point]) -> Vec<Point> {
    let kept: Vec<Point> = points
        .iter()
        .filter(|p| !p.ns.rests_on_disturbed())
        .cloned()
        .collect();
    if 2 * kept.len() >= points.len() {
        kept
    } else {
        points.to_vec()
    }
}

/// Whether a ladder may end after these points: memory has held on its own evidence, and its
/// latency has stopped rising ([`crate::measure::reach::settled`]).
pub fn may_stop(points: &[Point]) -> bool {
    let c = curve(points);
    crate::measure::reach::memory_start(&c, 0)
        .is_some_and(|m| m.check == crate::measure::reach::MemoryCheck::HeldPlateau)
        && crate::measure::reach::settled(&c)
}

/// One chase sample: `steps` rounds of every chain, in ns per round, marked when the chasing
/// thread lost its CPU during it.
pub fn chase_sample(chains: &mut Chains, steps: u64) -> Taken {
    let ((), lap) = timed(|| chains.run(steps));
    Taken::timed(lap.wall_ns as f64 / steps as f64, &lap)
}

/// A chain over all of `memory` for latency read in short samples while something else runs
/// (the loaded-latency curves' chaser, profile's probe): 128-byte elements, random within
/// 256 KiB windows (multichase's default), one lane; and the steps of a sample of about 2 ms as
/// one lap times them (at least 1000): long enough to time well, short enough that a sample in
/// which the thread lost its CPU is dropped at little cost.
pub fn sampling_chain(memory: &mut [u8], seed: u64) -> (Chains<'_>, u64) {
    const SAMPLE_NS: f64 = 2e6;
    let elements = memory.len() / 128;
    let window = Pattern::Window {
        window_bytes: 64 * 4096,
    };
    let mut chains = Chains::build(memory, elements, 128, window, 1, seed);
    let lap = chains.time(elements as u64);
    let ns_per_load = lap.as_nanos() as f64 / elements as f64;
    let per_sample = ((SAMPLE_NS / ns_per_load) as u64).max(1000);
    (chains, per_sample)
}

/// The ladder's main buffer: allocated at the largest size but faulted in only as far as the
/// ladder climbs (first touch by the pinned thread decides the node of unbound memory).
pub fn main_buffer(cfg: &LadderConfig, env: &Environment, max: u64) -> Result<Buffer> {
    let req = BufferRequest {
        bytes: max,
        kind: cfg.page_kind,
        node: cfg.node,
        dax: cfg.dax,
    };
    let mut main = Buffer::allocate(req, env)?;
    if cfg.interleave {
        main.interleave(&env.allowed_nodes)?;
    }
    Ok(main)
}

/// The ladder's points on `buffers` (the main one, then the huge twin if any), size by size,
/// each buffer faulted in only as far as needed; ends at the last size, on Ctrl-C, or (with
/// `stop_at_memory`) once the main curve's memory plateau has held. Returns the points per
/// buffer and whether the ladder ran to its end (false after Ctrl-C).
pub fn climb_buffers(
    cfg: &LadderConfig,
    buffers: &mut [&mut Buffer],
    evict: usize,
    min_sample_ns: f64,
    ghz: Option<f64>,
    tick: &dyn Fn(u64, PageKind),
) -> (Vec<Vec<Point>>, bool) {
    let mut points: Vec<Vec<Point>> = vec![Vec::new(); buffers.len()];
    for &size in &cfg.sizes {
        for (buf, pts) in buffers.iter_mut().zip(points.iter_mut()) {
            buf.touch_to(size as usize);
            let p = measure_point(buf, size, cfg, evict, min_sample_ns, ghz);
            tick(size, buf.report().kind);
            let Some(p) = p else {
                return (points, false);
            };
            let interrupted = p.stop == StopReason::Interrupted;
            pts.push(p);
            if interrupted {
                return (points, false);
            }
        }
        if cfg.stop_at_memory && may_stop(&points[0]) {
            break;
        }
    }
    (points, true)
}

/// The main buffer's points on the calling (pinned) thread, without clock, TLB twin or MLP
/// sweep, and whether they ran to their end (false after Ctrl-C).
fn climb_main(
    cfg: &LadderConfig,
    env: &Environment,
    min_sample_ns: f64,
) -> Result<(Vec<Point>, bool)> {
    let max = *cfg.sizes.last().expect("at least one size");
    let mut main = main_buffer(cfg, env, max)?;
    let evict = (2 * env.llc_bytes()) as usize;
    let (mut points, done) = climb_buffers(
        cfg,
        &mut [&mut main],
        evict,
        min_sample_ns,
        None,
        &|_, _| {},
    );
    Ok((points.remove(0), done))
}

/// The main ladder alone on the calling (pinned) thread: what the reach probe runs. Errors when
/// Ctrl-C cut it short.
pub fn climb(cfg: &LadderConfig, env: &Environment, min_sample_ns: f64) -> Result<Vec<Point>> {
    match climb_main(cfg, env, min_sample_ns)? {
        (points, true) => Ok(points),
        (_, false) => Err(memsight_core::Error::Interrupted),
    }
}

/// One chase point per size of `cfg` on its first CPU (pinned here, its clock settled first, as
/// the ladder's is): a NUMA cell's or a memory tier's latency. Returns the points and whether
/// they ran to their end (false after Ctrl-C).
pub fn points(
    cfg: &LadderConfig,
    env: &Environment,
    min_sample_ns: f64,
) -> Result<(Vec<Point>, bool)> {
    let Some(&cpu) = cfg.cpus.first() else {
        return Ok((Vec::new(), true));
    };
    let mut out = memsight_core::pin::run_team(&[cpu], |_, _, _| {
        // A core leaves its idle clock over milliseconds to seconds: measured before it is
        // steady, the first samples would be slower than the machine.
        crate::measure::clock::settle(0.5);
        climb_main(cfg, env, min_sample_ns)
    })?;
    out.pop().expect("one thread")
}

/// Builds a chain over the first `size` bytes, flushes it, warms it up, and samples it.
fn measure_point(
    buf: &mut Buffer,
    size: u64,
    cfg: &LadderConfig,
    evict: usize,
    min_sample_ns: f64,
    ghz: Option<f64>,
) -> Option<Point> {
    let elements = (size as usize / cfg.stride).max(1);
    let slice = &mut buf.as_mut_slice()[..size as usize];
    let mut chains = Chains::build(slice, elements, cfg.stride, cfg.pattern, 1, cfg.seed ^ size);
    if cfg.write {
        chains = chains.with_writes();
    }
    if cfg.block > 0 {
        chains = chains.with_block(cfg.block);
    }
    flush::flush(chains.bytes(), evict);
    let loads = calibrate(
        &mut chains,
        elements as u64,
        cfg.sample_ns.max(min_sample_ns),
    );
    let sampled = sample_until(&cfg.rule, || chase_sample(&mut chains, loads))?;
    Some(Point::new(size, elements as u64, loads, sampled, ghz))
}

/// Warms the chain up with one full lap (so every line that fits is cached) and returns how many
/// rounds make one sample of about `sample_ns`.
pub fn calibrate(chains: &mut Chains, lap_rounds: u64, sample_ns: f64) -> u64 {
    let mut rounds = lap_rounds.max(64);
    let mut ns = chains.time(rounds).as_nanos() as f64;
    // Short laps (cache-sized chains) time too coarsely: grow until the estimate spans ≥ 1 ms.
    while ns < 1e6 && !cancel::requested() {
        rounds *= 4;
        ns = chains.time(rounds).as_nanos() as f64;
    }
    let per_round = ns / rounds as f64;
    (((sample_ns / per_round) as u64).max(16)).next_multiple_of(16)
}
