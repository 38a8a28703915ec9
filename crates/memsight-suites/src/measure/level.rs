//! How much `memsight run` measures: each suite says what it measures at each level
//! (`SuiteContract::at_level`), so that a run's depth is decided in the suite, beside its defaults.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
