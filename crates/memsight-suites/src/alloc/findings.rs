//! What an allocator comparison says: the recommendation and the findings.

use memsight_core::finding::{Cited, Finding};
use memsight_core::stats::Summary;
use memsight_core::units::format_bytes;

use super::ConfigResult;

/// How much less memory (glibc's defaults ÷ the best) a configuration must hold to be
/// recommended over glibc's defaults.
const RECOMMEND_GAIN: f64 = 1.10;

/// The recommendation and the findings of a comparison; `user` when the workload was the user's
/// command (no live-heap figures, so peak RSS is compared).
pub(super) fn judge(results: &[ConfigResult], user: bool) -> (Vec<Finding>, Vec<Finding>) {
    let ok: Vec<&ConfigResult> = results
        .iter()
        .filter(|c| c.problems.is_empty() && ratio(c, user).is_some())
        .collect();
    let glibc = ok.iter().find(|c| c.config.name == "glibc").copied();
    let rec = recommendation(&ok, glibc, user).into_iter().collect();
    let findings = if user {
        Vec::new()
    } else {
        heap_findings(&ok, glibc)
    };
    (rec, findings)
}

/// The memory figure configurations are ranked by (lower is better).
fn ratio(c: &ConfigResult, user: bool) -> Option<f64> {
    if user {
        c.peak_rss.as_ref().map(|s| s.median)
    } else {
        c.live_set_ratio().map(|s| s.median)
    }
}

/// The speed figure (higher is better): a user's command by its wall time, the workload by its
/// operations per second.
fn speed(c: &ConfigResult, user: bool) -> Option<f64> {
    if user {
        c.wall_s.as_ref().map(|s| 1.0 / s.median)
    } else {
        c.ops_per_s.as_ref().map(|s| s.median)
    }
}

/// The ranked figure in words: bytes for a user's command, else a multiple.
fn show(c: &ConfigResult, user: bool) -> String {
    let r = ratio(c, user).unwrap_or(f64::NAN);
    if user {
        format_bytes(r as u64)
    } else {
        format!("{r:.2}×")
    }
}

/// The advice: the configuration holding the least memory among those at least half as fast as
/// the fastest, or glibc's defaults when no configuration holds clearly less.
fn recommendation(
    ok: &[&ConfigResult],
    glibc: Option<&ConfigResult>,
    user: bool,
) -> Option<Finding> {
    let fastest = ok.iter().filter_map(|c| speed(c, user)).fold(0.0, f64::max);
    // Without any speed (commands stopped at the time limit), memory alone decides.
    let b = *ok
        .iter()
        .filter(|c| speed(c, user).map_or(fastest == 0.0, |s| s >= 0.5 * fastest))
        .min_by(|a, b| ratio(a, user).unwrap().total_cmp(&ratio(b, user).unwrap()))?;
    let what = if user {
        "peak RSS"
    } else {
        "peak RSS ÷ the workload's live set"
    };
    let other = glibc.filter(|g| g.config.name != b.config.name);
    // A change of allocator is worth making only for a clear gain: within 10% of glibc's
    // defaults the difference is the run's noise, not the allocator.
    let gain = other.and_then(|g| Some(ratio(g, user)? / ratio(b, user)?));
    let cites = recommendation_cites(b, other, what, user);
    let text = match (gain, glibc) {
        // (Within the band either way: a configuration holding clearly more than glibc's
        // defaults was chosen because glibc's were too slow, which the other branch says.)
        (Some(x), Some(g)) if x < RECOMMEND_GAIN && x * RECOMMEND_GAIN > 1.0 => format!(
            "keep glibc's defaults: no configuration holds clearly less ({what}: {} with {} vs {} with glibc defaults, within {:.0}%)",
            show(b, user),
            b.config.name,
            show(g, user),
            100.0 * (RECOMMEND_GAIN - 1.0)
        ),
        _ => format!(
            "use {} ({}): lowest {what} among configurations at least half as fast as the fastest: {}{}",
            b.config.name,
            b.config.description,
            show(b, user),
            other.map_or(String::new(), |g| format!(
                " vs {} with glibc defaults",
                show(g, user)
            ))
        ),
    };
    Some(Finding::advice(text, cites))
}

/// What the recommendation cites: the chosen configuration's figure, glibc's when it is
/// another, and the chosen one's speed.
fn recommendation_cites(
    b: &ConfigResult,
    other: Option<&ConfigResult>,
    what: &str,
    user: bool,
) -> Vec<Cited> {
    let mut cites: Vec<Cited> = [Some(b), other]
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some(Cited::of(
                format!("{} {what}", c.config.name),
                unit(user),
                figure(c, user)?,
            ))
        })
        .collect();
    // The speed that let it be chosen (at least half the fastest's): a whole workload's
    // wall time, which memsight does not check for disturbance.
    cites.extend(speed(b, user).map(|s| {
        Cited::value(
            format!("{} speed", b.config.name),
            s,
            speed_unit(user),
            false,
        )
    }));
    cites
}

/// The live-heap findings of memsight's own workload: each configuration's RSS over the live
/// heap and what stayed resident, and glibc's arena overhead when it is large.
fn heap_findings(ok: &[&ConfigResult], glibc: Option<&ConfigResult>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for c in ok {
        if let (Some(r), Some(after)) = (&c.rss_over_live, &c.after_free_rss) {
            findings.push(Finding::citing(
                format!(
                    "{}: RSS {:.2}× the live heap at the end of the workload (min–max {:.2}–{:.2}, n = {}); {} still resident after everything was freed",
                    c.config.name,
                    r.median,
                    r.min,
                    r.max,
                    r.n,
                    format_bytes(after.median as u64)
                ),
                vec![
                    Cited::of(format!("{} RSS ÷ live heap", c.config.name), "×", r),
                    Cited::of(format!("{} RSS after free", c.config.name), "B", after),
                ],
            ));
        }
    }
    if let Some(g) = glibc.and_then(|g| g.rss_over_live.as_ref())
        && g.median >= 2.0
    {
        findings.push(Finding::citing(
            format!(
                "glibc's defaults hold {:.1}× the live heap: per-thread arenas keep memory one thread freed where another thread cannot use it (Cloudflare's RocksDB study, Vorobev 2020, saw 2.5–3×)",
                g.median
            ),
            vec![Cited::of("glibc RSS ÷ live heap", "×", g)],
        ));
    }
    findings
}

/// The figure the recommendation compares: peak RSS for a user's command, else peak RSS ÷ the
/// workload's live set. RSS is read from the kernel, not timed, so a busy machine does not
/// disturb it.
fn figure(c: &ConfigResult, user: bool) -> Option<&Summary> {
    if user {
        c.peak_rss.as_ref()
    } else {
        c.live_set_ratio()
    }
}

fn unit(user: bool) -> &'static str {
    if user { "B" } else { "×" }
}

/// The unit of the speed `judge` compares: runs per second of a user's command, else the
/// workload's operations per second.
fn speed_unit(user: bool) -> &'static str {
    if user { "runs/s" } else { "ops/s" }
}

#[cfg(test)]
mod tests {
    use super::super::child::Ending;
    use super::super::configs::AllocConfig;
    use super::super::results::{PhasePoint, Run};
    use super::*;

    fn run(peak_rss: u64, peak_live: i64, live_set: i64) -> Run {
        Run {
            ending: Ending::Exited(0),
            seconds: 1.0,
            allocator_seen: None,
            rss: Vec::new(),
            phases: (0..8)
                .map(|phase| PhasePoint {
                    phase,
                    seconds: phase as f64,
                    live_bytes: live_set,
                    rss_bytes: None,
                })
                .collect(),
            peak_rss_bytes: peak_rss,
            final_rss_bytes: Some(peak_rss),
            final_live_bytes: Some(live_set),
            peak_live_bytes: Some(peak_live),
            after_free_rss_bytes: Some(0),
            ops: Some(1),
            ops_per_s: Some(1e6),
            stats: Vec::new(),
            arenas: Vec::new(),
        }
    }

    fn config(name: &str, peak_rss: u64, peak_live: i64) -> ConfigResult {
        let c = AllocConfig {
            name: name.into(),
            preload: None,
            env: Vec::new(),
            trim_each_phase: false,
            description: name.into(),
        };
        super::super::summarise(c, vec![run(peak_rss, peak_live, 268_400_000)], true)
    }

    /// Live peaks that differ by configuration (271.8, 335.4, 277.9 MB) while every phase holds
    /// 268.4 MB once made glibc with one arena look 1.09× against TCMalloc's... against its own
    /// larger peak. Against the common live set the two are level.
    #[test]
    fn configurations_are_compared_against_the_common_live_set() {
        let results = [
            config("glibc", 1_100_000_000, 271_800_000),
            config("glibc-1-arena", 300_000_000, 335_400_000),
            config("tcmalloc", 299_000_000, 277_900_000),
        ];
        let ratio = |c: &ConfigResult| c.peak_rss_over_live_set.as_ref().unwrap().median;
        assert!((ratio(&results[1]) / ratio(&results[2]) - 1.0).abs() < 0.01);
        let (rec, _) = judge(&results, false);
        assert!(rec[0].contains("the workload's live set"), "{}", rec[0]);
        // Both within 1% of each other: neither 1.09× nor 0.89× as the live peaks made it.
        assert!(
            rec[0].contains("1.11×") || rec[0].contains("1.12×"),
            "{}",
            rec[0]
        );
    }
}
