//! The tier study's findings, in words with their evidence.

use memsight_core::finding::{Cited, Finding};
use memsight_core::ratio::{Ratio, Relation};

use super::measure::{MemTarget, TargetFigures};
use super::plan::TierPlan;
use super::sweeps::{NearSweep, WeightedSweep};

fn med(s: &Option<memsight_core::stats::Summary>) -> Option<f64> {
    s.as_ref().map(|s| s.median)
}

/// The figures a target's findings rest on: every sampled figure of the target (a finding about
/// a target is marked where any of them rests on disturbed samples, which errs on the side of
/// doubt).
fn target_cites(t: &TargetFigures) -> Vec<Cited> {
    let label = t.target.label();
    let mut out: Vec<Cited> = [
        ("read latency", "ns", &t.read_latency_ns),
        ("write latency", "ns", &t.write_latency_ns),
        ("read bandwidth", "GB/s", &t.read_gbs),
        ("write bandwidth", "GB/s", &t.write_gbs),
        ("NT-write bandwidth", "GB/s", &t.write_nt_gbs),
    ]
    .into_iter()
    .filter_map(|(what, unit, s)| Some(Cited::of(format!("{label} {what}"), unit, s.as_ref()?)))
    .collect();
    out.extend(t.block_latency.iter().map(|b| {
        Cited::of(
            format!("{label} {} B block latency", b.block_bytes),
            "ns",
            &b.ns,
        )
    }));
    out.extend(t.granularity.iter().map(|p| {
        Cited::of(
            format!(
                "{label} {} {} B random blocks, {} thread(s)",
                p.access.name(),
                p.block_bytes,
                p.threads
            ),
            "GB/s",
            &p.gbs,
        )
    }));
    out
}

/// Everything worth saying about the figures.
pub fn findings(
    plan: &TierPlan,
    targets: &[TargetFigures],
    near: Option<&NearSweep>,
    weighted: Option<&WeightedSweep>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if plan.tiers.len() == 1 {
        let nodes: Vec<String> = plan.tiers[0]
            .nodes
            .iter()
            .map(|n| n.node.to_string())
            .collect();
        out.push(Finding::unsampled(format!(
            "one memory tier here ({}; node {}): nothing slower to compare with; CXL, persistent-memory and HBM nodes would appear as further tiers",
            plan.tiers[0].label,
            nodes.join(", ")
        )));
    }
    let base = targets.iter().find(|t| t.tier == Some(0));
    for t in targets {
        let mut said: Vec<String> = asymmetry(t);
        let mut cites = target_cites(t);
        if let Some(b) = base
            && !std::ptr::eq(b, t)
            && let Some(f) = against_fastest(b, t)
        {
            said.push(f);
            cites.extend(target_cites(b));
        }
        out.extend(said.into_iter().map(|f| Finding::citing(f, cites.clone())));
        out.extend(
            claims(plan, t)
                .into_iter()
                .map(|f| Finding::citing(f, target_cites(t))),
        );
        out.extend(dax(plan, t).into_iter().map(Finding::from));
    }
    out.extend(plan.notes.iter().cloned().map(Finding::from));
    if let Some(n) = near {
        // The sweep's plateaus and miss rates come from every point of it: each of its
        // findings cites them all, so that one resting on a disturbed point says so.
        let cites = near_cites(n);
        out.extend(n.analysis.findings.iter().map(|f| {
            Finding::citing(format!("near memory (node {}): {f}", n.node), cites.clone())
        }));
    }
    if let Some(w) = weighted {
        out.extend(weighted_findings(w).into_iter().map(Finding::from));
    }
    out
}

/// Every sampled figure of the near-memory sweep: each size's latency, read and mix bandwidth.
fn near_cites(n: &super::sweeps::NearSweep) -> Vec<Cited> {
    let mut out = Vec::new();
    for p in &n.points {
        let size = memsight_core::units::format_bytes(p.size_bytes);
        out.push(Cited::of(format!("latency at {size}"), "ns", &p.latency_ns));
        if let Some(s) = &p.read_gbs {
            out.push(Cited::of(format!("read at {size}"), "GB/s", s));
        }
        if let Some(s) = &p.mix_gbs {
            out.push(Cited::of(format!("2:1 mix at {size}"), "GB/s", s));
        }
    }
    out
}

/// Idle latency by access size: how much a larger read costs over one line.
fn block_latency_finding(t: &TargetFigures) -> Option<String> {
    let first = t.block_latency.first()?;
    let last = t.block_latency.last()?;
    if t.block_latency.len() < 2 {
        return None;
    }
    let list: Vec<String> = t
        .block_latency
        .iter()
        .map(|b| format!("{} B {:.0}", b.block_bytes, b.ns.median))
        .collect();
    // A step that reads more lines cannot cost less than one that reads the first of them.
    if let Some(b) = t
        .block_latency
        .iter()
        .find(|b| b.ns.median < 0.9 * first.ns.median)
    {
        return Some(format!(
            "{}: idle latency by access size not reported: a {} B step took {:.0} ns, {:.2}× a {} B step ({:.0} ns), and a step that reads more lines cannot cost less than one that reads the first of them by itself: part of the chase was served from a cache, the smaller step was disturbed, or the memory controller kept rows open longer for the larger accesses (an adaptive page policy), so the figures say nothing of the medium's access granularity (measure again; a larger --latency-size rules out the cache)",
            t.target.label(),
            b.block_bytes,
            b.ns.median,
            b.ns.median / first.ns.median,
            first.block_bytes,
            first.ns.median
        ));
    }
    let ratio = last.ns.median / first.ns.median;
    // (The same within the noise of the two figures, or within 10%: the band the granule
    // finding uses.)
    let same = ratio < 1.1 || Ratio::of(&last.ns, &first.ns).relation() != Relation::Above;
    let why = if same {
        "reading the whole block costs about what one line does: the medium or its controller delivers that much at once (Intel's Optane talk: 256 B reads cost as little as 64 B on Optane)"
    } else {
        "the extra lines of a block arrive after the first: larger accesses wait for them (usual for DRAM, where every line is its own burst)"
    };
    Some(format!(
        "{}: idle latency by access size (each chase step reads the whole block): {} ns; {} B costs {ratio:.2}× {} B: {why}",
        t.target.label(),
        list.join(", "),
        last.block_bytes,
        first.block_bytes
    ))
}

/// Read against write latency, and the granule, of one target.
fn asymmetry(t: &TargetFigures) -> Vec<String> {
    let mut out = Vec::new();
    let label = t.target.label();
    if let (Some(r), Some(w)) = (med(&t.read_latency_ns), med(&t.write_latency_ns)) {
        out.push(format!(
            "{label}: idle read latency {r:.0} ns, write (read-modify-write) {w:.0} ns ({:.2}×)",
            w / r
        ));
    }
    out.extend(block_latency_finding(t));
    if let (None, Some(s)) = (t.knee_gbs, t.saturation_gbs) {
        out.push(format!(
            "{label}: loaded latency stayed below 2 × idle up to {s:.1} GB/s (the most the load threads generated): no knee within reach"
        ));
    }
    if let Some(g) = t.read_granule {
        let why = if g >= 256 {
            "a 64-byte random read costs as much as a whole media unit: the medium reads in units this large (Optane: 256 B)"
        } else if g == 128 {
            "the adjacent-line prefetcher fetches 128-byte pairs, so 64 and 128 B random reads cost alike (usual for DRAM)"
        } else {
            "random reads cost in proportion to their size from 64 B up"
        };
        out.push(format!(
            "{label}: effective random-read granularity {g} B — {why}"
        ));
    }
    if let (Some(rg), Some(wg)) = (t.read_granule, t.write_granule)
        && wg > rg
    {
        out.push(format!(
            "{label}: writes have a coarser granule ({wg} B) than reads ({rg} B): a small random write costs a read-modify-write of a larger unit"
        ));
    }
    out
}

/// A slower target against the fastest tier's first node.
fn against_fastest(b: &TargetFigures, t: &TargetFigures) -> Option<String> {
    let (bl, tl) = (med(&b.read_latency_ns)?, med(&t.read_latency_ns)?);
    let bw = match (med(&b.read_gbs), med(&t.read_gbs)) {
        (Some(x), Some(y)) if x > 0.0 => format!(", read bandwidth {y:.1} GB/s ({:.2}×)", y / x),
        _ => String::new(),
    };
    // A DAX target's label says what it is; a node's kind comes from the firmware.
    let kind = match (&t.target, t.kind.as_deref()) {
        (MemTarget::Dax { .. }, _) => String::new(),
        (_, Some(k)) => format!(" ({k})"),
        (_, None) => " (kind not reported)".to_string(),
    };
    Some(format!(
        "{}{kind} against {}: read latency {tl:.0} ns ({:.2}×){bw}",
        t.target.label(),
        b.target.label(),
        tl / bl
    ))
}

/// Measured against the firmware's HMAT claims.
fn claims(plan: &TierPlan, t: &TargetFigures) -> Vec<String> {
    let MemTarget::Node { node } = t.target else {
        return Vec::new();
    };
    let Some(c) = plan
        .nodes()
        .find(|n| n.node == node)
        .and_then(|n| n.claim.as_ref())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let (Some(m), Some(cl)) = (
        med(&t.read_latency_ns),
        c.read_latency_ns.filter(|&x| x > 0),
    ) {
        out.push(format!(
            "node {node}: measured read latency {m:.0} ns is {:.2}× the firmware's claim ({cl} ns; HMAT figures are idle, from the memory controller, without the cache hierarchy)",
            m / cl as f64
        ));
    }
    if let (Some(m), Some(cl)) = (med(&t.read_gbs), c.read_bandwidth_mbs.filter(|&x| x > 0)) {
        out.push(format!(
            "node {node}: measured read bandwidth {m:.1} GB/s is {:.2}× the firmware's claim ({cl} MB/s)",
            m * 1000.0 / cl as f64
        ));
    }
    out
}

/// What DAX figures mean.
fn dax(plan: &TierPlan, t: &TargetFigures) -> Vec<String> {
    let MemTarget::Dax { backing } = &t.target else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.extend(crate::measure::dax_finding(backing));
    if let Some(c) = t.persist_cost {
        // (The sentence follows the ratio: within 10%, the band the granule uses, persisting
        // costs nothing this measurement can tell.)
        let cost = if c < 1.1 {
            format!(
                "costs such writes nothing measurable here ({c:.2}× unpersisted ones, within 10%)"
            )
        } else {
            format!("makes such writes {c:.2}× slower")
        };
        out.push(format!(
            "{}: persisting each 64-byte random write (line write-back + sfence) {cost}; {}",
            t.target.label(),
            persistence_meaning(plan)
        ));
    }
    out
}

/// What the platform's persistence domain means for the persist cost measured.
fn persistence_meaning(plan: &TierPlan) -> String {
    use memsight_core::nvdimm::PersistenceDomain;
    let mut domains: Vec<&PersistenceDomain> = plan
        .persistence
        .iter()
        .map(|r| &r.persistence_domain)
        .collect();
    domains.dedup();
    match domains.as_slice() {
        [] => "no persistent-memory region is published here (/sys/bus/nd), so the platform states no persistence domain: with ADR this cost is what software pays on every persist, with eADR the write-back could be skipped".to_string(),
        [d] => format!("persistence domain {}: {}", d.short(), d.meaning()),
        _ => "the regions differ in persistence domain (see each region's note): the cost applies as measured on ADR regions only".to_string(),
    }
}

fn weighted_findings(w: &WeightedSweep) -> Vec<String> {
    let mut out = Vec::new();
    let read = |r| {
        w.points
            .iter()
            .find(|p| p.ratio == r)
            .and_then(|p| med(&p.read_gbs))
    };
    let local = w
        .points
        .iter()
        .find(|p| p.ratio.far == 0)
        .and_then(|p| med(&p.read_gbs));
    if let (Some(best), Some(l)) = (w.best_read, local)
        && let Some(b) = read(best)
    {
        out.push(format!(
            "weighted interleave node {}:{}: best read bandwidth at {best} ({b:.1} GB/s, {:+.0}% against all pages on node {})",
            w.fast,
            w.slow,
            100.0 * (b / l - 1.0),
            w.fast
        ));
    }
    if let Some(m) = w.measured_ratio {
        out.push(format!(
            "the two nodes' measured read bandwidths suggest {m}{}",
            w.claimed_ratio.map_or(String::new(), |c| format!(
                "; the firmware's figures suggest {c}"
            ))
        ));
    }
    out.extend(w.notes.iter().cloned());
    for p in &w.restore_problems {
        out.push(format!("WARNING: {p}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiers::plan::{Tier, TierNode};
    use memsight_core::stats::summarize;

    fn node(node: usize, kind: &str, claim: Option<crate::numa::Claim>) -> TierNode {
        TierNode {
            node,
            kind: Some(kind.into()),
            cpu_less: node > 0,
            memory_bytes: 64 << 30,
            initiator: 0,
            cpus: vec![0, 1],
            claim,
        }
    }

    fn target(node: usize, tier: usize, read_ns: f64, write_ns: f64, gbs: f64) -> TargetFigures {
        TargetFigures {
            target: MemTarget::Node { node },
            tier: Some(tier),
            kind: Some(if tier == 0 { "DRAM" } else { "CXL" }.into()),
            cpus: vec![0, 1],
            read_latency_ns: Some(summarize(&[read_ns])),
            write_latency_ns: Some(summarize(&[write_ns])),
            block_latency: [(64, read_ns), (256, read_ns * 1.02)]
                .iter()
                .map(|&(block_bytes, ns)| super::super::measure::BlockLatency {
                    block_bytes,
                    ns: summarize(&[ns]),
                })
                .collect(),
            read_gbs: Some(summarize(&[gbs])),
            write_gbs: None,
            write_nt_gbs: None,
            knee_gbs: None,
            saturation_gbs: Some(20.0),
            granularity: Vec::new(),
            read_granule: Some(256),
            write_granule: Some(256),
            persist_cost: None,
        }
    }

    /// A DRAM tier and a CXL tier: the slower one against the fastest, the firmware's claim
    /// against the measurement, the read/write asymmetry and the granule.
    #[test]
    fn a_slower_tier_is_compared_with_the_fastest_and_the_firmware() {
        let claim = crate::numa::Claim {
            node: 1,
            initiators: vec![0],
            latency_ratio: None,
            bandwidth_ratio: None,
            write_bandwidth_ratio: None,
            read_latency_ns: Some(250),
            write_latency_ns: None,
            read_bandwidth_mbs: Some(32000),
            write_bandwidth_mbs: None,
        };
        let plan = TierPlan {
            tiers: vec![
                Tier {
                    id: Some(4),
                    label: "DRAM".into(),
                    nodes: vec![node(0, "DRAM", None)],
                },
                Tier {
                    id: Some(22),
                    label: "CXL".into(),
                    nodes: vec![node(1, "CXL", Some(claim))],
                },
            ],
            near: None,
            weighted: None,
            notes: vec!["a note".into()],
            persistence: Vec::new(),
        };
        let targets = [
            target(0, 0, 110.0, 120.0, 60.0),
            target(1, 1, 300.0, 450.0, 15.0),
        ];
        let f = findings(&plan, &targets, None, None);
        let has = |s: &str| f.iter().any(|x| x.contains(s));
        assert!(
            has(
                "node 1 (CXL) against node 0: read latency 300 ns (2.73×), read bandwidth 15.0 GB/s (0.25×)"
            ),
            "{f:?}"
        );
        assert!(
            has("node 1: measured read latency 300 ns is 1.20× the firmware's claim (250 ns"),
            "{f:?}"
        );
        assert!(
            has(
                "node 1: measured read bandwidth 15.0 GB/s is 0.47× the firmware's claim (32000 MB/s)"
            ),
            "{f:?}"
        );
        assert!(
            has("node 1: idle read latency 300 ns, write (read-modify-write) 450 ns (1.50×)"),
            "{f:?}"
        );
        // A medium that reads 256 B at once costs about the same for 64 and 256 B.
        assert!(
            has("256 B costs 1.02× 64 B: reading the whole block costs about what one line does"),
            "{f:?}"
        );
        assert!(
            has("node 1: effective random-read granularity 256 B"),
            "{f:?}"
        );
        assert!(has("stayed below 2 × idle up to 20.0 GB/s"), "{f:?}");
        assert!(has("a note") && !has("one memory tier here"), "{f:?}");
    }

    /// A larger block cheaper than one line is refused as a measurement error, never reported
    /// as "the medium delivers that much at once".
    #[test]
    fn a_block_cheaper_than_one_line_is_refused() {
        let mut t = target(0, 0, 103.0, 110.0, 30.0);
        t.block_latency = [(64, 103.0), (128, 72.0), (512, 74.0)]
            .iter()
            .map(|&(block_bytes, ns)| super::super::measure::BlockLatency {
                block_bytes,
                ns: summarize(&[ns]),
            })
            .collect();
        let f = block_latency_finding(&t).unwrap();
        assert!(
            f.contains("not reported: a 128 B step took 72 ns, 0.70× a 64 B step"),
            "{f}"
        );
        assert!(!f.contains("delivers that much at once"), "{f}");
    }
}
