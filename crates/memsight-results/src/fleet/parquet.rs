//! A fleet as one long Parquet table ([`crate::table`]): a row per figure of every node that
//! gave a usable result, with the node's group and whether the analysis flagged the figure. A
//! fleet beyond one machine's analysis is then queried with DuckDB, pandas, polars or Spark.

use std::collections::HashMap;
use std::io::Write;

use memsight_core::Error;

use super::Analysis;
use crate::figure::not_converged;
use crate::fleet_report::Direction;
use crate::table::{LongTable, Row, micros};

impl Analysis {
    /// Writes every node's figures (those the analysis read: summary figures, and curve points
    /// with `--all-figures`) to `out`.
    pub fn write_parquet<W: Write + Send>(&self, out: W) -> Result<W, Error> {
        let r = &self.results;
        // What each group's nodes share, in the report's words: ids are positions in one
        // analysis, the fingerprint joins groups across days.
        let shared: Vec<String> = r.groups.iter().map(|g| g.describe()).collect();
        let group: HashMap<&str, (i32, &str)> = r
            .groups
            .iter()
            .zip(&shared)
            .flat_map(|(g, words)| {
                let id = i32::try_from(g.id).unwrap_or(i32::MAX);
                g.members
                    .iter()
                    .map(move |n| (n.as_str(), (id, words.as_str())))
            })
            .collect();
        // By key text, then member: a node's figures carry their key as text (see
        // `fleet::node::Meta`), and the outliers are few.
        let mut flagged: HashMap<String, HashMap<&str, Direction>> = HashMap::new();
        for o in &r.outliers {
            flagged
                .entry(o.key.to_string())
                .or_default()
                .insert(o.member.as_str(), o.direction);
        }
        let mut t = LongTable::new(out)?;
        for (e, name) in self.collected.entries.iter().zip(&self.names) {
            let started = micros(&e.node.started);
            for f in &e.node.figures {
                let key: &str = &f.meta.key;
                t.push(&Row {
                    host: name,
                    group: group.get(name.as_str()).copied(),
                    started,
                    key,
                    label: &f.meta.label,
                    unit: &f.meta.unit,
                    better: f.better,
                    value: f.value,
                    ci: f.ci,
                    scope: f.scope,
                    conditions: &f.meta.conditions,
                    disturbed: f.disturbed,
                    slow_phase: f.slow_phase,
                    not_converged: f.ci.is_some_and(|c| not_converged(f.value, c)),
                    flagged: flagged.get(key).and_then(|m| m.get(name.as_str())).copied(),
                })?;
            }
        }
        t.finish()
    }
}
