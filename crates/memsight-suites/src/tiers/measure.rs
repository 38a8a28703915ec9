//! The figures of one memory target (a NUMA node, or DAX memory): idle read and write latency,
//! read/write bandwidth, the loaded-latency knee and the access-granularity curve.

use crate::measure::progress::Tick;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::buffer::{DaxTarget, FileBacking, PageKind};
use memsight_core::env::Environment;
use memsight_core::stats::{StopRule, Summary};
use memsight_core::{Result, cancel};
use memsight_kernels::granular::Access;

use super::granularity::{self, GranPoint, GranTarget};
use super::{Part, TiersSettings};
use crate::measure::chase::LadderConfig;
use crate::measure::rate::{BandwidthConfig, Named};

/// What is measured: a node, or memory mapped through DAX.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MemTarget {
    Node { node: usize },
    Dax { backing: FileBacking },
}

impl MemTarget {
    /// `node 2` or `DAX /dev/dax0.0 (emulated)`.
    pub fn label(&self) -> String {
        match self {
            MemTarget::Node { node } => format!("node {node}"),
            MemTarget::Dax { backing } => format!(
                "DAX {}{}",
                backing.path,
                if backing.kind == memsight_core::buffer::DaxKind::Emulated {
                    " (emulated)"
                } else {
                    ""
                }
            ),
        }
    }

    /// Key part for stored figures.
    pub fn key(&self) -> String {
        match self {
            MemTarget::Node { node } => format!("node{node}"),
            MemTarget::Dax { .. } => "dax".to_string(),
        }
    }
}

/// Every figure of one target.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TargetFigures {
    pub target: MemTarget,
    /// Index into the plan's tiers (DAX memory has none).
    pub tier: Option<usize>,
    pub kind: Option<String>,
    pub cpus: Vec<usize>,
    /// Idle load latency, ns (pointer chase).
    pub read_latency_ns: Option<Summary>,
    /// Idle latency of a dependent read-modify-write step, ns (write chase).
    pub write_latency_ns: Option<Summary>,
    /// Idle latency of a step that reads a whole block, by block size.
    #[serde(default)]
    pub block_latency: Vec<BlockLatency>,
    /// GB/s of program bytes, every CPU of `cpus`.
    pub read_gbs: Option<Summary>,
    pub write_gbs: Option<Summary>,
    pub write_nt_gbs: Option<Summary>,
    /// Bandwidth where loaded latency reaches the knee factor × idle, GB/s (estimated DRAM bytes).
    pub knee_gbs: Option<f64>,
    pub saturation_gbs: Option<f64>,
    pub granularity: Vec<GranPoint>,
    /// Effective granularity of random reads and of random writes (largest block costing no more
    /// than 1.25 × a 64-byte access), all threads.
    pub read_granule: Option<usize>,
    pub write_granule: Option<usize>,
    /// Bandwidth of 64-byte random writes ÷ the same with each line written back and fenced:
    /// the cost of persistence (≥ 1).
    pub persist_cost: Option<f64>,
}

/// Idle latency of one access size.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BlockLatency {
    pub block_bytes: usize,
    pub ns: Summary,
}

/// Where one target's buffers come from.
pub struct Where<'a> {
    pub target: MemTarget,
    pub tier: Option<usize>,
    pub kind: Option<String>,
    pub node: Option<usize>,
    pub dax: Option<&'static DaxTarget>,
    pub cpus: &'a [usize],
}

/// Measures one target; the flag is false when interrupted.
pub fn measure(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    (rule, sample_ns): (StopRule, f64),
    tick: Tick<'_>,
) -> Result<(TargetFigures, bool)> {
    let label = w.target.label();
    let mut f = unmeasured(w);
    if a.parts.contains(&Part::Latency) && !latencies(w, a, env, rule, &mut f, tick)? {
        return Ok((f, false));
    }
    if a.parts.contains(&Part::Bandwidth)
        && !bandwidths(w, a, env, (rule, sample_ns), &mut f, tick)?
    {
        return Ok((f, false));
    }
    if a.parts.contains(&Part::Loaded) && w.cpus.len() >= 2 {
        tick(&format!("{label}: loaded latency"));
        let (knee, sat) = loaded(w, a, env, machine)?;
        (f.knee_gbs, f.saturation_gbs) = (knee, sat);
        if cancel::requested() {
            return Ok((f, false));
        }
    }
    if a.parts.contains(&Part::Granularity) {
        let done = granularity_sweep(w, a, env, rule, sample_ns, &mut f, tick)?;
        if !done {
            return Ok((f, false));
        }
    }
    Ok((f, true))
}

/// A target's figures before anything is measured.
fn unmeasured(w: &Where) -> TargetFigures {
    TargetFigures {
        target: w.target.clone(),
        tier: w.tier,
        kind: w.kind.clone(),
        cpus: w.cpus.to_vec(),
        read_latency_ns: None,
        write_latency_ns: None,
        block_latency: Vec::new(),
        read_gbs: None,
        write_gbs: None,
        write_nt_gbs: None,
        knee_gbs: None,
        saturation_gbs: None,
        granularity: Vec::new(),
        read_granule: None,
        write_granule: None,
        persist_cost: None,
    }
}

/// Read and write latency, then the latency of each block size; false when interrupted.
fn latencies(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    f: &mut TargetFigures,
    tick: Tick<'_>,
) -> Result<bool> {
    let label = w.target.label();
    for write in [false, true] {
        tick(&format!(
            "{label}: {} latency",
            if write { "write" } else { "read" }
        ));
        let s = latency(w, a, env, rule, write)?;
        if cancel::requested() {
            return Ok(false);
        }
        *if write {
            &mut f.write_latency_ns
        } else {
            &mut f.read_latency_ns
        } = s;
    }
    for &block in &a.latency_blocks {
        tick(&format!("{label}: latency of {block}-byte reads"));
        let s = block_latency(w, a, env, rule, block)?;
        if cancel::requested() {
            return Ok(false);
        }
        f.block_latency.extend(s.map(|ns| BlockLatency {
            block_bytes: block,
            ns,
        }));
    }
    Ok(true)
}

/// Read, write and non-temporal-write bandwidth, each where this CPU can run it; false when
/// interrupted.
fn bandwidths(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    (rule, sample_ns): (StopRule, f64),
    f: &mut TargetFigures,
    tick: Tick<'_>,
) -> Result<bool> {
    let label = w.target.label();
    let isa = memsight_kernels::bandwidth::Isa::widest();
    type Slot = fn(&mut TargetFigures) -> &mut Option<Summary>;
    let tests: [(Named, Slot); 3] = [
        (Named::Read, |f| &mut f.read_gbs),
        (Named::Write, |f| &mut f.write_gbs),
        (Named::WriteNt, |f| &mut f.write_nt_gbs),
    ];
    for (test, slot) in tests {
        if test.spec().supported(isa).is_err() {
            continue;
        }
        tick(&format!("{label}: {} bandwidth", test.name()));
        let s = bandwidth(w, a, env, rule, sample_ns, test)?;
        if cancel::requested() {
            return Ok(false);
        }
        *slot(f) = s;
    }
    Ok(true)
}

fn latency(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    write: bool,
) -> Result<Option<Summary>> {
    let size = a.latency_bytes.expect("resolved in tiers::run");
    let cfg = LadderConfig {
        node: w.node,
        write,
        dax: w.dax,
        ..LadderConfig::chase_point(&[size], w.cpus[0], a.page_kind, rule)
    };
    chase_ns(&cfg, env)
}

/// The one point of a one-size ladder, ns.
fn chase_ns(cfg: &LadderConfig, env: &Environment) -> Result<Option<Summary>> {
    let timer = memsight_core::timer::calibrate();
    let (points, _) = crate::measure::chase::points(cfg, env, timer.min_sample_ns)?;
    Ok(points.first().map(|p| p.ns.clone()))
}

/// The chase whose every step reads a whole `block`, over the latency working set (stride at
/// least the block, so every block is an element's own).
fn block_latency(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    block: usize,
) -> Result<Option<Summary>> {
    let size = a.latency_bytes.expect("resolved in tiers::run");
    let base = LadderConfig::chase_point(&[size], w.cpus[0], a.page_kind, rule);
    let stride = base.stride.max(block);
    let cfg = LadderConfig {
        node: w.node,
        dax: w.dax,
        block,
        stride,
        sizes: vec![size / stride as u64 * stride as u64],
        ..base
    };
    chase_ns(&cfg, env)
}

fn bandwidth(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    sample_ns: f64,
    test: Named,
) -> Result<Option<Summary>> {
    let cfg = BandwidthConfig {
        node: w.node,
        dax: w.dax,
        ..BandwidthConfig::single(
            test.spec(),
            w.cpus,
            a.bandwidth_for(w.cpus.len()),
            a.page_kind,
            rule,
            sample_ns,
        )?
    };
    cfg.measure_single(env)
}

/// The loaded-latency knee with read traffic (estimated DRAM GB/s).
fn loaded(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
) -> Result<(Option<f64>, Option<f64>)> {
    let cfg = crate::loaded::LoadedSettings {
        mixes: vec![memsight_kernels::loadgen::TrafficMix::Reads],
        points: 5,
        // One mix: nothing to alternate with.
        rounds: 1,
        cpus: Some(w.cpus.to_vec()),
        node: w.node,
        chase_bytes: a.latency_bytes,
        page_kind: a.page_kind,
        sampling: crate::measure::sampling::Sampling {
            min_samples: a.sampling.min_samples,
            point_budget: a.sampling.point_budget,
            ..crate::loaded::LoadedSettings::default().sampling
        },
        dax: w.dax,
        ..Default::default()
    };
    let r = crate::loaded::run(&cfg, env, machine, &|_| {})?.results;
    Ok(r.curves
        .first()
        .map_or((None, None), |c| (c.knee_gbs, Some(c.saturation_gbs))))
}

/// Thread counts of the granularity sweep: one, and every CPU.
fn thread_counts(cpus: usize) -> Vec<usize> {
    let mut v = vec![1, cpus];
    v.dedup();
    v
}

fn granularity_sweep(
    w: &Where,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    sample_ns: f64,
    f: &mut TargetFigures,
    tick: Tick<'_>,
) -> Result<bool> {
    let t = GranTarget {
        node: w.node,
        dax: w.dax,
        cpus: w.cpus,
        total_bytes: a.granularity_bytes.expect("resolved in tiers::run"),
        page_kind: if w.dax.is_some() {
            PageKind::Base4K
        } else {
            a.page_kind
        },
        rule,
        sample_ns,
    };
    for &threads in &thread_counts(w.cpus.len()) {
        for &access in &a.accesses {
            if access.supported().is_err() {
                continue;
            }
            for &block in &a.blocks {
                tick(&format!(
                    "{}: random {} {} B × {threads} thread(s)",
                    w.target.label(),
                    access.name(),
                    block
                ));
                match granularity::measure(&t, env, access, block, threads)? {
                    Some(p) => f.granularity.push(p),
                    None => return Ok(false),
                }
                if cancel::requested() {
                    return Ok(false);
                }
            }
        }
    }
    let curve = |acc: Access| -> Vec<&GranPoint> {
        let max = w.cpus.len();
        f.granularity
            .iter()
            .filter(|p| p.access == acc && p.threads == max)
            .collect()
    };
    f.read_granule = agreed_granule(&f.granularity, Access::Read);
    f.write_granule = agreed_granule(&f.granularity, Access::Write);
    let at64 = |acc: Access| {
        curve(acc)
            .iter()
            .find(|p| p.block_bytes == 64)
            .map(|p| p.gbs.median)
    };
    f.persist_cost = match (at64(Access::Write), at64(Access::WritePersist)) {
        (Some(wr), Some(p)) if p > 0.0 => Some(wr / p),
        _ => None,
    };
    Ok(true)
}

/// The effective granule of `acc`, where every thread count measured gives the same one from
/// its clean points: one team's curve alone (a 2-thread point on a 2-CPU machine is the one most
/// often disturbed) says nothing the other counts contradict. None where they disagree or no
/// count has a clean curve.
fn agreed_granule(points: &[GranPoint], acc: Access) -> Option<usize> {
    let mut counts: Vec<usize> = points
        .iter()
        .filter(|p| p.access == acc)
        .map(|p| p.threads)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    let granules: Vec<Option<usize>> = counts
        .iter()
        .map(|&n| {
            let curve: Vec<&GranPoint> = points
                .iter()
                .filter(|p| p.access == acc && p.threads == n && !p.gbs.rests_on_disturbed())
                .collect();
            granularity::effective_granule(&curve)
        })
        .collect();
    let first = (*granules.first()?)?;
    granules.iter().all(|g| *g == Some(first)).then_some(first)
}
