//! The nodes that stand out: members grouped by what should make them alike (CPU, topology,
//! kernel, memory settings), then, per figure and group, a robust score of each member against
//! the group.
//!
//! **The score.** For a figure measured (under the same conditions) by n ≥ 3 members of a group:
//! the group median m and the median absolute deviation, scaled by 1.4826 so it estimates a
//! standard deviation for normal data (Iglewicz & Hoaglin); score = (x − m) ÷ max(1.4826·MAD,
//! 0.5% of |m|) (the floor keeps identical members from dividing by zero). A member is flagged
//! when |score| > the threshold (3.5, Iglewicz & Hoaglin's cut-off for the modified z-score), its
//! value is more than `min_change` (5%) from the median, and its own confidence interval does not
//! contain the median (a noisy figure is not called out). Direction comes from the figure:
//! slower latency or lower bandwidth is *worse*. Median and MAD ignore up to half the fleet being
//! odd, so one slow node cannot hide itself by dragging the mean.

use std::collections::BTreeMap;

use super::node::{Fig, Node};
use crate::figure::Better;
use crate::fleet_report::{Direction, Distribution, Group, Outlier, centre};

/// A member as the analysis sees it: its name in the report and its node's summary.
pub struct Member<'a> {
    pub name: String,
    pub node: &'a Node,
}

/// Groups members by fingerprint, largest group first.
pub fn groups(members: &[Member]) -> Vec<Group> {
    let mut by: BTreeMap<Vec<(String, String)>, Vec<String>> = BTreeMap::new();
    for m in members {
        let fingerprint = m.node.fingerprint.iter();
        by.entry(
            fingerprint
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
        .or_default()
        .push(m.name.clone());
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    v.into_iter()
        .enumerate()
        .map(|(id, (fingerprint, members))| Group {
            id,
            fingerprint,
            members,
        })
        .collect()
}

/// A point of a curve rather than a summary figure: one working-set size of the latency ladder,
/// its TLB twin, the bandwidth sweep, the MLP sweep. Near cache boundaries these move between
/// runs of one healthy machine (a shared host cache, a page colouring), so comparing them across
/// nodes raises false alarms; the curves' summaries (cache-level plateaus, bandwidth tests,
/// loaded latency, NUMA, c2c) carry what distinguishes a slow node.
pub fn is_curve_point(key: &str) -> bool {
    use crate::key::Key;
    matches!(
        Key::parse(key),
        Some(
            Key::LatencyPoint { .. }
                | Key::Tlb { .. }
                | Key::Mlp { .. }
                | Key::BandwidthSweep { .. }
        )
    )
}

/// The members of each group, in the groups' order (one pass over the members, however many
/// groups).
pub fn by_group<'m, 'a>(members: &'m [Member<'a>], groups: &[Group]) -> Vec<Vec<&'m Member<'a>>> {
    let id: std::collections::HashMap<&str, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.members.iter().map(move |n| (n.as_str(), i)))
        .collect();
    let mut out: Vec<Vec<&Member>> = vec![Vec::new(); groups.len()];
    for m in members {
        if let Some(&i) = id.get(m.name.as_str()) {
            out[i].push(m);
        }
    }
    out
}

/// How strict the scoring is: the robust score and the distance from the median past which a
/// figure is flagged, and whether curve points are scored.
#[derive(Debug, Clone, Copy)]
pub struct Scoring {
    pub threshold: f64,
    pub min_change: f64,
    pub curves: bool,
}

/// What the scoring finds: the flagged figures, every scored figure's spread per group, and
/// the members none of whose figures could be scored.
pub struct Scored {
    pub outliers: Vec<Outlier>,
    pub distributions: Vec<Distribution>,
    pub unscored: Vec<String>,
}

/// A group's figures by key and conditions (only like is compared with like), and how many
/// of each were left out (disturbed, or not a finite number).
type Buckets<'m, 'a> = BTreeMap<(&'m str, &'m str), (Vec<(&'m Member<'a>, &'m Fig)>, usize)>;

fn buckets<'m, 'a>(in_group: &[&'m Member<'a>], curves: bool) -> Buckets<'m, 'a> {
    let mut by: Buckets = BTreeMap::new();
    for m in in_group {
        for f in m
            .node
            .figures
            .iter()
            .filter(|f| curves || !is_curve_point(&f.meta.key))
        {
            let e = by.entry((&f.meta.key, &f.meta.conditions)).or_default();
            // A figure on disturbed samples is neither scored nor part of the median (a
            // disturbed node would look slow, or shift its peers' centre); nor is a value that
            // is not a number.
            if f.disturbed || !f.value.is_finite() {
                e.1 += 1;
            } else {
                e.0.push((m, f));
            }
        }
    }
    by
}

/// Flags every member's figures beyond the threshold and minimum change, group by group (curve
/// points only when asked), and describes each scored figure's spread in its group. Worse
/// figures come first, then better ones, each by the size of their score.
pub fn score(members: &[Member], groups: &[Group], how: Scoring) -> Scored {
    let mut out = Scored {
        outliers: Vec::new(),
        distributions: Vec::new(),
        unscored: Vec::new(),
    };
    let mut scored: std::collections::HashSet<&str> = Default::default();
    for (g, in_group) in groups.iter().zip(by_group(members, groups)) {
        for (v, left_out) in buckets(&in_group, how.curves).into_values() {
            if v.len() < 3 {
                continue;
            }
            scored.extend(v.iter().map(|(m, _)| m.name.as_str()));
            let flagged = figure_outliers(g.id, &v, how);
            let mut values: Vec<f64> = v.iter().map(|(_, f)| f.value).collect();
            let meta = &v[0].1.meta;
            let mut d = super::distribution::of(g.id, &meta.key, &mut values);
            d.label = meta.label.clone();
            d.unit = meta.unit.clone();
            d.conditions = meta.conditions.clone();
            d.left_out = left_out;
            d.flagged = flagged.iter().map(|o| o.member.clone()).collect();
            out.distributions.push(d);
            out.outliers.extend(flagged);
        }
    }
    out.unscored = members
        .iter()
        .filter(|m| !scored.contains(m.name.as_str()))
        .map(|m| m.name.clone())
        .collect();
    out.outliers.sort_by(|a, b| {
        (a.direction != Direction::Worse)
            .cmp(&(b.direction != Direction::Worse))
            .then(b.score.abs().total_cmp(&a.score.abs()))
    });
    out
}

/// The members of one group flagged on one figure (`v`: each member's figure, n ≥ 3).
fn figure_outliers(group: usize, v: &[(&Member, &Fig)], how: Scoring) -> Vec<Outlier> {
    let values: Vec<f64> = v.iter().map(|(_, f)| f.value).collect();
    let (m, spread) = centre(&values);
    let mut out = Vec::new();
    for (member, f) in v {
        let score = (f.value - m) / spread;
        let deviation = if m != 0.0 { f.value / m - 1.0 } else { 0.0 };
        let ci_holds_median = f.ci.is_some_and(|[lo, hi]| lo <= m && m <= hi);
        if score.abs() <= how.threshold || deviation.abs() <= how.min_change || ci_holds_median {
            continue;
        }
        let worse = match f.better {
            Better::Higher => f.value < m,
            Better::Lower => f.value > m,
        };
        out.push(Outlier {
            member: member.name.clone(),
            group,
            key: crate::key::Key::read(&f.meta.key),
            label: f.meta.label.clone(),
            unit: f.meta.unit.clone(),
            value: f.value,
            median: m,
            deviation,
            score,
            direction: if worse {
                Direction::Worse
            } else {
                Direction::Better
            },
            n: v.len(),
            slow_phase: f.slow_phase == Some(true),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_points_are_told_from_summaries() {
        assert!(is_curve_point("latency/cpu0/64MiB"));
        assert!(!is_curve_point("latency/cpu0/level/memory"));
        assert!(is_curve_point("bandwidth-sweep/read/1t/8MiB"));
        assert!(is_curve_point("tlb/cpu0/2MiB"));
        assert!(!is_curve_point("bandwidth/read/2t"));
        assert!(!is_curve_point("loaded/all-reads/saturation"));
    }

    #[test]
    fn centre_is_robust_and_floored() {
        let (m, s) = centre(&[100.0, 101.0, 99.0, 100.0, 300.0]);
        assert_eq!(m, 100.0);
        assert!((s - 1.4826).abs() < 1e-9, "{s}");
        let (m, s) = centre(&[50.0, 50.0, 50.0]);
        assert_eq!(m, 50.0);
        assert!((s - 0.25).abs() < 1e-12, "0.5% floor: {s}");
    }
}
