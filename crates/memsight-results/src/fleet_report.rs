//! The fleet report's types: what `memsight fleet` and rank 0 of `memsight run --fleet` write, as
//! the result document holds them. The analysis that fills them is in [`crate::fleet`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A member of the fleet report.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FleetMember {
    /// Host name, with the rank when one host gave several results.
    pub name: String,
    pub host: String,
    pub rank: Option<usize>,
    /// The result file, relative to the fleet directory.
    pub path: String,
    /// Its HTML report beside it, relative to the fleet directory, if there is one.
    pub report: Option<String>,
    pub command: String,
    pub group: usize,
    pub started: String,
    /// Headline figures: key → value.
    pub headline: BTreeMap<String, f64>,
    /// Environment warnings (codes) this member had.
    pub warnings: Vec<String>,
}

impl FleetMember {
    /// The member's headline figure of `key`, if it measured one.
    pub fn headline_of(&self, key: &crate::key::Key) -> Option<f64> {
        self.headline.get(&key.to_string()).copied()
    }
}

/// A headline column.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Headline {
    pub key: crate::key::Key,
    /// Short column name.
    pub name: String,
    pub unit: String,
    pub lower_is_better: bool,
}

impl Headline {
    /// Which way the column's figure is better.
    pub fn better(&self) -> crate::figure::Better {
        if self.lower_is_better {
            crate::figure::Better::Lower
        } else {
            crate::figure::Better::Higher
        }
    }

    /// A member's value of this column as a figure, of its key's suite and its own sense of
    /// better, for the report and the export alike.
    pub fn figure(&self, key: crate::key::Key, label: String, value: f64) -> crate::figure::Figure {
        crate::figure::Figure::scalar(key, label, &self.unit, self.better(), value)
    }
}

/// The `fleet` command's results (and rank 0's report in fleet mode).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FleetResults {
    pub directory: String,
    pub method: String,
    /// Ranks the launcher started, when rank 0 wrote the report.
    pub expected: Option<usize>,
    pub threshold: f64,
    pub min_change: f64,
    pub headline: Vec<Headline>,
    pub members: Vec<FleetMember>,
    pub groups: Vec<Group>,
    pub outliers: Vec<Outlier>,
    /// Each scored figure's spread over each group (≥ 3 members), group by group.
    #[serde(default)]
    pub distributions: Vec<Distribution>,
    /// Members none of whose figures were scored (a group under 3, every figure disturbed):
    /// not flagged, and not known to be alike either.
    #[serde(default)]
    pub unscored: Vec<String>,
    pub faults: Vec<Fault>,
    pub findings: Vec<String>,
    /// Draw a row for every node (`--all-nodes`), not only the flagged ones, however large the
    /// fleet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_nodes: bool,
}

/// One figure over the members of one group that measured it (disturbed figures left out, as
/// the scoring leaves them out).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Distribution {
    pub group: usize,
    pub key: crate::key::Key,
    pub label: String,
    pub unit: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub conditions: String,
    pub n: usize,
    pub median: f64,
    /// First and third quartiles (interpolated: R's type 7, DuckDB's `quantile_cont`).
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
    /// Members in each of equal-width bins from `min` to `max`.
    pub bins: Vec<u32>,
    /// The members flagged on this figure.
    pub flagged: Vec<String>,
    /// Members that had the figure but were left out: disturbed, or not a finite number.
    #[serde(default)]
    pub left_out: usize,
}

/// Members expected to perform alike.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Group {
    pub id: usize,
    /// What they share: (field, value).
    pub fingerprint: Vec<(String, String)>,
    /// Member names.
    pub members: Vec<String>,
}

impl Group {
    /// What its members share, in words: `CPU: AMD EPYC 9654; kernel: 6.8.0; …`.
    pub fn describe(&self) -> String {
        self.fingerprint
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Which way a flagged member deviates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Worse,
    Better,
}

impl Direction {
    /// `worse` or `better`, as findings, tables and exports write it.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Worse => "worse",
            Direction::Better => "better",
        }
    }
}

/// A member's figure beyond the threshold.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Outlier {
    pub member: String,
    pub group: usize,
    pub key: crate::key::Key,
    pub label: String,
    pub unit: String,
    pub value: f64,
    pub median: f64,
    /// value ÷ median − 1.
    pub deviation: f64,
    pub score: f64,
    pub direction: Direction,
    /// Members of the group that measured the figure.
    pub n: usize,
    /// Its suite measured while the node's drift probes read the machine slow: the node may be
    /// fine, and its figure should be measured again before anyone acts on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slow_phase: bool,
}

/// What a rank says about itself while and after it runs (`rank-NNNNN.status.json`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Status {
    pub rank: usize,
    pub size: usize,
    pub host: String,
    pub pid: u32,
    pub launcher: crate::launcher::Launcher,
    /// Processes the launcher started on this rank's node.
    pub local_size: Option<usize>,
    /// RFC 3339.
    pub started: String,
    pub state: State,
    /// Why it failed or stopped.
    pub reason: Option<String>,
    /// The result file, relative to the status file's directory.
    pub result: Option<String>,
}

/// A rank's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Running,
    Done,
    Interrupted,
    Failed,
}

/// Why a member has no usable result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Fault {
    /// The file, or `rank N (host)`.
    pub who: String,
    pub kind: FaultKind,
    pub reason: String,
}

/// The kinds of fault the report names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Not JSON, not a memsight result, damaged, or too large.
    Unreadable,
    /// A result of an interrupted run (`complete: false`): named, left out of the statistics.
    Partial,
    /// The rank reported a failure (non-zero exit) with its reason.
    Failed,
    /// The rank started but wrote nothing before the timeout (hung, killed, or crashed).
    NoResult,
    /// The launcher said there would be more ranks than wrote a status file.
    NeverStarted,
    /// Several processes claimed the same rank.
    DuplicateRank,
    /// The directory held more files than memsight reads.
    TooMany,
}

impl FaultKind {
    /// The fault in words, as the tables and findings print it.
    pub fn describe(self) -> &'static str {
        match self {
            FaultKind::Unreadable => "unreadable",
            FaultKind::Partial => "partial (interrupted)",
            FaultKind::Failed => "failed",
            FaultKind::NoResult => "no result",
            FaultKind::NeverStarted => "never started",
            FaultKind::DuplicateRank => "rank claimed twice",
            FaultKind::TooMany => "too many files",
        }
    }
}

/// Median and scaled MAD (memsight-core's robust statistics) with the score's floor.
pub fn centre(values: &[f64]) -> (f64, f64) {
    let m = memsight_core::stats::median(values);
    let mad = memsight_core::stats::mad_sigma(values);
    (m, mad.max(0.005 * m.abs()).max(f64::MIN_POSITIVE))
}

/// Names, the first few of them when there are many: `a, b, c and 97 more`.
pub fn some_names<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 8;
    let mut s = names
        .iter()
        .take(SHOWN)
        .map(|n| n.as_ref())
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

/// Flagged figures by (member, key), with the way each deviates.
pub type Flags<'a> = std::collections::HashMap<(&'a str, &'a crate::key::Key), Direction>;

impl FleetResults {
    /// The outliers as a map, so that a report's cells and a table's rows look each figure up
    /// once instead of scanning the outliers for every one.
    pub fn flags(&self) -> Flags<'_> {
        self.outliers
            .iter()
            .map(|o| ((o.member.as_str(), &o.key), o.direction))
            .collect()
    }

    /// Why a health check of this fleet fails (`memsight fleet` exits 1), if it does: results
    /// missing (none at all, or fewer than `expect`), or, when `outliers_fail`, nodes worse
    /// than their group and faults. A check whose results never arrived must not pass.
    pub fn failure(&self, expect: Option<u64>, outliers_fail: bool) -> Option<String> {
        let found = self.members.len();
        if found == 0 {
            return Some(format!(
                "no usable memsight result in {} ({} fault(s)): nothing arrived to check",
                self.directory,
                self.faults.len()
            ));
        }
        if let Some(n) = expect.filter(|&n| (found as u64) < n) {
            return Some(format!(
                "{found} usable result(s) of the {n} expected in {}: the rest never arrived or could not be read",
                self.directory
            ));
        }
        let worse: Vec<&str> = self
            .outliers
            .iter()
            .filter(|o| o.direction == Direction::Worse)
            .map(|o| o.member.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        (outliers_fail && (!worse.is_empty() || !self.faults.is_empty())).then(|| {
            format!(
                "{} node(s) stand out worse than their group ({}) and {} fault(s) were found",
                worse.len(),
                some_names(&worse),
                self.faults.len()
            )
        })
    }
}
