//! Reading result files back: a `run.json` (or the directory holding it) from this or an older
//! memsight. Newer files are refused with a message rather than misread.

use std::path::{Path, PathBuf};

use memsight_core::Error;
use memsight_core::report::{Envelope, OLDEST_READABLE, SCHEMA_NAME, SCHEMA_VERSION};

use crate::run::RunResults;

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
