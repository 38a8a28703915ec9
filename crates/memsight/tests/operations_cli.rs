//! memsight in daily operations (docs/operations.md): `check` against references, exit codes per
//! kind, Prometheus text that promtool and the Python client accept, typed CSV, atomic export,
//! quiet ends of pipes, plain tables, `--quiet`, `run --only`, CPUs named as users name them, and
//! every command the operations page shows.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{memsight, ok, refused};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn thorough() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json")
}

/// Every recorded result: one per command, and a thorough run.
fn recorded() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out.push(thorough());
    out
}

/// `export --format prometheus` of `f`, checked as exposition text.
fn prometheus(f: &Path) -> String {
    let text = ok(&memsight()
        .args(["export", "--format", "prometheus"])
        .arg(f)
        .output()
        .unwrap());
    common::check_exposition(&text);
    text
}

#[test]
fn every_export_is_prometheus_text_its_tools_accept() {
    for f in recorded() {
        let text = prometheus(&f);
        assert!(
            !text.contains("key=\""),
            "{}: a packed key label",
            f.display()
        );
        assert!(text.contains("memsight_result_timestamp_seconds "));
    }
}

/// A ladder that found no level at all keeps its series, as NaN: a family whose label sets
/// come and go between runs leaves stale values behind in node_exporter's file.
#[test]
fn a_ladder_without_plateaus_keeps_its_series_as_nan() {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(thorough()).unwrap()).unwrap();
    for l in doc["results"]["latency"]["ladders"].as_array_mut().unwrap() {
        l["levels"]["plateaus"] = serde_json::json!([]);
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("flat.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let text = prometheus(&f);
    for level in ["L1", "L2", "memory"] {
        let line = text
            .lines()
            .find(|l| {
                l.starts_with("memsight_latency_seconds{")
                    && l.contains("cpu=\"0\"")
                    && l.contains(&format!("level=\"{level}\""))
            })
            .unwrap_or_else(|| panic!("no {level} series:\n{text}"));
        assert!(line.ends_with(" NaN"), "{line}");
    }
}

#[test]
fn csv_has_typed_columns_beside_the_key() {
    let out = ok(&memsight()
        .args(["export", "--format", "csv"])
        .arg(thorough())
        .output()
        .unwrap());
    let mut r = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    for c in [
        "key",
        "suite",
        "test",
        "cpu",
        "threads",
        "node",
        "working_set_bytes",
        "mix",
    ] {
        assert!(header.contains(&c.to_string()), "no column {c}: {header:?}");
    }
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut points = 0;
    for row in r.records() {
        let row = row.unwrap();
        let key = &row[col("key")];
        if key.starts_with("latency/cpu0/") && !key.contains("level") {
            assert_eq!(&row[col("cpu")], "0");
            assert!(
                row[col("working_set_bytes")].parse::<u64>().is_ok(),
                "{key}"
            );
            points += 1;
        }
        if key == "bandwidth/read/2t" {
            assert_eq!((&row[col("test")], &row[col("threads")]), ("read", "2"));
        }
    }
    assert!(points > 10);
}

#[test]
fn export_to_replaces_the_file_whole_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("memsight.prom");
    std::fs::write(&to, "old\n").unwrap();
    ok(&memsight()
        .args(["export", "--format", "prometheus", "--to"])
        .arg(&to)
        .arg(thorough())
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&to).unwrap();
    assert!(text.starts_with("# HELP"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&to).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "a collector running as another user reads it");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
}

/// A reader that goes away: memsight ends quietly (SIGPIPE or 0), never with a panic.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let thorough = thorough();
    let thorough = thorough.to_str().unwrap();
    for args in [
        vec!["schema"],
        vec!["completions", "bash"],
        vec!["export", thorough],
        vec!["show", thorough],
        vec!["latency", "--max-size", "64K", "--no-progress"],
    ] {
        let mut child = memsight()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            out.status.signal() == Some(SIGPIPE) || out.status.success(),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}

/// Linux's SIGPIPE.
const SIGPIPE: i32 = 13;

#[test]
fn exit_codes_follow_the_kind_of_error() {
    // Bad input: 2.
    refused(
        &memsight()
            .args(["run", "--only", "nothing"])
            .output()
            .unwrap(),
        "possible values",
    );
    refused(
        &memsight()
            .args(["show", "/no/such/result.json"])
            .output()
            .unwrap(),
        "neither a result file",
    );
    // The system refused (no space left on the device): 3.
    let out = memsight()
        .args(["compare", "-o", "/dev/full"])
        .arg(thorough())
        .arg(thorough())
        .output()
        .unwrap();
    common::system_refused(&out, "No space left");
}

/// `memsight check FLAGS… FILE RESULT`: the flags end with the one that takes the file
/// (`--reference`, `--make-reference`); the recorded thorough run is the result.
fn check(flags: &[&str], file: &Path) -> std::process::Output {
    memsight()
        .arg("check")
        .args(flags)
        .arg(file)
        .arg(thorough())
        .output()
        .unwrap()
}

#[test]
fn a_reference_made_from_a_run_passes_it_and_an_impossible_one_fails_naming_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("node.json");
    ok(&check(&["--make-reference"], &reference));
    let out = check(&["--format", "line", "--reference"], &reference);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("memsight: PASS"));
    // The same as TOML.
    let toml = dir.path().join("node.toml");
    ok(&check(&["--make-reference"], &toml));
    let out = check(&["--quiet", "--reference"], &toml);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "--quiet prints no table");

    // An expectation no machine meets.
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reference).unwrap()).unwrap();
    let figures = r["figure"].as_array_mut().unwrap();
    let read = figures
        .iter_mut()
        .find(|f| f["select"] == "bandwidth/read/2t")
        .expect("the reference holds read bandwidth");
    read["expect"] = 1.0e6.into();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, serde_json::to_string(&r).unwrap()).unwrap();
    let out = check(&["--format", "line", "--reference"], &bad);
    assert_eq!(out.status.code(), Some(1));
    let line = String::from_utf8_lossy(&out.stdout);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.starts_with("memsight: FAIL bandwidth/read/2t"),
        "{line}"
    );
    // JSON and JUnit say the same.
    let out = check(&["--json", "--reference"], &bad);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<&serde_json::Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "FAIL")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["name"], "bandwidth/read/2t");
    assert!(failed[0]["margin_percent"].as_f64().unwrap() < -90.0);
    let out = check(&["--format", "junit", "--reference"], &bad);
    let xml = String::from_utf8(out.stdout).unwrap();
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 1);
    if let Some(parsed) = python(
        "import sys, xml.etree.ElementTree as E; r=E.fromstring(sys.stdin.read()); print(len(r.iter('testcase').__next__().attrib))",
        &xml,
    ) {
        assert!(parsed.trim().parse::<usize>().unwrap() >= 2, "JUnit parses");
    }
}

/// A figure the result does not hold (a level the ladder did not resolve this time) is not
/// seen: INCOMPLETE naming it, neither PASS nor FAIL; optional, it is only skipped.
#[test]
fn a_figure_the_result_lacks_makes_the_check_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("node.json");
    ok(&check(&["--make-reference"], &reference));
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reference).unwrap()).unwrap();
    r["figure"].as_array_mut().unwrap().push(serde_json::json!({
        "select": "latency/cpu0/level/L4", "expect": 40.0, "unit": "ns"
    }));
    let absent = dir.path().join("absent.json");
    std::fs::write(&absent, serde_json::to_string(&r).unwrap()).unwrap();
    let out = check(&["--format", "line", "--reference"], &absent);
    let line = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{line}");
    assert!(
        line.starts_with("memsight: INCOMPLETE") && line.contains("latency/cpu0/level/L4"),
        "{line}"
    );
    r["figure"].as_array_mut().unwrap().last_mut().unwrap()["optional"] = true.into();
    std::fs::write(&absent, serde_json::to_string(&r).unwrap()).unwrap();
    let out = check(&["--format", "line", "--reference"], &absent);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A result that is not whole never passes: INCOMPLETE, exit 3, in every form; the line is
/// ASCII whatever the locale; nagios gives the Monitoring Plugins state and exit codes; JSON
/// names its schema and verdict; a reference from results of two machines names them.
#[test]
fn an_interrupted_result_is_incomplete_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("node.json");
    ok(&check(&["--make-reference"], &reference));
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(thorough()).unwrap()).unwrap();
    doc["complete"] = false.into();
    let partial = dir.path().join("partial.json");
    std::fs::write(&partial, serde_json::to_string(&doc).unwrap()).unwrap();
    let judge = |flags: &[&str]| {
        memsight()
            .env("LC_ALL", "C")
            .arg("check")
            .args(flags)
            .arg("--reference")
            .arg(&reference)
            .arg(&partial)
            .output()
            .unwrap()
    };
    for flags in [
        &["--format", "table"][..],
        &["--format", "line"],
        &["--json"],
    ] {
        let out = judge(flags);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{flags:?}: {text}");
        assert!(text.contains("INCOMPLETE"), "{flags:?}: {text}");
    }
    // The verdict under the table: each check may pass, the whole does not.
    let table = String::from_utf8(judge(&["--format", "table"]).stdout).unwrap();
    let last = table.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(last.starts_with("INCOMPLETE: "), "{last}");
    let line = String::from_utf8(judge(&["--format", "line"]).stdout).unwrap();
    assert!(
        line.starts_with("memsight: INCOMPLETE: the result was interrupted"),
        "{line}"
    );
    assert!(line.is_ascii(), "{line}");
    let v: serde_json::Value = serde_json::from_slice(&judge(&["--json"]).stdout).unwrap();
    assert_eq!(v["schema"], "memsight-check");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["verdict"], "INCOMPLETE");
    assert_eq!(v["complete"], false);
    let out = judge(&["--format", "nagios"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.starts_with("MEMSIGHT UNKNOWN - INCOMPLETE") && text.contains(" | '"),
        "{text}"
    );
    // The whole result: OK and 0; an impossible expectation: CRITICAL and 2.
    let out = memsight()
        .args(["check", "--format", "nagios", "--reference"])
        .arg(&reference)
        .arg(thorough())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("MEMSIGHT OK - PASS"));
    // A check that cannot be made is UNKNOWN, with the reason, never a bare exit code.
    let out = memsight()
        .args([
            "check",
            "--format",
            "nagios",
            "--reference",
            "/no/such/reference.toml",
        ])
        .arg(thorough())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("MEMSIGHT UNKNOWN - ") && text.contains("reference"),
        "{text}"
    );
    // Two machines' results make no reference, and the message names them.
    let mut other = doc.clone();
    other["complete"] = true.into();
    other["environment"]["cpu"]["model_name"] = "Other CPU".into();
    let other_file = dir.path().join("other.json");
    std::fs::write(&other_file, serde_json::to_string(&other).unwrap()).unwrap();
    let out = memsight()
        .args(["check", "--make-reference"])
        .arg(dir.path().join("mixed.json"))
        .arg(thorough())
        .arg(&other_file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("other.json") && err.contains("Other CPU"),
        "{err}"
    );
}

/// A run whose choices leave nothing to measure is refused before it starts.
#[test]
fn a_run_that_measures_nothing_is_refused() {
    let out = memsight()
        .args([
            "run",
            "--only",
            "latency",
            "--skip",
            "latency",
            "--no-history",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing would be measured"), "{err}");
}

/// `check` with no result measures what the reference needs (a quick ladder only, here) and
/// judges it: the expectation is wide enough that only a missing figure could fail it. The
/// ladder's first point is judged: it is measured whatever the load, whereas a busy machine may
/// break the memory plateau of a quick ladder into points that name no level.
#[test]
fn check_measures_what_the_reference_needs() {
    let _m = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("live.toml");
    std::fs::write(
        &reference,
        format!(
            r#"schema = "memsight-reference"
schema_version = 1
name = "this machine"
measure = {{ level = "quick" }}

[[figure]]
select = "latency/cpu*/4KiB"
expect = 100.0
tolerance = {{ absolute = 1.0e9 }}

[health]
cpus = {}
"#,
            online_cpus()
        ),
    )
    .unwrap();
    let keep = dir.path().join("kept");
    let out = memsight()
        .args(["check", "--no-progress", "--format", "json", "--reference"])
        .arg(&reference)
        .arg("--out")
        .arg(&keep)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let checks = v["checks"].as_array().unwrap();
    assert!(
        checks.iter().any(
            |c| c["name"].as_str().unwrap().starts_with("latency/cpu") && c["status"] == "PASS"
        ),
        "{v}"
    );
    assert_eq!(out.status.code(), Some(0), "{v}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(keep.join("run.json")).unwrap()).unwrap();
    assert!(
        run["results"]["bandwidth"].is_null(),
        "only the suites the reference needs"
    );
    let skipped = run["results"]["skipped"].to_string();
    assert!(skipped.contains("bandwidth: not selected"), "{skipped}");
}

fn online_cpus() -> usize {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    memsight_core::units::parse_cpu_list(online.trim()).map_or(1, |l| l.len())
}

#[test]
fn tables_are_plain_ascii_off_a_terminal_and_quiet_is_quiet() {
    let out = ok(&memsight().arg("show").arg(thorough()).output().unwrap());
    assert!(out.contains("+--"), "ASCII rules off a terminal");
    assert!(!out.contains('│') && !out.contains('─') && !out.contains('•'));
    let out = memsight()
        .args(["show", "--quiet"])
        .arg(thorough())
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    let out = ok(&memsight().args(["schema", "--quiet"]).output().unwrap());
    assert!(out.starts_with('{'), "data asked for is still written");
}

#[test]
fn help_shows_defaults_in_human_units() {
    // A size flag's default in raw bytes (`[default: 100663296]`); other numbers (a seed) may
    // be long.
    let re = regex::Regex::new(r"<(SIZE|BYTES|LIST)>[^\[]*\[default: \d{5,}").unwrap();
    // Every command the top-level help lists (a new command is in it without a list to keep).
    let top = ok(&memsight().arg("--help").output().unwrap());
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(
        commands.contains(&"coherence") && commands.len() > 15,
        "{top}"
    );
    for cmd in commands {
        let help = ok(&memsight().args([cmd, "--help"]).output().unwrap());
        assert!(
            !re.is_match(&help),
            "{cmd} --help shows raw bytes: {:?}",
            re.find(&help)
        );
    }
    let help = ok(&memsight()
        .args(["loaded-latency", "--help"])
        .output()
        .unwrap());
    assert!(help.contains("[default: 96MiB]"), "{help}");
    let help = ok(&memsight().args(["run", "--help"]).output().unwrap());
    assert!(help.contains("Latency ladder") && help.contains("--only"));
}

#[test]
fn run_only_and_skip_choose_suites() {
    let _m = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let out = memsight()
        .args([
            "run",
            "--quick",
            "--no-progress",
            "--no-history",
            "--json",
            "--only",
            "latency",
            "--max-size",
            "1M",
            "--out",
        ])
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let r = &v["results"];
    assert!(r["latency"].is_object());
    assert!(r["bandwidth"].is_null());
    assert!(r["skipped"].to_string().contains("bandwidth: not selected"));
    refused(
        &memsight()
            .args(["run", "--skip", "latency,nope"])
            .output()
            .unwrap(),
        "nope",
    );
}

#[test]
fn cpus_are_named_as_users_name_them() {
    let _m = common::measuring();
    let v = common::json(memsight().args([
        "latency",
        "--json",
        "--no-progress",
        "--max-size",
        "64K",
        "--cpu",
        "one-per-core",
    ]));
    let ladders = v["results"]["ladders"].as_array().unwrap();
    assert!(!ladders.is_empty());
    let v = common::json(memsight().args([
        "latency",
        "--json",
        "--no-progress",
        "--max-size",
        "64K",
        "--cpu",
        "node:0",
    ]));
    assert!(!v["results"]["ladders"].as_array().unwrap().is_empty());
    refused(
        &memsight()
            .args(["latency", "--max-size", "64K", "--cpu", "socket:4095"])
            .output()
            .unwrap(),
        "socket 4095 holds no CPU",
    );
    refused(
        &memsight()
            .args(["bandwidth", "--cpus", "core:1"])
            .output()
            .unwrap(),
        "one-per-core",
    );
}

#[test]
fn the_schema_is_one_that_validators_take_as_it_is() {
    let schema = ok(&memsight().arg("schema").output().unwrap());
    let v: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
    // Python's jsonschema (python3-jsonschema), an independent implementation, where installed.
    let program = format!(
        "import json, sys, jsonschema\ns = json.loads(sys.stdin.read())\njsonschema.Draft202012Validator.check_schema(s)\nv = jsonschema.Draft202012Validator(s)\nn = 0\nfor f in {:?}:\n    d = json.load(open(f))\n    errs = list(v.iter_errors(d))\n    assert not errs, (f, errs[0].message)\n    n += 1\nprint(n)",
        recorded()
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    );
    if let Some(n) = python(&program, &schema) {
        assert_eq!(n.trim(), recorded().len().to_string());
    }
}

/// Runs a Python program on `input`; `None` (said) when python3 or a module it imports is missing.
fn python(program: &str, input: &str) -> Option<String> {
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let (success, out, err) = common::pipe(python, &["-c", program], input)?;
    if err.contains("No module named") {
        eprintln!("python module missing, not run: {err}");
        return None;
    }
    assert!(success, "{err}");
    Some(out)
}

/// Every `$ memsight …` line of docs/operations.md, run from the top of the repository with the
/// exit code its `# exit N` comment states; output lines under a command are its exact stdout.
#[test]
fn the_operations_page_commands_run_as_shown() {
    let page = std::fs::read_to_string(repo().join("docs/operations.md")).unwrap();
    let mut in_console = false;
    let mut commands: Vec<(String, i32, Vec<String>)> = Vec::new();
    for line in page.lines() {
        if line.starts_with("```") {
            in_console = line == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ memsight ") {
            let (cmd, code) = match cmd.split_once("  # exit ") {
                Some((c, n)) => (c.to_string(), n.trim().parse().unwrap()),
                None => (cmd.to_string(), 0),
            };
            commands.push((cmd, code, Vec::new()));
        } else if let Some(last) = commands.last_mut() {
            last.2.push(line.to_string());
        }
    }
    assert!(commands.len() >= 8, "{commands:?}");
    for (cmd, code, expected) in commands {
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let out = memsight().args(&args).current_dir(repo()).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "memsight {cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if !expected.is_empty() {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let got: Vec<&str> = stdout.lines().collect();
            assert_eq!(got, expected, "memsight {cmd}");
        }
    }
}
