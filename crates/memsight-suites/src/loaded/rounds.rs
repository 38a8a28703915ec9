//! A point's alternating rounds as one point.

use memsight_core::stats::{Summary, between_rounds, median, merge_rounds};

use super::CurvePoint;

/// One point from its rounds: the latency samples of every clean round together (see
/// [`merge_rounds`]), the median of the rounds' bandwidths with each kept (one round another
/// tenant slowed or sped does not move it), the median of each percentile. None when no round
/// holds a sample.
pub(super) fn merge(mut rounds: Vec<CurvePoint>) -> Option<CurvePoint> {
    if rounds.len() < 2 {
        return rounds.pop();
    }
    let latency: Vec<Summary> = rounds.iter().map(|p| p.latency_ns.clone()).collect();
    let merged = merge_rounds(&latency)?;
    let spread = between_rounds(&latency, &merged);
    let bandwidths: Vec<f64> = rounds.iter().map(|p| p.bandwidth_gbs).collect();
    let of = |f: fn(&CurvePoint) -> Option<f64>| {
        let v: Vec<f64> = rounds.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| median(&v))
    };
    Some(CurvePoint {
        delay_cycles: rounds[0].delay_cycles,
        bandwidth_gbs: median(&bandwidths),
        latency_ns: merged,
        p50_ns: of(|p| p.p50_ns),
        p90_ns: of(|p| p.p90_ns),
        p99_ns: of(|p| p.p99_ns),
        tsc_step_ns: of(|p| p.tsc_step_ns),
        round_bandwidths_gbs: bandwidths,
        round_latencies_ns: latency.iter().map(|l| l.median).collect(),
        between_rounds: Some(spread),
    })
}

/// (Highest − lowest) ÷ mean of the rounds' values; none below two rounds.
pub(super) fn apart(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let hi = values.iter().copied().fold(f64::MIN, f64::max);
    let lo = values.iter().copied().fold(f64::MAX, f64::min);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    (mean > 0.0).then(|| (hi - lo) / mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::summarize;

    fn taken(delay: Option<u64>, gbs: f64, ns: &[f64]) -> CurvePoint {
        CurvePoint {
            delay_cycles: delay,
            bandwidth_gbs: gbs,
            latency_ns: summarize(ns),
            p50_ns: Some(ns[0]),
            p90_ns: None,
            p99_ns: None,
            tsc_step_ns: None,
            round_bandwidths_gbs: Vec::new(),
            round_latencies_ns: Vec::new(),
            between_rounds: None,
        }
    }

    /// Three rounds of one point, the second while another tenant drew bandwidth: the merged
    /// point holds every sample, the mean bandwidth, each round's bandwidth and the spread.
    #[test]
    fn rounds_merge_into_one_point_with_their_spread() {
        let p = merge(vec![
            taken(Some(40), 30.0, &[100.0, 101.0, 99.0]),
            taken(Some(40), 18.0, &[130.0, 131.0, 129.0]),
            taken(Some(40), 30.0, &[100.0, 102.0, 98.0]),
        ])
        .unwrap();
        assert_eq!(p.latency_ns.n, 9);
        assert_eq!(p.delay_cycles, Some(40));
        assert!((p.bandwidth_gbs - 30.0).abs() < 1e-9, "the median round");
        assert_eq!(p.round_bandwidths_gbs, vec![30.0, 18.0, 30.0]);
        assert_eq!(p.round_latencies_ns, vec![100.0, 130.0, 100.0]);
        let apart = p.bandwidth_between_rounds().unwrap();
        assert!((apart - 12.0 / 26.0).abs() < 1e-9, "{apart}");
        assert!(p.between_rounds.unwrap() > 0.25);
        assert_eq!(p.p50_ns, Some(100.0));
    }

    #[test]
    fn one_round_is_the_point_itself() {
        let p = merge(vec![taken(None, 1.0, &[90.0, 91.0, 92.0])]).unwrap();
        assert!(p.round_bandwidths_gbs.is_empty() && p.between_rounds.is_none());
        assert_eq!(p.bandwidth_between_rounds(), None);
        assert!(merge(Vec::new()).is_none());
    }

    /// The curve's saturation spread comes from its highest-bandwidth point, and a spread of a
    /// fifth or more is a finding that names the rounds' bandwidths.
    #[test]
    fn a_saturation_that_moved_between_rounds_is_a_finding() {
        let idle = merge(vec![
            taken(None, 1.0, &[100.0, 100.0, 100.0]),
            taken(None, 1.0, &[101.0, 101.0, 101.0]),
        ])
        .unwrap();
        let top = merge(vec![
            taken(Some(0), 40.0, &[200.0, 200.0, 200.0]),
            taken(Some(0), 25.0, &[260.0, 260.0, 260.0]),
        ])
        .unwrap();
        let c = super::super::curve(
            memsight_kernels::loadgen::TrafficMix::Reads,
            vec![top, idle],
            2.0,
        );
        let apart = c.saturation_between_rounds.unwrap();
        assert!((apart - 15.0 / 32.5).abs() < 1e-9, "{apart}");
        let f = super::super::findings(&[c], 2.0, None);
        assert!(
            f.iter()
                .any(|x| x.contains("moved 46% between rounds (40.0, 25.0 GB/s)")),
            "{f:?}"
        );
    }
}
