//! `memsight check`: a verdict for one machine against a reference of what a node of its kind
//! should measure. A reference (JSON or TOML, [`Reference`]) lists figures with an expected value
//! and a tolerance, or a fraction of a theoretical ceiling, and health conditions (memory errors,
//! memory size, NUMA layout, cache sizes, huge pages). [`judge`] checks a result against it, one
//! [`Check`] per condition; [`make`] writes a reference from good runs; [`junit`] renders the
//! verdict for CI systems.

pub mod baseline;
pub mod gate;
pub mod judge;
pub mod junit;
pub mod make;
pub mod nagios;

use std::collections::BTreeMap;
use std::path::Path;

use memsight_core::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::figure::Better;
use crate::key::Key;

/// The `schema` a reference file names.
pub const REFERENCE_SCHEMA: &str = "memsight-reference";
/// The version of the reference format this memsight reads and writes.
pub const REFERENCE_VERSION: u32 = 1;

/// What a node of one kind should measure.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// Always `memsight-reference`.
    pub schema: String,
    /// The format's version (1).
    pub schema_version: u32,
    /// The kind of node, in words (`compute node, 2× EPYC 9654, 24× DDR5-4800`).
    #[serde(default)]
    pub name: String,
    /// What `memsight check` measures when it is given no result.
    #[serde(default)]
    pub measure: Measure,
    /// The theoretical ceiling that `at_least_of_ceiling` figures are judged against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<Ceiling>,
    /// The figures and what they should be.
    #[serde(default, rename = "figure", skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Expectation>,
    /// Conditions of the machine itself.
    #[serde(default)]
    pub health: Health,
}

/// How thoroughly to measure, as `memsight run` levels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MeasureLevel {
    #[default]
    Quick,
    Default,
    Thorough,
}

/// What to measure when no result is given.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// The level of `memsight run` (quick, default, thorough).
    #[serde(default)]
    pub level: MeasureLevel,
    /// The suites to run (`latency`, `bandwidth` …); empty: the suites the figures need.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<String>,
}

/// Where a ceiling comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "source", rename_all = "lowercase", deny_unknown_fields)]
pub enum Ceiling {
    /// The installed DIMMs' theoretical peak (the result must hold the DIMM inventory: a run as
    /// root on a machine with SMBIOS tables, or `run --dmidecode FILE`).
    Dimms,
    /// The CPU's platform table: channels per socket × sockets × its highest DIMM speed.
    Platform,
    /// A configuration the file declares: memory channels in the machine and their speed.
    Declared {
        /// 64-bit memory channels populated, all sockets together.
        channels: u32,
        /// Transfer rate, MT/s.
        mts: u32,
    },
}

/// A tolerance around an expected value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Tolerance {
    /// A fraction of the expected value (0.1 = 10%).
    Relative(f64),
    /// In the figure's unit.
    Absolute(f64),
}

impl Tolerance {
    /// The allowed distance from `expected`.
    pub fn allowance(self, expected: f64) -> f64 {
        match self {
            Tolerance::Relative(r) => r * expected.abs(),
            Tolerance::Absolute(a) => a,
        }
    }

    /// In words: `±10%`, `±2.5`.
    pub fn describe(self) -> String {
        match self {
            Tolerance::Relative(r) => format!("{:.0}%", r * 100.0),
            Tolerance::Absolute(a) => format!("{a}"),
        }
    }
}

/// One figure (or several, with `*`) and what it should be.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// A figure key as `memsight export` lists it (`bandwidth/read/2t`); `*` stands for any text
    /// within one `/`-separated part (`latency/cpu*/level/memory`). Every figure it matches is
    /// checked.
    pub select: String,
    /// The expected value, in the figure's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<f64>,
    /// How far from `expect` still passes (default 10%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Tolerance>,
    /// Instead of (or beside) `expect`: at least this fraction of the reference's ceiling
    /// (bandwidth figures; 0.75 = 75%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least_of_ceiling: Option<f64>,
    /// Which way is better (default: the figure's own). Only a change the worse way fails …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
    /// … unless this is set: then a figure better than `expect` beyond the tolerance fails too
    /// (the machine is not what the reference describes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub both_ways: bool,
    /// The figure's unit, checked against the result's (`GB/s`, `ns`): a reference written for
    /// other units fails rather than compares numbers of different kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// A figure the result does not hold is skipped instead of failing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Why this expectation is what it is (written by `--make-reference`, for the reader).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// Conditions of the machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// Most corrected memory errors (EDAC, all controllers, since boot) that still pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected_errors_max: Option<u64>,
    /// Most uncorrected memory errors that still pass (usually 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncorrected_errors_max: Option<u64>,
    /// Least memory the OS must see (`250GiB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_at_least: Option<String>,
    /// NUMA nodes the machine must have (CPU-less nodes included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<usize>,
    /// Sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<usize>,
    /// Logical CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<usize>,
    /// Cache sizes per instance, by level and kind as the environment names them (`L1d`, `L2`,
    /// `L3` → `32MiB`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub caches: BTreeMap<String, String>,
    /// Free huge pages the machine must have, by page size (`2MiB` → 512).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub huge_pages_free: BTreeMap<String, u64>,
}

impl Reference {
    /// An empty reference of this version.
    pub fn new(name: String) -> Self {
        Reference {
            schema: REFERENCE_SCHEMA.into(),
            schema_version: REFERENCE_VERSION,
            name,
            measure: Measure::default(),
            ceiling: None,
            figures: Vec::new(),
            health: Health::default(),
        }
    }

    /// Reads a reference file: TOML when it ends in `.toml`, JSON otherwise.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let text = memsight_core::input::read_text(path, 16 << 20, "reference file")?;
        let shown = path.display();
        let toml = path.extension().is_some_and(|e| e == "toml");
        let r: Reference = if toml {
            toml::from_str(&text).map_err(|e| {
                Error::input(format!(
                    "reference file '{shown}' is not a memsight reference: {}",
                    e.message()
                ))
            })?
        } else {
            serde_json::from_str(&text).map_err(|e| {
                Error::input(format!(
                    "reference file '{shown}' is not a memsight reference: {e}"
                ))
            })?
        };
        r.validate()
            .map_err(|why| Error::input(format!("reference file '{shown}': {why}")))?;
        Ok(r)
    }

    /// The file's text, TOML when `path` ends in `.toml`, JSON otherwise.
    pub fn to_text(&self, path: &Path) -> Result<String, Error> {
        if path.extension().is_some_and(|e| e == "toml") {
            toml::to_string_pretty(self)
                .map_err(|e| Error::system(format!("cannot encode the reference: {e}")))
        } else {
            serde_json::to_string_pretty(self)
                .map(|t| t + "\n")
                .map_err(|e| Error::system(format!("cannot encode the reference: {e}")))
        }
    }

    /// What a reader cannot do anything with: a wrong schema or version, an expectation with
    /// nothing to judge by, fractions and tolerances out of range, sizes that do not read.
    fn validate(&self) -> Result<(), String> {
        if self.schema != REFERENCE_SCHEMA {
            return Err(format!(
                "its schema is '{}', not '{REFERENCE_SCHEMA}'",
                self.schema
            ));
        }
        if self.schema_version != REFERENCE_VERSION {
            return Err(format!(
                "it is version {} of the format; this memsight reads version {REFERENCE_VERSION}",
                self.schema_version
            ));
        }
        for e in &self.figures {
            if e.select.trim().is_empty() {
                return Err("a figure has an empty select".into());
            }
            if e.expect.is_none() && e.at_least_of_ceiling.is_none() {
                return Err(format!(
                    "figure '{}' has neither expect nor at_least_of_ceiling",
                    e.select
                ));
            }
            if let Some(f) = e.at_least_of_ceiling {
                if !(f > 0.0 && f <= 1.0) {
                    return Err(format!(
                        "figure '{}': at_least_of_ceiling must be a fraction in (0, 1]",
                        e.select
                    ));
                }
                if self.ceiling.is_none() {
                    return Err(format!(
                        "figure '{}' asks for a fraction of the ceiling, but the file declares no [ceiling]",
                        e.select
                    ));
                }
            }
            match e.tolerance {
                Some(Tolerance::Relative(r)) if !(r >= 0.0 && r.is_finite()) => {
                    return Err(format!(
                        "figure '{}': relative tolerance must be ≥ 0",
                        e.select
                    ));
                }
                Some(Tolerance::Absolute(a)) if !(a >= 0.0 && a.is_finite()) => {
                    return Err(format!(
                        "figure '{}': absolute tolerance must be ≥ 0",
                        e.select
                    ));
                }
                _ => {}
            }
        }
        let sizes = self
            .health
            .memory_at_least
            .iter()
            .chain(self.health.caches.values());
        for s in sizes.chain(self.health.huge_pages_free.keys()) {
            memsight_core::units::parse_size(s).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The suites the figures need, by their keys' first part.
    pub fn suites_needed(&self) -> Vec<String> {
        if !self.measure.suites.is_empty() {
            return self.measure.suites.clone();
        }
        let mut out: Vec<String> = Vec::new();
        for e in &self.figures {
            let first = e.select.split('/').next().unwrap_or_default();
            let suite = match Key::suite_of_prefix(first) {
                // Not suites a run is asked for: the error counters come with every run's
                // environment, and DIMM plans are `memsight dimms`' what-ifs.
                Some("dimms-plan" | "health") => continue,
                Some(suite) => suite,
                // A part no family writes (a pattern, a newer memsight's key) is passed on as
                // written: callers keep the suites they know.
                None => first,
            };
            if !out.iter().any(|s| s == suite) {
                out.push(suite.to_string());
            }
        }
        if matches!(self.ceiling, Some(Ceiling::Dimms)) && !out.iter().any(|s| s == "dimms") {
            out.push("dimms".into());
        }
        out
    }
}

pub use crate::key::selects;

/// A number in plain decimal notation (no exponent, as Nagios perfdata ask), to 6 significant
/// digits: more than any figure memsight measures holds.
pub(crate) fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let decimals = (5 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Fail,
    Skip,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        }
    }
}

/// One check: a figure against its expectation, or a health condition.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    pub status: Status,
    /// The figure's key, or the health condition (`health/uncorrected-errors`).
    pub name: String,
    /// The figure's words.
    pub label: String,
    /// What was measured, where there is a number.
    pub value: Option<f64>,
    pub unit: String,
    /// What was expected, in words (`≥ 27.0`, `29.0 ± 10%`, `≥ 75% of 307.2 GB/s`).
    pub expected: String,
    /// How far inside (positive) or outside (negative) the limit the value is, percent of the
    /// limit.
    pub margin_percent: Option<f64>,
    /// The range the value had to be in, as numbers (what `expected` says in words), where the
    /// check had limits: monitoring systems draw and alert on it (Nagios perfdata's `crit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// Why it failed or was skipped.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The range a checked value had to be in: at least `low`, at most `high`, or both.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Range {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
}

/// The `schema` a check report names.
pub const CHECK_SCHEMA: &str = "memsight-check";
/// The version of the check report's format.
pub const CHECK_VERSION: u32 = 1;

/// The verdict of a whole check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Every check passed on a complete result.
    Pass,
    /// A check failed.
    Fail,
    /// Nothing failed, but the result is not whole (interrupted, or a suite the reference
    /// needs did not run): it cannot say the node is good.
    Incomplete,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Incomplete => "INCOMPLETE",
        }
    }
}

/// The verdict of one result against one reference.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckReport {
    /// Always `memsight-check`.
    pub schema: String,
    /// The format's version (1).
    pub schema_version: u32,
    /// PASS, FAIL or INCOMPLETE.
    pub verdict: Verdict,
    /// The reference's name.
    pub reference: String,
    /// The host the result is of.
    pub host: String,
    /// When the result was measured.
    pub started: String,
    /// Whether the result was whole; where not, `incomplete` says why.
    pub complete: bool,
    /// Why the result is not whole: interrupted, or suites the reference needs that were
    /// skipped (with their reason).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
    pub checks: Vec<Check>,
}

impl CheckReport {
    /// A report of `checks`, its verdict from them and from why the result is not whole
    /// (`incomplete`, empty for a whole result).
    pub fn new(
        reference: String,
        host: String,
        started: String,
        incomplete: Vec<String>,
        checks: Vec<Check>,
    ) -> Self {
        let verdict = if checks.iter().any(|c| c.status == Status::Fail) {
            Verdict::Fail
        } else if !incomplete.is_empty() {
            Verdict::Incomplete
        } else {
            Verdict::Pass
        };
        CheckReport {
            schema: CHECK_SCHEMA.into(),
            schema_version: CHECK_VERSION,
            verdict,
            reference,
            host,
            started,
            complete: incomplete.is_empty(),
            incomplete,
            checks,
        }
    }

    /// How many checks ended each way: (pass, fail, skip).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s: Status| self.checks.iter().filter(|c| c.status == s).count();
        (n(Status::Pass), n(Status::Fail), n(Status::Skip))
    }

    /// True when the verdict is PASS.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// The summary line: `FAIL: 2 of 14 check(s) failed …`, `INCOMPLETE: the result was
    /// interrupted; 10 check(s) passed …` or `PASS: 14 check(s) passed (1 skipped) …`.
    pub fn summary(&self) -> String {
        let (p, f, s) = self.counts();
        let skipped = if s > 0 {
            format!(", {s} skipped")
        } else {
            String::new()
        };
        let why = if self.incomplete.is_empty() {
            String::new()
        } else {
            format!("; incomplete: {}", self.incomplete.join("; "))
        };
        match self.verdict {
            Verdict::Pass => format!(
                "PASS: {p} check(s) passed{skipped} against {}",
                self.reference
            ),
            Verdict::Fail => format!(
                "FAIL: {f} of {} check(s) failed{skipped} against {}{why}",
                p + f,
                self.reference
            ),
            Verdict::Incomplete => format!(
                "INCOMPLETE: {}; {p} check(s) passed{skipped} against {}, which does not make the node good",
                self.incomplete.join("; "),
                self.reference
            ),
        }
    }

    /// One line for NHC and Slurm's health check, in ASCII (a drain reason travels through
    /// scontrol and logs that may not be UTF-8): the verdict and the first failure with its
    /// figure, value and limit, or why the result is not whole.
    pub fn line(&self) -> String {
        let Some(c) = self.checks.iter().find(|c| c.status == Status::Fail) else {
            return ascii(&format!("memsight: {}", self.summary()));
        };
        let (_, f, _) = self.counts();
        let more = if f > 1 {
            format!(" (and {} more)", f - 1)
        } else {
            String::new()
        };
        let value = c
            .value
            .map_or("missing".to_string(), |v| format!("{v:.4} {}", c.unit));
        ascii(&format!(
            "memsight: FAIL {} = {value}, expected {}{}{more}",
            c.name,
            c.expected,
            if c.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", c.reason)
            }
        ))
    }
}

/// `text` in ASCII: the signs memsight writes spelled out (`≥` → `>=`, `±` → `+/-`, `×` →
/// `x`), anything else outside ASCII as `?`.
pub fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '±' => out.push_str("+/-"),
            '×' => out.push('x'),
            '÷' => out.push('/'),
            '→' => out.push_str("->"),
            '–' | '—' | '−' => out.push('-'),
            '…' => out.push_str("..."),
            '⚠' => out.push('!'),
            'µ' => out.push('u'),
            c if c.is_ascii() => out.push(c),
            _ => out.push('?'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_within_one_part() {
        assert!(selects(
            "bandwidth/read/2t",
            &Key::read("bandwidth/read/2t")
        ));
        assert!(selects(
            "latency/cpu*/level/memory",
            &Key::read("latency/cpu12/level/memory")
        ));
        assert!(!selects(
            "latency/cpu*/level/memory",
            &Key::read("latency/cpu1/64MiB")
        ));
        assert!(selects(
            "bandwidth/*/*t",
            &Key::read("bandwidth/copy-nt/16t")
        ));
        assert!(!selects("bandwidth/*", &Key::read("bandwidth/read/2t")));
        assert!(selects("*", &Key::read("x")));
    }

    #[test]
    fn a_reference_reads_from_toml_and_json_and_refuses_nonsense() {
        let dir = tempfile::tempdir().unwrap();
        let toml_path = dir.path().join("node.toml");
        std::fs::write(
            &toml_path,
            r#"
schema = "memsight-reference"
schema_version = 1
name = "test node"
ceiling = { source = "declared", channels = 8, mts = 3200 }

[[figure]]
select = "bandwidth/read/*"
at_least_of_ceiling = 0.5

[[figure]]
select = "latency/cpu*/level/memory"
expect = 100.0
tolerance = { relative = 0.15 }

[health]
uncorrected_errors_max = 0
memory_at_least = "16GiB"
"#,
        )
        .unwrap();
        let r = Reference::read(&toml_path).unwrap();
        assert_eq!(r.figures.len(), 2);
        assert_eq!(
            r.ceiling,
            Some(Ceiling::Declared {
                channels: 8,
                mts: 3200
            })
        );
        assert_eq!(r.suites_needed(), vec!["bandwidth", "latency"]);
        let json_path = dir.path().join("node.json");
        std::fs::write(&json_path, r.to_text(&json_path).unwrap()).unwrap();
        let back = Reference::read(&json_path).unwrap();
        assert_eq!(back.figures[1].tolerance, Some(Tolerance::Relative(0.15)));
        for (bad, why) in [
            (r#"{"schema":"x","schema_version":1}"#, "schema"),
            (
                r#"{"schema":"memsight-reference","schema_version":2}"#,
                "version",
            ),
            (
                r#"{"schema":"memsight-reference","schema_version":1,"figure":[{"select":"a"}]}"#,
                "neither",
            ),
            (
                r#"{"schema":"memsight-reference","schema_version":1,"figure":[{"select":"a","at_least_of_ceiling":0.5}]}"#,
                "no [ceiling]",
            ),
            (
                r#"{"schema":"memsight-reference","schema_version":1,"typo":1}"#,
                "unknown field",
            ),
        ] {
            std::fs::write(&json_path, bad).unwrap();
            let e = Reference::read(&json_path).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
