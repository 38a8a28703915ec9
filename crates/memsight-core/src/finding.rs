//! A finding as results keep it: its sentence, the figures it cites, and what those rest on.
//!
//! A conclusion is only as good as the samples under it. A finding that cites a figure resting
//! on disturbed samples (a measuring thread lost its CPU so often that the disturbed samples had
//! to be kept, [`Summary::rests_on_disturbed`]) is slower than the machine: it says so in its
//! text (a leading ⚠ and the reason) and carries [`Evidence::Disturbed`] or [`Evidence::Mixed`]
//! in JSON, and advice built on it is marked unconfirmed ([`Finding::advice`]). Files written
//! before schema 4 held findings as bare strings; they are read as findings of unknown evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// What the figures a finding cites rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// Every cited figure rests on clean samples.
    Clean,
    /// Some cited figures rest on disturbed samples.
    Mixed,
    /// Every cited figure rests on disturbed samples.
    Disturbed,
    /// It cites no sampled figure (a fact read from the system, a model, a count), or it was
    /// written before findings said what they rest on.
    Unsampled,
}

impl Evidence {
    /// Whether anything it rests on was disturbed.
    pub fn doubtful(self) -> bool {
        matches!(self, Evidence::Mixed | Evidence::Disturbed)
    }
}

/// One figure a finding cites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cited {
    /// What it is, in the words of the finding (`CPU 0 ↔ 1 modified line`).
    pub what: String,
    pub value: f64,
    pub unit: String,
    /// Whether it rests on disturbed samples.
    pub disturbed: bool,
    /// The confidence interval of the median cited, where the figure is sampled: what a
    /// sentence comparing two figures must clear before it says they differ
    /// (`scripts/check-findings.py` holds the sentences to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<[f64; 2]>,
}

impl Cited {
    /// A sampled figure, its median cited.
    pub fn of(what: impl Into<String>, unit: &str, s: &Summary) -> Self {
        Cited {
            what: what.into(),
            value: s.median,
            unit: unit.to_string(),
            disturbed: s.rests_on_disturbed(),
            ci: (s.ci_low.is_finite() && s.ci_high.is_finite()).then_some([s.ci_low, s.ci_high]),
        }
    }

    /// A figure whose samples were disturbed or not by what its measurement knows.
    pub fn value(what: impl Into<String>, value: f64, unit: &str, disturbed: bool) -> Self {
        Cited {
            what: what.into(),
            value,
            unit: unit.to_string(),
            disturbed,
            ci: None,
        }
    }
}

/// A finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The sentence, as the terminal and the report print it (with its ⚠ where it rests on
    /// disturbed samples).
    pub text: String,
    /// The figures it rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cites: Vec<Cited>,
    pub evidence: Evidence,
}

/// The mark a doubtful finding's text starts with.
pub const MARK: &str = "⚠ ";

impl Finding {
    /// A finding that rests on no sampled figure.
    pub fn unsampled(text: impl Into<String>) -> Self {
        Finding {
            text: text.into(),
            cites: Vec::new(),
            evidence: Evidence::Unsampled,
        }
    }

    /// A finding resting on `cites`: marked where any of them rests on disturbed samples.
    pub fn citing(text: impl Into<String>, cites: Vec<Cited>) -> Self {
        let disturbed = cites.iter().filter(|c| c.disturbed).count();
        let evidence = match disturbed {
            _ if cites.is_empty() => Evidence::Unsampled,
            0 => Evidence::Clean,
            d if d == cites.len() => Evidence::Disturbed,
            _ => Evidence::Mixed,
        };
        let text = text.into();
        let text = if evidence.doubtful() {
            format!(
                "{MARK}{text} (rests on disturbed samples: {} of the {} figures it cites; a disturbance only adds time, so these read slower than the machine)",
                disturbed,
                cites.len()
            )
        } else {
            text
        };
        Finding {
            text,
            cites,
            evidence,
        }
    }

    /// Advice resting on `cites`: given as it is on clean evidence, and only as "unconfirmed"
    /// (with the reason) where the evidence is disturbed.
    pub fn advice(text: impl Into<String>, cites: Vec<Cited>) -> Self {
        let f = Finding::citing(text, cites);
        if f.evidence.doubtful() {
            Finding {
                text: f.text.replacen(MARK, &format!("{MARK}unconfirmed: "), 1),
                ..f
            }
        } else {
            f
        }
    }

    /// Advice given as unconfirmed for a reason of its own (`why`), not disturbed samples: the
    /// evidence it rests on contradicts itself.
    pub fn unconfirmed(text: impl Into<String>, cites: Vec<Cited>, why: &str) -> Self {
        Finding {
            text: format!("{MARK}unconfirmed: {} ({why})", text.into()),
            cites: cites
                .into_iter()
                .map(|c| Cited {
                    disturbed: true,
                    ..c
                })
                .collect(),
            evidence: Evidence::Disturbed,
        }
    }
}

impl Finding {
    /// The same finding for one of several subjects (`CPU 3: `): the tag goes after the ⚠ mark
    /// so a doubtful finding still starts with it.
    pub fn tagged(&self, tag: &str) -> Finding {
        let text = match self.text.strip_prefix(MARK) {
            Some(rest) => format!("{MARK}{tag}{rest}"),
            None => format!("{tag}{}", self.text),
        };
        Finding {
            text,
            ..self.clone()
        }
    }
}

impl From<String> for Finding {
    fn from(text: String) -> Self {
        Finding::unsampled(text)
    }
}

impl From<&str> for Finding {
    fn from(text: &str) -> Self {
        Finding::unsampled(text)
    }
}

/// A finding reads as its sentence wherever text is wanted (`contains`, `starts_with`, `len`).
impl std::ops::Deref for Finding {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// How `value` stands against `reference`, computed from the two, for a sentence that prints
/// both: "within 5% of" where they lie within `band` (a share, 0.05) of each other, else "16%
/// below" or "20% above" (rounded, never "0% below"), or "2.3× above"/"0.41× of" past a factor
/// of two. One helper so that no sentence can say "within 5%" beside figures 16% apart.
pub fn relation(value: f64, reference: f64, band: f64) -> String {
    let change = value / reference - 1.0;
    if !change.is_finite() {
        return "against".to_string();
    }
    if change.abs() <= band {
        return format!("within {:.0}% of", 100.0 * band);
    }
    let ratio = value / reference;
    if ratio >= 2.0 {
        format!("{ratio:.1}× above")
    } else if ratio <= 0.5 {
        format!("{ratio:.2}× of")
    } else if change < 0.0 {
        format!("{:.0}% below", (-100.0 * change).max(1.0))
    } else {
        format!("{:.0}% above", (100.0 * change).max(1.0))
    }
}

/// A finding as files hold it: the object, or a bare string (files before schema 4).
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Stored {
    /// Files before schema 4: the sentence alone.
    Text(String),
    Full(Full),
}

/// The object form.
#[derive(Deserialize, JsonSchema)]
struct Full {
    /// The sentence, as the terminal and the report print it.
    text: String,
    /// The figures it rests on.
    #[serde(default)]
    cites: Vec<Cited>,
    evidence: Evidence,
}

/// Read from a bare string (files before schema 4) or the object.
impl<'de> Deserialize<'de> for Finding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Stored::deserialize(d)? {
            Stored::Text(text) => Finding::unsampled(text),
            Stored::Full(f) => Finding {
                text: f.text,
                cites: f.cites,
                evidence: f.evidence,
            },
        })
    }
}

/// Its schema takes both forms, so that results written before schema 4 stay valid.
impl JsonSchema for Finding {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Finding".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Stored::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuclock::Disturbance;
    use crate::stats::{Shortfall, summarize};

    fn disturbed(ns: f64) -> Summary {
        Summary {
            shortfall: Some(Shortfall {
                clean: 0,
                wanted: 7,
                disturbed_kept: 9,
                cause: Disturbance::LostCpu,
            }),
            ..summarize(&[ns])
        }
    }

    #[test]
    fn a_finding_on_disturbed_samples_says_so_and_advice_is_unconfirmed() {
        let clean = Cited::of("a", "ns", &summarize(&[30.0]));
        let bad = Cited::of("b", "ns", &disturbed(3899.0));
        let f = Finding::citing("transfer: 30 ns", vec![clean.clone()]);
        assert_eq!(
            (f.evidence, f.text.as_str()),
            (Evidence::Clean, "transfer: 30 ns")
        );
        let f = Finding::citing("transfer: 3899 ns", vec![bad.clone()]);
        assert_eq!(f.evidence, Evidence::Disturbed);
        assert!(
            f.text
                .starts_with("⚠ transfer: 3899 ns (rests on disturbed samples: 1 of the 1")
        );
        let f = Finding::citing("x", vec![clean.clone(), bad.clone()]);
        assert_eq!(f.evidence, Evidence::Mixed);
        let a = Finding::advice("pad by 448 KiB", vec![bad]);
        assert!(
            a.text.starts_with("⚠ unconfirmed: pad by 448 KiB"),
            "{}",
            a.text
        );
        let a = Finding::advice("pad by 448 KiB", vec![clean]);
        assert_eq!(a.text, "pad by 448 KiB");
    }

    #[test]
    fn a_relation_is_computed_from_its_figures() {
        assert_eq!(relation(20.8, 24.8, 0.05), "16% below");
        assert_eq!(relation(24.0, 24.8, 0.05), "within 5% of");
        assert_eq!(relation(29.8, 24.8, 0.05), "20% above");
        assert_eq!(relation(58.4, 16.9, 0.05), "3.5× above");
        assert_eq!(relation(16.9, 58.4, 0.05), "0.29× of");
    }

    #[test]
    fn a_bare_string_reads_as_an_unsampled_finding_and_the_object_round_trips() {
        let f: Finding = serde_json::from_str("\"old text\"").unwrap();
        assert_eq!(f, Finding::unsampled("old text"));
        let g = Finding::citing("t", vec![Cited::value("w", 1.0, "ns", true)]);
        let back: Finding = serde_json::from_value(serde_json::to_value(&g).unwrap()).unwrap();
        assert_eq!(back, g);
    }
}
