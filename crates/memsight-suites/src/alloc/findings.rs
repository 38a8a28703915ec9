//! What an allocator comparison says: the recommendation and the findings.

use memsight_core::units::format_bytes;

use super::ConfigResult;

/// How much less memory (glibc's defaults ÷ the best) a configuration must hold to be
/// recommended over glibc's defaults.
const RECOMMEND_GAIN: f64 = 1.10;

/// The recommendation and the findings of a comparison; `user` when the workload was the user's
/// command (no live-heap figures, so peak RSS is compared).
pub(super) fn judge(results: &[ConfigResult], user: bool) -> (Vec<String>, Vec<String>) {
    let mut rec = Vec::new();
    let mut findings = Vec::new();
    let ratio = |c: &ConfigResult| {
        if user {
            c.peak_rss.as_ref().map(|s| s.median)
        } else {
            c.peak_rss_over_live_set
                .as_ref()
                .or(c.peak_rss_over_peak_live.as_ref())
                .map(|s| s.median)
        }
    };
    let speed = |c: &ConfigResult| {
        if user {
            c.wall_s.as_ref().map(|s| 1.0 / s.median)
        } else {
            c.ops_per_s.as_ref().map(|s| s.median)
        }
    };
    let ok: Vec<&ConfigResult> = results
        .iter()
        .filter(|c| c.problems.is_empty() && ratio(c).is_some())
        .collect();
    let fastest = ok.iter().filter_map(|c| speed(c)).fold(0.0, f64::max);
    // Without any speed (commands stopped at the time limit), memory alone decides.
    let best = ok
        .iter()
        .filter(|c| speed(c).map_or(fastest == 0.0, |s| s >= 0.5 * fastest))
        .min_by(|a, b| ratio(a).unwrap().total_cmp(&ratio(b).unwrap()));
    let glibc = ok.iter().find(|c| c.config.name == "glibc");
    if let Some(b) = best {
        let what = if user {
            "peak RSS"
        } else {
            "peak RSS ÷ the workload's live set"
        };
        let show = |c: &ConfigResult| {
            let r = ratio(c).unwrap_or(f64::NAN);
            if user {
                format_bytes(r as u64)
            } else {
                format!("{r:.2}×")
            }
        };
        // A change of allocator is worth making only for a clear gain: within 10% of glibc's
        // defaults the difference is the run's noise, not the allocator.
        let gain = glibc
            .filter(|g| g.config.name != b.config.name)
            .and_then(|g| Some(ratio(g)? / ratio(b)?));
        rec.push(match (gain, glibc) {
            (Some(x), Some(g)) if x < RECOMMEND_GAIN => format!(
                "keep glibc's defaults: no configuration holds clearly less ({what}: {} with {} vs {} with glibc defaults, within {:.0}%)",
                show(b),
                b.config.name,
                show(g),
                100.0 * (RECOMMEND_GAIN - 1.0)
            ),
            _ => format!(
                "use {} ({}): lowest {what} among configurations at least half as fast as the fastest: {}{}",
                b.config.name,
                b.config.description,
                show(b),
                glibc
                    .filter(|g| g.config.name != b.config.name)
                    .map_or(String::new(), |g| format!(" vs {} with glibc defaults", show(g)))
            ),
        });
    }
    if !user {
        for c in &ok {
            if let (Some(r), Some(after)) = (&c.rss_over_live, &c.after_free_rss) {
                findings.push(format!(
                    "{}: RSS {:.2}× the live heap at the end of the workload (min–max {:.2}–{:.2}, n = {}); {} still resident after everything was freed",
                    c.config.name,
                    r.median,
                    r.min,
                    r.max,
                    r.n,
                    format_bytes(after.median as u64)
                ));
            }
        }
        if let Some(g) = glibc.and_then(|g| g.rss_over_live.as_ref())
            && g.median >= 2.0
        {
            findings.push(format!(
                "glibc's defaults hold {:.1}× the live heap: per-thread arenas keep memory one thread freed where another thread cannot use it (Cloudflare's RocksDB study, Vorobev 2020, saw 2.5–3×)",
                g.median
            ));
        }
    }
    (rec, findings)
}
