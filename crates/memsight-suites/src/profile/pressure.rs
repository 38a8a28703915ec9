//! Bandwidth pressure without counters: a latency read by a probe chase while the program runs,
//! mapped back through the machine's loaded-latency curve family to the memory bandwidth that
//! produces that latency. The program's mix is unknown, so every curve of the family gives a
//! bandwidth and the answer is the interval they span; a curve measured in rounds gives one from
//! each round's sweep too, since a machine can answer one load at different latencies from minute
//! to minute. Where the curves are flat (latency within the idle point's noise) the answer is only
//! an upper bound.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::loaded::Curve;

/// What one latency reading says about the bandwidth drawn from memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Pressure {
    /// Latency within the idle noise of every curve: the bandwidth is below this, GB/s.
    Flat { below_gbs: f64 },
    /// Latency within the idle noise of a curve that stays flat to its last point: that curve's
    /// load threads never loaded memory enough to raise latency (too few CPUs to saturate it),
    /// so latency bounds nothing; the family is flat at least to this bandwidth, GB/s.
    Unbounded { flat_to_gbs: f64 },
    /// Between these bandwidths, GB/s (the lowest and highest the family's mixes and rounds give).
    Within { low_gbs: f64, high_gbs: f64 },
    /// Latency beyond the last point of a curve that never rose above its idle noise: more
    /// traffic than the curves drew (at least this, GB/s), with no upper bound and no sign that
    /// memory is saturated.
    Above { at_least_gbs: f64 },
    /// Latency at or beyond every curve's saturation point: memory is saturated (at least the
    /// lowest saturation bandwidth of the family, GB/s).
    Saturated { at_least_gbs: f64 },
}

impl Pressure {
    /// The interval's bounds, GB/s (a flat reading from 0).
    pub fn bounds(&self) -> (f64, f64) {
        match *self {
            Pressure::Flat { below_gbs } => (0.0, below_gbs),
            Pressure::Unbounded { .. } => (0.0, f64::INFINITY),
            Pressure::Within { low_gbs, high_gbs } => (low_gbs, high_gbs),
            Pressure::Above { at_least_gbs } | Pressure::Saturated { at_least_gbs } => {
                (at_least_gbs, f64::INFINITY)
            }
        }
    }

    /// Whether `gbs` lies in the interval.
    pub fn contains(&self, gbs: f64) -> bool {
        let (lo, hi) = self.bounds();
        (lo..=hi).contains(&gbs)
    }
}

/// A curve's latency rises above idle by at least this share before it says anything beyond
/// "flat" (the idle point's own noise is added to it).
const FLAT: f64 = 0.05;

/// One curve's answer for one latency.
#[derive(Debug, Clone, Copy)]
struct Answer {
    /// GB/s; `high` infinite past the curve's last point, or on a curve that never leaves its
    /// flat part.
    low: f64,
    high: f64,
    /// The curve's last point, GB/s.
    saturation: f64,
    /// Whether the curve's latency left its idle noise at all: only then is its last point a
    /// loaded memory's, not merely where its load threads ran out.
    rose: bool,
}

/// One line a latency is read off: a curve's merged points, or one round's sweep of them.
struct Line {
    /// (GB/s, ns), idle first, latency as its running maximum.
    pts: Vec<(f64, f64)>,
    /// The share over idle within which a latency is the idle point's noise.
    noise: f64,
    /// Whether the curve (merged) left that noise: a round's sweep of a curve that did but which
    /// stayed flat itself ends where that round's load ended, a bound, not a flat-to-its-end
    /// curve that bounds nothing.
    rose: bool,
}

impl Line {
    fn new(points: impl Iterator<Item = (f64, f64)>, noise: f64) -> Self {
        // Queueing never makes a miss cheaper: a later point's latency below an earlier one's is
        // noise, so the curve is read as its running maximum (monotone), which inverts.
        let mut top = 0.0f64;
        let pts: Vec<(f64, f64)> = points
            .map(|(gbs, ns)| {
                top = top.max(ns);
                (gbs, top)
            })
            .collect();
        let rose = pts
            .first()
            .is_some_and(|&(_, idle)| pts.iter().any(|p| p.1 > idle * (1.0 + noise)));
        Line { pts, noise, rose }
    }
}

/// Which lines of a curve a latency is read off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    /// The merged points and each round's sweep.
    MergeAndRounds,
    /// The merged points alone (as before the rounds were kept).
    MergeAlone,
}

/// The lines of a curve: its merged points and, where it was measured in rounds, each round's
/// sweep. A machine whose response moves from round to round (another tenant on the memory, a
/// fabric clock that changed) reads one load at two latencies; the merged curve lies between
/// them and misses both, each round's sweep holds one of them.
fn lines(c: &Curve, which: Lines) -> Vec<Line> {
    let Some(idle_point) = c.points.first().map(|p| &p.latency_ns) else {
        return Vec::new();
    };
    let noise = FLAT.max((idle_point.ci_high - idle_point.median) / idle_point.median);
    let merged = Line::new(
        c.points
            .iter()
            .map(|p| (p.bandwidth_gbs, p.latency_ns.median)),
        noise,
    );
    let rose = merged.rose;
    let sweeps = match which {
        Lines::MergeAndRounds => c.round_sweeps(),
        Lines::MergeAlone => Vec::new(),
    };
    let sweeps = sweeps.into_iter().map(|sweep| Line {
        rose,
        ..Line::new(sweep.into_iter(), noise)
    });
    std::iter::once(merged)
        .chain(sweeps)
        .filter(|l| l.pts.len() >= 2)
        .collect()
}

fn on_line(line: &Line, ns: f64) -> Option<Answer> {
    let pts = &line.pts;
    let (&(_, idle), &(sat_gbs, sat_ns)) = (pts.first()?, pts.last()?);
    let flat_ns = idle * (1.0 + line.noise);
    // The first point that leaves the flat part. A curve that never leaves it says nothing of a
    // latency within its noise: its last point is where its load threads ran out, not where
    // memory did, and a program drawing more would read just as flat. A round's sweep that
    // stayed flat, of a curve that rose, is flat at least to its last point.
    let leaves = pts
        .iter()
        .find(|p| p.1 > flat_ns)
        .map(|p| p.0)
        .or(line.rose.then_some(sat_gbs));
    let answer = |low, high| Answer {
        low,
        high,
        saturation: sat_gbs,
        rose: line.rose,
    };
    if ns <= flat_ns {
        return Some(answer(0.0, leaves.unwrap_or(f64::INFINITY)));
    }
    if ns >= sat_ns {
        return Some(answer(sat_gbs, f64::INFINITY));
    }
    let i = pts.windows(2).position(|w| w[0].1 < ns && ns <= w[1].1)?;
    let ((b0, l0), (b1, l1)) = (pts[i], pts[i + 1]);
    let b = b0 + (ns - l0) / (l1 - l0) * (b1 - b0);
    Some(answer(b, b))
}

/// The bandwidth interval a probe latency of `ns` (on the scale of the family's idle latency,
/// [`idle_ns`]) maps to across `family` (curves with fewer than two points are left out); `None`
/// without any usable curve. Every curve is read as its merged points and as each round's sweep:
/// the interval spans the mixes and the rounds.
pub fn infer(ns: f64, family: &[Curve]) -> Option<Pressure> {
    read(ns, family, Lines::MergeAndRounds)
}

/// What the curves' merged points alone make of `ns`, where that differs from `full`, the
/// answer [`infer`] gave for it (`None` where the rounds' sweeps change nothing): how much of the
/// interval's width is the machine answering one load at different latencies while the curves
/// were measured.
pub fn infer_merged(ns: f64, family: &[Curve], full: &Pressure) -> Option<Pressure> {
    let merged = read(ns, family, Lines::MergeAlone)?;
    // Bounds, not kinds: two unbounded readings whose flat curves ended apart say the same.
    (merged.bounds() != full.bounds()).then_some(merged)
}

fn read(ns: f64, family: &[Curve], which: Lines) -> Option<Pressure> {
    let family_idle = idle_ns(family)?;
    // Each line is read as a rise over its own idle point: curves measured minutes apart (and
    // rounds seconds apart) start at different idle latencies on a machine that drifts, and an
    // idle reading read against a curve that started lower would look like traffic.
    let answers: Vec<Answer> = family
        .iter()
        .flat_map(|c| lines(c, which))
        .filter_map(|l| on_line(&l, ns * l.pts[0].1 / family_idle))
        .collect();
    if answers.is_empty() {
        return None;
    }
    let low = answers.iter().map(|a| a.low).fold(f64::INFINITY, f64::min);
    let high = answers.iter().map(|a| a.high).fold(0.0, f64::max);
    let beyond: Vec<&Answer> = answers.iter().filter(|a| a.high.is_infinite()).collect();
    Some(if beyond.iter().any(|a| a.low == 0.0) {
        // A curve flat to its end allows any bandwidth, whatever the others say.
        Pressure::Unbounded {
            flat_to_gbs: beyond.iter().map(|a| a.saturation).fold(0.0, f64::max),
        }
    } else if answers.iter().all(|a| a.low == 0.0) {
        Pressure::Flat { below_gbs: high }
    } else if beyond.iter().any(|a| !a.rose) {
        // Past the last point of a curve that never rose: more than its load threads drew, but
        // its end is not memory's, so no upper bound and no claim of saturation.
        Pressure::Above { at_least_gbs: low }
    } else if beyond.len() == answers.len() {
        Pressure::Saturated {
            at_least_gbs: answers
                .iter()
                .map(|a| a.saturation)
                .fold(f64::INFINITY, f64::min),
        }
    } else if !beyond.is_empty() {
        // Some curves saturated, others not: the saturated ones are bounded by their own
        // saturation, the most memory can serve in that mix.
        let cap = answers.iter().map(|a| a.saturation).fold(0.0, f64::max);
        Pressure::Within {
            low_gbs: low,
            high_gbs: cap,
        }
    } else {
        Pressure::Within {
            low_gbs: low,
            high_gbs: high,
        }
    })
}

/// The highest bandwidth any curve of the family reached, its merged points or one round's
/// sweep, GB/s: the top of every interval [`infer`] can give.
pub fn highest_gbs(family: &[Curve]) -> f64 {
    family
        .iter()
        .flat_map(|c| lines(c, Lines::MergeAndRounds))
        .flat_map(|l| l.pts)
        .map(|(gbs, _)| gbs)
        .fold(0.0, f64::max)
}

/// The family's idle latency: the median of its curves' idle points, ns.
pub fn idle_ns(family: &[Curve]) -> Option<f64> {
    let mut v: Vec<f64> = family
        .iter()
        .filter_map(|c| c.points.first().map(|p| p.latency_ns.median))
        .collect();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loaded::CurvePoint;
    use memsight_kernels::loadgen::TrafficMix;

    fn curve(mix: TrafficMix, pts: &[(f64, f64)]) -> Curve {
        let points: Vec<CurvePoint> = pts
            .iter()
            .map(|&(gbs, ns)| CurvePoint {
                delay_cycles: Some(1),
                bandwidth_gbs: gbs,
                latency_ns: memsight_core::stats::summarize(&[ns, ns, ns]),
                p50_ns: None,
                p90_ns: None,
                p99_ns: None,
                tsc_step_ns: None,
                round_bandwidths_gbs: Vec::new(),
                round_latencies_ns: Vec::new(),
                between_rounds: None,
            })
            .collect();
        Curve {
            mix,
            saturation_gbs: pts.last().unwrap().0,
            points,
            knee_gbs: None,
            saturation_between_rounds: None,
        }
    }

    /// A curve measured in rounds: each round's sweep as (GB/s, ns) pairs, the same points in
    /// each; the merged point is their mean bandwidth and the median of their latencies.
    fn rounds_curve(mix: TrafficMix, rounds: &[&[(f64, f64)]]) -> Curve {
        let mut c = curve(mix, rounds[0]);
        for (i, p) in c.points.iter_mut().enumerate() {
            let bws: Vec<f64> = rounds.iter().map(|r| r[i].0).collect();
            let ns: Vec<f64> = rounds.iter().map(|r| r[i].1).collect();
            p.bandwidth_gbs = bws.iter().sum::<f64>() / bws.len() as f64;
            p.latency_ns = memsight_core::stats::summarize(&ns);
            p.round_bandwidths_gbs = bws;
            p.round_latencies_ns = ns;
        }
        c
    }

    /// Reads flat to 20 GB/s, then rising to 200 ns at 40; writes rise earlier and saturate at 30.
    fn family() -> Vec<Curve> {
        vec![
            curve(
                TrafficMix::Reads,
                &[
                    (0.5, 100.0),
                    (10.0, 101.0),
                    (20.0, 103.0),
                    (30.0, 130.0),
                    (40.0, 200.0),
                ],
            ),
            curve(
                TrafficMix::Writes,
                &[(0.5, 100.0), (10.0, 102.0), (20.0, 140.0), (30.0, 250.0)],
            ),
        ]
    }

    #[test]
    fn a_latency_on_the_rising_part_gives_the_interval_of_the_mixes() {
        let p = infer(130.0, &family()).unwrap();
        let Pressure::Within { low_gbs, high_gbs } = p else {
            panic!("{p:?}")
        };
        // Writes: between 10 (102 ns) and 20 (140 ns): 10 + 28/38 × 10; reads: 30 exactly.
        assert!((low_gbs - (10.0 + 280.0 / 38.0)).abs() < 1e-9, "{low_gbs}");
        assert!((high_gbs - 30.0).abs() < 1e-9, "{high_gbs}");
        assert!(p.contains(25.0) && !p.contains(35.0));
    }

    #[test]
    fn a_latency_within_the_idle_noise_is_only_an_upper_bound() {
        let p = infer(101.0, &family()).unwrap();
        // Reads stay within 5% of idle up to 20 GB/s (the first point beyond: 30), writes to 10
        // (the first beyond: 20): flat below the larger.
        assert_eq!(p, Pressure::Flat { below_gbs: 30.0 });
        assert!(p.contains(0.0) && p.contains(29.0));
    }

    #[test]
    fn beyond_every_saturation_is_saturated_and_a_noisy_dip_is_read_monotone() {
        assert_eq!(
            infer(400.0, &family()),
            Some(Pressure::Saturated { at_least_gbs: 30.0 })
        );
        // Past the writes' saturation but on the reads' rise: bounded by the reads' 40.
        let p = infer(220.0, &family()).unwrap();
        assert!(
            matches!(p, Pressure::Within { high_gbs, .. } if high_gbs == 40.0),
            "{p:?}"
        );
        // A dip after a rise (noise) does not make the curve ambiguous.
        let dip = vec![curve(
            TrafficMix::Reads,
            &[(0.5, 100.0), (10.0, 150.0), (20.0, 140.0), (30.0, 200.0)],
        )];
        let Some(Pressure::Within { low_gbs, .. }) = infer(170.0, &dip) else {
            panic!()
        };
        assert!(
            (low_gbs - (20.0 + 20.0 / 50.0 * 10.0)).abs() < 1e-9,
            "{low_gbs}"
        );
        assert!(infer(120.0, &[]).is_none());
        assert_eq!(idle_ns(&family()), Some(100.0));
    }

    /// A family whose load threads could not load memory (a few CPUs of a large machine): the
    /// reads curve stays within its idle noise to its end at 18.6 GB/s. A flat reading bounds
    /// nothing, where it used to say "below 18.6" and missed a program drawing 19.
    #[test]
    fn a_curve_flat_to_its_end_bounds_nothing() {
        let family = vec![
            curve(
                TrafficMix::Reads,
                &[(0.5, 103.0), (9.0, 103.5), (18.6, 104.0)],
            ),
            curve(
                TrafficMix::Writes,
                &[(0.5, 103.0), (8.0, 104.0), (16.2, 112.0)],
            ),
        ];
        let p = infer(105.0, &family).unwrap();
        assert_eq!(p, Pressure::Unbounded { flat_to_gbs: 18.6 });
        assert!(p.contains(19.0) && p.contains(0.0));
        // Latency beyond everything the flat reads curve reached, on the writes' rise: more than
        // the reads' load drew, but neither bounded above nor saturated.
        let p = infer(110.0, &family).unwrap();
        let Pressure::Above { at_least_gbs } = p else {
            panic!("{p:?}")
        };
        // Writes: 110 on 104→112 over 8→16.2 GB/s.
        assert!(
            (at_least_gbs - (8.0 + 6.0 / 8.0 * 8.2)).abs() < 1e-9,
            "{at_least_gbs}"
        );
        assert!(p.contains(40.0) && !p.contains(5.0));
    }

    /// Curves measured minutes apart on a drifting machine start at different idle latencies
    /// (101, 111 and 127 ns in one family): a reading at the family's idle is idle on each.
    #[test]
    fn each_curve_is_read_as_a_rise_over_its_own_idle() {
        let family = vec![
            curve(
                TrafficMix::Reads,
                &[(0.5, 111.0), (18.0, 122.0), (28.0, 160.0)],
            ),
            curve(
                TrafficMix::Writes,
                &[(0.5, 101.0), (8.0, 113.0), (17.0, 150.0)],
            ),
            curve(
                TrafficMix::Reads,
                &[(0.5, 127.0), (20.0, 140.0), (30.0, 180.0)],
            ),
        ];
        assert_eq!(idle_ns(&family), Some(111.0));
        let p = infer(111.0, &family).unwrap();
        assert!(matches!(p, Pressure::Flat { .. }), "{p:?}");
        // 10% over idle on every curve: each curve's own rise of 10%.
        let Some(Pressure::Within { low_gbs, high_gbs }) = infer(122.1, &family) else {
            panic!()
        };
        // Writes: 111.1 ns on 101→113 over 0.5→8 GB/s: 0.5 + 10.1/12 × 7.5; the slow-idle
        // curve: 139.7 ns on 127→140 over 0.5→20: 0.5 + 12.7/13 × 19.5 (the first reads curve,
        // about 18, lies between).
        assert!(
            (low_gbs - (0.5 + 10.1 / 12.0 * 7.5)).abs() < 1e-6,
            "{low_gbs}"
        );
        assert!(
            (high_gbs - (0.5 + 12.7 / 13.0 * 19.5)).abs() < 1e-6,
            "{high_gbs}"
        );
    }

    /// A host whose response flips between rounds: one round reads 16 GB/s at 103 ns, the next
    /// at 165. The merged curve (the median of two rounds, 134 ns) misses both; each round's
    /// sweep holds one, so a load of 16 GB/s read in either mode lies in its interval.
    #[test]
    fn each_rounds_sweep_is_read_so_a_load_read_in_either_mode_is_held() {
        let fast: &[(f64, f64)] = &[(0.5, 100.0), (16.0, 103.0), (32.0, 150.0), (48.0, 220.0)];
        let slow: &[(f64, f64)] = &[(0.5, 100.0), (16.0, 165.0), (32.0, 210.0), (48.0, 300.0)];
        let family = vec![rounds_curve(TrafficMix::Reads, &[fast, slow])];
        assert_eq!(family[0].round_sweeps().len(), 2);
        assert_eq!(highest_gbs(&family), 48.0);
        // 165 ns: 16 GB/s on the slow sweep, 35.4 on the fast one; 150 ns: 12.4 and 32.
        for ns in [165.0, 150.0] {
            let p = infer(ns, &family).unwrap();
            assert!(p.contains(16.0) && p.contains(32.0), "{ns}: {p:?}");
        }
        // Without the rounds (the merged curve alone) the slow mode's 165 ns reads as far more.
        let mut merged = family.clone();
        for p in &mut merged[0].points {
            p.round_latencies_ns.clear();
        }
        assert!(merged[0].round_sweeps().is_empty());
        assert!(!infer(165.0, &merged).unwrap().contains(16.0));
        assert_eq!(
            infer_merged(165.0, &merged, &infer(165.0, &merged).unwrap()),
            None
        );
        assert_eq!(
            infer_merged(165.0, &family, &infer(165.0, &family).unwrap()),
            infer(165.0, &merged)
        );
    }

    /// Where the rounds agree (a machine nobody else loads), reading each round's sweep changes
    /// the interval by no more than the rounds differ.
    #[test]
    fn rounds_that_agree_leave_the_interval_as_the_merge_gives_it() {
        let a: &[(f64, f64)] = &[(0.5, 100.0), (16.0, 103.0), (32.0, 150.0), (48.0, 220.0)];
        let b: &[(f64, f64)] = &[(0.5, 100.5), (16.2, 103.5), (32.3, 151.0), (48.4, 221.0)];
        let c: &[(f64, f64)] = &[(0.5, 99.5), (15.8, 102.5), (31.7, 149.0), (47.6, 219.0)];
        let family = vec![rounds_curve(TrafficMix::Reads, &[a, b, c])];
        let (lo, hi) = infer(180.0, &family).unwrap().bounds();
        let full = infer(180.0, &family).unwrap();
        let merged = infer_merged(180.0, &family, &full).unwrap_or(full);
        let (mlo, mhi) = merged.bounds();
        assert!(lo <= mlo && hi >= mhi, "{lo}–{hi} vs {mlo}–{mhi}");
        assert!(hi / lo < 1.03 * mhi / mlo, "{lo}–{hi} vs {mlo}–{mhi}");
    }

    /// A round's sweep that stayed within the idle noise, of a curve that rose in its other
    /// rounds, is flat to its own end: a bound, not a curve that bounds nothing. A curve flat to
    /// its end in every round bounds nothing either way, and the merge reads no differently.
    #[test]
    fn a_flat_round_of_a_rising_curve_bounds_at_its_end() {
        let rose: &[(f64, f64)] = &[(0.5, 100.0), (20.0, 104.0), (40.0, 160.0)];
        let flat: &[(f64, f64)] = &[(0.5, 100.0), (20.0, 101.0), (36.0, 103.0)];
        let family = vec![rounds_curve(TrafficMix::Reads, &[rose, rose, flat])];
        assert_eq!(
            infer(102.0, &family),
            Some(Pressure::Flat { below_gbs: 40.0 })
        );
        let flat2: &[(f64, f64)] = &[(0.5, 100.0), (20.0, 101.0), (44.0, 102.0)];
        let never = vec![rounds_curve(TrafficMix::Reads, &[flat, flat2])];
        assert!(matches!(
            infer(101.0, &never),
            Some(Pressure::Unbounded { flat_to_gbs }) if flat_to_gbs == 44.0
        ));
        assert_eq!(
            infer_merged(101.0, &never, &infer(101.0, &never).unwrap()),
            None
        );
    }
}
