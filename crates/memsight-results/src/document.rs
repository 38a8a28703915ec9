//! Results of every command, and reading them back: a result file (or a run directory holding
//! `run.json`) from this or an older memsight. Newer files are refused with a message rather
//! than misread.

use std::path::{Path, PathBuf};

use memsight_core::Error;
use memsight_core::report::{Envelope, OLDEST_READABLE, SCHEMA_NAME, SCHEMA_VERSION};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::figure::Figure;
use crate::present::{Context, Present};
use crate::view::View;
use memsight_core::topology::CacheGroup;

pub use memsight_suites::measure::level::Level;

/// The document types of every registered suite ([`crate::with_suites`]): the results of any
/// command as one enum, and what `memsight run` measured, one field per suite it runs.
macro_rules! documents {
    ($($m:ident $variant:ident $name:literal $tm:ident :: $tn:ident $(, run $field:ident)?;)*) => {
        /// What `memsight run` measured: one field per suite it runs, in run order.
        #[derive(Debug, Serialize, Deserialize, JsonSchema)]
        pub struct RunResults {
            pub level: Level,
            $($(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<memsight_suites::$tm::$tn>,
            )?)*
            /// How the memory available to the machine moved during the run (reference probes).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub drift: Option<memsight_suites::probes::DriftSeries>,
            /// Each suite's predicted time beside what it took, and the time budget.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub timing: Option<memsight_suites::measure::timing::RunTiming>,
            /// Suites not run, with the reason.
            pub skipped: Vec<String>,
            /// Headline figures, one line each.
            pub summary: Vec<String>,
            /// Where the results were written.
            pub directory: Option<String>,
        }

        impl RunResults {
            /// Nothing measured yet, at `level`.
            pub fn new(level: Level) -> Self {
                RunResults {
                    level,
                    $($($field: None,)?)*
                    drift: None,
                    timing: None,
                    skipped: Vec::new(),
                    summary: Vec::new(),
                    directory: None,
                }
            }

            /// Every suite's samples added up (kept, dropped, figures short of clean
            /// samples), by command name, in run order: the report's samples table.
            pub fn tallies(&self) -> Vec<(&'static str, memsight_core::stats::SampleTally)> {
                let mut out = Vec::new();
                $($(out.extend(self.$field.as_ref().map(|r| {
                    ($name, memsight_core::stats::SampleTally::of_result(r))
                }));)?)*
                out
            }

            /// The suites' results with their names in `memsight run`, in run order.
            pub fn named_suites(&self) -> Vec<(&'static str, &dyn Present)> {
                let mut out: Vec<(&'static str, &dyn Present)> = Vec::new();
                $($(out.extend(self.$field.as_ref().map(|r| ($name, r as &dyn Present)));)?)*
                out
            }

            /// The suites' results, in run order, each behind the presentation trait.
            pub fn suites(&self) -> Vec<&dyn Present> {
                let mut out: Vec<&dyn Present> = Vec::new();
                $($(out.extend(self.$field.as_ref().map(|r| r as &dyn Present));)?)*
                out
            }
        }

        /// The results of any command, as written to a file or stored in the history.
        #[derive(Debug, Serialize)]
        #[serde(untagged)]
        pub enum Results {
            // Boxed: results are hundreds of bytes to kilobytes, a run holds every suite's.
            Run(Box<RunResults>),
            $($variant(Box<memsight_suites::$tm::$tn>),)*
            /// `memsight dimms --plan`.
            DimmsPlan(Box<memsight_suites::dimms::PlanResults>),
            /// `memsight fleet`.
            Fleet(Box<crate::fleet_report::FleetResults>),
        }

        impl Results {
            /// The subcommand that wrote these results.
            pub fn command(&self) -> &'static str {
                match self {
                    Results::Run(_) => "run",
                    $(Results::$variant(_) => $name,)*
                    Results::DimmsPlan(_) => "dimms-plan",
                    Results::Fleet(_) => "fleet",
                }
            }

            /// Decodes the results of `command`; `None` for a command without results.
            fn decode(
                command: &str,
                v: serde_json::Value,
            ) -> Option<Result<Self, serde_json::Error>> {
                Some(match command {
                    "run" => serde_json::from_value(v).map(|r| Results::Run(Box::new(r))),
                    $($name => serde_json::from_value(v).map(|r| Results::$variant(Box::new(r))),)*
                    "dimms-plan" => serde_json::from_value(v).map(|r| Results::DimmsPlan(Box::new(r))),
                    "fleet" => serde_json::from_value(v).map(|r| Results::Fleet(Box::new(r))),
                    _ => return None,
                })
            }

            /// One command's results behind the presentation trait; `None` for a run.
            fn suite(&self) -> Option<&dyn Present> {
                match self {
                    Results::Run(_) => None,
                    $(Results::$variant(r) => Some(r.as_ref()),)*
                    Results::DimmsPlan(r) => Some(r.as_ref()),
                    Results::Fleet(r) => Some(r.as_ref()),
                }
            }

            /// The JSON Schema of every command's results, by command.
            pub fn schemas() -> serde_json::Map<String, serde_json::Value> {
                let mut m = serde_json::Map::new();
                m.insert("env".into(), serde_json::Value::Null);
                m.insert("run".into(), serde_json::json!(schemars::schema_for!(RunResults)));
                $(m.insert($name.into(), serde_json::json!(schemars::schema_for!(memsight_suites::$tm::$tn)));)*
                m.insert("dimms-plan".into(), serde_json::json!(schemars::schema_for!(memsight_suites::dimms::PlanResults)));
                m.insert("fleet".into(), serde_json::json!(schemars::schema_for!(crate::fleet_report::FleetResults)));
                m
            }
        }

        /// The command name of every suite the suites crate knows, from the registry: the match
        /// is exhaustive both ways, so a suite in one list and not the other does not compile.
        pub fn registered_name(id: memsight_suites::suite_id::SuiteId) -> &'static str {
            match id {
                $(memsight_suites::suite_id::SuiteId::$variant => $name,)*
            }
        }

        $(impl From<memsight_suites::$tm::$tn> for Results {
            fn from(r: memsight_suites::$tm::$tn) -> Self {
                Results::$variant(Box::new(r))
            }
        })*
    };
}

crate::with_suites!(documents);

impl From<memsight_suites::dimms::PlanResults> for Results {
    fn from(r: memsight_suites::dimms::PlanResults) -> Self {
        Results::DimmsPlan(Box::new(r))
    }
}

impl From<crate::fleet_report::FleetResults> for Results {
    fn from(r: crate::fleet_report::FleetResults) -> Self {
        Results::Fleet(Box::new(r))
    }
}

impl Results {
    /// Every figure, in report order, for history, `compare` and the export.
    pub fn figures(&self) -> Vec<Figure> {
        match self {
            Results::Run(r) => r.figures(),
            _ => self.suite().map(Present::figures).unwrap_or_default(),
        }
    }

    /// What the terminal and the HTML draw, in report order.
    pub fn views(&self, caches: &[CacheGroup]) -> Vec<View> {
        match self {
            Results::Run(r) => r.views(caches),
            _ => self.suite().map(Present::view).into_iter().collect(),
        }
    }

    /// The level of a run (`quick` …); empty for a single command.
    pub fn level(&self) -> String {
        match self {
            Results::Run(r) => r.level.to_string(),
            _ => String::new(),
        }
    }

    /// Where a run wrote its files.
    pub fn directory(&self) -> Option<&str> {
        match self {
            Results::Run(r) => r.directory.as_deref(),
            _ => None,
        }
    }
}

/// Any command's result document.
pub type Document = Envelope<Results>;

/// Every figure of a document: its results', and for a run the machine's memory health (EDAC
/// corrected and uncorrected errors, where a driver counts them), so `fleet` and `compare` see
/// a node whose corrected errors rise.
pub fn figures(doc: &Document) -> Vec<Figure> {
    let mut out = doc.results.figures();
    let mcs = &doc.environment.memory_errors;
    if matches!(doc.results, Results::Run(_)) && !mcs.is_empty() {
        let (ce, ue) = memsight_core::edac::totals(mcs);
        for (key, what, v) in [
            ("ce", "corrected memory errors (EDAC, all controllers)", ce),
            (
                "ue",
                "uncorrected memory errors (EDAC, all controllers)",
                ue,
            ),
        ] {
            out.push(Figure::scalar(
                crate::key::Key::MemoryErrors {
                    test: key.to_string(),
                },
                what.to_string(),
                "count",
                crate::figure::Better::Lower,
                v as f64,
            ));
        }
    }
    out
}

/// Why a run left a suite out, as its `skipped` line says: on purpose (the user's `--only` or
/// `--skip`, or a run level that does not include it) or because it could not run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipKind {
    /// `--only`/`--skip` left it out.
    NotSelected,
    /// The run level does not include it.
    NotAtLevel,
    /// It was asked for and could not run (the machine, an input, a stop).
    CannotRun,
}

/// The words of a suite `--only`/`--skip` left out.
pub const SKIP_NOT_SELECTED: &str = "not selected (--only/--skip)";
/// The words of a suite a quick run leaves out.
pub const SKIP_NOT_QUICK: &str = "not in a quick run";
/// The words of a suite only a thorough run includes.
pub const SKIP_THOROUGH_ONLY: &str = "thorough runs only";

impl SkipKind {
    /// The kind of a `skipped` line (`suite: what: why`).
    pub fn of(line: &str) -> SkipKind {
        if line.ends_with(SKIP_NOT_SELECTED) {
            SkipKind::NotSelected
        } else if line.ends_with(SKIP_NOT_QUICK) || line.contains(SKIP_THOROUGH_ONLY) {
            SkipKind::NotAtLevel
        } else {
            SkipKind::CannotRun
        }
    }

    /// As a label value.
    pub fn word(self) -> &'static str {
        match self {
            SkipKind::NotSelected => "not_selected",
            SkipKind::NotAtLevel => "not_at_level",
            SkipKind::CannotRun => "cannot_run",
        }
    }
}

/// The suites a run measured while its drift probes read the machine slow (none for a
/// single command's result, which has no drift series).
pub fn slow_suites(doc: &Document) -> Vec<String> {
    match &doc.results {
        Results::Run(run) => run
            .drift
            .as_ref()
            .and_then(|d| d.verdict.as_ref())
            .map(|v| {
                // A suite measured while the team could draw less is in doubt too (its
                // several-thread figures are), whatever one core read.
                let team = v.team.iter().flat_map(|t| &t.slow);
                let mut names: Vec<String> =
                    v.slow.iter().chain(team).map(|a| a.suite.clone()).collect();
                names.sort();
                names.dedup();
                names
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The result file a path names: the path itself, or `run.json` inside a directory.
pub fn resolve(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("run.json")
    } else {
        path.to_path_buf()
    }
}

/// Parses a result document of any command from text, checking the schema name and version.
/// `origin` names the text in messages.
pub fn parse(text: &str, origin: &str) -> Result<Document, Error> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::input(format!("{origin} is not a memsight result (not JSON: {e})")))?;
    let name = value.get("schema").and_then(|v| v.as_str());
    if name != Some(SCHEMA_NAME) {
        return Err(Error::input(format!(
            "{origin} is not a memsight result (its \"schema\" is {}, expected \"{SCHEMA_NAME}\")",
            name.map_or("missing".to_string(), |n| format!("\"{n}\""))
        )));
    }
    let version = value
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| Error::input(format!("{origin} has no schema_version")))?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(Error::input(format!(
            "{origin} was written with result schema version {version}, newer than this memsight reads ({OLDEST_READABLE}–{SCHEMA_VERSION}); upgrade memsight to read it"
        )));
    }
    if version < u64::from(OLDEST_READABLE) {
        return Err(Error::input(format!(
            "{origin} uses result schema version {version}, older than this memsight reads ({OLDEST_READABLE}–{SCHEMA_VERSION})"
        )));
    }
    let damaged =
        |e: serde_json::Error| Error::input(format!("{origin} is a damaged memsight result: {e}"));
    let mut envelope: Envelope<serde_json::Value> =
        serde_json::from_value(value).map_err(damaged)?;
    let raw = std::mem::take(&mut envelope.results);
    let results = Results::decode(&envelope.command, raw)
        .ok_or_else(|| {
            Error::input(format!(
                "{origin} holds the result of `memsight {}`, which has no figures to store or compare",
                envelope.command
            ))
        })?
        .map_err(damaged)?;
    Ok(envelope.map(|_| results))
}

/// Reads a result document from a file or run directory.
pub fn read(path: &Path) -> Result<Document, Error> {
    let file = resolve(path);
    let text = memsight_core::input::read_text(
        &file,
        memsight_core::input::MAX_INPUT_BYTES,
        "result file",
    )?;
    parse(&text, &file.display().to_string())
}

impl RunResults {
    /// Every figure of the run, in report order.
    pub fn figures(&self) -> Vec<Figure> {
        self.suites()
            .into_iter()
            .flat_map(|s| s.figures())
            .collect()
    }

    /// The views of the run's suites, in report order: the terminal prints them after the run,
    /// the report draws them. The ladder marks the OS's cache sizes, bandwidth the DIMM ceilings.
    pub fn views(&self, caches: &[CacheGroup]) -> Vec<View> {
        let ctx = Context {
            caches,
            dimms: self.dimms.as_ref(),
        };
        let mut views: Vec<View> = self.suites().into_iter().map(|s| s.view_in(&ctx)).collect();
        let story = self.agreements();
        if !story.is_empty() {
            views.push(crate::present::story::view(&story));
        }
        views.extend(self.drift.as_ref().map(crate::present::drift::view));
        views.extend(
            self.timing
                .as_ref()
                .map(|t| crate::present::timing::view(t, &[])),
        );
        views
    }

    /// Where two suites of the run measured one quantity: do they agree ([`crate::story`]).
    pub fn agreements(&self) -> Vec<crate::story::Agreement> {
        crate::story::agreements(&self.figures(), self.drift.as_ref())
    }

    /// The headline lines of the run's suites, in run order. A suite measured while the
    /// memory available to the machine was low (the drift probes) says so beside its figures,
    /// with the share of the run's best it ran at, so that no one reads them as the machine's.
    pub fn headlines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .named_suites()
            .into_iter()
            .flat_map(|(name, s)| {
                let slow = self.drift.as_ref().and_then(|d| d.slow_share(name));
                s.headline().into_iter().map(move |line| match slow {
                    Some(share) => format!(
                        "{line} — measured while one core's memory bandwidth was {share:.2}× the run's best (drift): outside that phase its figures may read better (bandwidth up to {:.2}× higher, latency lower)",
                        1.0 / share
                    ),
                    None => line,
                })
            })
            .collect();
        out.extend(crate::present::story::headlines(&self.agreements()));
        out.extend(
            self.drift
                .as_ref()
                .and_then(crate::present::drift::headline),
        );
        out
    }
}
