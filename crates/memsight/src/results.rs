//! Reading result files back: a `run.json` (or the directory holding it) from this or an older
//! memsight. Newer files are refused with a message rather than misread.

use std::path::{Path, PathBuf};

use memsight_core::Error;
use memsight_core::report::{Envelope, OLDEST_READABLE, SCHEMA_NAME, SCHEMA_VERSION};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{bandwidth, c2c, dimms, latency, loaded, numa, rowbuffer};

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
    /// Suites not run, with the reason.
    pub skipped: Vec<String>,
    /// Headline figures, one line each.
    pub summary: Vec<String>,
    /// Where the results were written.
    pub directory: Option<String>,
}

/// A `memsight run` document.
pub type RunDocument = Envelope<RunResults>;

/// The result file a path names: the path itself, or `run.json` inside a directory.
pub fn resolve(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("run.json")
    } else {
        path.to_path_buf()
    }
}

/// Parses a run document from text, checking the schema name, version and command. `origin`
/// names the text in messages.
pub fn parse_run(text: &str, origin: &str) -> Result<RunDocument, Error> {
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
    let command = value.get("command").and_then(|v| v.as_str()).unwrap_or("");
    if command != "run" {
        return Err(Error::input(format!(
            "{origin} holds the result of `memsight {command}`; this needs the result of `memsight run`"
        )));
    }
    serde_json::from_value(value)
        .map_err(|e| Error::input(format!("{origin} is a damaged memsight run result: {e}")))
}

/// Reads a run document from a file or run directory.
pub fn read_run(path: &Path) -> Result<RunDocument, Error> {
    let file = resolve(path);
    let text = memsight_core::input::read_text(
        &file,
        memsight_core::input::MAX_INPUT_BYTES,
        "result file",
    )?;
    parse_run(&text, &file.display().to_string())
}

impl RunResults {
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
            skipped: vec!["every suite after the latency ladder: interrupted".into()],
            summary: Vec::new(),
            directory: None,
        }
    }
}
