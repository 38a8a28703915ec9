//! Finding dips in a bandwidth-vs-offset curve, and their period.
//!
//! Baseline: the median of the curve (dips are rare by nature, so the median sits on the
//! plateau). Noise: 1.4826 × MAD ÷ baseline. A dip is a maximal run of consecutive points at
//! least `max(10%, 4 × noise)` below the baseline; its position is the run's lowest point and its
//! depth `1 − lowest ÷ baseline`. With two or more dips the period is the median spacing between
//! neighbours, called regular when there are at least three dips and every spacing lies within
//! 20% of a whole multiple of it (two dips always look periodic).

use memsight_core::stats::{mad_sigma, median};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Smallest relative depth that can count as a dip.
pub const MIN_DEPTH: f64 = 0.10;

/// One dip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dip {
    pub offset_bytes: u64,
    pub gbs: f64,
    /// 1 − value ÷ baseline.
    pub depth: f64,
    /// Points in the dip.
    pub width_points: usize,
}

/// What the detector found in one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Detection {
    pub baseline_gbs: f64,
    /// Robust relative spread of the curve (1.4826 × MAD ÷ median).
    pub noise: f64,
    /// Depth a point needed to count: max(10%, 4 × noise).
    pub threshold: f64,
    pub dips: Vec<Dip>,
    /// Median spacing between neighbouring dips, bytes of offset.
    pub period_bytes: Option<u64>,
    /// At least three dips, every spacing within 20% of a whole multiple of the period.
    pub regular: bool,
}

/// Detects dips in `gbs` measured at `offsets` (ascending, same length).
pub fn detect(offsets: &[u64], gbs: &[f64]) -> Detection {
    assert_eq!(offsets.len(), gbs.len());
    let baseline = if gbs.is_empty() { 0.0 } else { median(gbs) };
    let noise = if baseline > 0.0 {
        mad_sigma(gbs) / baseline
    } else {
        0.0
    };
    let threshold = MIN_DEPTH.max(4.0 * noise);
    let depth = |x: f64| {
        if baseline > 0.0 {
            1.0 - x / baseline
        } else {
            0.0
        }
    };
    let mut dips = Vec::new();
    let mut i = 0;
    while i < gbs.len() {
        if depth(gbs[i]) >= threshold {
            let start = i;
            while i < gbs.len() && depth(gbs[i]) >= threshold {
                i += 1;
            }
            let low = (start..i)
                .min_by(|&a, &b| gbs[a].total_cmp(&gbs[b]))
                .expect("non-empty run");
            dips.push(Dip {
                offset_bytes: offsets[low],
                gbs: gbs[low],
                depth: depth(gbs[low]),
                width_points: i - start,
            });
        } else {
            i += 1;
        }
    }
    let spacings: Vec<f64> = dips
        .windows(2)
        .map(|w| (w[1].offset_bytes - w[0].offset_bytes) as f64)
        .collect();
    let (period_bytes, regular) = if spacings.is_empty() {
        (None, false)
    } else {
        let p = median(&spacings);
        let regular = spacings.len() >= 2
            && spacings.iter().all(|s| {
                let k = (s / p).round().max(1.0);
                (s - k * p).abs() <= 0.2 * p
            });
        (Some(p.round() as u64), regular)
    };
    Detection {
        baseline_gbs: baseline,
        noise,
        threshold,
        dips,
        period_bytes,
        regular,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A flat curve at `level` with ±`wiggle` deterministic noise and dips of `depth` every
    /// `period` starting at `phase`.
    fn curve(
        step: u64,
        n: usize,
        level: f64,
        wiggle: f64,
        dips: &[(u64, f64)],
    ) -> (Vec<u64>, Vec<f64>) {
        let offsets: Vec<u64> = (0..n as u64).map(|i| i * step).collect();
        let gbs = offsets
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                let w = wiggle * (((i * 7919) % 13) as f64 / 6.0 - 1.0);
                let d = dips
                    .iter()
                    .find(|(at, _)| *at == o)
                    .map_or(0.0, |(_, d)| *d);
                level * (1.0 + w) * (1.0 - d)
            })
            .collect();
        (offsets, gbs)
    }

    #[test]
    fn the_catamount_papers_shape_is_found_with_its_period() {
        // Catamount COPY: ~60% dips 128 KiB apart, 8 KiB steps to 512 KiB.
        let step = 8 << 10;
        let dips: Vec<(u64, f64)> = [120u64, 248, 376, 504]
            .iter()
            .map(|k| ((k << 10) / step * step, 0.6))
            .collect();
        let (o, g) = curve(step, 65, 3000.0, 0.02, &dips);
        let d = detect(&o, &g);
        assert_eq!(d.dips.len(), 4);
        assert_eq!(d.period_bytes, Some(128 << 10));
        assert!(d.regular);
        for dip in &d.dips {
            assert!((dip.depth - 0.6).abs() < 0.05, "{dip:?}");
        }
        assert!((d.baseline_gbs - 3000.0).abs() < 100.0);
    }

    #[test]
    fn a_flat_noisy_curve_has_no_dips() {
        let (o, g) = curve(4096, 200, 25.0, 0.04, &[]);
        let d = detect(&o, &g);
        assert!(d.dips.is_empty(), "{:?}", d.dips);
        assert_eq!(d.period_bytes, None);
    }

    #[test]
    fn irregular_dips_are_called_irregular() {
        let (o, g) = curve(
            1024,
            100,
            10.0,
            0.0,
            &[(10 << 10, 0.4), (20 << 10, 0.4), (57 << 10, 0.4)],
        );
        let d = detect(&o, &g);
        assert_eq!(d.dips.len(), 3);
        assert!(!d.regular);
    }

    #[test]
    fn a_wide_dip_is_one_dip_at_its_lowest_point() {
        let (o, g) = curve(
            1024,
            60,
            10.0,
            0.0,
            &[(20 << 10, 0.3), (21 << 10, 0.5), (22 << 10, 0.3)],
        );
        let d = detect(&o, &g);
        assert_eq!(d.dips.len(), 1);
        assert_eq!(d.dips[0].offset_bytes, 21 << 10);
        assert_eq!(d.dips[0].width_points, 3);
    }

    proptest! {
        #[test]
        fn planted_periodic_dips_are_recovered(
            period_steps in 6u64..20,
            phase in 0u64..5,
            depth in 0.2f64..0.8,
            wiggle in 0.0f64..0.03,
        ) {
            let step = 4096u64;
            let n = (period_steps * 5) as usize;
            let dips: Vec<(u64, f64)> = (0..5)
                .map(|k| ((phase + k * period_steps) * step, depth))
                .filter(|(o, _)| *o < n as u64 * step)
                .collect();
            let (o, g) = curve(step, n, 20.0, wiggle, &dips);
            let d = detect(&o, &g);
            prop_assert_eq!(d.dips.len(), dips.len());
            prop_assert_eq!(d.period_bytes, Some(period_steps * step));
            prop_assert!(d.regular);
        }
    }
}
