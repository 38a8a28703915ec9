//! Results as a flat list of figures: one keyed value per measured point, with its unit,
//! which direction is better and, where the figure was sampled, its summary and samples. History,
//! `compare` and the CSV export all work on this list, so a figure has the same key and label
//! everywhere.

use memsight_core::stats::Summary;
use memsight_core::units::format_bytes;
use serde::{Deserialize, Serialize};

use crate::key::Key;

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

/// What a figure is to a reader: one of the figures people mean (a plateau's latency, a
/// test's bandwidth on a team, a STREAM kernel, a NUMA cell, a saturation point), or a point of
/// a curve (one working set of a ladder or sweep, one access size, one physical range). Gates
/// (`compare --fail-on-regression`) and the Prometheus export hold the summary figures unless
/// asked for every figure: curve points at cache transitions move with any noise, and their
/// keys change from run to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    #[default]
    Summary,
    Curve,
}

impl Scope {
    /// `summary` or `curve`, as exports write it.
    pub fn word(self) -> &'static str {
        match self {
            Scope::Summary => "summary",
            Scope::Curve => "curve",
        }
    }
}

/// One figure of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figure {
    /// Stable identifier, e.g. `bandwidth/read/2t` or `latency/cpu0/64MiB`: typed, and
    /// written and read as that text.
    pub key: Key,
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
    /// A summary figure or a curve point.
    #[serde(default)]
    pub scope: Scope,
}

impl Figure {
    /// A sampled figure: its median, with the summary `compare` and `check` judge it by.
    pub fn sampled(key: Key, label: String, unit: &str, better: Better, s: &Summary) -> Self {
        Figure {
            summary: Some(s.clone()),
            ..Self::scalar(key, label, unit, better, s.median)
        }
    }

    /// The same figure, as a point of a curve ([`Scope::Curve`]).
    pub fn on_curve(mut self) -> Self {
        self.scope = Scope::Curve;
        self
    }

    /// The same figure, measured under `conditions`.
    pub fn under(mut self, conditions: String) -> Self {
        self.conditions = conditions;
        self
    }

    /// A figure of one value. Its key is typed ([`Key`]): the text the figure carries is the
    /// key's text form, and its suite the key's.
    pub fn scalar(key: Key, label: String, unit: &str, better: Better, value: f64) -> Self {
        let suite = key.suite().to_string();
        Self::new(key, suite, label, unit, better, value)
    }

    /// The one place a figure is spelt out: every constructor starts from the same defaults
    /// (no summary, no conditions, a summary figure), and a field added is set here only.
    fn new(key: Key, suite: String, label: String, unit: &str, better: Better, value: f64) -> Self {
        Figure {
            key,
            suite,
            label,
            unit: unit.to_string(),
            better,
            value,
            summary: None,
            conditions: String::new(),
            scope: Scope::Summary,
        }
    }
}

/// What a figure's value may not say of the machine, as the terminal marks it: exports carry
/// it beside the value so that dashboards and alerts can discount it as `check` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Doubt {
    /// It rests on disturbed samples (slower than the machine).
    pub disturbed: bool,
    /// Its suite measured while the run's drift probes read the machine slow.
    pub slow_phase: bool,
    /// Its confidence interval stayed wider than ±[`CONVERGED`] of the median.
    pub not_converged: bool,
}

/// The half-width of a median's confidence interval, as a share of it, past which a figure
/// did not converge (the bandwidth suite's own limit).
pub const CONVERGED: f64 = 0.05;

impl Figure {
    /// What this figure's value may not say, given the suites its run measured in a slow
    /// phase.
    pub fn doubt(&self, slow_suites: &[String]) -> Doubt {
        let s = self.summary.as_ref();
        Doubt {
            disturbed: s.is_some_and(|s| s.rests_on_disturbed()),
            slow_phase: slow_suites.contains(&self.suite),
            not_converged: s.is_some_and(|s| not_converged(s.median, [s.ci_low, s.ci_high])),
        }
    }
}

/// Whether a median's confidence interval stayed wider than ±[`CONVERGED`] of it.
pub fn not_converged(median: f64, [low, high]: [f64; 2]) -> bool {
    median != 0.0 && (high - low) / 2.0 > CONVERGED * median.abs()
}

impl Figure {
    /// The dimensions its key names ([`crate::key::Key::dims`]).
    pub fn dims(&self) -> crate::dims::Dims {
        self.key.dims()
    }
}

/// Compact size for keys: `64KiB`, `2MiB`.
pub fn size_key(bytes: u64) -> String {
    format_bytes(bytes).replace(' ', "")
}
