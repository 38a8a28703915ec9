//! Bandwidth: how many bytes per second the memory system sustains for each kernel, read:write
//! mix, store kind and data pattern, with thread scaling and a working-set sweep.
//!
//! **Method.** One pinned thread per chosen CPU, each with its own buffer allocated and
//! first-touched on its CPU (or bound to `--node`), split into the test's arrays. Threads start
//! each sample on a spinning barrier; a sample is timed from the earliest thread's start to the
//! latest thread's end ([`memsight_core::team`]) and runs enough passes over the buffer to take
//! ≥ `--sample-ms`; samples in which a thread lost its CPU are dropped and counted. Samples
//! continue until the median's 95% CI is within the target ([`memsight_core::stats`]). Figures are GB/s = 10⁹ B/s of program bytes, with the
//! estimated DRAM bytes beside them ([`spec`]); "best" is the fastest sample (STREAM reports the
//! best time). Kernels use the widest vector width the CPU has unless `--isa` says otherwise.

mod estimate;
pub use estimate::estimate;
mod findings;
mod l1;
pub use l1::L1Read;
pub mod held;
mod method;
mod settings;
mod suite;
pub use suite::Bandwidth;

use crate::measure::memlevel::MemLevel;
use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use memsight_core::Result;
use memsight_core::env::Environment;
use memsight_core::finding::Finding;
use memsight_core::stats::{StopReason, Summary};
use memsight_core::units::format_bytes;
use memsight_kernels::bandwidth::Isa;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::measure::rate::{
    BandwidthConfig, DEFAULT_ARRAY_GAP, Fill, NONZERO, Point, Threads, counted, spec,
    supported_isa, team,
};
use crate::measure::rate::{Named, TestSpec, measure_counted, scale};
pub use settings::{BandwidthSettings, Data};

/// The `bandwidth` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BandwidthResults {
    pub method: String,
    pub config: BandwidthConfig,
    pub points: Vec<Point>,
    pub sweep: Vec<Point>,
    /// The first single-thread L1-resident read, in bytes per core cycle against the load ports'
    /// limit (absent when no such point was measured).
    #[serde(default)]
    pub l1_read: Option<L1Read>,
    /// The DAX device or file the buffers were mapped from (`--dax`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<memsight_core::buffer::FileBacking>,
    /// How DRAM bytes were estimated, whether this core may make the estimate too high, and
    /// which counters counted them (absent from files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<counted::DramAccounting>,
    /// A load held at a set rate (`--rate`) instead of measured points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<held::Held>,
    /// What the run shows, each finding with the figures it cites (bare strings in files
    /// before schema 4).
    pub findings: Vec<Finding>,
}

/// Every test on `count` threads, in alternating rounds (A B C A B C …; one round when
/// `cfg.rounds` is 1), each round with its share of the stop rule; the rounds of a test merge
/// into its point. Returns the points and whether every round ran.
fn rounds(
    cfg: &BandwidthConfig,
    env: &Environment,
    count: usize,
    counting: &counted::Counting,
    tick: Tick<'_>,
) -> Result<(Vec<Point>, bool)> {
    let cpus = &cfg.cpus[..count];
    let n = cfg.rounds.max(1);
    let round_cfg = BandwidthConfig {
        rule: cfg.rule.per_round(n),
        ..cfg.clone()
    };
    let plan: Vec<(&TestSpec, u64)> = cfg
        .tests
        .iter()
        .flat_map(|spec| cfg.patterns_of(spec).into_iter().map(move |p| (spec, p)))
        .collect();
    let mut taken: Vec<Vec<Point>> = vec![Vec::new(); plan.len()];
    let mut complete = true;
    'rounds: for r in 0..n {
        for (slot, &(spec, pattern)) in taken.iter_mut().zip(&plan) {
            let of = crate::measure::sampling::round_label(r, n);
            tick(&format!("{} × {count} threads{of}", spec.name));
            let bytes = cfg.bytes_for(spec, count);
            let c = if n > 1 { &round_cfg } else { cfg };
            let Some(mut p) = measure_counted(spec, c, env, cpus, bytes, pattern, counting)? else {
                complete = false;
                break 'rounds;
            };
            p.level = Some(level_of(
                bytes,
                p.array_bytes,
                count,
                env,
                cfg.reach.as_ref(),
            ));
            let stop = p.stop;
            slot.push(p);
            if stop == StopReason::Interrupted {
                complete = false;
                break 'rounds;
            }
        }
    }
    Ok((taken.into_iter().filter_map(merge).collect(), complete))
}

/// A test's rounds as one point: every round's samples together, with the rounds' medians and
/// their spread.
fn merge(mut rounds: Vec<Point>) -> Option<Point> {
    if rounds.len() < 2 {
        return rounds.pop();
    }
    let program: Vec<Summary> = rounds.iter().map(|p| p.program_gbs.clone()).collect();
    let merged = memsight_core::stats::merge_rounds(&program)?;
    let spread = memsight_core::stats::between_rounds(&program, &merged);
    let first = rounds.swap_remove(0);
    let factor = first.dram_gbs.median / first.program_gbs.median;
    let stop = rounds
        .iter()
        .map(|p| p.stop)
        .find(|s| *s != StopReason::Converged)
        .unwrap_or(first.stop);
    let noisy = stop != StopReason::Converged && merged.rel_ci() > 0.05;
    Some(Point {
        dram_gbs: scale(&merged, if factor.is_finite() { factor } else { 1.0 }),
        round_medians: program.iter().map(|s| s.median).collect(),
        between_rounds: Some(spread),
        program_gbs: merged,
        stop,
        noisy,
        ..first
    })
}

/// Runs the plan. Returns results and whether it completed.
pub fn run(
    cfg: &BandwidthConfig,
    env: &Environment,
    tick: Tick<'_>,
) -> Result<Completed<BandwidthResults>> {
    let mut points = Vec::new();
    let mut sweep = Vec::new();
    let mut complete = true;
    let controllers =
        crate::measure::counters::Controllers::cas(&memsight_core::sysfs::FsRoot::from_env());
    let counting = counted::Counting::new(controllers.as_ref().ok());
    for &count in &cfg.thread_counts {
        let (mut team, done) = rounds(cfg, env, count, &counting, tick)?;
        points.append(&mut team);
        if !done {
            complete = false;
            break;
        }
    }
    if complete && !cfg.sweep_sizes.is_empty() {
        (sweep, complete) = size_sweep(cfg, env, &counting, tick)?;
    }
    let mut findings = findings::findings(cfg, &points, &sweep);
    let counted_any = points
        .iter()
        .chain(&sweep)
        .any(|p| p.counted_dram.is_some());
    findings.extend(
        counting
            .refused
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .map(Finding::unsampled),
    );
    findings.extend(counted::evasion_finding(env, counted_any).map(Finding::unsampled));
    let (l1_read, l1_note) = if complete {
        l1::l1_read(&points, &sweep, env)?
    } else {
        (None, None)
    };
    findings.extend(l1_note);
    let memory = cfg.dax.map(|d| d.probe()).transpose()?;
    let mut method = method::describe(cfg);
    if let Some(m) = &memory {
        method += &format!(
            " Memory: {} (the page kind is the mapping's, not the flag's).",
            m.describe()
        );
        findings.extend(crate::measure::dax_finding(m).map(Finding::unsampled));
    }
    Ok(Completed::new(
        BandwidthResults {
            method,
            config: cfg.clone(),
            points,
            sweep,
            l1_read,
            memory,
            dram: Some(counted::accounting(env, &controllers)),
            held: None,
            findings,
        },
        complete,
    ))
}

/// Read, write and copy on one core at every size of the sweep, in turn. Returns the points and
/// whether the sweep ran to its end.
fn size_sweep(
    cfg: &BandwidthConfig,
    env: &Environment,
    counting: &counted::Counting,
    tick: Tick<'_>,
) -> Result<(Vec<Point>, bool)> {
    let mut sweep = Vec::new();
    let one = &cfg.cpus[..1];
    for named in [Named::Read, Named::Write, Named::Copy] {
        let spec = named.spec();
        for &size in &cfg.sweep_sizes {
            tick(&format!("sweep {} {}", spec.name, format_bytes(size)));
            let Some(mut p) =
                measure_counted(&spec, cfg, env, one, size, cfg.patterns[0], counting)?
            else {
                return Ok((sweep, false));
            };
            let array = p.array_bytes;
            p.level = Some(level_of(size, array, 1, env, cfg.reach.as_ref()));
            let stop = p.stop;
            sweep.push(p);
            if stop == StopReason::Interrupted {
                return Ok((sweep, false));
            }
        }
    }
    Ok((sweep, true))
}

/// The level a team's working sets live in: memory from the start of the memory plateau on
/// the core's latency curve on (and, where streaming was checked, together past where one core
/// streaming reaches memory, else the last-level cache), else the first reported cache whose instance holds the
/// working sets of the threads that may share it (teams are taken to be packed, the worst
/// case for a shared cache).
fn level_of(
    bytes: u64,
    array_bytes: u64,
    threads: usize,
    env: &Environment,
    reach: Option<&crate::measure::reach::MemoryReach>,
) -> MemLevel {
    if let Some(r) = reach
        && bytes >= r.memory.from_bytes
    {
        if r.holds_in_memory(bytes, array_bytes, threads) {
            return MemLevel::Memory;
        }
        // On the latency curve's memory plateau, yet streamed partly from a cache: the
        // last-level cache's reach (`crate::measure::reach::stream`).
        if let Some(l) = (1..=5u8)
            .rev()
            .find(|&l| env.topology.cache(l.into()).is_some())
        {
            return MemLevel::Cache(l);
        }
    }
    (1..=5u8)
        .filter_map(|l| env.topology.cache(l.into()).map(|c| (l, c)))
        .find(|(_, c)| {
            bytes * threads.clamp(1, c.threads_per_instance.max(1)) as u64 <= c.size_bytes
        })
        .map_or(MemLevel::Memory, |(l, _)| MemLevel::Cache(l))
}
