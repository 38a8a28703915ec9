//! The JSON envelope every command writes with `--json`: schema name and version, the tool, the
//! command line, timing, whether it completed, the environment report, and the command's results.
//! `memsight schema` prints the JSON Schema of the envelope.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::env::Environment;
use crate::stats::SampleTally;

/// Name of the result schema.
pub const SCHEMA_NAME: &str = "memsight-result";
/// Bumped on any change to the envelope or a command's results. Version 2 added the samples of
/// every summary (`Summary::samples`); version 3 names memory `memory` in bandwidth sweep points
/// (was `DRAM`, still read), as the latency ladder does; version 4 keeps findings as objects
/// (their text, the figures they cite and what those rest on: `finding::Finding`; bare strings
/// still read) and counts c2c's modified line one atomic transfer a turn (`c2c.turn`); version 5
/// names the core from family and model (`cpu.core_basis`, `cpu.core_design`, `cpu.arm_part`,
/// new `core_class` values a version-4 reader does not know), keeps the confidence interval of a
/// cited figure (`Cited::ci`) and a row-buffer layout's point noise.
pub const SCHEMA_VERSION: u32 = 5;
/// The oldest version this memsight still reads (missing fields take their defaults).
pub const OLDEST_READABLE: u32 = 1;

/// Which program wrote the file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The envelope around a command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Envelope<T> {
    pub schema: String,
    pub schema_version: u32,
    pub tool: Tool,
    /// The subcommand (`env`, `latency`, `run` …).
    pub command: String,
    /// The full command line.
    pub args: Vec<String>,
    /// Start time, RFC 3339 UTC.
    pub started: String,
    pub duration_s: f64,
    /// False when the run was interrupted: results then hold what was measured before the stop.
    pub complete: bool,
    pub environment: Environment,
    /// Every figure's samples added up: kept, dropped as disturbed, figures short of clean ones.
    #[serde(default)]
    pub samples: SampleTally,
    pub results: T,
}

impl<T: Serialize> Envelope<T> {
    /// Wraps results.
    pub fn new(
        command: &str,
        started: std::time::SystemTime,
        environment: Environment,
        results: T,
        complete: bool,
    ) -> Self {
        Envelope {
            schema: SCHEMA_NAME.to_string(),
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "memsight".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            command: command.to_string(),
            args: std::env::args().collect(),
            started: humantime::format_rfc3339_seconds(started).to_string(),
            duration_s: started.elapsed().map_or(0.0, |d| d.as_secs_f64()),
            complete,
            environment,
            samples: SampleTally::of_result(&results),
            results,
        }
    }
}

impl<T> Envelope<T> {
    /// The same envelope around other results (reading a file back: raw JSON to typed results).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Envelope<U> {
        Envelope {
            schema: self.schema,
            schema_version: self.schema_version,
            tool: self.tool,
            command: self.command,
            args: self.args,
            started: self.started,
            duration_s: self.duration_s,
            complete: self.complete,
            environment: self.environment,
            samples: self.samples,
            results: f(self.results),
        }
    }
}
