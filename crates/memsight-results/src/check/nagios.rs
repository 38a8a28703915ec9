//! The verdict as a Monitoring Plugins status line (Nagios, Icinga, Naemon, Sensu): `SERVICE
//! STATE - text | perfdata`, in ASCII, with the exit status those systems read (0 OK, 1
//! WARNING, 2 CRITICAL, 3 UNKNOWN; memsight uses OK, CRITICAL and UNKNOWN).

use super::{CheckReport, Verdict, ascii, num};

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

/// `MEMSIGHT CRITICAL - FAIL bandwidth/read/2t = … | 'bandwidth/read/2t GB/s'=12.5;20:;20:;0;`:
/// the one-line verdict, then every check with a value as perfdata.
pub fn line(report: &CheckReport) -> String {
    let text = report.line();
    let text = text.strip_prefix("memsight: ").unwrap_or(&text);
    let perf: Vec<String> = report.checks.iter().filter_map(perfdata).collect();
    // The text part must not hold the perfdata separator.
    let head = format!("MEMSIGHT {} - {}", state(report.verdict), ascii(text)).replace('|', "/");
    if perf.is_empty() {
        head
    } else {
        format!("{head} | {}", perf.join(" "))
    }
}

/// One check as perfdata, `'label'=value[UOM];warn;crit;min;`, or `None` without a value.
///
/// The format knows seconds, percent and bytes as units: latencies go in seconds and sizes in
/// bytes; any other unit (GB/s, pages) is written into the label, since a bare number in an
/// unnamed unit is read wrong by whoever graphs it. The range the reference sets is `crit`;
/// memsight has no warning level of its own (a figure is inside its tolerance or not), so
/// `warn` is the same range, as a plugin with one threshold writes it. Every figure memsight
/// checks is a magnitude, so `min` is 0.
fn perfdata(c: &super::Check) -> Option<String> {
    let v = c.value.filter(|v| v.is_finite())?;
    let (scale, uom) = match c.unit.as_str() {
        "ns" => (1e-9, "s"),
        "B" => (1.0, "B"),
        "%" => (1.0, "%"),
        _ => (1.0, ""),
    };
    let name = if uom.is_empty() && !c.unit.is_empty() {
        format!("{} {}", c.name, c.unit)
    } else {
        c.name.clone()
    };
    let range = c.range.map(|r| threshold(r, scale)).unwrap_or_default();
    let min = if v >= 0.0 { "0" } else { "" };
    Some(format!(
        "'{}'={}{uom};{range};{range};{min};",
        label(&name),
        num(v * scale)
    ))
}

/// A range in the plugin format: `low:high`, `low:` (at least), `~:high` (at most).
fn threshold(r: super::Range, scale: f64) -> String {
    match (r.low, r.high) {
        (Some(l), Some(h)) => format!("{}:{}", num(l * scale), num(h * scale)),
        (Some(l), None) => format!("{}:", num(l * scale)),
        (None, Some(h)) => format!("~:{}", num(h * scale)),
        (None, None) => String::new(),
    }
}

/// The status line of a check that could not be made (a reference that does not read, a
/// measurement the machine refused): UNKNOWN, with the reason on one ASCII line.
pub fn unknown(why: &str) -> String {
    let line = why.lines().collect::<Vec<_>>().join("; ");
    format!("MEMSIGHT UNKNOWN - {}", ascii(&line).replace('|', "/"))
}

/// Whether a command line (the words after the program's name) that did not parse was
/// `check … --format nagios`: such a line must still be answered as a plugin answers.
pub fn asked_for(args: impl Iterator<Item = String>) -> bool {
    let words: Vec<String> = args.collect();
    let check = words.iter().any(|w| w == "check");
    let nagios = words.iter().enumerate().any(|(i, w)| {
        w == "--format=nagios"
            || (w == "--format" && words.get(i + 1).is_some_and(|n| n == "nagios"))
    });
    check && nagios
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
        // The first is a bandwidth of at least 20, the second a latency of at most 150 ns.
        let range = if unit == "ns" {
            super::super::Range {
                low: None,
                high: Some(150.0),
            }
        } else {
            super::super::Range {
                low: Some(20.0),
                high: None,
            }
        };
        Check {
            range: Some(range),
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
    fn a_refused_nagios_check_is_told_by_its_words() {
        let ask = |s: &str| asked_for(s.split(' ').map(String::from));
        assert!(ask("check --reference r.toml --format nagios --bogus"));
        assert!(ask("--quiet check --format=nagios --referenc r.toml"));
        assert!(!ask("check --reference r.toml --bogus"));
        assert!(!ask("run --format nagios"));
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
            "'bandwidth/read/2t GB/s'=12.5;20:;20:;0; 'latency/cpu0/level/memory'=0.000000125s;~:0.00000015;~:0.00000015;0;"
        );
        assert_eq!(num(36.408849408882965), "36.4088");
        assert_eq!(num(2.8006000000000003e-8), "0.000000028006");
        assert_eq!(num(25165824.0), "25165824");
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
