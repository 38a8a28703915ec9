//! What a pool study's figures say: stranded chunks, a class given by hand against PMDK's own,
//! and the findings of the whole study.

use memsight_core::finding::{Cited, Finding};
use memsight_core::units::format_bytes;

use super::{Class, Fill, SearchResult, StrategyResult};

/// Whole free chunks a class's long runs leave over, when they are a notable share of the pool.
fn stranded(f: &Fill) -> String {
    let (Some(free), Some(class)) = (f.breakdown.free_chunk_bytes, &f.class) else {
        return String::new();
    };
    let share = free as f64 / (f.objects * f.object_bytes + free).max(1) as f64;
    if share < 0.1 {
        return String::new();
    }
    format!(
        "; {} of whole chunks stay free because what is left after the last run is less than one run of {} units ({}): fewer units per run, or a pool a whole number of runs large, uses it",
        format_bytes(free),
        class.units_per_block,
        format_bytes(class.unit_size * class.units_per_block as u64)
    )
}

/// Why a class given by hand did as it did, in words.
fn custom_reason(c: &Fill, class: &Class, own: &Fill) -> String {
    if c.objects == 0 {
        let header = match class.header.as_str() {
            "legacy" => 64,
            "compact" => 16,
            _ => 0,
        };
        let need = c.object_bytes + header;
        let units = need.div_ceil(class.unit_size.max(1));
        return if units > u64::from(class.units_per_block) {
            format!(
                ": PMDK allocated none, as an object and its header ({need} B) need {units} units and a run of this class holds {}",
                class.units_per_block
            )
        } else {
            ": PMDK allocated none from this class (a run of it could not be laid out in the pool)"
                .to_string()
        };
    }
    if c.utilisation < own.utilisation / 2.0 && c.object_bytes * 2 <= class.unit_size {
        return ": the class is far larger than the object, every object takes a whole unit"
            .to_string();
    }
    stranded(c)
}

/// The class given by hand against PMDK's own, size by size: where it pays and where it wastes
/// (MemVerge's 1 MiB class reached 95% for 1 MiB objects and very little for small ones).
pub(super) fn custom_findings(fills: &[Fill], custom: &[Fill]) -> Vec<Finding> {
    custom
        .iter()
        .filter_map(|c| {
            let own = fills.iter().find(|f| f.object_bytes == c.object_bytes)?;
            let class = c.class.as_ref()?;
            let cites = vec![
                used("custom class", c.utilisation),
                used("PMDK's class", own.utilisation),
            ];
            let text = format!(
                "custom class ({} B units, {} per run, {} header, alignment {} B): {} objects fill {:.1}% of the pool, against {:.1}% with PMDK's class{}",
                class.unit_size,
                class.units_per_block,
                class.header,
                class.alignment,
                format_bytes(c.object_bytes),
                c.utilisation * 100.0,
                own.utilisation * 100.0,
                custom_reason(c, class, own)
            );
            Some(Finding::citing(text, cites))
        })
        .collect()
}

/// A pool's utilisation as a finding cites it: counted from the pool, not timed, so no
/// disturbance reaches it.
fn used(what: &str, utilisation: f64) -> Cited {
    Cited::value(
        format!("{what} utilisation"),
        100.0 * utilisation,
        "%",
        false,
    )
}

/// What the fills, the class search and the concurrent runs say together.
pub(super) fn judge(
    fills: &[Fill],
    searches: &[SearchResult],
    conc: &[StrategyResult],
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(worst) = fills
        .iter()
        .min_by(|a, b| a.utilisation.total_cmp(&b.utilisation))
    {
        let cite = used(&format_bytes(worst.object_bytes), worst.utilisation);
        out.push(Finding::citing(
            format!(
                "lowest utilisation: {} objects fill {:.1}% of the pool{}",
                format_bytes(worst.object_bytes),
                worst.utilisation * 100.0,
                worst.class.as_ref().map_or(String::new(), |c| format!(
                    " (class {}: {} B units, {} per run, {} header)",
                    c.id, c.unit_size, c.units_per_block, c.header
                ))
            ),
            vec![cite],
        ));
    }
    for s in searches {
        if let (Some(d), Some(b)) = (s.default_utilisation, &s.best)
            && b.utilisation > d + 0.005
        {
            out.push(Finding::citing(
                format!(
                    "{}: a custom class raises utilisation from {:.1}% to {:.1}%",
                    format_bytes(s.object_bytes),
                    d * 100.0,
                    b.utilisation * 100.0
                ),
                vec![
                    used("PMDK's class", d),
                    used("the best custom class", b.utilisation),
                ],
            ));
        }
    }
    let base = conc
        .iter()
        .find(|c| c.strategy == "default" && c.error.is_none());
    for c in conc.iter().filter(|c| c.error.is_none()) {
        if c.failures > 0 || base.is_some_and(|b| b.failures > 0) {
            out.push(Finding::citing(
                strategy_finding(c),
                // Allocations per second is a whole run's wall time, which memsight does not
                // check for disturbance (docs/trust.md): cited as read.
                vec![
                    Cited::value(
                        format!("{} failed allocations", c.strategy),
                        100.0 * c.failure_rate,
                        "%",
                        false,
                    ),
                    Cited::value(
                        format!("{} allocations per second", c.strategy),
                        c.allocations_per_s,
                        "/s",
                        false,
                    ),
                ],
            ));
        }
    }
    out
}

/// One strategy's failures, told apart: refused while another arena had room (imbalance, what
/// the MemVerge talk measured) or with no room anywhere (the pool running out).
fn strategy_finding(c: &StrategyResult) -> String {
    let mut s = format!(
        "{}: {} of {} allocations failed ({:.3}%), {:.0} allocations/s",
        c.strategy,
        c.failures,
        c.allocations + c.failures,
        c.failure_rate * 100.0,
        c.allocations_per_s,
    );
    if c.failures == 0 {
        return s;
    }
    s.push_str(&format!(
        "; {} while another arena had room (imbalance{}), {} with no room in any arena (exhaustion)",
        c.imbalance,
        if c.rescued > 0 {
            format!(", {} rescued by the retry", c.rescued)
        } else {
            String::new()
        },
        c.exhausted
    ));
    if let Some(f) = c.free_at_failure {
        s.push_str(&format!(
            "; {:.0}% of the pool was free at the median failure (least {:.0}%)",
            100.0 * f.median,
            100.0 * f.least
        ));
    }
    if c.exhausted > c.imbalance {
        s.push_str(": mostly the pool running out, not arena imbalance — lower --live-fraction to study the arenas");
    }
    s
}
