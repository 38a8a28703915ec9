//! Tests of `stats`.

use super::*;
use proptest::prelude::*;

#[test]
fn known_coverages() {
    // n = 5: only the full range, coverage 1 − 2/32.
    let (lo, hi, c) = median_ci_ranks(5, 0.95);
    assert_eq!((lo, hi), (0, 4));
    assert!((c - 0.9375).abs() < 1e-12);
    // n = 10: x(2)..x(9) has coverage 0.9785 (tables give j = 2).
    let (lo, hi, c) = median_ci_ranks(10, 0.95);
    assert_eq!((lo, hi), (1, 8));
    assert!((c - 0.978515625).abs() < 1e-9);
    // Large n stays finite and near 0.95.
    let (_, _, c) = median_ci_ranks(5000, 0.95);
    assert!((0.95..0.96).contains(&c));
}

#[test]
fn median_and_robust_spread() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert!(median(&[]).is_nan());
    // Deviations from 3 are {2,1,0,1,97}: median 1, whatever the outlier.
    assert!((mad_sigma(&[1.0, 2.0, 3.0, 4.0, 100.0]) - 1.4826).abs() < 1e-12);
}

#[test]
fn summary_of_known_data() {
    let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]);
    assert_eq!(s.median, 3.0);
    assert_eq!((s.min, s.max), (1.0, 5.0));
    assert_eq!((s.ci_low, s.ci_high), (1.0, 5.0));
    assert!((s.mean - 3.0).abs() < 1e-12);
    assert!((s.cv - (2.5f64).sqrt() / 3.0).abs() < 1e-12);
    // MAD of {2,1,0,1,2} is 1.
    assert!((s.robust_cv - 1.4826 / 3.0).abs() < 1e-12);
    assert_eq!(s.outliers, 0);
}

#[test]
fn a_preempted_sample_is_an_outlier_not_a_new_median() {
    let mut xs = vec![100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8];
    xs.push(400.0);
    let s = summarize(&xs);
    assert_eq!(s.outliers, 1);
    assert!((s.median - 100.1).abs() < 0.2);
    assert!(s.robust_cv < 0.02 && s.cv > 0.5);
}

#[test]
fn constant_samples_converge_at_the_minimum() {
    let rule = StopRule::default();
    let out = sample_until(&rule, || Taken::clean(42.0)).unwrap();
    assert_eq!(out.stop, StopReason::Converged);
    assert_eq!(out.summary.n, rule.min_samples);
    assert_eq!(out.summary.median, 42.0);
}

#[test]
fn noisy_samples_stop_at_the_cap() {
    let rule = StopRule {
        max_samples: 20,
        budget_s: 10.0,
        ..Default::default()
    };
    let mut i = 0u64;
    let out = sample_until(&rule, || {
        i += 1;
        Taken::clean(if i.is_multiple_of(2) { 1.0 } else { 100.0 })
    })
    .unwrap();
    assert_eq!(out.stop, StopReason::MaxSamples);
    assert_eq!(out.summary.n, 20);
    assert!(out.is_noisy());
}

/// A rule that never converges: it stops on counts alone.
fn counting(min_samples: usize, max_samples: usize) -> StopRule {
    StopRule {
        warmup: 0,
        min_samples,
        max_samples,
        target_rel_ci: 0.0,
        budget_s: 10.0,
    }
}

#[test]
fn disturbed_samples_are_dropped_and_counted() {
    let rule = counting(7, 7);
    let mut i = 0u64;
    let out = sample_until(&rule, || {
        i += 1;
        // Every third sample lost its CPU and took 5× as long.
        if i.is_multiple_of(3) {
            Taken {
                value: 500.0,
                disturbed: Some(Disturbance::LostCpu),
            }
        } else {
            Taken::clean(100.0)
        }
    })
    .unwrap();
    assert_eq!(out.summary.n, 7);
    assert_eq!(out.summary.dropped, 3);
    assert_eq!(out.summary.max, 100.0);
    assert!(out.summary.shortfall.is_none());
}

/// Sampling (7 wanted, at most 10) in which only every tenth sample is clean, the others
/// disturbed by `d`.
fn one_in_ten_clean(d: Disturbance) -> Sampled {
    let mut i = 0u64;
    sample_until(&counting(7, 10), || {
        i += 1;
        Taken {
            value: i as f64,
            disturbed: (!i.is_multiple_of(10)).then_some(d),
        }
    })
    .unwrap()
}

#[test]
fn too_few_clean_samples_are_marked_with_the_cause() {
    // Only every tenth sample is clean: 2 of 20 taken, so the disturbed ones are kept.
    let out = one_in_ten_clean(Disturbance::Staggered);
    let s = out.summary.shortfall.clone().expect("marked");
    assert_eq!((s.clean, s.wanted, s.disturbed_kept), (2, 7, 18));
    assert_eq!(s.cause, Disturbance::Staggered);
    assert_eq!(out.summary.n, 20);
    assert!(s.describe().contains("did not start together"));
}

/// The tally counts the disturbed samples kept in short figures: a run never says "0 dropped"
/// beside figures that rest on disturbed samples.
#[test]
fn the_tally_counts_disturbed_samples_kept_in_short_figures() {
    let out = one_in_ten_clean(Disturbance::LostCpu);
    assert!(out.summary.rests_on_disturbed() && out.summary.mark() == " ⚠");
    let v = serde_json::json!({ "a": out.summary, "b": summarize(&[1.0, 2.0]) });
    let t = SampleTally::of(&v);
    assert_eq!(
        (
            t.figures,
            t.dropped,
            t.short,
            t.disturbed_figures,
            t.disturbed_kept
        ),
        (2, 0, 1, 1, 18)
    );
    let d = t.describe();
    assert!(
        d.contains("18 disturbed") && d.contains("18 kept in the 1 figure(s)"),
        "{d}"
    );
    assert!(!d.contains("0 dropped (a"), "{d}");
}

proptest! {
    #[test]
    fn ci_brackets_the_median(mut xs in proptest::collection::vec(0.0f64..1e6, 1..300)) {
        let s = summarize(&xs);
        xs.sort_by(f64::total_cmp);
        prop_assert!(s.min <= s.ci_low && s.ci_low <= s.median);
        prop_assert!(s.median <= s.ci_high && s.ci_high <= s.max);
        prop_assert!((0.0..=1.0).contains(&s.ci_level));
        if xs.len() >= 6 { prop_assert!(s.ci_level >= 0.95); }
    }
}

/// Rounds of one figure merge into one: every sample counts once, drops add up, and the
/// between-round spread is the rounds' medians apart over the merged median.
#[test]
fn rounds_merge_into_one_figure() {
    let mut a = summarize(&[10.0, 10.2, 9.8]);
    a.dropped = 1;
    let b = summarize(&[8.0, 8.2, 7.8, 8.1]);
    let m = merge_rounds(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(m.n, 7);
    assert_eq!(m.dropped, 1);
    assert_eq!(m.samples.len(), 7);
    let spread = between_rounds(&[a.clone(), b], &m);
    assert!((spread - (10.0 - 8.05) / m.median).abs() < 1e-9, "{spread}");
    assert_eq!(between_rounds(&[a.clone()], &a), 0.0);
    assert!(merge_rounds(&[]).is_none());
}

/// A round with too few clean samples kept its disturbed ones; merged with clean rounds they are
/// left out and counted, so the figure holds only clean samples.
#[test]
fn a_disturbed_round_does_not_enter_a_clean_figure() {
    let clean = summarize(&[16.0, 16.2, 15.9, 16.1]);
    let mut disturbed = summarize(&[34.0, 16.0]);
    disturbed.shortfall = Some(Shortfall {
        clean: 1,
        wanted: 3,
        disturbed_kept: 1,
        cause: Disturbance::LostCpu,
    });
    let m = merge_rounds(&[clean.clone(), disturbed.clone()]).unwrap();
    assert_eq!(m.n, 4);
    assert!(m.max < 17.0);
    assert_eq!(m.dropped, 1);
    assert!(m.shortfall.is_none());
    // Alone, the disturbed round is all there is: kept, and said.
    let only = merge_rounds(&[disturbed]).unwrap();
    assert_eq!(only.n, 2);
    assert!(only.shortfall.is_some());
}
