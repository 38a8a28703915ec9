//! Results of every command, and reading them back: a result file (or a run directory holding
//! `run.json`) from this or an older memsight. Newer files are refused with a message rather
//! than misread.

use std::path::{Path, PathBuf};

use memsight_core::Error;
use memsight_core::report::{Envelope, OLDEST_READABLE, SCHEMA_NAME, SCHEMA_VERSION};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::figure::Figure;
use crate::present::Present;
use crate::present::bandwidth::WithCeilings;
use crate::present::latency::WithCaches;
use crate::view::View;
use memsight_core::topology::CacheGroup;
use memsight_suites::{
    alloc, bandwidth, c2c, dimms, latency, loaded, numa, pmem, rowbuffer, stream, tiers,
};

/// How much `memsight run` measures (written as `quick`, `default`, `thorough`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Quick,
    Default,
    Thorough,
    /// Stopped (Ctrl-C) during the latency ladder: nothing after it ran.
    Interrupted,
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::Quick => "quick",
            Level::Default => "default",
            Level::Thorough => "thorough",
            Level::Interrupted => "interrupted",
        })
    }
}

/// What `memsight run` measured.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RunResults {
    pub level: Level,
    pub latency: latency::LatencyResults,
    pub bandwidth: Option<bandwidth::BandwidthResults>,
    pub loaded_latency: Option<loaded::LoadedResults>,
    pub numa: Option<numa::NumaResults>,
    pub c2c: Option<c2c::C2cResults>,
    pub dimms: Option<dimms::DimmsResults>,
    /// Row-buffer study (thorough level).
    #[serde(default)]
    pub rowbuffer: Option<rowbuffer::RowbufferResults>,
    /// Memory-tier study (machines with more than one memory tier).
    #[serde(default)]
    pub tiers: Option<tiers::TiersResults>,
    /// Suites not run, with the reason.
    pub skipped: Vec<String>,
    /// Headline figures, one line each.
    pub summary: Vec<String>,
    /// Where the results were written.
    pub directory: Option<String>,
}

/// Declares the result type of every command that measures or models: the one registration a
/// suite needs for its results to be read back, stored in the history, compared, exported,
/// re-rendered and described by `memsight schema`.
macro_rules! commands {
    ($($variant:ident $name:literal $ty:ty;)*) => {
        /// The results of any command, as written to a file or stored in the history.
        #[derive(Debug, Serialize)]
        #[serde(untagged)]
        pub enum Results {
            // Boxed: results are hundreds of bytes to kilobytes, a run holds every suite's.
            Run(Box<RunResults>),
            $($variant(Box<$ty>),)*
        }

        impl Results {
            /// The subcommand that wrote these results.
            pub fn command(&self) -> &'static str {
                match self {
                    Results::Run(_) => "run",
                    $(Results::$variant(_) => $name,)*
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
                    _ => return None,
                })
            }

            /// One suite's results behind the presentation trait; `None` for a run.
            fn suite(&self) -> Option<&dyn Present> {
                match self {
                    Results::Run(_) => None,
                    $(Results::$variant(r) => Some(r.as_ref()),)*
                }
            }

            /// The JSON Schema of every command's results, by command.
            pub fn schemas() -> serde_json::Map<String, serde_json::Value> {
                let mut m = serde_json::Map::new();
                m.insert("env".into(), serde_json::Value::Null);
                m.insert("run".into(), serde_json::json!(schemars::schema_for!(RunResults)));
                $(m.insert($name.into(), serde_json::json!(schemars::schema_for!($ty)));)*
                m
            }
        }
    };
}

commands! {
    Latency "latency" latency::LatencyResults;
    Bandwidth "bandwidth" bandwidth::BandwidthResults;
    Stream "stream" stream::StreamResults;
    C2c "c2c" c2c::C2cResults;
    Numa "numa" numa::NumaResults;
    LoadedLatency "loaded-latency" loaded::LoadedResults;
    Rowbuffer "rowbuffer" rowbuffer::RowbufferResults;
    Alloc "alloc" alloc::AllocResults;
    Pmem "pmem" pmem::PmemResults;
    Dimms "dimms" dimms::DimmsResults;
    DimmsPlan "dimms-plan" dimms::PlanResults;
    Tiers "tiers" tiers::TiersResults;
    Fleet "fleet" crate::fleet_report::FleetResults;
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
        let mut out = self.latency.figures();
        out.extend(self.bandwidth.iter().flat_map(Present::figures));
        out.extend(self.loaded_latency.iter().flat_map(Present::figures));
        out.extend(self.numa.iter().flat_map(Present::figures));
        out.extend(self.c2c.iter().flat_map(Present::figures));
        out.extend(self.rowbuffer.iter().flat_map(Present::figures));
        out.extend(self.tiers.iter().flat_map(Present::figures));
        out.extend(self.dimms.iter().flat_map(Present::figures));
        out
    }

    /// The views of the run's suites, in report order: the terminal prints them after the run,
    /// the report draws them. The ladder marks the OS's cache sizes, bandwidth the DIMM ceilings.
    pub fn views(&self, caches: &[CacheGroup]) -> Vec<View> {
        let mut out = vec![WithCaches(&self.latency, caches).view()];
        out.extend(
            self.bandwidth
                .as_ref()
                .map(|b| WithCeilings(b, self.dimms.as_ref()).view()),
        );
        out.extend(self.loaded_latency.as_ref().map(Present::view));
        out.extend(self.numa.as_ref().map(Present::view));
        out.extend(self.c2c.as_ref().map(Present::view));
        out.extend(self.rowbuffer.as_ref().map(Present::view));
        out.extend(self.tiers.as_ref().map(Present::view));
        out.extend(self.dimms.as_ref().map(Present::view));
        out
    }

    /// A run stopped during its first suite: the ladder so far and nothing else.
    pub fn interrupted(latency: latency::LatencyResults) -> Self {
        RunResults {
            level: Level::Interrupted,
            latency,
            bandwidth: None,
            loaded_latency: None,
            numa: None,
            c2c: None,
            dimms: None,
            rowbuffer: None,
            tiers: None,
            skipped: vec!["every suite after the latency ladder: interrupted".into()],
            summary: Vec::new(),
            directory: None,
        }
    }
}
