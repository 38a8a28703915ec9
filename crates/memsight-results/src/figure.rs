//! Results as a flat list of figures: one keyed value per measured point, with its unit,
//! which direction is better and, where the figure was sampled, its summary and samples. History,
//! `compare` and the CSV export all work on this list, so a figure has the same key and label
//! everywhere.

use memsight_core::stats::Summary;
use memsight_core::units::format_bytes;
use serde::{Deserialize, Serialize};

/// Which way is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// `higher` or `lower`, as exports write it.
    pub fn word(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// One figure of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figure {
    /// Stable identifier, e.g. `bandwidth/read/2t` or `latency/cpu0/64MiB`.
    pub key: String,
    /// Suite that measured it (`latency`, `bandwidth` …).
    pub suite: String,
    /// Words for a person.
    pub label: String,
    pub unit: String,
    pub better: Better,
    /// The figure: the median when sampled.
    pub value: f64,
    /// Summary (CI, spread, samples) when the figure was sampled.
    pub summary: Option<Summary>,
    /// What the key does not say but the value depends on (working set, page kind, ISA …):
    /// `compare` judges two figures of one key only when these agree.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub conditions: String,
}

impl Figure {
    pub fn sampled(
        suite: &str,
        key: String,
        label: String,
        unit: &str,
        better: Better,
        s: &Summary,
    ) -> Self {
        Figure {
            summary: Some(s.clone()),
            ..Self::scalar(suite, key, label, unit, better, s.median)
        }
    }

    /// The same figure, measured under `conditions`.
    pub fn under(mut self, conditions: String) -> Self {
        self.conditions = conditions;
        self
    }

    pub fn scalar(
        suite: &str,
        key: String,
        label: String,
        unit: &str,
        better: Better,
        value: f64,
    ) -> Self {
        Figure {
            key,
            suite: suite.to_string(),
            label,
            unit: unit.to_string(),
            better,
            value,
            summary: None,
            conditions: String::new(),
        }
    }
}

/// Compact size for keys: `64KiB`, `2MiB`.
pub fn size_key(bytes: u64) -> String {
    format_bytes(bytes).replace(' ', "")
}
