//! `memsight compare A B`: every figure of two runs side by side, with the change and whether it
//! is beyond the noise.
//!
//! A change counts as real only when it is at least `min_change` (default 5%: back-to-back runs
//! on the project's VM differ by up to that much in DRAM latency, more than either run's own
//! spread suggests) and both tests agree: the Mann–Whitney rank test on the two runs' sample
//! sets gives p < 0.01 (exact distribution for untied samples of up to 50 each,
//! normal approximation with tie and continuity corrections otherwise; Conover, *Practical
//! Nonparametric Statistics*, 3rd ed., §5.1), and the two 95% confidence intervals of the medians
//! do not overlap. Samples within a run are not fully independent (drift, periodic host noise),
//! which makes a rank test alone too eager; the interval condition keeps it honest. Files written
//! before samples were stored (schema 1) fall back to the interval test alone.

use serde::Serialize;

use crate::figures::{Better, Figure};
use crate::results::RunDocument;

/// Significance level of the rank test.
pub const ALPHA: f64 = 0.01;

/// What a row's change means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Better,
    Worse,
    /// Within the noise of the two runs.
    Noise,
    /// No spread is known for this figure (a derived value): the change is shown, not judged.
    Unjudged,
    OnlyA,
    OnlyB,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Noise => "within noise",
            Verdict::Unjudged => "not judged (no samples)",
            Verdict::OnlyA => "only in A",
            Verdict::OnlyB => "only in B",
        }
    }
}

/// One figure compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub unit: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (B − A) ÷ A.
    pub change: Option<f64>,
    /// Two-sided Mann–Whitney p-value, when both runs kept samples.
    pub p_value: Option<f64>,
    /// Whether the two medians' confidence intervals overlap, when both are known.
    pub ci_overlap: Option<bool>,
    pub verdict: Verdict,
}

/// Which run is which.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub label: String,
    pub started: String,
    pub host: String,
    pub fingerprint: String,
    pub cpu: Option<String>,
    pub level: String,
    pub complete: bool,
}

/// Two runs compared.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub method: String,
    pub a: RunInfo,
    pub b: RunInfo,
    pub warnings: Vec<String>,
    pub rows: Vec<Row>,
}

impl Comparison {
    /// How many rows have each verdict.
    pub fn count(&self, v: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }
}

fn info(label: &str, d: &RunDocument) -> RunInfo {
    RunInfo {
        label: label.to_string(),
        started: d.started.clone(),
        host: d
            .environment
            .hostname
            .clone()
            .unwrap_or_else(|| "unknown".into()),
        fingerprint: super::fingerprint(&d.environment),
        cpu: d.environment.cpu.model_name.clone(),
        level: d.results.level.to_string(),
        complete: d.complete,
    }
}

/// Compares run `b` against run `a`; changes smaller than `min_change` (a fraction) are noise.
pub fn compare(
    a_label: &str,
    a: &RunDocument,
    b_label: &str,
    b: &RunDocument,
    min_change: f64,
) -> Comparison {
    let ia = info(a_label, a);
    let ib = info(b_label, b);
    let mut warnings = Vec::new();
    if ia.fingerprint != ib.fingerprint {
        warnings.push(format!(
            "the runs come from different machines ({} {} vs {} {}): differences include the hardware",
            ia.host,
            ia.cpu.as_deref().unwrap_or("?"),
            ib.host,
            ib.cpu.as_deref().unwrap_or("?")
        ));
    }
    for (i, d) in [(&ia, a), (&ib, b)] {
        if !i.complete {
            warnings.push(format!(
                "run {} was interrupted: only what it finished is compared",
                i.label
            ));
        }
        if d.schema_version < 2 {
            warnings.push(format!(
                "run {} predates stored samples (schema {}): its figures are judged by confidence intervals only",
                i.label, d.schema_version
            ));
        }
    }
    if ia.level != ib.level {
        warnings.push(format!(
            "different levels ({} vs {}): only figures both measured are judged",
            ia.level, ib.level
        ));
    }
    let fa = crate::figures::of_run(&a.results);
    let fb = crate::figures::of_run(&b.results);
    let mut rows: Vec<Row> = fa
        .iter()
        .map(|x| row(Some(x), fb.iter().find(|y| y.key == x.key), min_change))
        .collect();
    rows.extend(
        fb.iter()
            .filter(|y| !fa.iter().any(|x| x.key == y.key))
            .map(|y| row(None, Some(y), min_change)),
    );
    Comparison {
        method: format!(
            "change = (B − A) ÷ A of the medians; beyond noise when it is at least {:.1}%, the Mann–Whitney rank test on both runs' samples gives p < {ALPHA} and the 95% confidence intervals of the two medians do not overlap (intervals alone for results without samples)",
            min_change * 100.0
        ),
        a: ia,
        b: ib,
        warnings,
        rows,
    }
}

fn row(a: Option<&Figure>, b: Option<&Figure>, min_change: f64) -> Row {
    let f = a.or(b).expect("one side exists");
    let mut r = Row {
        key: f.key.clone(),
        label: f.label.clone(),
        unit: f.unit.clone(),
        a: a.map(|x| x.value),
        b: b.map(|x| x.value),
        change: None,
        p_value: None,
        ci_overlap: None,
        verdict: Verdict::Unjudged,
    };
    let (Some(a), Some(b)) = (a, b) else {
        r.verdict = if a.is_some() {
            Verdict::OnlyA
        } else {
            Verdict::OnlyB
        };
        return r;
    };
    if a.value != 0.0 {
        r.change = Some((b.value - a.value) / a.value);
    }
    let (Some(sa), Some(sb)) = (&a.summary, &b.summary) else {
        return r;
    };
    let overlap = sa.ci_low <= sb.ci_high && sb.ci_low <= sa.ci_high;
    r.ci_overlap = Some(overlap);
    let p = (sa.samples.len() >= 3 && sb.samples.len() >= 3)
        .then(|| mann_whitney(&sa.samples, &sb.samples));
    r.p_value = p;
    let large = r.change.is_some_and(|c| c.abs() >= min_change);
    let real = large && !overlap && p.is_none_or(|p| p < ALPHA);
    r.verdict = if !real {
        Verdict::Noise
    } else if (b.value > a.value) == (f.better == Better::Higher) {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    r
}

/// Two-sided p-value of the Mann–Whitney U test for samples `x` and `y`.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> f64 {
    let (m, n) = (x.len(), y.len());
    assert!(m > 0 && n > 0);
    // Midranks of the pooled sample.
    let mut pooled: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = m + n;
    let mut rank_sum_x = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < total {
        let mut j = i + 1;
        while j < total && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        let mid = (i + j + 1) as f64 / 2.0; // ranks i+1 ..= j
        rank_sum_x += mid * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let u = rank_sum_x - (m * (m + 1)) as f64 / 2.0;
    if tie_term == 0.0 && m <= 50 && n <= 50 {
        return exact_p(m, n, u.round() as usize);
    }
    let (mf, nf, tf) = (m as f64, n as f64, total as f64);
    let mean = mf * nf / 2.0;
    let var = mf * nf / 12.0 * ((tf + 1.0) - tie_term / (tf * (tf - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// Exact two-sided p for U = `u` with sizes m, n and no ties: counts the arrangements by U with
/// the recurrence f(m, n, u) = f(m − 1, n, u − n) + f(m, n − 1, u).
fn exact_p(m: usize, n: usize, u: usize) -> f64 {
    let max_u = m * n;
    // table[j][k]: arrangements of i x's and j y's with U = k, built up over i.
    let mut prev: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut v = vec![0.0; max_u + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n + 1];
        cur[0][0] = 1.0;
        for j in 1..=n {
            for k in 0..=i * j {
                // The largest value is an x (it exceeds all j y's) or a y.
                let from_x = if k >= j { prev[j][k - j] } else { 0.0 };
                cur[j][k] = from_x + cur[j - 1][k];
            }
        }
        prev = cur;
    }
    let counts = &prev[n];
    let all: f64 = counts.iter().sum();
    let low: f64 = counts[..=u.min(max_u)].iter().sum();
    let high: f64 = counts[u.min(max_u)..].iter().sum();
    (2.0 * low.min(high) / all).min(1.0)
}

/// P(Z > z) for a standard normal Z: erfc by its Chebyshev fit (Numerical Recipes, 2nd ed.,
/// §6.2, fractional error below 1.2e-7).
pub fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = t
        * (-x * x - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    let erfc = if x >= 0.0 { y } else { 2.0 - y };
    erfc / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_matches_tables() {
        // Complete separation of 5 and 5: 2 of C(10,5) = 252 arrangements are as extreme.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney(&x, &y) - 2.0 / 252.0).abs() < 1e-12);
        assert!((mann_whitney(&y, &x) - 2.0 / 252.0).abs() < 1e-12);
        // U = 17 for sizes 5 and 4: P(U ≤ 3) = 7/126, two-sided 0.1111 (as scipy's exact test).
        let a = [19.0, 22.0, 16.0, 29.0, 24.0];
        let b = [20.0, 11.0, 17.0, 12.0];
        assert!((mann_whitney(&a, &b) - 14.0 / 126.0).abs() < 1e-12);
    }

    #[test]
    fn identical_sets_are_not_different() {
        let x: Vec<f64> = (0..40).map(|i| (i % 7) as f64).collect();
        let p = mann_whitney(&x, &x);
        assert!(p > 0.9, "p = {p}");
    }

    #[test]
    fn normal_approximation_with_ties() {
        // 60 samples each, shifted by a clear amount, with ties: tiny p.
        let x: Vec<f64> = (0..60).map(|i| (i % 10) as f64).collect();
        let y: Vec<f64> = (0..60).map(|i| (i % 10) as f64 + 5.0).collect();
        assert!(mann_whitney(&x, &y) < 1e-6);
        // Upper tail of the normal at known points.
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-7);
    }

    #[test]
    fn exact_and_normal_agree_for_moderate_sizes() {
        let x: Vec<f64> = (0..30).map(|i| i as f64 * 1.1).collect();
        let y: Vec<f64> = (0..30).map(|i| i as f64 * 1.1 + 7.05).collect();
        let exact = mann_whitney(&x, &y);
        // Force the normal path with one tie-free shift in a bigger sample.
        let x2: Vec<f64> = (0..60).map(|i| (i / 2) as f64 * 1.1).collect();
        let y2: Vec<f64> = (0..60).map(|i| (i / 2) as f64 * 1.1 + 7.05).collect();
        let normal = mann_whitney(&x2, &y2);
        assert!(exact > 0.0005 && exact < 0.2, "exact {exact}");
        assert!(
            normal < exact,
            "more samples, more evidence: {normal} vs {exact}"
        );
    }
}
