//! What a bandwidth run shows, in words.

use super::*;
use memsight_core::finding::{Cited, Finding};

pub(super) fn findings(cfg: &BandwidthConfig, points: &[Point], sweep: &[Point]) -> Vec<Finding> {
    let full = cfg.cpus.len();
    let at = |name: &str, threads: usize, pattern: Option<u64>| {
        points.iter().find(|p| {
            p.test.name == name
                && p.threads == threads
                && pattern.is_none_or(|pat| p.pattern == Some(Fill(pat)))
        })
    };
    let mut out = zero_findings(points, &at, full);
    // A working set that fits a cache says nothing of DRAM traffic or read-for-ownership.
    let cached = points
        .iter()
        .filter_map(|p| p.level)
        .find(|&l| l != MemLevel::Memory);
    if let Some(level) = cached {
        out.push(Finding::unsampled(format!(
            "{} per thread fits in {level}: these are cache bandwidths, not memory's, and no DRAM traffic is estimated for them",
            format_bytes(cfg.bytes_per_thread)
        )));
    }
    if cached.is_none() {
        out.extend(nt_finding(&at, full));
    }
    out.extend(clzero_finding(&at, full));
    if cfg.thread_counts.len() > 1 {
        out.extend(scaling_findings(cfg, &at, full));
    }
    if let Some(best) = points
        .iter()
        .filter(|p| p.threads == full && !p.zero_data() && cached.is_none())
        .max_by(|a, b| a.dram_gbs.median.total_cmp(&b.dram_gbs.median))
    {
        out.push(Finding::citing(
            format!(
                "highest estimated DRAM traffic with non-zero data: {:.1} GB/s with {} (DRAM read:write {})",
                best.dram_gbs.median, best.test.name, best.dram_ratio
            ),
            vec![Cited::of(
                format!("{} estimated DRAM traffic", best.test.name),
                "GB/s",
                &best.dram_gbs,
            )],
        ));
    }
    out.extend(sweep_findings(sweep));
    out.extend(
        cfg.skipped
            .iter()
            .map(|s| Finding::unsampled(format!("skipped {s}"))),
    );
    out.extend(doubt_findings(points, sweep));
    out
}

/// Non-temporal against regular stores of non-zero data on every thread, with the
/// read-for-ownership that regular stores add; the caller asks only where the working sets are in
/// memory.
fn nt_finding<'p>(at: &PointAt<'_, 'p>, full: usize) -> Option<Finding> {
    let w = at("write", full, Some(NONZERO))?;
    let nt = at("write-nt", full, Some(NONZERO))?;
    Some(Finding::citing(
        format!(
            "non-temporal stores: {:.1} GB/s of program writes vs {:.1} GB/s with regular stores ({:.2}×); regular stores also read each line for ownership, an estimated {:.1} GB/s more (none where the core skips that read for full-line stores)",
            nt.program_gbs.median,
            w.program_gbs.median,
            nt.program_gbs.median / w.program_gbs.median,
            w.dram_gbs.median - w.program_gbs.median
        ),
        vec![
            cite(nt),
            cite(w),
            Cited::of("write's estimated DRAM traffic", "GB/s", &w.dram_gbs),
        ],
    ))
}

/// Each test on one thread against every thread, as a share of linear scaling.
fn scaling_findings<'p>(cfg: &BandwidthConfig, at: &PointAt<'_, 'p>, full: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    for t in &cfg.tests {
        if let (Some(one), Some(all)) = (at(&t.name, 1, None), at(&t.name, full, None)) {
            out.push(Finding::citing(
                format!(
                    "{}: {:.1} GB/s on 1 thread, {:.1} GB/s on {full} ({:.0}% of linear)",
                    t.name,
                    one.program_gbs.median,
                    all.program_gbs.median,
                    100.0 * all.program_gbs.median / (one.program_gbs.median * full as f64)
                ),
                vec![cite(one), cite(all)],
            ));
        }
    }
    out
}

/// A point's program bandwidth as a finding cites it.
fn cite(p: &Point) -> Cited {
    Cited::of(
        format!("{} on {} thread(s)", p.test.name, p.threads),
        "GB/s",
        &p.program_gbs,
    )
}

/// Zeros against non-zero data for each fill measured with both, on every thread.
fn zero_findings<'p>(points: &'p [Point], at: &PointAt<'_, 'p>, full: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in points.iter().filter(|p| p.threads == full && p.zero_data()) {
        if let Some(nz) = at(&p.test.name, full, Some(NONZERO)) {
            let r = p.program_gbs.median / nz.program_gbs.median;
            out.push(Finding::citing(
                format!(
                    "{}: writing zeros runs at {:.1} GB/s vs {:.1} GB/s for 0xef bytes ({r:.2}×){}",
                    p.test.name,
                    p.program_gbs.median,
                    nz.program_gbs.median,
                    if r > 1.2 { ": zero lines are cheaper here (compressed or elided on the way to memory), so zero-filled buffers overstate write bandwidth" } else { "" }
                ),
                vec![
                    Cited::of(format!("{} of zeros", p.test.name), "GB/s", &p.program_gbs),
                    Cited::of(format!("{} of 0xef bytes", nz.test.name), "GB/s", &nz.program_gbs),
                ],
            ));
        }
    }
    out
}

/// The sweep's best read, write and copy per level, each level's best point cited.
fn sweep_findings(sweep: &[Point]) -> Vec<Finding> {
    let mut out = Vec::new();
    for name in ["read", "write", "copy"] {
        let best: Vec<(MemLevel, &Point)> = [
            MemLevel::Cache(1),
            MemLevel::Cache(2),
            MemLevel::Cache(3),
            MemLevel::Memory,
        ]
        .iter()
        .filter_map(|lvl| {
            let p = sweep
                .iter()
                .filter(|p| p.test.name == name && p.level == Some(*lvl))
                .max_by(|a, b| a.program_gbs.median.total_cmp(&b.program_gbs.median))?;
            Some((*lvl, p))
        })
        .collect();
        if !best.is_empty() {
            let text: Vec<String> = best
                .iter()
                .map(|(lvl, p)| format!("{lvl} {:.1}", p.program_gbs.median))
                .collect();
            let cites = best
                .iter()
                .map(|(lvl, p)| Cited::of(format!("{name} in {lvl}"), "GB/s", &p.program_gbs))
                .collect();
            out.push(Finding::citing(
                format!(
                    "sweep, {name}, best GB/s per level (1 thread): {}",
                    text.join(", ")
                ),
                cites,
            ));
        }
    }
    out
}

/// Which figures rest on disturbed samples and which did not converge: a count of the run's
/// doubt, not a conclusion, so it cites nothing.
fn doubt_findings(points: &[Point], sweep: &[Point]) -> Vec<Finding> {
    let mut out = Vec::new();
    let short: Vec<String> = points
        .iter()
        .chain(sweep)
        .filter_map(|p| {
            let f = p
                .program_gbs
                .shortfall
                .as_ref()
                .filter(|s| s.disturbed_kept > 0)?;
            Some(format!(
                "{} on {} thread(s) ({:.1} GB/s: {})",
                p.test.name,
                p.threads,
                p.program_gbs.median,
                f.describe()
            ))
        })
        .collect();
    if !short.is_empty() {
        out.push(Finding::unsampled(format!(
            "resting on disturbed samples (marked ⚠; slower than the machine, not to be acted on): {}",
            short.join("; ")
        )));
    }
    let noisy: Vec<&str> = points
        .iter()
        .filter(|p| p.noisy)
        .map(|p| p.test.name.as_str())
        .collect();
    if !noisy.is_empty() {
        out.push(Finding::unsampled(format!(
            "did not converge (CI wider than ±5%): {}; other load interfered",
            noisy.join(", ")
        )));
    }
    out
}

/// Finds the point of a test at a thread count writing a pattern (any pattern for `None`).
type PointAt<'f, 'p> = dyn Fn(&str, usize, Option<u64>) -> Option<&'p Point> + 'f;

/// CLZERO against non-temporal stores of the same data: CLZERO writes only zeros, and zero
/// lines can travel cheaper than others whatever wrote them, so NT stores of zeros are the
/// like-for-like point; NT stores of other data beside it show the data's own effect.
fn clzero_finding<'p>(at: &PointAt<'_, 'p>, full: usize) -> Option<Finding> {
    let z = at("write-clzero", full, None)?;
    let nonzero = at("write-nt", full, Some(NONZERO));
    let Some(nt0) = at("write-nt", full, Some(0)) else {
        return nonzero.map(|_| {
            Finding::unsampled("CLZERO is not compared with NT stores here: CLZERO writes only zeros and the NT stores wrote 0xef bytes, so a difference would include the data's own effect; run both with --pattern both")
        });
    };
    let r = z.program_gbs.median / nt0.program_gbs.median;
    let verdict = if (r - 1.0).abs() <= 0.1 {
        "CLZERO is no faster than NT stores of the same data".to_string()
    } else if r > 1.0 {
        format!("CLZERO runs {r:.2}× NT stores of the same data")
    } else {
        format!("CLZERO runs at {r:.2}× NT stores of the same data")
    };
    let mut s = format!(
        "CLZERO fills at {:.1} GB/s vs {:.1} GB/s for NT stores of zeros ({r:.2}×, same data, same program bytes): {verdict}",
        z.program_gbs.median, nt0.program_gbs.median
    );
    let mut cites = vec![
        Cited::of("CLZERO", "GB/s", &z.program_gbs),
        Cited::of("NT stores of zeros", "GB/s", &nt0.program_gbs),
    ];
    if let Some(nz) = nonzero {
        let d = nt0.program_gbs.median / nz.program_gbs.median;
        if d > 1.2 {
            s.push_str(&format!(
                "; NT stores of 0xef bytes run at {:.1} GB/s ({d:.2}× slower than zeros): that gap is the data (zero lines are cheaper on the way to memory), not the instruction",
                nz.program_gbs.median
            ));
            cites.push(Cited::of(
                "NT stores of 0xef bytes",
                "GB/s",
                &nz.program_gbs,
            ));
        }
    }
    Some(Finding::citing(s, cites))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rate::Named;
    use memsight_core::buffer::PageKind;
    use memsight_core::stats::StopRule;

    fn point(test: Named, threads: usize, pattern: Option<u64>, gbs: f64) -> Point {
        let spec = test.spec();
        let s = memsight_core::stats::summarize(&[gbs]);
        let factor = spec.bytes(1).dram() as f64 / spec.bytes(1).program() as f64;
        Point {
            dram_ratio: spec.dram_ratio(),
            test: spec,
            isa: Isa::Scalar,
            threads,
            cpus: (0..threads).collect(),
            bytes_per_thread: 1 << 27,
            array_bytes: 1 << 27,
            pattern: pattern.map(Fill),
            dram_gbs: scale(&s, factor),
            program_gbs: s,
            passes_per_sample: 1,
            stop: StopReason::Converged,
            noisy: false,
            level: None,
            counted_dram: None,
            round_medians: Vec::new(),
            between_rounds: None,
        }
    }

    fn config(threads: usize) -> BandwidthConfig {
        BandwidthConfig {
            cpus: (0..threads).collect(),
            thread_counts: vec![1, threads],
            ..BandwidthConfig::single(
                Named::Read.spec(),
                &[0],
                1 << 27,
                PageKind::Thp,
                StopRule {
                    warmup: 0,
                    min_samples: 1,
                    max_samples: 1,
                    target_rel_ci: 1.0,
                    budget_s: 1.0,
                },
                1e6,
            )
            .unwrap()
        }
    }

    /// Zeros written faster than data are called out; NT against regular stores gives the RFO
    /// traffic; scaling is against linear.
    #[test]
    fn zeros_nt_stores_and_scaling() {
        let mut cfg = config(4);
        cfg.tests = vec![Named::Read.spec()];
        let points = vec![
            point(Named::Write, 4, Some(NONZERO), 20.0),
            point(Named::Write, 4, Some(0), 45.0),
            point(Named::WriteNt, 4, Some(NONZERO), 30.0),
            point(Named::Read, 1, None, 10.0),
            point(Named::Read, 4, None, 30.0),
        ];
        let f = findings(&cfg, &points, &[]);
        let has = |s: &str| f.iter().any(|x| x.contains(s));
        assert!(
            has("writing zeros runs at 45.0 GB/s vs 20.0 GB/s") && has("zero lines are cheaper"),
            "{f:?}"
        );
        assert!(
            has("non-temporal stores: 30.0 GB/s") && has("an estimated 20.0 GB/s more"),
            "{f:?}"
        );
        assert!(
            has("read: 10.0 GB/s on 1 thread, 30.0 GB/s on 4 (75% of linear)"),
            "{f:?}"
        );
    }

    #[test]
    fn the_sweep_gives_the_best_per_level() {
        let cfg = config(1);
        let mut l1 = point(Named::Read, 1, None, 200.0);
        l1.level = Some(MemLevel::Cache(1));
        let mut mem = point(Named::Read, 1, None, 20.0);
        mem.level = Some(MemLevel::Memory);
        let mut mem2 = point(Named::Read, 1, None, 22.0);
        mem2.level = Some(MemLevel::Memory);
        let f = findings(&cfg, &[], &[l1, mem, mem2]);
        assert!(
            f.iter()
                .any(|x| x.text
                    == "sweep, read, best GB/s per level (1 thread): L1 200.0, memory 22.0"),
            "{f:?}"
        );
    }

    /// A working set in a cache gets no DRAM findings and says which cache it is in.
    #[test]
    fn cache_sized_runs_claim_no_dram_traffic() {
        let cfg = config(4);
        let mut points = vec![
            point(Named::Write, 4, Some(NONZERO), 200.0),
            point(Named::WriteNt, 4, Some(NONZERO), 90.0),
        ];
        for p in &mut points {
            p.level = Some(MemLevel::Cache(2));
        }
        let f = findings(&cfg, &points, &[]);
        let has = |s: &str| f.iter().any(|x| x.contains(s));
        assert!(has("128 MiB per thread fits in L2"), "{f:?}");
        assert!(
            !has("DRAM traffic with") && !has("read-for-ownership"),
            "{f:?}"
        );
        for p in &mut points {
            p.level = Some(MemLevel::Memory);
        }
        let f = findings(&cfg, &points, &[]);
        assert!(
            f.iter()
                .any(|x| x.contains("highest estimated DRAM traffic")),
            "{f:?}"
        );
    }

    /// CLZERO is compared with NT stores of zeros, never of other data: the 2× of zero lines
    /// is the data's effect (the EPYC 7002 review: CLZERO ≈ NT stores).
    #[test]
    fn clzero_is_compared_with_nt_stores_of_the_same_data() {
        let cfg = config(4);
        let clzero = point(Named::WriteClzero, 4, Some(0), 93.3);
        let nt_ef = point(Named::WriteNt, 4, Some(NONZERO), 43.0);
        let nt_zero = point(Named::WriteNt, 4, Some(0), 93.1);
        let f = findings(&cfg, &[clzero.clone(), nt_ef.clone(), nt_zero], &[]);
        let c = f
            .iter()
            .find(|x| x.starts_with("CLZERO"))
            .expect("a CLZERO finding");
        assert!(
            c.contains("93.3 GB/s vs 93.1 GB/s for NT stores of zeros")
                && c.contains("no faster than NT stores of the same data")
                && c.contains("that gap is the data"),
            "{c}"
        );
        assert!(!c.contains("vs 43.0"), "{c}");
        // Without the like-for-like point no ratio is given.
        let f = findings(&cfg, &[clzero, nt_ef], &[]);
        let c = f
            .iter()
            .find(|x| x.starts_with("CLZERO"))
            .expect("a CLZERO finding");
        assert!(c.contains("not compared") && !c.contains("GB/s"), "{c}");
    }

    /// A comparison citing a point that rests on disturbed samples says so (⚠, evidence in
    /// JSON); one on clean points carries no mark; the run's doubt list cites nothing.
    #[test]
    fn findings_on_disturbed_points_are_marked() {
        let cfg = config(4);
        let mut nt = point(Named::WriteNt, 4, Some(NONZERO), 30.0);
        nt.program_gbs.shortfall = Some(memsight_core::stats::Shortfall {
            clean: 1,
            wanted: 7,
            disturbed_kept: 6,
            cause: memsight_core::stats::Disturbance::LostCpu,
        });
        let points = vec![point(Named::Write, 4, Some(NONZERO), 20.0), nt];
        let f = findings(&cfg, &points, &[]);
        let nt = f
            .iter()
            .find(|x| x.contains("non-temporal stores: 30.0 GB/s"))
            .expect("the NT finding");
        assert!(nt.starts_with("⚠ "), "{nt}");
        assert_eq!(nt.evidence, memsight_core::finding::Evidence::Mixed);
        assert_eq!(nt.cites.len(), 3);
        let listed = f
            .iter()
            .find(|x| x.contains("resting on disturbed samples"))
            .expect("the doubt list");
        assert_eq!(listed.evidence, memsight_core::finding::Evidence::Unsampled);
        let clean = findings(
            &cfg,
            &[
                point(Named::Write, 4, Some(NONZERO), 20.0),
                point(Named::WriteNt, 4, Some(NONZERO), 30.0),
            ],
            &[],
        );
        let nt = clean
            .iter()
            .find(|x| x.contains("non-temporal stores"))
            .expect("the NT finding");
        assert!(!nt.starts_with("⚠"), "{nt}");
        assert_eq!(nt.evidence, memsight_core::finding::Evidence::Clean);
    }

    /// Beside CLZERO, NT fills are also measured with zeros.
    #[test]
    fn nt_fills_beside_clzero_also_write_zeros() {
        let mut cfg = config(1);
        cfg.patterns = vec![NONZERO];
        cfg.tests = vec![Named::WriteNt.spec(), Named::Write.spec()];
        assert_eq!(cfg.patterns_of(&Named::WriteNt.spec()), vec![NONZERO]);
        cfg.tests.push(Named::WriteClzero.spec());
        assert_eq!(cfg.patterns_of(&Named::WriteNt.spec()), vec![NONZERO, 0]);
        assert_eq!(cfg.patterns_of(&Named::Write.spec()), vec![NONZERO]);
        assert_eq!(cfg.patterns_of(&Named::WriteClzero.spec()), vec![0]);
        assert_eq!(cfg.patterns_of(&Named::Read.spec()), vec![NONZERO]);
        // (two NT fills, one regular, one CLZERO) at each of the two thread counts.
        assert_eq!(cfg.total_points(), 8);
    }
}
