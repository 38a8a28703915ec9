//! Which ranges stand out within their node, and what to do about them.

use memsight_core::edac::Controller;
use memsight_core::finding::{Cited, Finding};
use memsight_core::units::format_bytes;

use super::RangeFigures;

/// A robust z-score below this (or above its negative, for latency) flags a range …
const Z: f64 = 3.5;
/// … when it is also this far off the node's median: noise of a few percent is not a fault.
const OFF: f64 = 0.10;

/// Robust z-scores of `values` (median and MAD, as `fleet` scores nodes); the MAD is floored at
/// 1% of the median so identical ranges do not turn noise into huge scores.
pub fn robust_scores(values: &[f64]) -> Vec<f64> {
    let med = median(values);
    let mad = median(&values.iter().map(|v| (v - med).abs()).collect::<Vec<_>>());
    let scale = (1.4826 * mad).max(0.01 * med.abs()).max(f64::MIN_POSITIVE);
    values.iter().map(|v| (v - med) / scale).collect()
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Whether a value with this score stands out: slower bandwidth (`low_is_bad`) or higher
/// latency, far enough in score and in ratio to the median.
pub fn flag(value: f64, median: f64, score: f64, low_is_bad: bool) -> bool {
    if low_is_bad {
        score < -Z && value < (1.0 - OFF) * median
    } else {
        score > Z && value > (1.0 + OFF) * median
    }
}

/// Whether a range holds enough of the scan to be judged: an eighth of its span.
pub fn judged(r: &RangeFigures) -> bool {
    r.bytes >= r.granule / 8
}

/// Scores every range within its node and flags those that stand out.
pub fn score(ranges: &mut [RangeFigures]) {
    let mut nodes: Vec<Option<usize>> = ranges.iter().map(|r| r.node).collect();
    nodes.sort();
    nodes.dedup();
    for node in nodes {
        // A range holding little of the scan reads partly from the caches: not judged.
        let idx: Vec<usize> = (0..ranges.len())
            .filter(|&i| ranges[i].node == node && judged(&ranges[i]))
            .collect();
        for &i in &idx {
            ranges[i].flagged = false;
        }
        for latency in [false, true] {
            // A figure resting on disturbed samples is slower than the range: not scored.
            let get = |r: &RangeFigures| {
                let s = if latency {
                    r.latency_ns.as_ref()
                } else {
                    r.read_gbs.as_ref()
                };
                s.filter(|s| !s.rests_on_disturbed()).map(|s| s.median)
            };
            let have: Vec<(usize, f64)> = idx
                .iter()
                .filter_map(|&i| get(&ranges[i]).map(|v| (i, v)))
                .collect();
            // Fewer than four ranges give no trustworthy median and spread.
            if have.len() < 4 {
                continue;
            }
            let values: Vec<f64> = have.iter().map(|h| h.1).collect();
            let med = median(&values);
            for ((i, v), z) in have.iter().zip(robust_scores(&values)) {
                let r = &mut ranges[*i];
                if latency {
                    r.latency_score = Some(z);
                } else {
                    r.read_score = Some(z);
                }
                r.flagged |= flag(*v, med, z, !latency);
            }
        }
    }
}

/// What the scan says: the ranges that stand out, with what they map to and what to do; the
/// error counts; how much was scanned.
pub fn findings(
    ranges: &[RangeFigures],
    physical: bool,
    errors: &[Controller],
    dimm_mapping: &str,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    if !physical {
        out.push("frame numbers are hidden without root: ranges are virtual, so a slow range points at a node or at the moment, not at a part; run as root to scan by physical address".into());
    }
    for r in ranges.iter().filter(|r| r.flagged) {
        out.push(Finding::citing(
            describe(r, physical, dimm_mapping),
            cites(r),
        ));
    }
    let scored = ranges.iter().filter(|r| r.read_score.is_some()).count();
    let unjudged = ranges.iter().filter(|r| !judged(r)).count();
    if unjudged > 0 {
        out.push(Finding::unsampled(format!(
            "{unjudged} of {} ranges held less than an eighth of their span of the scan (the rest is the kernel's or other programs'): too little to judge, partly read from the caches",
            ranges.len()
        )));
    }
    let fast = fast_ranges(ranges);
    for r in &fast {
        out.push(Finding::citing(
            format!(
                "{} reads faster than its node's other ranges: part of it served from a cache (too little of it mapped to this scan), or not the node's memory; not a fault, but not a figure of the node either",
                located(r, physical)
            ),
            cites(r),
        ));
    }
    if ranges.iter().all(|r| !r.flagged) && fast.is_empty() {
        out.push(Finding::unsampled(if scored > 0 {
            format!(
                "no range stands out: {scored} of the {} ranges judged, each within {:.0}% of its node's median read bandwidth or inside its spread, in either direction",
                ranges.len(),
                OFF * 100.0
            )
        } else {
            format!(
                "{} range(s): too few judged per node (4 or more) to judge one against the others; scan more memory or use a smaller --granule",
                ranges.len()
            )
        }));
    }
    out.extend(
        memsight_core::edac::describe(errors)
            .into_iter()
            .map(Finding::from),
    );
    out
}

/// A range's figures, cited.
fn cites(r: &RangeFigures) -> Vec<Cited> {
    let at = format!("range {:#x}", r.start);
    let mut out = Vec::new();
    if let Some(s) = &r.read_gbs {
        out.push(Cited::of(format!("{at} read"), "GB/s", s));
    }
    if let Some(s) = &r.latency_ns {
        out.push(Cited::of(format!("{at} latency"), "ns", s));
    }
    out
}

/// Judged ranges that read faster than their node by the same margins a slow range is flagged
/// by: a cache or another memory, not the node's DRAM.
fn fast_ranges(ranges: &[RangeFigures]) -> Vec<&RangeFigures> {
    let mut out = Vec::new();
    for r in ranges
        .iter()
        .filter(|r| judged(r) && r.read_score.is_some_and(|z| z > Z))
    {
        let peers: Vec<f64> = ranges
            .iter()
            .filter(|q| q.node == r.node && judged(q))
            .filter_map(|q| q.read_gbs.as_ref().filter(|s| !s.rests_on_disturbed()))
            .map(|s| s.median)
            .collect();
        let med = median(&peers);
        if r.read_gbs
            .as_ref()
            .is_some_and(|s| s.median > (1.0 + OFF) * med)
        {
            out.push(r);
        }
    }
    out
}

/// The range and its scored figures, without any advice.
fn located(r: &RangeFigures, physical: bool) -> String {
    let what = format!(
        "{} range {:#x}–{:#x}{}{}{}",
        if physical { "physical" } else { "virtual" },
        r.start,
        r.start + r.granule,
        r.node.map_or(String::new(), |n| format!(", node {n}")),
        if r.blocks.is_empty() {
            String::new()
        } else {
            format!(
                ", memory blocks {}–{} ({})",
                r.blocks[0],
                r.blocks[r.blocks.len() - 1],
                r.zones.join(", ")
            )
        },
        if r.movable { ", Movable zone" } else { "" }
    );
    let figs = [
        r.read_gbs
            .as_ref()
            .zip(r.read_score)
            .map(|(s, z)| format!("read {:.1} GB/s (score {z:.1})", s.median)),
        r.latency_ns
            .as_ref()
            .zip(r.latency_score)
            .map(|(s, z)| format!("latency {:.0} ns (score {z:.1})", s.median)),
    ];
    let figs: Vec<String> = figs.into_iter().flatten().collect();
    format!(
        "{what}: {} ({} scanned)",
        figs.join(", "),
        format_bytes(r.bytes)
    )
}

fn describe(r: &RangeFigures, physical: bool, dimm_mapping: &str) -> String {
    let todo = if let Some(c) = &r.cxl_region {
        format!(
            "the range is CXL memory ({c}): check the device's link width and speed (`cxl list`, `lspci -vv`) and whether it sits behind a switch"
        )
    } else if r.movable {
        "the range is in the Movable zone, where hot-plugged memory is onlined: check where it comes from (a CXL or virtual device, another socket's memory) before suspecting a DIMM".to_string()
    } else if physical {
        format!(
            "memory behind one channel or DIMM set: compare `memsight dimms` for a DIMM trained below its rated speed or a mixed part, check the BMC's event log, then reseat or replace; DIMM from address: {dimm_mapping}"
        )
    } else {
        "the pages came from wherever the kernel placed them: repeat the scan as root to tell a slow part from a disturbance".to_string()
    };
    format!(
        "{}{} stands out within its node: {todo}",
        located(r, physical),
        if r.remeasured {
            ", slow when measured again,"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::summarize;

    fn range(i: u64, node: usize, gbs: f64, ns: f64) -> RangeFigures {
        RangeFigures {
            start: i << 30,
            granule: 1 << 30,
            bytes: 1 << 30,
            node: Some(node),
            blocks: vec![i * 8, i * 8 + 7],
            zones: vec!["Normal".into()],
            movable: false,
            cxl_region: None,
            read_gbs: Some(summarize(&[gbs])),
            latency_ns: Some(summarize(&[ns])),
            read_score: None,
            latency_score: None,
            flagged: false,
            remeasured: false,
        }
    }

    #[test]
    fn one_slow_range_among_uniform_ones_is_found_and_mapped() {
        // Two nodes of eight ranges, a little noise; range 5 of node 1 reads 12% slower.
        let noise = [1.0, 1.01, 0.99, 1.004, 0.996, 1.0, 1.008, 0.992];
        let mut ranges: Vec<RangeFigures> = (0..16)
            .map(|i| {
                let n = noise[i as usize % 8];
                range(i, (i / 8) as usize, 20.0 * n, 110.0 / n)
            })
            .collect();
        ranges[13].read_gbs = Some(summarize(&[17.6]));
        score(&mut ranges);
        let flagged: Vec<u64> = ranges
            .iter()
            .filter(|r| r.flagged)
            .map(|r| r.start >> 30)
            .collect();
        assert_eq!(flagged, [13]);
        let f = findings(&ranges, true, &[], "not exposed");
        assert!(
            f[0].contains("node 1") && f[0].contains("memory blocks 104–111"),
            "{f:?}"
        );
        assert!(f[0].contains("reseat or replace"), "{f:?}");
        // The same range as CXL memory, or hot-plugged, gets that advice instead.
        ranges[13].cxl_region = Some("region0".into());
        assert!(findings(&ranges, true, &[], "")[0].contains("CXL memory (region0)"));
    }

    #[test]
    fn noise_alone_flags_nothing_and_few_ranges_are_not_judged() {
        let mut ranges: Vec<RangeFigures> = (0..8)
            .map(|i| range(i, 0, 20.0 + (i % 3) as f64 * 0.3, 110.0))
            .collect();
        score(&mut ranges);
        assert!(ranges.iter().all(|r| !r.flagged));
        let mut few: Vec<RangeFigures> = (0..3)
            .map(|i| range(i, 0, 20.0 / (i + 1) as f64, 1.0))
            .collect();
        score(&mut few);
        assert!(few.iter().all(|r| !r.flagged && r.read_score.is_none()));
        assert!(findings(&few, false, &[], "")[1].contains("too few judged per node"));
    }

    /// A scan on a busy guest: one range read 20% above its node (score +10.8), 8 ranges held
    /// too little of the scan to judge, and the findings said "no range stands out".
    #[test]
    fn a_fast_range_and_unjudged_ones_are_not_called_uniform() {
        let noise = [1.0, 1.01, 0.99, 1.004, 0.996, 1.0, 1.008, 0.992];
        let mut ranges: Vec<RangeFigures> = (0..8)
            .map(|i| range(i, 0, 20.0 * noise[i as usize], 110.0))
            .collect();
        ranges[3].read_gbs = Some(summarize(&[24.0]));
        ranges.extend((8..16).map(|i| RangeFigures {
            bytes: 1 << 20,
            ..range(i, 0, 20.0, 110.0)
        }));
        score(&mut ranges);
        assert!(ranges[3].read_score.unwrap() > Z);
        let f = findings(&ranges, true, &[], "");
        assert!(
            !f.iter().any(|x| x.starts_with("no range stands out")),
            "{f:?}"
        );
        assert!(
            f.iter().any(|x| x.contains("reads faster than its node")),
            "{f:?}"
        );
        assert!(
            f.iter().any(|x| x.starts_with("8 of 16 ranges held less")),
            "{f:?}"
        );
    }
}
