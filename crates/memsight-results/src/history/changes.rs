//! Change points in a node's history: the runs where a figure's level moved and stayed.
//!
//! The method is E-Divisive with the energy statistic of Matteson and James (JASA 2014) to
//! place a change, and Student's t-test between the two sides to accept it, as Hunter does
//! (Fleming et al., ICPE 2023; now Apache Otava) after MongoDB's CI (Daly et al., ICPE 2020).
//! The series is split where the energy statistic is largest, and each side again, down to
//! the fewest runs a level may have: candidates. Then, as Hunter does, every candidate is
//! tested between its neighbouring candidates, and the weakest that does not hold is dropped,
//! until every one left holds. Testing only between neighbours matters: a first split of a
//! series with two steps mixes levels on one side, and a test there would miss both. A change
//! was placed where the two sides differ most, so its p is multiplied by the number of places
//! it could have gone between its neighbours (Bonferroni's bound): without that, white noise of
//! 40 runs gives a "change" in one series of twenty.

use puruspe::betai;

/// How change points are found.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// A change is kept when the t-test between its two sides gives p below this.
    pub max_p: f64,
    /// Fewest runs on either side of a change: a level seen in fewer runs is not a level.
    pub min_runs: usize,
    /// Smallest change of the mean, as a fraction of the level before, that is reported.
    pub min_change: f64,
}

impl Default for Options {
    /// Hunter's threshold (p < 0.001), three runs a side, any size.
    fn default() -> Self {
        Options {
            max_p: 0.001,
            min_runs: 3,
            min_change: 0.0,
        }
    }
}

/// One change: the series' level moved at `index` (the first run of the new level).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    pub index: usize,
    /// The mean of the runs since the previous change, and until the next.
    pub before: f64,
    pub after: f64,
    /// `after / before − 1`.
    pub change: f64,
    /// The t-test's two-sided p between the two sides, times the places the change could have
    /// been (at most 1).
    pub p: f64,
}

/// A probability strictly between 0 and 1, as a flag gives it.
pub fn probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a probability between 0 and 1 (e.g. 0.001)"
        )),
    }
}

/// The change points of `x`, in order.
pub fn change_points(x: &[f64], o: &Options) -> Vec<Change> {
    let min = o.min_runs.max(2);
    let mut cuts = Vec::new();
    split(x, 0, x.len(), min, &mut cuts);
    cuts.sort_unstable();
    prune(x, &mut cuts, min, o);
    describe(x, &cuts, min)
}

/// Splits `x[from..to]` where the energy statistic is largest, then each side, down to `min`
/// runs a side: the candidates.
fn split(x: &[f64], from: usize, to: usize, min: usize, out: &mut Vec<usize>) {
    if to - from < 2 * min {
        return;
    }
    let Some(at) = best_split(&x[from..to], min) else {
        return;
    };
    let cut = from + at;
    out.push(cut);
    split(x, from, cut, min, out);
    split(x, cut, to, min, out);
}

/// Tests every change between its neighbouring changes and drops the weakest failing one, until
/// all hold.
fn prune(x: &[f64], cuts: &mut Vec<usize>, min: usize, o: &Options) {
    loop {
        let mut weakest: Option<(usize, f64)> = None;
        for i in 0..cuts.len() {
            let from = if i == 0 { 0 } else { cuts[i - 1] };
            let to = cuts.get(i + 1).copied().unwrap_or(x.len());
            let (a, b) = (&x[from..cuts[i]], &x[cuts[i]..to]);
            if significant(a, b, min, o) {
                continue;
            }
            let p = adjusted_p(a, b, min);
            if weakest.is_none_or(|(_, w)| p > w) {
                weakest = Some((i, p));
            }
        }
        match weakest {
            Some((i, _)) => {
                cuts.remove(i);
            }
            None => return,
        }
    }
}

fn describe(x: &[f64], cuts: &[usize], min: usize) -> Vec<Change> {
    (0..cuts.len())
        .map(|i| {
            let from = if i == 0 { 0 } else { cuts[i - 1] };
            let to = cuts.get(i + 1).copied().unwrap_or(x.len());
            let (a, b) = (&x[from..cuts[i]], &x[cuts[i]..to]);
            let (before, after) = (mean(a), mean(b));
            Change {
                index: cuts[i],
                before,
                after,
                change: after / before - 1.0,
                p: adjusted_p(a, b, min),
            }
        })
        .collect()
}

/// Whether the two sides' levels differ: the t-test's p below the threshold, and the change at
/// least the smallest reported.
fn significant(a: &[f64], b: &[f64], min: usize, o: &Options) -> bool {
    let (ma, mb) = (mean(a), mean(b));
    let size = if ma != 0.0 {
        (mb / ma - 1.0).abs()
    } else {
        f64::INFINITY
    };
    adjusted_p(a, b, min) < o.max_p && size >= o.min_change
}

/// The t-test's p for a split of `a ++ b` chosen among every place with at least `min` runs a side.
fn adjusted_p(a: &[f64], b: &[f64], min: usize) -> f64 {
    let places = (a.len() + b.len() + 1).saturating_sub(2 * min).max(1);
    (t_test_p(a, b) * places as f64).min(1.0)
}

/// Where the energy statistic (α = 1) of `x` is largest, with at least `min` values a side:
/// Q(τ) = τ(n−τ)/n · (2/(τ(n−τ))·B − 2/(τ(τ−1))·W₁ − 2/((n−τ)(n−τ−1))·W₂), B the distances
/// between the sides, W₁ and W₂ within them. O(n²) time, O(n) memory: the within sums move by
/// one row of distances as τ moves by one.
fn best_split(x: &[f64], min: usize) -> Option<usize> {
    let n = x.len();
    let d = |i: usize, j: usize| (x[i] - x[j]).abs();
    // before[t] = Σ_{i<t} d(i, t); after[t] = Σ_{k>t} d(t, k).
    let before: Vec<f64> = (0..n).map(|t| (0..t).map(|i| d(i, t)).sum()).collect();
    let after: Vec<f64> = (0..n).map(|t| (t + 1..n).map(|k| d(t, k)).sum()).collect();
    let total: f64 = before.iter().sum();
    // W₁ = Σ_{t<τ} before[t], W₂ = Σ_{t≥τ} after[t], at τ = min.
    let mut w1: f64 = before[..min].iter().sum();
    let mut w2: f64 = after[min..].iter().sum();
    let mut best: Option<(usize, f64)> = None;
    for t in min..=n - min {
        let (l, r) = (t as f64, (n - t) as f64);
        let between = total - w1 - w2;
        let e = 2.0 * between / (l * r) - 2.0 * w1 / (l * (l - 1.0)) - 2.0 * w2 / (r * (r - 1.0));
        let q = l * r / n as f64 * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((t, q));
        }
        if t < n {
            w1 += before[t];
            w2 -= after[t];
        }
    }
    best.map(|(t, _)| t)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn variance(v: &[f64], m: f64) -> f64 {
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0)
}

/// Student's t-test with the variance pooled over both sides, two-sided: p that two samples
/// this far apart come from one level. Pooled, not Welch's: a short side whose few runs happen
/// to agree closely would otherwise stand for a level far more certain than it is.
pub fn t_test_p(a: &[f64], b: &[f64]) -> f64 {
    if a.len() < 2 || b.len() < 2 {
        return 1.0;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a), mean(b));
    let df = na + nb - 2.0;
    let pooled = ((na - 1.0) * variance(a, ma) + (nb - 1.0) * variance(b, mb)) / df;
    let se2 = pooled * (1.0 / na + 1.0 / nb);
    if se2 <= 0.0 || !se2.is_finite() {
        // Both sides constant: one level if equal, certainly two if not.
        return if ma == mb { 1.0 } else { 0.0 };
    }
    let t = (ma - mb) / se2.sqrt();
    // P(|T| > t) for Student's t with df degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
    let x = (df / (df + t * t)).clamp(0.0, 1.0);
    betai(df / 2.0, 0.5, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repeatable noise: a linear congruential generator's uniform values, summed in fours
    /// (close to normal), scaled to `sd`.
    fn noise(n: usize, sd: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut u = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let z = (0..4).map(|_| u()).sum::<f64>() - 2.0;
                z * sd / (4.0f64 / 12.0).sqrt()
            })
            .collect()
    }

    #[test]
    fn the_t_test_matches_known_values() {
        // Identical samples: one level.
        assert!((t_test_p(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-12);
        // t = −2 on 8 degrees of freedom: p = 0.0805 (R: t.test(1:5, 3:7)).
        let p = t_test_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0]);
        assert!((p - 0.0805).abs() < 0.0005, "{p}");
    }

    #[test]
    fn a_planted_step_is_found_within_one_run_and_a_flat_series_has_none() {
        for seed in 1..=40u64 {
            let flat: Vec<f64> = noise(40, 1.0, seed).iter().map(|e| 100.0 + e).collect();
            let none = change_points(&flat, &Options::default());
            assert!(none.is_empty(), "seed {seed}: {none:?}");
            let mut stepped = flat.clone();
            for v in &mut stepped[25..] {
                *v *= 0.95;
            }
            let found = change_points(&stepped, &Options::default());
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            assert!(found[0].index.abs_diff(25) <= 1, "seed {seed}: {found:?}");
            assert!((found[0].change + 0.05).abs() < 0.02, "{found:?}");
        }
    }

    #[test]
    fn two_steps_are_two_changes_and_short_levels_are_not_levels() {
        let mut x: Vec<f64> = noise(60, 0.5, 7).iter().map(|e| 50.0 + e).collect();
        for v in &mut x[20..40] {
            *v += 5.0;
        }
        let found: Vec<usize> = change_points(&x, &Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(found, vec![20, 40]);
        // One outlying run is no level.
        let mut y: Vec<f64> = noise(30, 0.5, 9).iter().map(|e| 50.0 + e).collect();
        y[15] = 80.0;
        assert!(change_points(&y, &Options::default()).is_empty());
    }
}
