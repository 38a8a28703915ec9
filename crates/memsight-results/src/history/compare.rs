//! `memsight compare A B`: every figure of two results side by side, with the change and whether
//! it is beyond the noise. A and B are results of the same command, or a run and a result of one
//! of its suites (then the run's figures of that suite are compared).
//!
//! A change counts as real only when it is at least the figure's noise floor and both tests
//! agree. The floor is derived from the samples: twice the larger robust spread (1.4826 × MAD ÷
//! median) of the two sample sets, and at least 1%. Samples within a run understate how much two
//! runs differ (the VM's neighbours change between runs), so the floor is a spread of single
//! samples, not of the median: a figure whose samples scatter by 2% needs a 4% change, one
//! measured to 0.3% is judged real at 1%. `--min-change` replaces it with one fixed floor for every
//! figure. The tests: the Mann–Whitney rank test on the two runs' sample
//! sets gives p < 0.01 (exact distribution for untied samples of up to 50 each,
//! normal approximation with tie and continuity corrections otherwise; Conover, *Practical
//! Nonparametric Statistics*, 3rd ed., §5.1), and the two 95% confidence intervals of the medians
//! do not overlap. Samples within a run are not fully independent (drift, periodic host noise),
//! which makes a rank test alone too eager; the interval condition keeps it honest. Files written
//! before samples were stored (schema 1) fall back to the interval test alone.

use serde::Serialize;

pub use super::rows::{ALPHA, MIN_FLOOR, Row, Verdict};

use crate::document::{Document, Results};
use crate::figure::{Better, Figure, Scope};
use memsight_core::Error;

/// The noise floor in robust spreads of single samples.
pub const FLOOR_SPREADS: f64 = 2.0;

/// The smallest change that counts as real.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Floor {
    /// Per figure, from its samples (see the module documentation).
    Samples,
    /// The same fraction for every figure (`--min-change`).
    Fixed(f64),
}

/// Which run is which.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub label: String,
    /// The command that measured (`run`, `bandwidth` …).
    pub command: String,
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
    /// Curve points of A and B (each working set of a ladder or sweep, each access size or
    /// range) left out: only the summary figures are compared unless every figure is asked for.
    pub curve_points_left_out: usize,
}

/// The columns of `memsight compare`'s table.
pub const COLUMNS: [&str; 8] = [
    "figure", "unit", "A", "B", "change", "floor", "p", "verdict",
];

impl Comparison {
    /// One row per figure under [`COLUMNS`]; `changed`: only those better or worse beyond the
    /// noise.
    pub fn table_rows(&self, changed: bool) -> Vec<Vec<String>> {
        let num = crate::view::num;
        let pct = |x: f64| format!("{:+.1}%", x * 100.0);
        self.rows
            .iter()
            .filter(|r| !changed || matches!(r.verdict, Verdict::Better | Verdict::Worse))
            .map(|r| {
                vec![
                    r.label.clone(),
                    r.unit.clone(),
                    r.a.map_or("-".into(), num),
                    r.b.map_or("-".into(), num),
                    r.change.map_or("-".into(), pct),
                    r.floor.map_or("-".into(), |x| format!("{:.1}%", x * 100.0)),
                    r.p_value.map_or("-".into(), |p| format!("{p:.1e}")),
                    r.verdict.word().to_string(),
                ]
            })
            .collect()
    }

    /// The figures B made worse beyond the noise and by at least `min_change` (a fraction; 0:
    /// any change the comparison judged worse).
    pub fn regressions(&self, min_change: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Worse)
            .filter(|r| r.change.is_some_and(|c| c.abs() >= min_change))
            .collect()
    }

    /// How many rows have each verdict.
    pub fn count(&self, v: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }

    /// The verdicts counted, in one sentence.
    pub fn tally(&self) -> String {
        let left = if self.curve_points_left_out > 0 {
            format!(
                "; {} curve point(s) of A and B not compared (--all-figures compares them)",
                self.curve_points_left_out
            )
        } else {
            String::new()
        };
        format!(
            "{} figures: {} better, {} worse, {} within noise, {} not judged (no samples), {} measured differently, {} on disturbed samples, {} where the machine moved between the runs, {} only on one side{left}",
            self.rows.len(),
            self.count(Verdict::Better),
            self.count(Verdict::Worse),
            self.count(Verdict::Noise),
            self.count(Verdict::Unjudged),
            self.count(Verdict::Different),
            self.count(Verdict::Disturbed),
            self.count(Verdict::Moved),
            self.count(Verdict::OnlyA) + self.count(Verdict::OnlyB)
        )
    }
}

fn info(label: &str, d: &Document) -> RunInfo {
    RunInfo {
        label: label.to_string(),
        command: d.command.clone(),
        started: d.started.clone(),
        host: d
            .environment
            .hostname
            .clone()
            .unwrap_or_else(|| "unknown".into()),
        fingerprint: super::fingerprint(&d.environment),
        cpu: d.environment.cpu.model_name.clone(),
        level: d.results.level(),
        complete: d.complete,
    }
}

/// The figures of `a` and `b` that can be compared: all of both when they come from the same
/// command; a run's figures of one suite against that suite's own result; else an error.
fn comparable(a: &Document, b: &Document) -> Result<(Vec<Figure>, Vec<Figure>), Error> {
    let (fa, fb) = (crate::document::figures(a), crate::document::figures(b));
    let of_suite = |f: Vec<Figure>, suite: &str| -> Vec<Figure> {
        f.into_iter().filter(|x| x.suite == suite).collect()
    };
    let (fa, fb) = match (&a.results, &b.results) {
        _ if a.command == b.command => (fa, fb),
        (Results::Run(_), _) => (of_suite(fa, &b.command), fb),
        (_, Results::Run(_)) => (fa, of_suite(fb, &a.command)),
        _ => (Vec::new(), Vec::new()),
    };
    if fa.is_empty() || fb.is_empty() {
        return Err(Error::input(format!(
            "A holds `memsight {}` and B `memsight {}`: nothing to compare; compare results of the same command, or a run with a result of one of its suites",
            a.command, b.command
        )));
    }
    Ok((fa, fb))
}

/// Compares result `b` against result `a`, figure by figure: the summary figures, or every
/// figure with `all_figures` (curve points too: each working set of a ladder or sweep).
pub fn compare(
    a_label: &str,
    a: &Document,
    b_label: &str,
    b: &Document,
    floor: Floor,
    all_figures: bool,
) -> Result<Comparison, Error> {
    let (mut fa, mut fb) = comparable(a, b)?;
    let ia = info(a_label, a);
    let ib = info(b_label, b);
    let warnings = warnings(&ia, a, &ib, b);
    let before = fa.len() + fb.len();
    if !all_figures {
        fa.retain(|f| f.scope == Scope::Summary);
        fb.retain(|f| f.scope == Scope::Summary);
    }
    let curve_points_left_out = before - fa.len() - fb.len();
    let mut rows: Vec<Row> = fa
        .iter()
        .map(|x| row(Some(x), fb.iter().find(|y| y.key == x.key), floor))
        .collect();
    rows.extend(
        fb.iter()
            .filter(|y| !fa.iter().any(|x| x.key == y.key))
            .map(|y| row(None, Some(y), floor)),
    );
    super::drift::within_drift(&mut rows, a, b);
    super::drift::moved_between(&mut rows, a, b);
    super::drift::within_recorded_drift(&mut rows, a, b);
    let floor_words = match floor {
        Floor::Samples => format!(
            "at least its noise floor ({FLOOR_SPREADS:.0} × the larger robust spread of the two sample sets, at least {:.0}%; column floor)",
            MIN_FLOOR * 100.0
        ),
        Floor::Fixed(x) => format!("at least {:.1}% (--min-change)", x * 100.0),
    };
    Ok(Comparison {
        method: format!(
            "change = (B − A) ÷ A of the medians; beyond noise when it is {floor_words}, the Mann–Whitney rank test on both sides' samples gives p < {ALPHA} and the 95% confidence intervals of the two medians do not overlap (intervals alone for results without samples)"
        ),
        a: ia,
        b: ib,
        warnings,
        rows,
        curve_points_left_out,
    })
}

/// What the reader must know before trusting the rows.
fn warnings(ia: &RunInfo, a: &Document, ib: &RunInfo, b: &Document) -> Vec<String> {
    let mut warnings = Vec::new();
    if ia.fingerprint != ib.fingerprint {
        warnings.push(format!(
            "the results come from different machines ({} {} vs {} {}): differences include the hardware",
            ia.host,
            ia.cpu.as_deref().unwrap_or("?"),
            ib.host,
            ib.cpu.as_deref().unwrap_or("?")
        ));
    }
    for (i, d) in [(ia, a), (ib, b)] {
        if !i.complete {
            warnings.push(format!(
                "{} was interrupted: only what it finished is compared",
                i.label
            ));
        }
        if d.schema_version < 2 {
            warnings.push(format!(
                "{} predates stored samples (schema {}): its figures are judged by confidence intervals only",
                i.label, d.schema_version
            ));
        }
    }
    if ia.command != ib.command {
        warnings.push(format!(
            "A is `memsight {}` and B `memsight {}`: only the {} figures are compared, and only those measured with the same options match",
            ia.command,
            ib.command,
            if ia.command == "run" { &ib.command } else { &ia.command }
        ));
    } else if ia.level != ib.level {
        warnings.push(format!(
            "different levels ({} vs {}): only figures both measured are judged",
            ia.level, ib.level
        ));
    }
    warnings
}

/// The noise floor of one figure measured on both sides.
fn noise_floor(a: &memsight_core::stats::Summary, b: &memsight_core::stats::Summary) -> f64 {
    (FLOOR_SPREADS * a.robust_cv.max(b.robust_cv)).max(MIN_FLOOR)
}

fn row(a: Option<&Figure>, b: Option<&Figure>, floor: Floor) -> Row {
    let f = a.or(b).expect("one side exists");
    let mut r = Row {
        key: f.key.clone(),
        suite: f.suite.clone(),
        label: f.label.clone(),
        unit: f.unit.clone(),
        a: a.map(|x| x.value),
        b: b.map(|x| x.value),
        change: None,
        p_value: None,
        ci_overlap: None,
        floor: None,
        verdict: Verdict::Unjudged,
        note: None,
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
    if a.conditions != b.conditions {
        r.verdict = Verdict::Different;
        r.note = Some(format!("A: {}; B: {}", a.conditions, b.conditions));
        return r;
    }
    let (Some(sa), Some(sb)) = (&a.summary, &b.summary) else {
        return r;
    };
    // A median of mostly disturbed samples is slower than the machine: judging it would call
    // the next clean run "better" (or a disturbed one "worse") for no change at all.
    if sa.rests_on_disturbed() || sb.rests_on_disturbed() {
        r.verdict = Verdict::Disturbed;
        let side = |s: &memsight_core::stats::Summary, l: &str| {
            s.shortfall
                .as_ref()
                .map(|f| format!("{l}: {}", f.describe()))
        };
        r.note = Some(
            [side(sa, "A"), side(sb, "B")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; "),
        );
        return r;
    }
    let overlap = sa.ci_low <= sb.ci_high && sb.ci_low <= sa.ci_high;
    r.ci_overlap = Some(overlap);
    let p = (sa.samples.len() >= 3 && sb.samples.len() >= 3)
        .then(|| mann_whitney(&sa.samples, &sb.samples));
    r.p_value = p;
    let min_change = match floor {
        Floor::Samples => noise_floor(sa, sb),
        Floor::Fixed(x) => x,
    };
    r.floor = Some(min_change);
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

    /// A latency figure with `n` samples around `centre`, scattered by ± `spread` (a fraction).
    fn figure(centre: f64, spread: f64, n: usize) -> Figure {
        let samples: Vec<f64> = (0..n)
            .map(|i| centre * (1.0 + spread * ((i * 7 % n) as f64 / n as f64 * 2.0 - 1.0)))
            .collect();
        Figure::sampled(
            crate::key::Key::LatencyLevel {
                cpu: 0,
                level: "x".into(),
            },
            "x".into(),
            "ns",
            Better::Lower,
            &memsight_core::stats::summarize(&samples),
        )
    }

    #[test]
    fn small_changes_with_tight_samples_are_real_and_noisy_ones_are_not() {
        // 3% slower, samples within ±0.5%: real (the floor is 1%).
        let r = row(
            Some(&figure(100.0, 0.005, 30)),
            Some(&figure(103.0, 0.005, 30)),
            Floor::Samples,
        );
        assert_eq!(r.verdict, Verdict::Worse, "{r:?}");
        assert!((r.floor.unwrap() - MIN_FLOOR).abs() < 1e-9);
        // 2% faster, tight: real.
        let r = row(
            Some(&figure(100.0, 0.003, 30)),
            Some(&figure(98.0, 0.003, 30)),
            Floor::Samples,
        );
        assert_eq!(r.verdict, Verdict::Better, "{r:?}");
        // 3% slower, samples scattered by ±6%: inside the floor, whatever the tests say.
        let r = row(
            Some(&figure(100.0, 0.06, 60)),
            Some(&figure(103.0, 0.06, 60)),
            Floor::Samples,
        );
        assert_eq!(r.verdict, Verdict::Noise, "{r:?}");
        assert!(r.floor.unwrap() > 0.03);
        // A fixed 5% floor (--min-change 5) calls the tight 3% change noise.
        let r = row(
            Some(&figure(100.0, 0.005, 30)),
            Some(&figure(103.0, 0.005, 30)),
            Floor::Fixed(0.05),
        );
        assert_eq!(r.verdict, Verdict::Noise, "{r:?}");
        // Under 1%, never real.
        let r = row(
            Some(&figure(100.0, 0.0005, 30)),
            Some(&figure(100.8, 0.0005, 30)),
            Floor::Samples,
        );
        assert_eq!(r.verdict, Verdict::Noise, "{r:?}");
    }

    /// A figure of mostly disturbed samples (19.22 GB/s where clean samples gave 30.08) is not
    /// judged against a clean one: the change is the disturbance, not the machine.
    #[test]
    fn figures_on_too_few_clean_samples_are_not_judged() {
        let mut a = figure(19.22, 0.01, 4);
        a.better = Better::Higher;
        if let Some(s) = a.summary.as_mut() {
            s.shortfall = Some(memsight_core::stats::Shortfall {
                clean: 0,
                wanted: 5,
                disturbed_kept: 4,
                cause: memsight_core::cpuclock::Disturbance::LostCpu,
            });
        }
        let mut b = figure(30.08, 0.01, 30);
        b.better = Better::Higher;
        for (x, y) in [(&a, &b), (&b, &a)] {
            let r = row(Some(x), Some(y), Floor::Samples);
            assert_eq!(r.verdict, Verdict::Disturbed, "{r:?}");
            assert!(
                r.note.as_deref().unwrap().contains("0 clean of 5 wanted"),
                "{r:?}"
            );
        }
        // All clean but fewer than wanted: unbiased, judged.
        if let Some(s) = a.summary.as_mut() {
            s.shortfall = Some(memsight_core::stats::Shortfall {
                clean: 6,
                wanted: 7,
                disturbed_kept: 0,
                cause: memsight_core::cpuclock::Disturbance::LostCpu,
            });
        }
        for (x, y) in [(&a, &b), (&b, &a)] {
            assert_ne!(
                row(Some(x), Some(y), Floor::Samples).verdict,
                Verdict::Disturbed
            );
        }
        // Without the shortfall the same change is judged.
        a.summary.as_mut().unwrap().shortfall = None;
        assert_eq!(
            row(Some(&a), Some(&b), Floor::Samples).verdict,
            Verdict::Better
        );
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
