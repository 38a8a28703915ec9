//! `memsight export`: a stored run as CSV (one row per figure, or per sample) or as its JSON
//! document, for pandas, R or a spreadsheet.

use std::io::Write;

use memsight_core::Error;

use crate::document::Document;

/// Writes one row per figure: run, key, suite, label, unit, direction, median and spread.
pub fn figures_csv(doc: &Document, out: impl Write) -> Result<(), Error> {
    let mut w = csv::Writer::from_writer(out);
    let fail = |e: csv::Error| Error::input(format!("cannot write CSV: {e}"));
    w.write_record([
        "run_started",
        "host",
        "key",
        "suite",
        "label",
        "unit",
        "better",
        "value",
        "ci_low",
        "ci_high",
        "ci_level",
        "n",
        "min",
        "max",
        "cv",
    ])
    .map_err(fail)?;
    let host = doc.environment.hostname.clone().unwrap_or_default();
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    for f in crate::document::figures(doc) {
        let s = f.summary.as_ref();
        w.write_record([
            doc.started.clone(),
            host.clone(),
            f.key,
            f.suite,
            f.label,
            f.unit,
            format!("{:?}", f.better).to_lowercase(),
            f.value.to_string(),
            opt(s.map(|s| s.ci_low)),
            opt(s.map(|s| s.ci_high)),
            opt(s.map(|s| s.ci_level)),
            s.map_or(String::new(), |s| s.n.to_string()),
            opt(s.map(|s| s.min)),
            opt(s.map(|s| s.max)),
            opt(s.map(|s| s.cv)),
        ])
        .map_err(fail)?;
    }
    w.flush()
        .map_err(|e| Error::input(format!("cannot write CSV: {e}")))?;
    Ok(())
}

/// Writes one row per sample (long format): key, unit, sample index, value.
pub fn samples_csv(doc: &Document, out: impl Write) -> Result<(), Error> {
    let mut w = csv::Writer::from_writer(out);
    let fail = |e: csv::Error| Error::input(format!("cannot write CSV: {e}"));
    w.write_record(["run_started", "key", "unit", "sample", "value"])
        .map_err(fail)?;
    for f in crate::document::figures(doc) {
        let Some(s) = &f.summary else { continue };
        for (i, v) in s.samples.iter().enumerate() {
            w.write_record([
                doc.started.clone(),
                f.key.clone(),
                f.unit.clone(),
                i.to_string(),
                v.to_string(),
            ])
            .map_err(fail)?;
        }
    }
    w.flush()
        .map_err(|e| Error::input(format!("cannot write CSV: {e}")))?;
    Ok(())
}

/// A Prometheus label value: backslash, double quote and newline escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A metric-name part: `[a-z0-9_]`, lower case.
fn name_part(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let c = c.to_ascii_lowercase();
        out.push(if c.is_ascii_alphanumeric() { c } else { '_' });
    }
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    out.trim_matches('_').to_string()
}

/// The metric of a figure: suite and unit (`memsight_latency_nanoseconds`).
fn metric(suite: &str, unit: &str) -> String {
    let u = unit.split_whitespace().next().unwrap_or("");
    let u = match u {
        "ns" => "nanoseconds".to_string(),
        "GB/s" => "gigabytes_per_second".into(),
        "MB/s" => "megabytes_per_second".into(),
        "%" => "percent".into(),
        other => name_part(other),
    };
    let m = format!("memsight_{}_{}", name_part(suite), u);
    m.trim_end_matches('_').to_string()
}

fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{v}")
    }
}

/// One gauge sample: (metric, labels, value).
type Sample = (String, Vec<(&'static str, String)>, f64);

/// Writes the result in the Prometheus text exposition format (node_exporter's textfile
/// collector reads it; no timestamps, which that collector refuses). Every figure is a gauge
/// named by suite and unit and labelled with host, key, unit and direction; a fleet report gives
/// the headline figures of every node (host = node), its outliers and its faults.
pub fn prometheus(doc: &Document, mut out: impl Write) -> Result<(), Error> {
    let host = doc.environment.hostname.clone().unwrap_or_default();
    let mut samples: Vec<Sample> = vec![(
        "memsight_result_info".into(),
        vec![
            ("command", doc.command.clone()),
            ("version", doc.tool.version.clone()),
            ("host", host.clone()),
            ("complete", doc.complete.to_string()),
            ("started", doc.started.clone()),
        ],
        1.0,
    )];
    if let crate::document::Results::Fleet(f) = &doc.results {
        fleet_samples(f, &mut samples);
    } else {
        for f in crate::document::figures(doc) {
            samples.push((
                metric(&f.suite, &f.unit),
                vec![
                    ("host", host.clone()),
                    ("key", f.key),
                    ("unit", f.unit),
                    ("better", format!("{:?}", f.better).to_lowercase()),
                ],
                f.value,
            ));
        }
    }
    write_samples(&samples, &mut out)
        .map_err(|e| Error::input(format!("cannot write the Prometheus text: {e}")))
}

fn fleet_samples(f: &crate::fleet_report::FleetResults, samples: &mut Vec<Sample>) {
    for m in &f.members {
        for h in &f.headline {
            if let Some(v) = m.headline.get(&h.key) {
                samples.push((
                    metric("fleet", &h.unit),
                    vec![
                        ("host", m.name.clone()),
                        ("key", h.key.clone()),
                        ("figure", h.name.clone()),
                        ("group", m.group.to_string()),
                    ],
                    *v,
                ));
            }
        }
    }
    for o in &f.outliers {
        samples.push((
            "memsight_fleet_outlier_score".into(),
            vec![
                ("host", o.member.clone()),
                ("key", o.key.clone()),
                ("direction", format!("{:?}", o.direction).to_lowercase()),
            ],
            o.score,
        ));
    }
    for fault in &f.faults {
        samples.push((
            "memsight_fleet_fault".into(),
            vec![
                ("who", fault.who.clone()),
                ("kind", format!("{:?}", fault.kind).to_lowercase()),
            ],
            1.0,
        ));
    }
}

/// Samples grouped by metric (the format wants each metric's lines together, after its HELP and
/// TYPE lines).
fn write_samples(samples: &[Sample], out: &mut impl Write) -> std::io::Result<()> {
    let mut order: Vec<&str> = Vec::new();
    for (m, _, _) in samples {
        if !order.contains(&m.as_str()) {
            order.push(m);
        }
    }
    for m in order {
        writeln!(
            out,
            "# HELP {m} memsight figure (see the result's method for how it was measured)"
        )?;
        writeln!(out, "# TYPE {m} gauge")?;
        for (_, labels, v) in samples.iter().filter(|s| s.0 == m) {
            let l: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", label(v)))
                .collect();
            writeln!(out, "{m}{{{}}} {}", l.join(","), value(*v))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels_follow_the_exposition_format() {
        assert_eq!(metric("latency", "ns"), "memsight_latency_nanoseconds");
        assert_eq!(
            metric("bandwidth", "GB/s (program bytes)"),
            "memsight_bandwidth_gigabytes_per_second"
        );
        assert_eq!(metric("c2c", "misses"), "memsight_c2c_misses");
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "+Inf");
        let valid = |m: &str| {
            m.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && m.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        };
        for (s, u) in [("tiers", "GB/s (estimated DRAM bytes)"), ("x-y", "µs/op")] {
            assert!(valid(&metric(s, u)), "{}", metric(s, u));
        }
    }
}
