//! The two sweeps over placements: working set against near memory, and DRAM:far page weights.

use crate::measure::progress::Tick;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::buffer::Weighted;
use memsight_core::env::Environment;
use memsight_core::stats::{StopRule, Summary};
use memsight_core::sysfs::FsRoot;
use memsight_core::{Result, cancel};

use super::TiersSettings;
use super::nearmem::{NearAnalysis, NearPoint, analyse};
use super::plan::{Mechanism, NearMemory, Ratio, WeightedPlan, proportional};
use super::weights::WeightGuard;
use crate::measure::chase::LadderConfig;
use crate::measure::rate::spec::ratio;
use crate::measure::rate::{BandwidthConfig, Named, TestSpec};

/// The near-memory sweep's points and analysis.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NearSweep {
    pub node: usize,
    pub cpus: Vec<usize>,
    pub points: Vec<NearPoint>,
    pub analysis: NearAnalysis,
}

/// One weight ratio's bandwidths.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WeightedPoint {
    pub ratio: Ratio,
    /// Reads, every CPU, GB/s of program bytes.
    pub read_gbs: Option<Summary>,
    /// A 2:1 read:write mix (regular stores), GB/s of program bytes.
    pub mix_gbs: Option<Summary>,
}

/// The weighted-interleave sweep.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WeightedSweep {
    pub fast: usize,
    pub slow: usize,
    pub mechanism: Mechanism,
    pub points: Vec<WeightedPoint>,
    /// The ratio proportional to the two nodes' measured read bandwidths.
    pub measured_ratio: Option<Ratio>,
    pub claimed_ratio: Option<Ratio>,
    pub best_read: Option<Ratio>,
    pub best_mix: Option<Ratio>,
    /// Weights that could not be restored (should be empty).
    pub restore_problems: Vec<String>,
    /// How the placement was made when it was not as planned.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Latency and read bandwidth per working set on the node behind the near memory.
pub fn near_sweep(
    near: &NearMemory,
    cpus: &[usize],
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    sample_ns: f64,
    tick: Tick<'_>,
) -> Result<Option<NearSweep>> {
    tick(&format!(
        "near memory: latency over {} sizes",
        near.sizes.len()
    ));
    let cfg = LadderConfig {
        node: Some(near.node),
        ..LadderConfig::chase_point(&near.sizes, cpus[0], a.page_kind, rule)
    };
    let timer = memsight_core::timer::calibrate();
    let (chased, _) = crate::measure::chase::points(&cfg, env, timer.min_sample_ns)?;
    let mut points = Vec::new();
    // Ctrl-C during the ladder or after any point ends the sweep with what was measured.
    for p in &chased {
        if cancel::requested() {
            break;
        }
        tick(&format!(
            "near memory: read bandwidth at {}",
            memsight_core::units::format_bytes(p.size_bytes)
        ));
        let per_thread = (p.size_bytes / cpus.len() as u64).max(1 << 20);
        let on_node = |test: TestSpec, cpus: &[usize], per_thread: u64| {
            test_bandwidth(
                test,
                cpus,
                Some(near.node),
                None,
                per_thread,
                a,
                env,
                rule,
                sample_ns,
            )
        };
        let read = on_node(Named::Read.spec(), cpus, per_thread)?;
        let mix = on_node(ratio(2, 1, false)?, cpus, per_thread)?;
        // The light-load level: one CPU over the same working set.
        let one = if cpus.len() > 1 {
            on_node(Named::Read.spec(), &cpus[..1], p.size_bytes.max(1 << 20))?
        } else {
            None
        };
        points.push(NearPoint {
            size_bytes: p.size_bytes,
            latency_ns: p.ns.clone(),
            read_gbs: read,
            mix_gbs: mix,
            read_gbs_one: one,
            miss_latency: None,
            miss_bandwidth: None,
            miss_mix: None,
            miss_ideal: 0.0,
        });
    }
    let analysis = analyse(&mut points, near.bytes);
    Ok(Some(NearSweep {
        node: near.node,
        cpus: cpus.to_vec(),
        points,
        analysis,
    }))
}

#[allow(clippy::too_many_arguments)]
fn test_bandwidth(
    test: TestSpec,
    cpus: &[usize],
    node: Option<usize>,
    weighted: Option<Weighted>,
    per_thread: u64,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    sample_ns: f64,
) -> Result<Option<Summary>> {
    // Weighted placement splits by page: 4 KiB pages give the finest split.
    let page_kind = if weighted.is_some() {
        memsight_core::buffer::PageKind::Base4K
    } else {
        a.page_kind
    };
    let cfg = BandwidthConfig {
        node,
        weighted,
        ..BandwidthConfig::single(test, cpus, per_thread, page_kind, rule, sample_ns)?
    };
    cfg.measure_single(env)
}

/// Bandwidth per DRAM:far page ratio. Kernel weights are saved first and restored whatever
/// happens (the guard's drop).
pub fn weighted_sweep(
    plan: &WeightedPlan,
    measured: Option<(f64, f64)>,
    a: &TiersSettings,
    env: &Environment,
    rule: StopRule,
    sample_ns: f64,
    tick: Tick<'_>,
) -> Result<WeightedSweep> {
    let measured_ratio = measured.and_then(|(f, s)| proportional(f, s));
    let mut ratios = plan.ratios.clone();
    if let Some(r) = measured_ratio
        && !ratios.contains(&r)
    {
        ratios.push(r);
    }
    let fs = FsRoot::live();
    let mut notes = Vec::new();
    let mut guard = weight_guard(plan, &fs, &mut notes);
    let mechanism = if guard.is_some() {
        Mechanism::Kernel
    } else {
        Mechanism::Mbind
    };
    let mut points = Vec::new();
    for r in ratios {
        let point = weighted_point(plan, r, guard.as_ref(), a, env, (rule, sample_ns), tick)?;
        points.push(point);
        if cancel::requested() {
            break;
        }
    }
    let restore_problems = guard.as_mut().map(|g| g.restore()).unwrap_or_default();
    Ok(WeightedSweep {
        fast: plan.fast,
        slow: plan.slow,
        mechanism,
        notes,
        best_read: best(&points, |p| p.read_gbs.as_ref().map(|s| s.median)),
        best_mix: best(&points, |p| p.mix_gbs.as_ref().map(|s| s.median)),
        points,
        measured_ratio,
        claimed_ratio: plan.claimed,
        restore_problems,
    })
}

/// The kernel's weights, saved, where the plan uses them and they can be written. They are
/// global and need root: where they cannot be written, the same placement comes from per-range
/// mbind (said in `notes`).
fn weight_guard(plan: &WeightedPlan, fs: &FsRoot, notes: &mut Vec<String>) -> Option<WeightGuard> {
    match plan.mechanism {
        Mechanism::Kernel => {
            match WeightGuard::save(fs, &[plan.fast, plan.slow])
                .and_then(|g| g.probe_writable(plan.fast).map(|()| g))
            {
                Ok(g) => Some(g),
                Err(e) => {
                    notes.push(format!("kernel weights not usable ({e}): pages bound range by range with mbind instead"));
                    None
                }
            }
        }
        Mechanism::Mbind => None,
    }
}

/// Read and 2:1 read:write bandwidth with pages placed at ratio `r` (all on the fast node for
/// r:0), through the kernel's weights when `guard` holds them, else mbind.
fn weighted_point(
    plan: &WeightedPlan,
    r: Ratio,
    guard: Option<&WeightGuard>,
    a: &TiersSettings,
    env: &Environment,
    (rule, sample_ns): (StopRule, f64),
    tick: Tick<'_>,
) -> Result<WeightedPoint> {
    let (node, weighted) = if r.far == 0 {
        (Some(plan.fast), None)
    } else {
        if let Some(g) = guard {
            g.set(plan.fast, r.near)?;
            g.set(plan.slow, r.far)?;
        }
        let w = Weighted {
            nodes: vec![(plan.fast, r.near), (plan.slow, r.far)],
            kernel_policy: guard.is_some(),
        };
        (None, Some(w))
    };
    let mut point = WeightedPoint {
        ratio: r,
        read_gbs: None,
        mix_gbs: None,
    };
    let tests = [
        (Named::Read.spec(), &mut point.read_gbs),
        (ratio(2, 1, false)?, &mut point.mix_gbs),
    ];
    for (test, slot) in tests {
        tick(&format!("weighted interleave {r}: {}", test.name));
        *slot = test_bandwidth(
            test,
            &plan.cpus,
            node,
            weighted.clone(),
            a.bandwidth_for(plan.cpus.len()),
            a,
            env,
            rule,
            sample_ns,
        )?;
    }
    Ok(point)
}

/// The ratio with the highest figure `f`, among the points that have one.
fn best(points: &[WeightedPoint], f: fn(&WeightedPoint) -> Option<f64>) -> Option<Ratio> {
    points
        .iter()
        .filter_map(|p| f(p).map(|v| (p.ratio, v)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map(|x| x.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiers::plan::RATIOS;
    use memsight_core::topology::Topology;

    fn env() -> Environment {
        Environment::collect(&FsRoot::live(), Topology::load().unwrap(), false)
    }

    /// The sweep end to end on one node (fast = slow = node 0: every ratio places every page on
    /// node 0), both mechanisms where they can run; kernel weights are as before afterwards.
    #[test]
    fn the_weighted_sweep_runs_every_ratio_and_restores_the_weights() {
        let env = env();
        let cpus = vec![env.allowed_cpus[0]];
        let a = TiersSettings {
            bandwidth_bytes: Some(4 << 20),
            ..Default::default()
        };
        let (rule, ns) = crate::measure::sampling::stop_rule(0.05, 3, 0.05, 2.0).unwrap();
        let weights_dir = FsRoot::live().path(crate::tiers::weights::SYSFS);
        let read_weights = || {
            ["node0", "auto"]
                .map(|f| std::fs::read_to_string(weights_dir.join(f)).unwrap_or_default())
        };
        let before = read_weights();
        for mechanism in [Mechanism::Mbind, Mechanism::Kernel] {
            if mechanism == Mechanism::Kernel && !weights_dir.is_dir() {
                continue;
            }
            let plan = WeightedPlan {
                fast: 0,
                slow: 0,
                cpus: cpus.clone(),
                mechanism,
                ratios: RATIOS.to_vec(),
                claimed: Some(Ratio { near: 5, far: 2 }),
            };
            let w = weighted_sweep(&plan, Some((30.0, 10.0)), &a, &env, rule, ns, &|_| {}).unwrap();
            assert!(w.restore_problems.is_empty(), "{:?}", w.restore_problems);
            assert_eq!(w.measured_ratio, Some(Ratio { near: 3, far: 1 }));
            assert_eq!(w.points.len(), RATIOS.len(), "3:1 is already a fixed ratio");
            assert!(
                w.points
                    .iter()
                    .all(|p| p.read_gbs.is_some() && p.mix_gbs.is_some())
            );
            assert!(w.best_read.is_some() && w.best_mix.is_some());
            assert_eq!(read_weights(), before, "{mechanism:?}: weights as before");
        }
    }
}
