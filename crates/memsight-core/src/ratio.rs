//! The ratio of two measured figures, with the interval their confidence intervals allow: what
//! a sentence comparing them may say. A ratio whose interval holds 1 (as printed, to two
//! decimals) is within the noise, and a finding then says the two cost the same, whatever its
//! median reads.

use crate::stats::{Summary, median};

/// `a ÷ b`: the medians' ratio and the lowest and highest ratios the two medians' confidence
/// intervals allow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// How `a` compares with `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// `a` is below `b` beyond the noise.
    Below,
    /// Within the noise: the same.
    Same,
    /// `a` is above `b` beyond the noise.
    Above,
}

impl Ratio {
    /// `a ÷ b` of two figures.
    pub fn of(a: &Summary, b: &Summary) -> Ratio {
        Ratio {
            value: a.median / b.median,
            low: a.ci_low / b.ci_high,
            high: a.ci_high / b.ci_low,
        }
    }

    /// `a ÷ b` of two cited figures, where both carry their confidence interval.
    pub fn of_cited(a: &crate::finding::Cited, b: &crate::finding::Cited) -> Option<Ratio> {
        let (a_ci, b_ci) = (a.ci?, b.ci?);
        Some(Ratio {
            value: a.value / b.value,
            low: a_ci[0] / b_ci[1],
            high: a_ci[1] / b_ci[0],
        })
    }

    /// The typical ratio over several pairs of figures: the median of each end.
    pub fn median_of(ratios: &[Ratio]) -> Ratio {
        let of = |f: fn(&Ratio) -> f64| median(&ratios.iter().map(f).collect::<Vec<_>>());
        Ratio {
            value: of(|r| r.value),
            low: of(|r| r.low),
            high: of(|r| r.high),
        }
    }

    /// Whether `a` is below, the same as, or above `b`, judged on the interval as findings
    /// print it (two decimals): an interval printed as 0.96–1.00 holds 1, and a sentence beside
    /// it must not claim a difference its own numbers do not show.
    pub fn relation(&self) -> Relation {
        let printed = |v: f64| (v * 100.0).round() / 100.0;
        if printed(self.high) < 1.0 {
            Relation::Below
        } else if printed(self.low) > 1.0 {
            Relation::Above
        } else {
            Relation::Same
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    #[test]
    fn an_interval_that_prints_as_holding_one_is_the_same() {
        // 0.96–0.998 prints as 0.96–1.00: no difference may be claimed beside it.
        let r = Ratio {
            value: 0.98,
            low: 0.96,
            high: 0.998,
        };
        assert_eq!(r.relation(), Relation::Same);
        let r = Ratio {
            value: 0.97,
            low: 0.95,
            high: 0.99,
        };
        assert_eq!(r.relation(), Relation::Below);
    }

    #[test]
    fn a_ratio_within_the_noise_is_the_same() {
        let a = summarize(&[100.0, 104.0, 96.0, 101.0, 99.0, 103.0, 97.0]);
        let b = summarize(&[101.0, 105.0, 97.0, 100.0, 98.0, 102.0, 99.0]);
        let r = Ratio::of(&a, &b);
        assert!((r.value - 1.0).abs() < 0.02);
        assert_eq!(r.relation(), Relation::Same);
        let c = summarize(&[150.0, 151.0, 149.0, 152.0, 148.0, 150.5, 149.5]);
        assert_eq!(Ratio::of(&c, &a).relation(), Relation::Above);
        assert_eq!(Ratio::of(&a, &c).relation(), Relation::Below);
        let m = Ratio::median_of(&[Ratio::of(&c, &a), Ratio::of(&c, &a), Ratio::of(&a, &b)]);
        assert_eq!(m.relation(), Relation::Above);
    }
}
