//! The verdict as a Monitoring Plugins status line (Nagios, Icinga, Naemon, Sensu): `SERVICE
//! STATE - text | perfdata`, in ASCII, with the exit status those systems read (0 OK, 1
//! WARNING, 2 CRITICAL, 3 UNKNOWN; memsight uses OK, CRITICAL and UNKNOWN).

use super::{CheckReport, Verdict, ascii};

/// The plugin's exit status for a verdict: PASS is OK, FAIL is CRITICAL, a result that is not
/// whole is UNKNOWN (the node's state cannot be told from it).
pub fn status(v: Verdict) -> u8 {
    match v {
        Verdict::Pass => 0,
        Verdict::Fail => 2,
        Verdict::Incomplete => 3,
    }
}

fn state(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "OK",
        Verdict::Fail => "CRITICAL",
        Verdict::Incomplete => "UNKNOWN",
    }
}

/// `MEMSIGHT CRITICAL - FAIL bandwidth/read/2t = … | 'bandwidth/read/2t'=21.5;;;; …`: the
/// one-line verdict, then every check with a value as perfdata (latencies in seconds, sizes in
/// bytes, as the format's units ask; other units bare).
pub fn line(report: &CheckReport) -> String {
    let text = report.line();
    let text = text.strip_prefix("memsight: ").unwrap_or(&text);
    let perf: Vec<String> = report
        .checks
        .iter()
        .filter_map(|c| {
            let v = c.value.filter(|v| v.is_finite())?;
            let (v, uom) = match c.unit.as_str() {
                "ns" => (v / 1e9, "s"),
                "B" => (v, "B"),
                "%" => (v, "%"),
                _ => (v, ""),
            };
            Some(format!("'{}'={v}{uom};;;;", label(&c.name)))
        })
        .collect();
    // The text part must not hold the perfdata separator.
    let head = format!("MEMSIGHT {} - {}", state(report.verdict), ascii(text)).replace('|', "/");
    if perf.is_empty() {
        head
    } else {
        format!("{head} | {}", perf.join(" "))
    }
}

/// The status line of a check that could not be made (a reference that does not read, a
/// measurement the machine refused): UNKNOWN, with the reason on one ASCII line.
pub fn unknown(why: &str) -> String {
    let line = why.lines().collect::<Vec<_>>().join("; ");
    format!("MEMSIGHT UNKNOWN - {}", ascii(&line).replace('|', "/"))
}

/// A perfdata label: ASCII, no `=`, a quote doubled (the format's escape).
fn label(name: &str) -> String {
    ascii(name).replace('=', "_").replace('\'', "''")
}

#[cfg(test)]
mod tests {
    use super::super::{Check, Status};
    use super::*;

    fn check(name: &str, status: Status, value: f64, unit: &str) -> Check {
        Check {
            status,
            name: name.into(),
            label: name.into(),
            value: Some(value),
            unit: unit.into(),
            expected: "≥ 20.0".into(),
            margin_percent: None,
            reason: String::new(),
        }
    }

    #[test]
    fn states_exit_codes_and_perfdata_follow_the_plugin_format() {
        let r = CheckReport::new(
            "node".into(),
            "h".into(),
            "t".into(),
            Vec::new(),
            vec![
                check("bandwidth/read/2t", Status::Fail, 12.5, "GB/s"),
                check("latency/cpu0/level/memory", Status::Pass, 125.0, "ns"),
            ],
        );
        let l = line(&r);
        assert!(
            l.starts_with("MEMSIGHT CRITICAL - FAIL bandwidth/read/2t"),
            "{l}"
        );
        assert!(l.contains("expected >= 20.0"), "{l}");
        assert!(l.is_ascii(), "{l}");
        let (_, perf) = l.split_once(" | ").unwrap();
        assert_eq!(
            perf,
            "'bandwidth/read/2t'=12.5;;;; 'latency/cpu0/level/memory'=0.000000125s;;;;"
        );
        assert_eq!(status(r.verdict), 2);
        let whole = CheckReport::new(
            "node".into(),
            "h".into(),
            "t".into(),
            Vec::new(),
            Vec::new(),
        );
        assert_eq!(status(whole.verdict), 0);
        let partial = CheckReport::new(
            "node".into(),
            "h".into(),
            "t".into(),
            vec!["the result was interrupted (complete: false)".into()],
            vec![check("x", Status::Pass, 1.0, "GB/s")],
        );
        assert_eq!(status(partial.verdict), 3);
        assert!(line(&partial).starts_with("MEMSIGHT UNKNOWN - INCOMPLETE"));
    }
}
