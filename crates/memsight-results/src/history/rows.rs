//! One figure of two results compared ([`Row`]) and what its change means ([`Verdict`]): what
//! `compare` builds and the drift's judgement revises.

use serde::Serialize;

/// Significance level of the rank test.
pub const ALPHA: f64 = 0.01;
/// The smallest noise floor a figure can have: below this, a change is not worth reporting
/// whatever the samples say (timer resolution, frequency steps).
pub const MIN_FLOOR: f64 = 0.01;

/// What a row's change means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Better,
    Worse,
    /// Within the noise of the two runs.
    Noise,
    /// No spread is known for this figure (a derived value): the change is shown, not judged.
    Unjudged,
    /// Measured under different conditions (working set, pages …): shown, not judged.
    Different,
    /// One side rests on disturbed samples (under 3 clean ones were left): shown, not judged.
    Disturbed,
    /// The whole machine moved between the runs, the drift probes included, the same way as
    /// this figure: a host's or machine's state change the gate cannot tell from a regression.
    Moved,
    OnlyA,
    OnlyB,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Noise => "within noise",
            Verdict::Unjudged => "not judged (no samples)",
            Verdict::Different => "not judged (measured differently)",
            Verdict::Disturbed => "not judged (rests on disturbed samples)",
            Verdict::Moved => "not judged (the machine moved between the runs)",
            Verdict::OnlyA => "only in A",
            Verdict::OnlyB => "only in B",
        }
    }
}

/// One figure compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: crate::key::Key,
    /// The suite that measured it (for the drift its run recorded).
    #[serde(skip)]
    pub suite: String,
    pub label: String,
    pub unit: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (B − A) ÷ A.
    pub change: Option<f64>,
    /// Two-sided Mann–Whitney p-value, when both runs kept samples.
    pub p_value: Option<f64>,
    /// Whether the two medians' confidence intervals overlap, when both are known.
    pub ci_overlap: Option<bool>,
    /// The smallest change judged real for this figure (a fraction), when both sides are
    /// sampled.
    pub floor: Option<f64>,
    pub verdict: Verdict,
    /// Why the row is not judged, when it is for a reason the verdict does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
