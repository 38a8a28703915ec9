//! What the sweeps mean: the model's prediction against the measured dips, advice, and
//! findings on run-to-run variance.

use super::*;

pub(super) fn predict(info: &ModelInfo, curves: &[Curve], cfg: &RowbufferConfig) -> Prediction {
    // COPY's period on the socket with the longest bank cycle (the fullest population).
    let model = *info
        .sockets
        .iter()
        .max_by_key(|m| m.bank_cycle_bytes())
        .expect("a model has a socket");
    let period = model.offset_period(2);
    let measured: Vec<u64> = curves
        .iter()
        .filter(|c| c.kernel == Kernel::Copy && c.memory == Memory::Contiguous)
        .filter_map(|c| c.detection.period_bytes.filter(|_| c.detection.regular))
        .collect();
    let span = cfg.offsets.last().copied().unwrap_or(0) - cfg.offsets.first().copied().unwrap_or(0);
    let held = span as f64 / period as f64;
    let mut verdict = match measured.first() {
        Some(&m) => {
            let ratio = m as f64 / period as f64;
            if (ratio - ratio.round()).abs() < 0.15 && ratio.round() >= 1.0 {
                format!(
                    "measured COPY dip period {} = {:.0} × the predicted {}: the linear-interleave model explains the dips",
                    format_bytes(m),
                    ratio.round(),
                    format_bytes(period)
                )
            } else {
                format!(
                    "measured COPY dip period {} does not match the predicted {}: the controller maps addresses differently (bank-address hashing, other interleave)",
                    format_bytes(m),
                    format_bytes(period)
                )
            }
        }
        // Too short a range cannot show three dips: say so rather than blame the controller.
        None if held < model::PERIODS_IN_RANGE as f64 => format!(
            "no regular dips, but the swept range ({}) holds only {held:.1} of the predicted {} periods and detection needs {}: widen --offsets (the default range does)",
            format_bytes(span),
            format_bytes(period),
            model::PERIODS_IN_RANGE
        ),
        None => format!(
            "no regular dips on contiguous memory over {held:.1} predicted periods of {}: the controller's bank hashing (or the hypervisor's page mapping) spreads the conflicts",
            format_bytes(period)
        ),
    };
    if info.sockets_differ() {
        let periods: Vec<String> = info
            .sockets
            .iter()
            .map(|m| format_bytes(m.offset_period(2)))
            .collect();
        verdict.push_str(&format!(
            "; the sockets are populated differently (COPY periods {}): memory placed on another socket dips at its own period",
            periods.join(", ")
        ));
    }
    Prediction {
        bank_cycle_bytes: model.bank_cycle_bytes(),
        offset_period_bytes: period,
        model,
        source: info.source.clone(),
        verdict,
    }
}

/// The dips a bank hash predicts for COPY in the swept range, against the recurring ones.
pub(super) fn predict_hash(
    hash: &BankHash,
    curves: &[Curve],
    cfg: &RowbufferConfig,
) -> HashPrediction {
    // COPY streams a and c, two strides of N + OFFSET elements apart; the share is sampled over
    // the first 64 MiB of the array (the functions repeat long before).
    let span = cfg.array_bytes.min(64 << 20);
    let dips: Vec<u64> = cfg
        .offsets
        .iter()
        .copied()
        .filter(|&o| hash.conflict_share(2 * (cfg.array_bytes + o), span) >= 0.5)
        .collect();
    let step = cfg.offsets.get(1).map_or(64, |o| o - cfg.offsets[0]);
    let reps: Vec<Vec<u64>> = curves
        .iter()
        .filter(|c| c.kernel == Kernel::Copy && c.memory == Memory::Contiguous)
        .map(|c| c.detection.dips.iter().map(|d| d.offset_bytes).collect())
        .collect();
    let measured = recurring_dips(&reps, step);
    let hit = measured
        .iter()
        .filter(|m| dips.iter().any(|d| d.abs_diff(**m) <= step))
        .count();
    let list = |v: &[u64]| {
        v.iter()
            .map(|o| format_bytes(*o))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let verdict = match (dips.is_empty(), measured.is_empty()) {
        (true, true) => "the hash predicts no COPY dip in this range and none recurred".to_string(),
        (true, false) => format!(
            "the hash predicts no COPY dip in this range, but COPY dipped at {}: it does not describe this machine's mapping",
            list(&measured)
        ),
        (false, true) => format!(
            "the hash predicts COPY dips at {}; none recurred on contiguous memory (a hypervisor's mapping, or the hash is not this machine's)",
            list(&dips)
        ),
        (false, false) => format!(
            "the hash predicts COPY dips at {}; {hit} of the {} recurring dips ({}) fall on them",
            list(&dips),
            measured.len(),
            list(&measured)
        ),
    };
    HashPrediction {
        hash: hash.clone(),
        dips,
        measured,
        verdict,
    }
}

/// The points of `op` on contiguous memory at `offset`, one a repetition.
fn points_at(curves: &[Curve], op: Kernel, offset: u64) -> impl Iterator<Item = &sweep::Point> {
    curves
        .iter()
        .filter(move |c| c.kernel == op && c.memory == Memory::Contiguous)
        .filter_map(move |c| c.points.iter().find(|p| p.offset_bytes == offset))
}

/// The points of `op` on contiguous memory at `offset`, over the repetitions, cited.
fn cited_at(curves: &[Curve], op: Kernel, offset: u64) -> Vec<Cited> {
    points_at(curves, op, offset)
        .map(|p| {
            Cited::of(
                format!("{} at OFFSET {}", op.name(), format_bytes(offset)),
                "GB/s",
                &p.gbs,
            )
        })
        .collect()
}

/// A layout's summary, cited: disturbed where its figures rest on disturbed points (all of its
/// points were; otherwise they rest on its clean points).
fn cited_layout(s: &LayoutSummary) -> Cited {
    Cited::value(
        format!(
            "{} on {} memory (median over offsets)",
            s.kernel.name(),
            s.memory.name()
        ),
        s.median_gbs,
        "GB/s",
        s.disturbed(),
    )
}

pub(super) fn advise(
    summaries: &[LayoutSummary],
    curves: &[Curve],
    cfg: &RowbufferConfig,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for &op in &cfg.kernels {
        let get = |m: Memory| summaries.iter().find(|s| s.kernel == op && s.memory == m);
        out.extend(offset_advice(op, curves, cfg));
        if let (Some(c), Some(p)) = (get(Memory::Contiguous), get(Memory::Paged4k)) {
            out.push(layout_advice(op, c, p));
        }
    }
    out
}

/// Offsets to avoid: dips that recur at the same offset (± one step) in at least two
/// repetitions on contiguous memory (a dip seen once is noise until it repeats), and the safe
/// padding; advice that rests on disturbed points is marked unconfirmed.
fn offset_advice(op: Kernel, curves: &[Curve], cfg: &RowbufferConfig) -> Option<Finding> {
    let step = cfg.offsets.get(1).map_or(64, |o| o - cfg.offsets[0]);
    // Dips at disturbed points are not dips: a lost CPU only slows a pass.
    let reps: Vec<Vec<u64>> = curves
        .iter()
        .filter(|c| c.kernel == op && c.memory == Memory::Contiguous)
        .map(|c| {
            c.detection
                .dips
                .iter()
                .map(|d| d.offset_bytes)
                .filter(|&o| {
                    c.points
                        .iter()
                        .find(|p| p.offset_bytes == o)
                        .is_none_or(|p| !p.gbs.rests_on_disturbed())
                })
                .collect()
        })
        .collect();
    let recurring = recurring_dips(&reps, step);
    let seen: usize = reps.iter().map(Vec::len).sum();
    if recurring.is_empty() {
        return (seen > 0).then(|| {
            Finding::unsampled(format!(
                "{}: {seen} dip(s) at clean points on contiguous memory, none at the same offset in two repetitions: noise, not row-buffer conflicts{}",
                op.name(),
                if cfg.reps < 2 { " (run --reps 2 or more to confirm dips)" } else { "" }
            ))
        });
    }
    // The safe padding: the offset with the best worst case over repetitions, away from every
    // recurring dip.
    let best = cfg
        .offsets
        .iter()
        .filter(|o| recurring.iter().all(|d| d.abs_diff(**o) > 2 * step))
        .filter_map(|&o| {
            let v: Vec<f64> = points_at(curves, op, o)
                .map(|p| p.value(cfg.stat))
                .collect();
            (!v.is_empty()).then(|| (o, summarize(&v).min))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let mut cites: Vec<Cited> = recurring
        .iter()
        .flat_map(|&d| cited_at(curves, op, d))
        .collect();
    if let Some((o, _)) = best {
        cites.extend(cited_at(curves, op, o));
    }
    Some(Finding::advice(
        format!(
            "{}: on contiguous memory avoid OFFSET {} (dips in ≥ 2 repetitions){}",
            op.name(),
            recurring
                .iter()
                .take(12)
                .map(|&d| format_bytes(d))
                .collect::<Vec<_>>()
                .join(", "),
            best.map_or(String::new(), |(o, v)| format!(
                "; a safe padding is {} ({v:.1} GB/s at worst over the repetitions)",
                format_bytes(o)
            ))
        ),
        cites,
    ))
}

/// Huge against 4 KiB pages: by their medians over offsets first, then their best and worst
/// cases (outliers left out), each change computed from the figures printed beside it and
/// counted only beyond ±2% and the two layouts' point noise (a peak or a worst case is one
/// point, as noisy as any).
fn layout_advice(op: Kernel, c: &LayoutSummary, p: &LayoutSummary) -> Finding {
    let change = |a: f64, b: f64| a / b - 1.0;
    let (median, peak, worst) = (
        change(c.median_gbs, p.median_gbs),
        change(c.peak_gbs, p.peak_gbs),
        change(c.worst_gbs, p.worst_gbs),
    );
    let band = (c.point_noise + p.point_noise).max(0.02);
    let sign = |x: f64| {
        if x > band {
            1
        } else if x < -band {
            -1
        } else {
            0
        }
    };
    let same = format!(
        "no difference beyond ±{:.0}% (the larger of 2% and the points' noise) in the median, the best or the worst case here",
        100.0 * band
    );
    let verdict = match (sign(median), sign(peak), sign(worst)) {
        (0, 0, 0) => same.as_str(),
        (_, 1, -1) => {
            "huge pages win the best case but lose the worst case: pick them when you can control array offsets, 4 KiB pages when you cannot"
        }
        (_, -1, 1) => "4 KiB pages have the higher peak and huge pages the steadier floor here",
        (m, p, w) if m >= 0 && p >= 0 && w >= 0 => {
            "huge pages are at least as good in the median, the best and the worst case here"
        }
        (m, p, w) if m <= 0 && p <= 0 && w <= 0 => {
            "4 KiB pages are at least as good in the median, the best and the worst case here"
        }
        _ => "the median, the best and the worst case do not agree on a winner here",
    };
    Finding::advice(
        format!(
            "{}: huge vs 4 KiB pages: median {:.1} vs {:.1} GB/s ({:+.0}%), peak {:.1} vs {:.1} GB/s ({:+.0}%), worst {:.1} vs {:.1} GB/s ({:+.0}%) (outlying points left out): {verdict}",
            op.name(),
            c.median_gbs,
            p.median_gbs,
            median * 100.0,
            c.peak_gbs,
            p.peak_gbs,
            peak * 100.0,
            c.worst_gbs,
            p.worst_gbs,
            worst * 100.0,
        ),
        vec![cited_layout(c), cited_layout(p)],
    )
}

/// Offsets where dips appear in at least two repetitions (within one step).
pub fn recurring_dips(reps: &[Vec<u64>], step: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (i, dips) in reps.iter().enumerate() {
        for &d in dips {
            let again = reps
                .iter()
                .enumerate()
                .any(|(j, other)| j != i && other.iter().any(|o| o.abs_diff(d) <= step));
            if again && out.iter().all(|o| o.abs_diff(d) > step) {
                out.push(d);
            }
        }
    }
    out.sort_unstable();
    out
}

pub(super) fn variance_findings(summaries: &[LayoutSummary]) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in summaries
        .iter()
        .filter(|s| s.memory == Memory::Fragmented4k)
    {
        if let Some(fresh) = summaries
            .iter()
            .find(|x| x.kernel == s.kernel && x.memory == Memory::Paged4k)
        {
            out.push(Finding::citing(
                fragmentation_sentence(fresh, s),
                vec![cited_layout(fresh), cited_layout(s)],
            ));
        }
    }
    out
}

/// What fragmenting free memory first did to the spread and the worst case (`fresh` before,
/// `frag` after), in words that follow the figures: a CV moves beyond its own sampling error
/// (CV ÷ √(2n) each), a worst case beyond ±2% and the points' noise.
fn fragmentation_sentence(fresh: &LayoutSummary, frag: &LayoutSummary) -> String {
    let se = |l: &LayoutSummary| l.cv / (2.0 * l.points.max(1) as f64).sqrt();
    let cv_moved = (frag.cv - fresh.cv).abs() > 2.0 * (se(fresh) + se(frag));
    let band = (fresh.point_noise + frag.point_noise).max(0.02);
    let worst_moved = (frag.worst_gbs / fresh.worst_gbs - 1.0).abs() > band;
    let what = match (cv_moved, frag.cv > fresh.cv, worst_moved) {
        (false, _, false) => "left the spread and the worst case as they were, within the noise",
        (true, true, _) => "raised the spread",
        (true, false, _) => "lowered the spread",
        (false, _, true) => "moved the worst case, not the spread",
    };
    format!(
        "{}: fragmenting free memory first {what} (CV over offsets and repetitions {:.1}% → {:.1}%, worst case {:.1} → {:.1} GB/s; the Catamount paper, Ferreira et al., CUG 2008, saw more variance long after boot)",
        fresh.kernel.name(),
        fresh.cv * 100.0,
        frag.cv * 100.0,
        fresh.worst_gbs,
        frag.worst_gbs
    )
}
