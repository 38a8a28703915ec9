//! Running the ladder on one CPU: buffers, chains, samples, the TLB pair and the MLP sweep.

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::cpuclock::timed;
use memsight_core::env::Environment;
use memsight_core::stats::{StopReason, StopRule, Taken, sample_until};
use memsight_core::{Result, cancel};
use memsight_kernels::chase::Chains;
use memsight_kernels::{clock, flush};

use super::levels::detect;
use super::{CoreClock, CpuLadder, Ladder, LadderConfig, Mlp, MlpPoint, Point, TlbPoint};

/// Called once per finished step with a short description, for progress display.
pub type Tick<'a> = &'a (dyn Fn(&str) + Sync);

/// Steps of the whole plan, for a progress bar.
pub fn total_steps(cfg: &LadderConfig) -> u64 {
    let per_size = if cfg.tlb_compare { 2 } else { 1 };
    // The MLP sweep (k = 1 … max) runs only when max > 1.
    let mlp = if cfg.max_parallel > 1 {
        cfg.max_parallel as u64
    } else {
        0
    };
    (cfg.sizes.len() as u64 * per_size + mlp) * cfg.cpus.len() as u64
}

/// One chase sample: `steps` rounds of every chain, in ns per round, marked when the chasing
/// thread lost its CPU during it.
pub fn chase_sample(chains: &mut Chains, steps: u64) -> Taken {
    let ((), lap) = timed(|| chains.run(steps));
    Taken::timed(lap.wall_ns as f64 / steps as f64, &lap)
}

/// Measures the core clock on the current (pinned) thread.
pub fn core_clock() -> CoreClock {
    let rule = StopRule {
        warmup: 2,
        min_samples: 7,
        max_samples: 51,
        target_rel_ci: 0.005,
        budget_s: 0.3,
    };
    let s = sample_until(&rule, || {
        let (ghz, lap) = timed(|| clock::sample_ghz(2e6));
        Taken::timed(ghz, &lap)
    })
    .map_or_else(
        || memsight_core::stats::summarize(&[clock::sample_ghz(1e6)]),
        |s| s.summary,
    );
    CoreClock {
        ghz: s,
        method: "dependent integer adds (1 per cycle), timed with CLOCK_MONOTONIC".to_string(),
    }
}

/// Runs the ladder for one CPU on the calling thread, which must already be pinned to it.
/// Returns what was measured and whether it ran to the end (false after Ctrl-C).
pub fn run_on_cpu(
    cfg: &LadderConfig,
    env: &Environment,
    cpu: usize,
    min_sample_ns: f64,
    tick: Tick,
) -> Result<(CpuLadder, bool)> {
    let clock = core_clock();
    let ghz = clock.ghz.median;
    let max = *cfg.sizes.last().expect("at least one size");
    let evict = (2 * env.llc_bytes()) as usize;

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
    main.touch();
    main.check_thp();
    let mut huge = if cfg.tlb_compare {
        let req = BufferRequest {
            kind: PageKind::Huge2M,
            ..req
        };
        let mut b = Buffer::allocate_preferring(req, env)?;
        b.touch();
        b.check_thp();
        // A "huge" buffer that ended up on small pages cannot show the TLB cost.
        (b.report().kind != PageKind::Base4K && b.report().huge_fraction.unwrap_or(0.0) > 0.5)
            .then_some(b)
    } else {
        None
    };

    let mut main_points = Vec::new();
    let mut huge_points = Vec::new();
    let mut complete = true;
    'sizes: for &size in &cfg.sizes {
        for (buf, points) in [
            (Some(&mut main), &mut main_points),
            (huge.as_mut(), &mut huge_points),
        ] {
            let Some(buf) = buf else { continue };
            let kind = buf.report().kind;
            let p = measure_point(buf, size, cfg, evict, min_sample_ns, ghz);
            tick(&format!(
                "CPU {cpu}: {} on {kind}",
                memsight_core::units::format_bytes(size)
            ));
            match p {
                Some(p) => {
                    let interrupted = p.stop == StopReason::Interrupted;
                    points.push(p);
                    if interrupted {
                        complete = false;
                        break 'sizes;
                    }
                }
                None => {
                    complete = false;
                    break 'sizes;
                }
            }
        }
    }

    let tlb = tlb_points(&main_points, &huge_points);
    let mlp = if complete && cfg.max_parallel > 1 {
        let (buf, kind) = match huge.as_mut() {
            Some(b) => {
                let k = b.report().kind;
                (b, k)
            }
            None => {
                let k = main.report().kind;
                (&mut main, k)
            }
        };
        let (points, done) = mlp_sweep(buf, max, cfg, evict, min_sample_ns, tick);
        complete &= done;
        Some(Mlp {
            size_bytes: max,
            page_kind: kind,
            points,
        })
    } else {
        None
    };
    let levels = detect(&main_points, &env.topology, ghz);
    let huge_levels = huge
        .as_ref()
        .map(|_| detect(&huge_points, &env.topology, ghz));
    let ladder = CpuLadder {
        cpu,
        core_clock: clock,
        main: Ladder {
            buffer: main.report().clone(),
            points: main_points,
        },
        huge: huge.map(|h| Ladder {
            buffer: h.report().clone(),
            points: huge_points,
        }),
        tlb,
        mlp,
        levels,
        huge_levels,
    };
    Ok((ladder, complete))
}

/// Builds a chain over the first `size` bytes, flushes it, warms it up, and samples it.
fn measure_point(
    buf: &mut Buffer,
    size: u64,
    cfg: &LadderConfig,
    evict: usize,
    min_sample_ns: f64,
    ghz: f64,
) -> Option<Point> {
    let elements = (size as usize / cfg.stride).max(1);
    let slice = &mut buf.as_mut_slice()[..size as usize];
    let mut chains = Chains::build(slice, elements, cfg.stride, cfg.pattern, 1, cfg.seed ^ size);
    if cfg.write {
        chains = chains.with_writes();
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
fn calibrate(chains: &mut Chains, lap_rounds: u64, sample_ns: f64) -> u64 {
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

fn tlb_points(small: &[Point], huge: &[Point]) -> Vec<TlbPoint> {
    small
        .iter()
        .filter_map(|s| {
            let h = huge.iter().find(|h| h.size_bytes == s.size_bytes)?;
            Some(TlbPoint {
                size_bytes: s.size_bytes,
                small_ns: s.ns.median,
                huge_ns: h.ns.median,
                cost_ns: s.ns.median - h.ns.median,
                significant: s.ns.ci_low > h.ns.ci_high || s.ns.ci_high < h.ns.ci_low,
            })
        })
        .collect()
}

/// k = 1 … max independent chains over the same `size` bytes, walked in lockstep.
fn mlp_sweep(
    buf: &mut Buffer,
    size: u64,
    cfg: &LadderConfig,
    evict: usize,
    min_sample_ns: f64,
    tick: Tick,
) -> (Vec<MlpPoint>, bool) {
    let elements = (size as usize / cfg.stride).max(cfg.max_parallel);
    let mut out: Vec<MlpPoint> = Vec::new();
    for k in 1..=cfg.max_parallel {
        let slice = &mut buf.as_mut_slice()[..size as usize];
        let mut chains = Chains::build(
            slice,
            elements,
            cfg.stride,
            cfg.pattern,
            k,
            cfg.seed ^ k as u64,
        );
        flush::flush(chains.bytes(), evict);
        let rounds = calibrate(
            &mut chains,
            (elements / k) as u64,
            cfg.sample_ns.max(min_sample_ns),
        );
        let Some(s) = sample_until(&cfg.rule, || chase_sample(&mut chains, rounds)) else {
            return (out, false);
        };
        tick(&format!("MLP k={k}"));
        let lat1 = out.first().map_or(s.summary.median, |p| p.round_ns.median);
        out.push(MlpPoint {
            k,
            ns_per_load: s.summary.median / k as f64,
            overlap: k as f64 * lat1 / s.summary.median,
            round_ns: s.summary,
        });
        if s.stop == StopReason::Interrupted {
            return (out, false);
        }
    }
    (out, true)
}
