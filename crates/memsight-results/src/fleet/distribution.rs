//! How one figure spreads over a group's members: median, quartiles, range and a histogram.
//! A report of 100,000 nodes shows these rather than a row per node: their size grows with the
//! groups and figures, not with the nodes.

use crate::fleet_report::Distribution;

/// Equal-width bins from the group's minimum to its maximum.
pub const BINS: usize = 24;

/// The distribution of `values` (at least one), sorted here.
pub fn of(group: usize, key: &str, values: &mut [f64]) -> Distribution {
    values.sort_by(f64::total_cmp);
    let (min, max) = (values[0], values[values.len() - 1]);
    Distribution {
        group,
        key: crate::key::Key::read(key),
        label: String::new(),
        unit: String::new(),
        conditions: String::new(),
        n: values.len(),
        median: quantile(values, 0.5),
        q1: quantile(values, 0.25),
        q3: quantile(values, 0.75),
        min,
        max,
        bins: bins(values, min, max),
        flagged: Vec::new(),
        left_out: 0,
    }
}

/// The `p` quantile of sorted values, interpolated between ranks as R's default (type 7),
/// numpy's and DuckDB's `quantile_cont` do, so that a query over the Parquet table gives the
/// same quartiles.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Members per bin; the maximum falls in the last bin.
fn bins(values: &[f64], min: f64, max: f64) -> Vec<u32> {
    let mut counts = vec![0u32; BINS];
    let width = (max - min) / BINS as f64;
    for v in values {
        let i = if width > 0.0 {
            (((v - min) / width) as usize).min(BINS - 1)
        } else {
            0
        };
        counts[i] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_as_r_and_duckdb_do() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&s, 0.5), 2.5);
        assert_eq!(quantile(&s, 0.25), 1.75);
        assert_eq!(quantile(&s, 0.75), 3.25);
        assert_eq!(quantile(&[7.0], 0.25), 7.0);
    }

    #[test]
    fn every_member_is_in_one_bin() {
        let mut v: Vec<f64> = (0..1000).map(|i| 100.0 + (i % 37) as f64).collect();
        v.push(80.0);
        let d = of(0, "bandwidth/read/2t", &mut v);
        assert_eq!(d.bins.iter().sum::<u32>() as usize, v.len());
        assert_eq!(d.bins[0], 1, "the slow member alone in the first bin");
        assert_eq!((d.min, d.max), (80.0, 136.0));
        let mut same = vec![5.0; 4];
        assert_eq!(of(0, "k", &mut same).bins[0], 4);
    }
}
