//! A result against a reference: each expectation for every figure it selects, then the health
//! conditions, each a [`Check`].

use memsight_core::units::{format_bytes, parse_size};

use super::{
    Ceiling, Check, CheckReport, Expectation, Health, Range, Reference, Status, Tolerance, selects,
};
use crate::document::Document;
use crate::figure::{Better, Figure};

/// The default tolerance of an expectation that names none.
pub const DEFAULT_TOLERANCE: Tolerance = Tolerance::Relative(0.10);

/// Judges `doc` against `reference`.
pub fn judge(reference: &Reference, doc: &Document) -> CheckReport {
    let figures = crate::document::figures(doc);
    let ceiling = ceiling_gbs(reference.ceiling.as_ref(), doc, &figures);
    let mut checks = Vec::new();
    for e in &reference.figures {
        checks.extend(expectation(e, &figures, &ceiling, doc));
    }
    checks.extend(health(&reference.health, doc));
    CheckReport::new(
        if reference.name.is_empty() {
            "the reference".into()
        } else {
            reference.name.clone()
        },
        doc.environment.hostname.clone().unwrap_or_default(),
        doc.started.clone(),
        incomplete(reference, doc, &checks),
        checks,
    )
}

/// Why a figure asked to reach a fraction of a ceiling was skipped: the ceiling is unknown.
const NO_CEILING: &str = "no ceiling";
/// Why a figure failed.
const OUTSIDE: &str = "outside the expected range";
/// Why a figure was skipped when its value says less than the machine: it rests on disturbed
/// samples.
const DISTURBED: &str = "rests on disturbed samples: measure again on a quieter machine";
/// … or the result holds no such figure: a level the ladder did not resolve this time, a test
/// that did not run. The reference asked for it, so the node is not seen whole; absence is not
/// evidence of a slower node (`optional` expectations are skipped without doubt).
const MISSING: &str = "the result holds no such figure";
/// … or it fell short while its suite measured in a slow phase of the run, by no more than the
/// slow phase covers.
const SLOW_PHASE: &str =
    "outside the expected range, but measured while the run's drift probes read the machine slow";
/// … or the reference cannot judge it (a unit that is not the figure's, a ceiling fraction of a
/// figure that is no bandwidth): the reference is wrong, not the node, so it drains nothing
/// and passes nothing.
const BROKEN: &str = "the reference does not fit this figure";

/// Why the result cannot stand for the node: it was interrupted, or a suite the reference
/// needs was skipped (a working set that did not fit, a suite that could not run here). Suites
/// left out on purpose (`--only`, `--skip`) that the reference does not need do not count.
fn incomplete(reference: &Reference, doc: &Document, checks: &[Check]) -> Vec<String> {
    let mut out = Vec::new();
    // A figure skipped for doubt is one the verdict could not see: no PASS over it.
    for (why, what) in [
        (DISTURBED, "rest on disturbed samples"),
        (SLOW_PHASE, "fell short in a slow phase of the run"),
        (NO_CEILING, "have no ceiling to be judged against"),
        (
            BROKEN,
            "cannot be judged by this reference (fix the reference)",
        ),
        (
            MISSING,
            "the reference asks for are missing from the result",
        ),
    ] {
        let names: Vec<&str> = checks
            .iter()
            .filter(|c| c.status == Status::Skip && c.reason.starts_with(why))
            .map(|c| c.name.as_str())
            .collect();
        if !names.is_empty() {
            out.push(format!(
                "{} figure(s) {what} ({})",
                names.len(),
                names.join(", ")
            ));
        }
    }
    if !doc.complete {
        out.push("the result was interrupted (complete: false)".to_string());
    }
    if let crate::document::Results::Run(run) = &doc.results {
        let needed = reference.suites_needed();
        for s in &run.skipped {
            let suite = s.split(':').next().unwrap_or_default().trim();
            if needed.iter().any(|n| n == suite) {
                out.push(format!("suite {s}"));
            }
        }
    }
    out
}

/// The ceiling in GB/s, or why there is none.
fn ceiling_gbs(
    c: Option<&Ceiling>,
    doc: &Document,
    figures: &[crate::figure::Figure],
) -> Result<(f64, String), String> {
    let Some(c) = c else {
        return Err("the reference declares no ceiling".into());
    };
    match c {
        Ceiling::Declared { channels, mts } => Ok((
            memsight_model::ddr::peak_mbs(*channels, *mts) as f64 / 1000.0,
            format!("{channels} channels at {mts} MT/s"),
        )),
        Ceiling::Dimms => figures
            .iter()
            .find(|f| {
                f.key
                    == crate::key::Key::Dimms {
                        statistic: "peak".into(),
                    }
            })
            .map(|f| (f.value / 1000.0, "the installed DIMMs".to_string()))
            .ok_or_else(|| {
                "the result holds no DIMM inventory (run as root where SMBIOS tables can be read, or give run --dmidecode FILE)".to_string()
            }),
        Ceiling::Platform => {
            let env = &doc.environment;
            let cpu = env.topology.cpu_model.clone().unwrap_or_default();
            let p = memsight_model::platform::identify(&cpu)
                .ok_or_else(|| format!("no platform table row for CPU '{cpu}'"))?;
            let sockets = env.topology.packages.max(1) as u32;
            let channels = p.channels_per_socket * sockets;
            Ok((
                memsight_model::ddr::peak_mbs(channels, p.max_mts) as f64 / 1000.0,
                format!(
                    "{}: {channels} channels at {} MT/s",
                    p.name, p.max_mts
                ),
            ))
        }
    }
}

/// The checks of one expectation: one per figure it selects (a figure that rests on disturbed
/// samples is skipped: its value says less than the machine), or one skip when it selects
/// none (which makes the verdict INCOMPLETE unless the expectation is optional).
fn expectation(
    e: &Expectation,
    figures: &[Figure],
    ceiling: &Result<(f64, String), String>,
    doc: &Document,
) -> Vec<Check> {
    let chosen: Vec<&Figure> = figures
        .iter()
        .filter(|f| selects(&e.select, &f.key))
        .collect();
    if chosen.is_empty() {
        return vec![Check {
            status: Status::Skip,
            name: e.select.clone(),
            label: String::new(),
            value: None,
            unit: e.unit.clone().unwrap_or_default(),
            expected: e.expect.map_or("present".into(), |x| x.to_string()),
            margin_percent: None,
            range: None,
            reason: if e.optional {
                format!("optional: {MISSING}")
            } else {
                MISSING.into()
            },
        }];
    }
    chosen
        .into_iter()
        .map(|f| within_slow_phase(one(e, f, ceiling), f, doc))
        .collect()
}

/// A figure that fell short while its suite measured in a slow phase of the run (the drift
/// probes read the machine a share s below its best then) is not judged when it fell short by
/// at most s: the host was slow then, which says nothing of the node. Beyond s the slow phase
/// does not explain it and the failure stands, as `compare` bounds the same allowance.
fn within_slow_phase(c: Check, f: &Figure, doc: &Document) -> Check {
    if c.status != Status::Fail || c.reason != OUTSIDE {
        return c;
    }
    let Some(s) = crate::history::slow_by(doc, f) else {
        return c;
    };
    let short = c.margin_percent.map_or(f64::INFINITY, |m| -m / 100.0);
    if short <= s {
        Check {
            status: Status::Skip,
            reason: format!(
                "{SLOW_PHASE} ({:.0}% below its best), which covers this {:.1}% shortfall: measure again",
                100.0 * s,
                100.0 * short
            ),
            ..c
        }
    } else {
        Check {
            reason: format!(
                "{OUTSIDE}: {:.1}% short, more than the slow phase its suite measured in covers (the drift probes read {:.0}% below the run's best)",
                100.0 * short,
                100.0 * s
            ),
            ..c
        }
    }
}

/// A limit on a figure: the bound, whether the figure must be at least it, and how it reads.
type Limit = (f64, bool, String);

fn one(e: &Expectation, f: &Figure, ceiling: &Result<(f64, String), String>) -> Check {
    let mut c = Check {
        status: Status::Pass,
        name: f.key.to_string(),
        label: f.label.clone(),
        value: Some(f.value),
        unit: f.unit.clone(),
        expected: String::new(),
        margin_percent: None,
        range: None,
        reason: String::new(),
    };
    let skip = |mut c: Check, why: String| {
        c.status = Status::Skip;
        c.reason = why;
        c
    };
    if let Some(u) = &e.unit
        && !f.unit.starts_with(u.as_str())
    {
        return skip(
            c,
            format!(
                "{BROKEN}: the figure is in {}, the reference in {u}",
                f.unit
            ),
        );
    }
    // A disturbance only makes a figure worse: one that still meets a one-sided limit passes;
    // one that fails, or is judged both ways, says less than the machine and is skipped.
    let disturbed = f.summary.as_ref().is_some_and(|s| s.rests_on_disturbed());
    if !f.value.is_finite() {
        c.status = Status::Fail;
        c.reason = "no value was measured".into();
        return c;
    }
    let mut limits = expected_limits(e, e.better.unwrap_or(f.better));
    match ceiling_limit(e, f, ceiling) {
        Ok(l) => limits.extend(l),
        Err(why) => return skip(c, why),
    }
    c.expected = limits
        .iter()
        .map(|l| l.2.clone())
        .collect::<Vec<_>>()
        .join(" and ");
    c.range = range_of(&limits);
    let worst = tightest_margin(&limits, f.value);
    c.margin_percent = worst.is_finite().then_some(worst);
    if worst < 0.0 {
        c.status = Status::Fail;
        c.reason = OUTSIDE.into();
    }
    if disturbed && (c.status == Status::Fail || e.both_ways) {
        return skip(c, DISTURBED.into());
    }
    c
}

/// The limits an expected value sets: on the worse side, and on the better side too when the
/// figure is judged both ways.
fn expected_limits(e: &Expectation, better: Better) -> Vec<Limit> {
    let mut limits = Vec::new();
    let Some(x) = e.expect else {
        return limits;
    };
    let tol = e.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    let d = tol.allowance(x);
    match better {
        Better::Higher => limits.push((
            x - d,
            true,
            format!("≥ {} ({} − {})", fmt(x - d), super::num(x), tol.describe()),
        )),
        Better::Lower => limits.push((
            x + d,
            false,
            format!("≤ {} ({} + {})", fmt(x + d), super::num(x), tol.describe()),
        )),
    }
    if e.both_ways {
        match better {
            Better::Higher => limits.push((x + d, false, format!("≤ {}", fmt(x + d)))),
            Better::Lower => limits.push((x - d, true, format!("≥ {}", fmt(x - d)))),
        }
    }
    limits
}

/// The limit a fraction of the ceiling sets, if asked for; `Err` says why the figure is skipped
/// instead (no ceiling, or a figure that is not a bandwidth).
fn ceiling_limit(
    e: &Expectation,
    f: &Figure,
    ceiling: &Result<(f64, String), String>,
) -> Result<Option<Limit>, String> {
    let Some(frac) = e.at_least_of_ceiling else {
        return Ok(None);
    };
    match ceiling {
        Ok((gbs, from)) if f.unit.starts_with("GB/s") => Ok(Some((
            frac * gbs,
            true,
            format!("≥ {:.0}% of {} GB/s ({from})", frac * 100.0, fmt(*gbs)),
        ))),
        Ok(_) => Err(format!(
            "{BROKEN}: a ceiling fraction needs a bandwidth in GB/s, the figure is in {}",
            f.unit
        )),
        Err(why) => Err(format!("{NO_CEILING}: {why}")),
    }
}

/// The limits as one range: the highest lower bound, the lowest upper bound.
fn range_of(limits: &[Limit]) -> Option<Range> {
    let pick = |at_least: bool| {
        let b = limits.iter().filter(|l| l.1 == at_least).map(|l| l.0);
        if at_least {
            b.reduce(f64::max)
        } else {
            b.reduce(f64::min)
        }
    };
    let r = Range {
        low: pick(true),
        high: pick(false),
    };
    (r.low.is_some() || r.high.is_some()).then_some(r)
}

/// The margin of the tightest limit, in percent: positive inside, negative outside; infinite
/// without limits.
fn tightest_margin(limits: &[Limit], value: f64) -> f64 {
    let margins = limits.iter().map(|(limit, at_least, _)| {
        let m = if *at_least {
            value - limit
        } else {
            limit - value
        };
        100.0 * m / limit.abs().max(f64::MIN_POSITIVE)
    });
    margins.fold(f64::INFINITY, f64::min)
}

/// A number as people read it: 3–4 significant digits.
fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// A health condition's check: `value` within `range` (what `expected` says in words).
fn condition(
    name: &str,
    label: &str,
    ok: bool,
    value: Option<f64>,
    unit: &str,
    (expected, range): (String, Range),
) -> Check {
    Check {
        range: Some(range),
        status: if ok { Status::Pass } else { Status::Fail },
        name: format!("health/{name}"), // not a key: a health condition's check name
        label: label.into(),
        value,
        unit: unit.into(),
        expected,
        margin_percent: None,
        reason: if ok {
            String::new()
        } else {
            "the machine is not as the reference describes".into()
        },
    }
}

/// `≥ v`: in words and as a range.
fn at_least(v: f64, words: impl std::fmt::Display) -> (String, Range) {
    let r = Range {
        low: Some(v),
        high: None,
    };
    (format!("≥ {words}"), r)
}

/// `≤ v`: in words and as a range.
fn at_most(v: f64, words: impl std::fmt::Display) -> (String, Range) {
    let r = Range {
        low: None,
        high: Some(v),
    };
    (format!("≤ {words}"), r)
}

/// `= v`: in words and as a range.
fn exactly(v: f64, words: impl std::fmt::Display) -> (String, Range) {
    let r = Range {
        low: Some(v),
        high: Some(v),
    };
    (format!("= {words}"), r)
}

/// The health conditions the reference names, against the result's environment.
fn health(h: &Health, doc: &Document) -> Vec<Check> {
    let mut out = error_checks(h, doc);
    out.extend(memory_check(h, doc));
    out.extend(count_checks(h, doc));
    out.extend(cache_checks(h, doc));
    out.extend(huge_page_checks(h, doc));
    out
}

/// Corrected and uncorrected memory errors against their maxima; skipped where no EDAC
/// controller was visible, since zero errors read there would prove nothing.
fn error_checks(h: &Health, doc: &Document) -> Vec<Check> {
    let env = &doc.environment;
    let mut out = Vec::new();
    let (ce, ue) = memsight_core::edac::totals(&env.memory_errors);
    let edac_read = !env.memory_errors.is_empty();
    for (name, label, max, n) in [
        (
            "corrected-errors",
            "corrected memory errors (EDAC)",
            h.corrected_errors_max,
            ce,
        ),
        (
            "uncorrected-errors",
            "uncorrected memory errors (EDAC)",
            h.uncorrected_errors_max,
            ue,
        ),
    ] {
        let Some(max) = max else { continue };
        if !edac_read {
            out.push(Check {
                status: Status::Skip,
                reason: "no EDAC memory controller is visible (a VM, or no EDAC driver loaded)"
                    .into(),
                ..condition(name, label, true, None, "", at_most(max as f64, max))
            });
            continue;
        }
        out.push(condition(
            name,
            label,
            n <= max,
            Some(n as f64),
            "errors",
            at_most(max as f64, max),
        ));
    }
    out
}

/// The memory the OS sees against the least the reference asks for.
fn memory_check(h: &Health, doc: &Document) -> Option<Check> {
    let s = h.memory_at_least.as_ref()?;
    let min = parse_size(s).ok()?;
    // MemTotal: what the kernel manages. The NUMA nodes' sum can be less (hot-plugged
    // memory, a guest's balloon), and is said beside it.
    let nodes = doc.environment.topology.total_memory_bytes;
    let have = doc.environment.memory.total_bytes.unwrap_or(nodes);
    let label = if nodes == have {
        "memory the OS sees (MemTotal)".to_string()
    } else {
        format!(
            "memory the OS sees (MemTotal; its NUMA nodes hold {})",
            format_bytes(nodes)
        )
    };
    Some(condition(
        "memory",
        &label,
        have >= min,
        Some(have as f64),
        "B",
        at_least(min as f64, format_bytes(min)),
    ))
}

/// NUMA nodes, sockets and logical CPUs, each exactly as many as the reference says.
fn count_checks(h: &Health, doc: &Document) -> Vec<Check> {
    let topo = &doc.environment.topology;
    let mut out = Vec::new();
    for (name, label, want, have) in [
        (
            "numa-nodes",
            "NUMA nodes",
            h.numa_nodes,
            topo.numa_nodes.len(),
        ),
        ("sockets", "sockets", h.sockets, topo.packages),
        ("cpus", "logical CPUs", h.cpus, topo.threads),
    ] {
        if let Some(want) = want {
            out.push(condition(
                name,
                label,
                have == want,
                Some(have as f64),
                "",
                exactly(want as f64, want),
            ));
        }
    }
    out
}

/// Each cache the reference names, its size per instance; a cache the topology lacks fails.
fn cache_checks(h: &Health, doc: &Document) -> Vec<Check> {
    let topo = &doc.environment.topology;
    let mut out = Vec::new();
    for (name, size) in &h.caches {
        let Ok(want) = parse_size(size) else { continue };
        let have = topo
            .caches
            .iter()
            .find(|c| cache_name(c.level, &c.kind) == *name);
        out.push(match have {
            Some(c) => condition(
                &format!("cache/{name}"),
                &format!("{name} size per instance"),
                c.size_bytes == want,
                Some(c.size_bytes as f64),
                "B",
                exactly(want as f64, format_bytes(want)),
            ),
            None => Check {
                reason: "the topology reports no such cache".into(),
                ..condition(
                    &format!("cache/{name}"),
                    &format!("{name} size"),
                    false,
                    None,
                    "B",
                    exactly(want as f64, format_bytes(want)),
                )
            },
        });
    }
    out
}

/// Free huge pages of each size the reference names (none of a size counts as zero free).
fn huge_page_checks(h: &Health, doc: &Document) -> Vec<Check> {
    let mut out = Vec::new();
    for (size, want) in &h.huge_pages_free {
        let Ok(page) = parse_size(size) else { continue };
        let free = doc
            .environment
            .huge_pages
            .iter()
            .find(|p| p.page_bytes == page)
            .map_or(0, |p| p.free);
        out.push(condition(
            &format!("huge-pages/{}", format_bytes(page).replace(' ', "")),
            &format!("free {} huge pages", format_bytes(page)),
            free >= *want,
            Some(free as f64),
            "pages",
            at_least(*want as f64, want),
        ));
    }
    out
}

/// A cache's name as the reference writes it: `L1d`, `L1i`, `L2`, `L3`.
pub fn cache_name(level: u32, kind: &str) -> String {
    match kind.to_ascii_lowercase().as_str() {
        "data" => format!("L{level}d"),
        "instruction" => format!("L{level}i"),
        _ => format!("L{level}"),
    }
}
