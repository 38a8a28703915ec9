//! Running the ladder on one CPU: buffers, chains, samples, the TLB pair and the MLP sweep.

use memsight_core::Result;
use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_core::stats::{StopReason, sample_until};
use memsight_kernels::chase::Chains;

use crate::measure::chase::{calibrate, chase_sample, climb_buffers, main_buffer};

use super::levels::detect;
use super::{CpuLadder, Ladder, LadderConfig, Mlp, MlpPoint, Point, TlbPoint};

use crate::measure::progress::Tick;

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

/// The huge-page twin for the TLB cost, when asked for and when the kernel gives huge pages.
fn huge_buffer(cfg: &LadderConfig, env: &Environment, max: u64) -> Result<Option<Buffer>> {
    if !cfg.tlb_compare {
        return Ok(None);
    }
    let req = BufferRequest {
        bytes: max,
        kind: PageKind::Huge2M,
        node: cfg.node,
        dax: cfg.dax,
    };
    let mut b = Buffer::allocate_preferring(req, env)?;
    // A "huge" buffer that fell back to small pages cannot show the TLB cost: probe its page
    // kind on a first 4 MiB.
    b.touch_to((4 << 20).min(max as usize));
    b.verify();
    b.check_thp();
    let huge = b.report().kind != PageKind::Base4K && b.report().huge_fraction.unwrap_or(0.0) > 0.5;
    Ok(huge.then_some(b))
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
    let clock = crate::measure::clock::measure(cpu);
    let ghz = clock.trusted_ghz();
    let max = *cfg.sizes.last().expect("at least one size");
    let evict = (2 * env.llc_bytes()) as usize;
    let mut main = main_buffer(cfg, env, max)?;
    let mut huge = huge_buffer(cfg, env, max)?;
    let mut buffers: Vec<&mut Buffer> = vec![&mut main];
    buffers.extend(huge.as_mut());
    let say = |size: u64, kind: PageKind| {
        tick(&format!(
            "CPU {cpu}: {} on {kind}",
            memsight_core::units::format_bytes(size)
        ))
    };
    let (mut points, mut complete) =
        climb_buffers(cfg, &mut buffers, evict, min_sample_ns, ghz, &say);
    let main_points = points.remove(0);
    let huge_points = points.pop().unwrap_or_default();
    // The buffers' reports describe the memory the ladder used.
    let used = main_points.last().map_or(0, |p| p.size_bytes) as usize;
    main.truncate(used.max(1));
    main.check_thp();
    if let Some(h) = huge.as_mut() {
        h.truncate(used.max(1));
    }
    let tlb = tlb_points(&main_points, &huge_points);
    let mlp = if complete && cfg.max_parallel > 1 && used > 0 {
        let (mlp, done) =
            mlp_in_memory(cfg, env, &main_points, huge.is_some(), min_sample_ns, tick)?;
        complete &= done;
        mlp
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

/// The MLP sweep on its own buffer, sized so that every chain runs from memory: the working set
/// of the core's reach on this ladder's curve (or, where the ladder stopped short of memory,
/// past twice every reported cache). The buffer is on huge pages where the TLB twin got them
/// (so page walks do not add to every miss), else on the ladder's page kind. Where the system
/// cannot give that much memory, the sweep is empty and its basis says why.
fn mlp_in_memory(
    cfg: &LadderConfig,
    env: &Environment,
    main_points: &[Point],
    huge: bool,
    min_sample_ns: f64,
    tick: Tick,
) -> Result<(Option<Mlp>, bool)> {
    let reported = crate::measure::reach::largest_reported(env);
    let (size, basis) = match crate::measure::reach::memory_start(
        &super::curve(main_points),
        reported,
    ) {
        Some(memory) => {
            let reach = crate::measure::reach::MemoryReach {
                cpu: cfg.cpus.first().copied().unwrap_or(0),
                memory,
                source: crate::measure::reach::ReachSource::Ladder,
                stream: None,
            };
            let size = reach.working_set();
            (size, reach.describe(size))
        }
        None => {
            let size = (4 * reported).max(crate::measure::reach::MIN_WORKING_SET);
            (
                size,
                format!(
                    "{} lies past twice every cache the OS reports; the ladder stopped before its memory plateau",
                    memsight_core::units::format_bytes(size)
                ),
            )
        }
    };
    let size = size.next_multiple_of(2 << 20);
    let req = BufferRequest {
        bytes: size,
        kind: if huge {
            PageKind::Huge2M
        } else {
            cfg.page_kind
        },
        node: cfg.node,
        dax: cfg.dax,
    };
    let buf = if huge {
        Buffer::allocate_preferring(req, env)
    } else {
        Buffer::allocate(req, env)
    };
    let mut buf = match buf {
        Ok(b) => b,
        Err(memsight_core::Error::Input(why)) => {
            let mlp = Mlp {
                size_bytes: size,
                page_kind: req.kind,
                points: Vec::new(),
                basis: format!("not measured: {why}"),
            };
            return Ok((Some(mlp), true));
        }
        Err(e) => return Err(e),
    };
    if cfg.interleave {
        buf.interleave(&env.allowed_nodes)?;
    }
    buf.touch();
    buf.check_thp();
    let kind = buf.report().kind;
    let (points, done) = mlp_sweep(&mut buf, size, cfg, min_sample_ns, tick);
    Ok((
        Some(Mlp {
            size_bytes: size,
            page_kind: kind,
            points,
            basis,
        }),
        done,
    ))
}

/// k = 1 … max independent chains over the same `size` bytes, walked in lockstep. The set is in
/// memory, so no flush is needed and a partial lap warms the chains; a point whose round is
/// shorter than one chain's ([`super::MLP_ROUND_FLOOR`]) is marked impossible.
fn mlp_sweep(
    buf: &mut Buffer,
    size: u64,
    cfg: &LadderConfig,
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
        let rounds = calibrate(
            &mut chains,
            ((elements / k) as u64).min(1 << 17),
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
            impossible: s.summary.median < super::MLP_ROUND_FLOOR * lat1,
            round_ns: s.summary,
        });
        if s.stop == StopReason::Interrupted {
            return (out, false);
        }
    }
    (out, true)
}
