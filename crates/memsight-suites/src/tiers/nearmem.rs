//! Working set against near memory: where a memory-side cache (DRAM in front of Optane in Memory
//! Mode, HBM in cache mode, a CXL device's own cache) stops holding the working set.
//!
//! The sweep measures latency (the pointer chase) and read bandwidth per working-set size from an
//! eighth of the near memory to four times it. The analysis finds the near plateau (the leading
//! run of sizes within 15% of the fastest, up to the near size), the size where misses begin (latency 15% above the near plateau
//! and staying there), and the far plateau (the largest sizes, when at least two agree within
//! 10%). The miss rate of each point follows from the two plateaus: latency is a mix,
//! `near + m·(far − near)`, and so is time per byte, `(1−m)/bw_near + m/bw_far` — the Optane talk's
//! "bandwidth vs DRAM-cache miss rate". When the far plateau was not reached, it is estimated
//! from the largest point assuming a fully associative cache under uniformly random accesses
//! (miss rate 1 − near ÷ size), and marked as estimated.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::stats::Summary;

/// One working set.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NearPoint {
    pub size_bytes: u64,
    pub latency_ns: Summary,
    pub read_gbs: Option<Summary>,
    /// A 2:1 read:write mix (regular stores), every CPU, GB/s of program bytes.
    #[serde(default)]
    pub mix_gbs: Option<Summary>,
    /// Reads from one CPU: the light-load level beside every CPU's.
    #[serde(default)]
    pub read_gbs_one: Option<Summary>,
    /// Miss rate from the mix's bandwidth, 0..1.
    #[serde(default)]
    pub miss_mix: Option<f64>,
    /// Miss rate from latency, 0..1.
    pub miss_latency: Option<f64>,
    /// Miss rate from bandwidth, 0..1.
    pub miss_bandwidth: Option<f64>,
    /// What a fully associative near memory would miss under uniformly random accesses.
    pub miss_ideal: f64,
}

/// What the curve says.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NearAnalysis {
    pub near_bytes: u64,
    pub near_latency_ns: Option<f64>,
    pub far_latency_ns: Option<f64>,
    pub near_gbs: Option<f64>,
    pub far_gbs: Option<f64>,
    /// The 2:1 mix on the near and far plateaus, GB/s.
    #[serde(default)]
    pub near_mix_gbs: Option<f64>,
    #[serde(default)]
    pub far_mix_gbs: Option<f64>,
    /// Smallest size from which latency stays 15% above the near plateau.
    pub misses_begin_bytes: Option<u64>,
    /// Smallest size of the far plateau, when reached.
    pub far_plateau_bytes: Option<u64>,
    /// False: the far figures are estimated from the largest point.
    pub far_reached: bool,
    pub findings: Vec<String>,
}

/// memsight-core's median; `None` for no values.
fn median(v: Vec<f64>) -> Option<f64> {
    (!v.is_empty()).then(|| memsight_core::stats::median(&v))
}

/// Ideal miss rate of a fully associative cache of `near` bytes under uniform random accesses.
pub fn ideal_miss(size: u64, near: u64) -> f64 {
    if size <= near {
        0.0
    } else {
        1.0 - near as f64 / size as f64
    }
}

/// Finds the plateaus and fills in each point's miss rates.
pub fn analyse(points: &mut [NearPoint], near: u64) -> NearAnalysis {
    points.sort_by_key(|p| p.size_bytes);
    for p in points.iter_mut() {
        p.miss_ideal = ideal_miss(p.size_bytes, near);
    }
    let pl = plateaus(points, near);
    fill_miss_rates(points, &pl);
    let largest = points.last().map_or(0, |p| p.size_bytes);
    let mut a = NearAnalysis {
        near_mix_gbs: pl.near_mix,
        far_mix_gbs: pl.far_mix,
        near_bytes: near,
        near_latency_ns: pl.near_lat,
        far_latency_ns: pl.far_lat,
        near_gbs: pl.near_gbs,
        far_gbs: pl.far_gbs,
        misses_begin_bytes: pl.misses_begin,
        far_plateau_bytes: pl.far_from,
        far_reached: pl.reached,
        findings: Vec::new(),
    };
    a.findings = findings(&a);
    a.findings.extend(empty_columns(points, &a, largest));
    a
}

fn lat(p: &NearPoint) -> f64 {
    p.latency_ns.median
}

fn bw(p: &NearPoint) -> Option<f64> {
    p.read_gbs.as_ref().map(|s| s.median)
}

fn mix(p: &NearPoint) -> Option<f64> {
    p.mix_gbs.as_ref().map(|s| s.median)
}

/// The near and far plateaus' figures, and where misses begin.
struct Plateaus {
    near_lat: Option<f64>,
    near_gbs: Option<f64>,
    near_mix: Option<f64>,
    far_lat: Option<f64>,
    far_gbs: Option<f64>,
    far_mix: Option<f64>,
    /// Smallest size of the far plateau, when reached.
    far_from: Option<u64>,
    misses_begin: Option<u64>,
    reached: bool,
}

/// The plateaus of points sorted by size.
fn plateaus(points: &[NearPoint], near: u64) -> Plateaus {
    let below = near_run(points, near);
    let near_lat =
        median(below.iter().map(|p| lat(p)).collect()).or_else(|| points.first().map(lat));
    let near_gbs = median(below.iter().filter_map(|p| bw(p)).collect())
        .or_else(|| points.first().and_then(bw));
    let misses_begin = near_lat.and_then(|n| {
        let i = points
            .iter()
            .rposition(|p| lat(p) <= 1.15 * n)
            .map_or(0, |i| i + 1);
        points.get(i).map(|p| p.size_bytes)
    });
    let plateau = far_run(points, near);
    let reached = plateau.len() >= 2
        && plateau.last().is_some_and(|p| {
            // The plateau must be flat, not the tail of a slow 1 − near/size rise.
            near_lat.is_some_and(|n| lat(p) > 1.15 * n)
        })
        && is_flat(&plateau);
    let (far_lat, far_gbs, far_from) = if reached {
        (
            median(plateau.iter().map(|p| lat(p)).collect()),
            median(plateau.iter().filter_map(|p| bw(p)).collect()),
            plateau.last().map(|p| p.size_bytes),
        )
    } else {
        estimate_far(points, near, near_lat, near_gbs)
    };
    // The mix on the same plateaus, or (where the far plateau was not reached) estimated from
    // the largest size as read bandwidth is.
    let near_mix = median(below.iter().filter_map(|p| mix(p)).collect());
    let far_mix = if reached {
        median(plateau.iter().filter_map(|p| mix(p)).collect())
    } else {
        points.last().zip(near_mix).and_then(|(p, nb)| {
            let m = ideal_miss(p.size_bytes, near);
            let denom = 1.0 / mix(p)? - (1.0 - m) / nb;
            (m > 0.2 && denom > 0.0).then(|| m / denom)
        })
    };
    Plateaus {
        near_lat,
        near_gbs,
        near_mix,
        far_lat,
        far_gbs,
        far_mix,
        far_from,
        misses_begin,
        reached,
    }
}

/// The near plateau: the leading run of points within 15% of the fastest of them, among the
/// sizes that fit the near memory (misses can begin well before it is full).
fn near_run(points: &[NearPoint], near: u64) -> Vec<&NearPoint> {
    let fits: Vec<&NearPoint> = points.iter().filter(|p| p.size_bytes <= near).collect();
    let fastest = fits.iter().map(|p| lat(p)).fold(f64::INFINITY, f64::min);
    fits.iter()
        .copied()
        .take_while(|p| lat(p) <= 1.15 * fastest)
        .collect()
}

/// Far plateau candidates: the run of largest sizes (≥ 2 × near) within 10% of the largest
/// point, largest first.
fn far_run(points: &[NearPoint], near: u64) -> Vec<&NearPoint> {
    match points.last().map(lat) {
        Some(l) => points
            .iter()
            .rev()
            .take_while(|p| p.size_bytes >= 2 * near && (lat(p) / l - 1.0).abs() <= 0.10)
            .collect(),
        None => Vec::new(),
    }
}

/// Far latency and bandwidth estimated from the largest point, assuming the ideal miss rate
/// there; no far plateau size.
fn estimate_far(
    points: &[NearPoint],
    near: u64,
    near_lat: Option<f64>,
    near_gbs: Option<f64>,
) -> (Option<f64>, Option<f64>, Option<u64>) {
    let est = points.last().zip(near_lat).and_then(|(p, n)| {
        let m = ideal_miss(p.size_bytes, near);
        (m > 0.2).then(|| n + (lat(p) - n) / m)
    });
    let est_bw = points.last().zip(near_gbs).and_then(|(p, nb)| {
        let m = ideal_miss(p.size_bytes, near);
        let b = bw(p)?;
        // 1/b = (1−m)/nb + m/fb  →  fb = m / (1/b − (1−m)/nb)
        let denom = 1.0 / b - (1.0 - m) / nb;
        (m > 0.2 && denom > 0.0).then(|| m / denom)
    });
    (est, est_bw, None)
}

/// Each point's miss rates from latency, read bandwidth and the mix, between the plateaus.
fn fill_miss_rates(points: &mut [NearPoint], pl: &Plateaus) {
    let (near_lat, far_lat, near_gbs, far_gbs) = (pl.near_lat, pl.far_lat, pl.near_gbs, pl.far_gbs);
    for p in points.iter_mut() {
        p.miss_latency = near_lat
            .zip(far_lat)
            .filter(|(n, f)| f > n)
            .map(|(n, f)| ((lat(p) - n) / (f - n)).clamp(0.0, 1.0));
        p.miss_bandwidth = match (bw(p), near_gbs, far_gbs) {
            // Only where the two plateaus differ beyond the noise (20%): else every point would
            // divide noise by noise.
            (Some(b), Some(nb), Some(fb)) if nb > 1.2 * fb => {
                Some(((1.0 / b - 1.0 / nb) / (1.0 / fb - 1.0 / nb)).clamp(0.0, 1.0))
            }
            _ => None,
        };
    }
    for p in points.iter_mut() {
        p.miss_mix = match (mix(p), pl.near_mix, pl.far_mix) {
            (Some(b), Some(nb), Some(fb)) if nb > 1.2 * fb => {
                Some(((1.0 / b - 1.0 / nb) / (1.0 / fb - 1.0 / nb)).clamp(0.0, 1.0))
            }
            _ => None,
        };
    }
}

/// Why a miss-rate column is empty on every row, where it is: a figure left out says why.
fn empty_columns(points: &[NearPoint], a: &NearAnalysis, largest: u64) -> Vec<String> {
    use memsight_core::units::format_bytes;
    let far_unknown = || {
        format!(
            "the sweep did not reach a far plateau, and its largest size ({}) misses too little of the {} near memory (under 20% by 1 − near ÷ size) to estimate one: extend the sweep past about 1.25 × the near memory",
            format_bytes(largest),
            format_bytes(a.near_bytes)
        )
    };
    let why = |measured: bool, near: Option<f64>, far: Option<f64>, what: &str| {
        if !measured {
            return format!("{what} was not measured");
        }
        match (near, far) {
            (Some(n), Some(f)) if n <= 1.2 * f => format!(
                "{what} is about the same in and beyond the near memory ({n:.1} vs {f:.1} GB/s), so it gives no miss rate"
            ),
            (None, _) => format!(
                "{what} has no near plateau in the sweep (its smallest sizes do not fit the near memory)"
            ),
            _ => far_unknown(),
        }
    };
    let mut out = Vec::new();
    if points.iter().all(|p| p.miss_latency.is_none()) {
        let reason = match (a.near_latency_ns, a.far_latency_ns) {
            (Some(n), Some(f)) if f <= n => {
                "latency does not rise beyond the near plateau".to_string()
            }
            _ => far_unknown(),
        };
        out.push(format!("miss rate from latency: none, because {reason}"));
    }
    if points.iter().all(|p| p.miss_bandwidth.is_none()) {
        let measured = points.iter().any(|p| p.read_gbs.is_some());
        out.push(format!(
            "miss rate from read bandwidth: none, because {}",
            why(measured, a.near_gbs, a.far_gbs, "read bandwidth")
        ));
    }
    if points.iter().all(|p| p.miss_mix.is_none()) {
        let measured = points.iter().any(|p| p.mix_gbs.is_some());
        out.push(format!(
            "miss rate of the 2:1 read:write mix: none, because {}",
            why(
                measured,
                a.near_mix_gbs,
                a.far_mix_gbs,
                "the 2:1 mix's bandwidth"
            )
        ));
    }
    out
}

/// Consecutive plateau points differ by less than 5%.
fn is_flat(plateau: &[&NearPoint]) -> bool {
    plateau
        .windows(2)
        .all(|w| (w[0].latency_ns.median / w[1].latency_ns.median - 1.0).abs() < 0.05)
}

fn findings(a: &NearAnalysis) -> Vec<String> {
    use memsight_core::units::format_bytes;
    let mut out = Vec::new();
    let near = format_bytes(a.near_bytes);
    match a.misses_begin_bytes {
        Some(s) if s < a.near_bytes / 2 => out.push(format!(
            "misses begin at {} — well below the {near} near memory: conflict misses (a direct-mapped near memory sees physical pages collide) or a smaller cache than the firmware says",
            format_bytes(s)
        )),
        Some(s) => out.push(format!(
            "misses begin at {} ({:.2} × the {near} near memory)",
            format_bytes(s),
            s as f64 / a.near_bytes as f64
        )),
        None => out.push(format!(
            "no misses over the sweep: the whole range fits the {near} near memory, or there is no near memory in front of this node"
        )),
    }
    if let (Some(n), Some(f)) = (a.near_mix_gbs, a.far_mix_gbs) {
        // (The explanation only where beyond is clearly slower: the band the miss-rate columns
        // use, above, to call the two the same.)
        let why = if n > 1.2 * f {
            "writes that miss also cost the far medium's write bandwidth (Intel's Memory Mode table gives its miss rates for reads and for this mix)"
        } else {
            "no slower beyond it, so this mix shows no cost of misses"
        };
        out.push(format!(
            "2:1 read:write mix: {n:.1} GB/s in near memory, {f:.1} GB/s beyond it ({:.2}×{}): {why}",
            f / n,
            if a.far_reached { "" } else { "; estimated from the largest size" }
        ));
    }
    if let (Some(n), Some(f)) = (a.near_latency_ns, a.far_latency_ns) {
        out.push(format!(
            "near plateau {n:.0} ns, far {} {f:.0} ns ({:.1}×)",
            if a.far_reached {
                "plateau"
            } else {
                "memory (estimated from the largest size, assuming 1 − near ÷ size misses)"
            },
            f / n
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::summarize;

    const G: u64 = 1 << 30;

    fn pts(sizes: &[u64], f: impl Fn(u64) -> (f64, f64)) -> Vec<NearPoint> {
        sizes
            .iter()
            .map(|&s| {
                let (l, b) = f(s);
                NearPoint {
                    size_bytes: s,
                    latency_ns: summarize(&[l, l, l]),
                    read_gbs: Some(summarize(&[b, b, b])),
                    miss_latency: None,
                    miss_bandwidth: None,
                    miss_ideal: 0.0,
                    mix_gbs: None,
                    read_gbs_one: None,
                    miss_mix: None,
                }
            })
            .collect()
    }

    fn sizes() -> Vec<u64> {
        crate::measure::sizes::log_sizes(G, 32 * G, 3, 1 << 20)
    }

    #[test]
    fn a_step_curve_has_both_plateaus_and_exact_miss_rates() {
        // Near 8 GiB: 100 ns / 40 GB/s up to 8 GiB, 300 ns / 10 GB/s from 16 GiB, a mix between.
        let near = 8 * G;
        let mix = |m: f64| (100.0 + 200.0 * m, 1.0 / ((1.0 - m) / 40.0 + m / 10.0));
        let mut p = pts(&sizes(), |s| {
            mix(if s <= near {
                0.0
            } else if s >= 2 * near {
                1.0
            } else {
                0.5
            })
        });
        let a = analyse(&mut p, near);
        assert!(a.far_reached);
        assert_eq!(a.near_latency_ns, Some(100.0));
        assert_eq!(a.far_latency_ns, Some(300.0));
        assert!(a.misses_begin_bytes.unwrap() > near && a.misses_begin_bytes.unwrap() < 2 * near);
        assert_eq!(a.far_plateau_bytes, Some(2 * near));
        for x in &p {
            let want = if x.size_bytes <= near {
                0.0
            } else if x.size_bytes >= 2 * near {
                1.0
            } else {
                0.5
            };
            assert!(
                (x.miss_latency.unwrap() - want).abs() < 1e-9,
                "{}",
                x.size_bytes
            );
            assert!(
                (x.miss_bandwidth.unwrap() - want).abs() < 1e-9,
                "{}",
                x.size_bytes
            );
        }
    }

    #[test]
    fn a_slow_rise_estimates_the_far_memory_from_the_ideal_cache() {
        // Fully associative 4 GiB cache, uniform random accesses: m = 1 − near/size. At 4 × near
        // the rise is still going (75% misses); the far latency is recovered, marked estimated.
        let near = 4 * G;
        let mut p = pts(&sizes()[..13], |s| {
            let m = ideal_miss(s, near);
            (100.0 + 250.0 * m, 1.0 / ((1.0 - m) / 40.0 + m / 8.0))
        });
        assert_eq!(p.last().unwrap().size_bytes, 16 * G);
        let a = analyse(&mut p, near);
        assert!(!a.far_reached);
        assert!((a.far_latency_ns.unwrap() - 350.0).abs() < 1e-6);
        assert!((a.far_gbs.unwrap() - 8.0).abs() < 1e-6);
        assert!(a.findings.iter().any(|f| f.contains("estimated")));
        let last = p.last().unwrap();
        assert!((last.miss_latency.unwrap() - 0.75).abs() < 1e-9);
    }

    #[test]
    fn early_misses_are_called_conflicts() {
        let near = 16 * G;
        let mut p = pts(&sizes(), |s| {
            if s >= 4 * G {
                (200.0, 20.0)
            } else {
                (100.0, 40.0)
            }
        });
        let a = analyse(&mut p, near);
        assert_eq!(a.misses_begin_bytes, Some(4 * G));
        assert!(a.findings[0].contains("conflict"), "{:?}", a.findings);
    }

    #[test]
    fn equal_bandwidth_plateaus_give_no_bandwidth_miss_rate() {
        let near = 4 * G;
        let mut p = pts(&sizes(), |s| {
            if s > near {
                (300.0, 30.0)
            } else {
                (100.0, 31.0)
            }
        });
        let a = analyse(&mut p, near);
        assert!(p.iter().all(|x| x.miss_bandwidth.is_none()));
        assert!(
            a.findings.iter().any(|f| f.contains(
                "miss rate from read bandwidth: none, because read bandwidth is about the same"
            )),
            "{:?}",
            a.findings
        );
    }

    #[test]
    fn this_vms_l3_curve_finds_the_near_plateau_before_the_jump() {
        // Measured here (2026-11-23, --near-size 32M: the L3 sysfs reports): the guest's share of
        // the host L3 ends near 8 MiB, DRAM from 10 MiB; bandwidth falls from 20 MiB.
        const M: u64 = 1 << 20;
        let measured = [
            (4, 13.35, 195.0),
            (5, 13.59, 194.9),
            (6, 14.01, 195.9),
            (8, 71.22, 195.7),
            (10, 131.1, 195.2),
            (13, 123.3, 194.9),
            (16, 125.1, 187.9),
            (20, 127.9, 167.5),
            (25, 124.1, 136.4),
            (32, 126.1, 103.0),
            (40, 122.5, 73.87),
            (51, 125.0, 60.72),
            (64, 130.4, 49.77),
            (81, 130.2, 46.43),
            (102, 126.6, 36.62),
            (128, 122.3, 35.85),
        ];
        let sizes: Vec<u64> = measured.iter().map(|m| m.0 * M).collect();
        let mut p = pts(&sizes, |s| {
            let m = measured.iter().find(|m| m.0 * M == s).unwrap();
            (m.1, m.2)
        });
        let a = analyse(&mut p, 32 * M);
        assert!((a.near_latency_ns.unwrap() - 13.59).abs() < 0.01);
        assert_eq!(a.misses_begin_bytes, Some(8 * M));
        assert!(a.far_reached);
        assert!((120.0..135.0).contains(&a.far_latency_ns.unwrap()));
        assert!(a.findings[0].contains("well below"), "{:?}", a.findings);
    }

    #[test]
    fn a_flat_curve_has_no_misses() {
        let mut p = pts(&sizes(), |_| (90.0, 30.0));
        let a = analyse(&mut p, 64 * G);
        assert_eq!(a.misses_begin_bytes, None);
        assert!(a.findings[0].contains("no misses"));
    }

    /// A sweep that stops short of the far plateau leaves no miss-rate column silently empty:
    /// the 2:1 mix is estimated from the largest size as read bandwidth is, or a finding says
    /// why it cannot be.
    #[test]
    fn an_empty_miss_rate_column_says_why() {
        let near = 16 * G;
        // Up to 1.2 × near: the far plateau is not reached and the largest size misses < 20%.
        let short: Vec<u64> = sizes().into_iter().filter(|&s| s <= near * 6 / 5).collect();
        let curve = |s: u64| {
            let m = ideal_miss(s, near);
            (100.0 + 200.0 * m, 1.0 / ((1.0 - m) / 40.0 + m / 10.0))
        };
        let mut p = pts(&short, curve);
        for x in p.iter_mut() {
            x.mix_gbs = x.read_gbs.clone();
        }
        let a = analyse(&mut p, near);
        assert!(p.iter().all(|x| x.miss_mix.is_none()));
        let f = a.findings.join("\n");
        assert!(
            f.contains("miss rate of the 2:1 read:write mix: none, because the sweep did not reach a far plateau"),
            "{f}"
        );
        // Past 1.25 × near the mix's far bandwidth is estimated and its column filled.
        let long: Vec<u64> = sizes().into_iter().filter(|&s| s <= 2 * near).collect();
        let mut p = pts(&long, curve);
        for x in p.iter_mut() {
            x.mix_gbs = x.read_gbs.clone();
        }
        let a = analyse(&mut p, near);
        assert!(p.iter().any(|x| x.miss_mix.is_some()), "{:?}", a.findings);
        assert!(
            a.findings
                .iter()
                .any(|f| f.contains("estimated from the largest size)")),
            "{:?}",
            a.findings
        );
        // Not measured at all: said so.
        let mut p = pts(&long, curve);
        let a = analyse(&mut p, near);
        assert!(
            a.findings
                .iter()
                .any(|f| f.contains("mix's bandwidth was not measured"))
        );
    }
}
