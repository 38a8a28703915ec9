//! What `memsight pmem` returns: the pool's classes, fills by object size, the class search,
//! the concurrent and volume runs.

use memsight_kernels::pmemobj::{ClassDesc, header_name};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::volume;

/// An allocation class as reported.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Class {
    pub id: u32,
    pub unit_size: u64,
    pub units_per_block: u32,
    pub alignment: u64,
    pub header: String,
}

impl Class {
    pub(super) fn of(d: &ClassDesc) -> Self {
        Class {
            id: d.class_id,
            unit_size: d.unit_size as u64,
            units_per_block: d.units_per_block,
            alignment: d.alignment as u64,
            header: header_name(d.header_type).into(),
        }
    }
}

/// Where a pool's bytes went.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Breakdown {
    pub objects_bytes: u64,
    /// Allocation headers.
    pub header_bytes: u64,
    /// Units rounded up past header + object.
    pub rounding_bytes: u64,
    /// From `pmempool info`: bytes in runs beyond their slots (run header, bitmap, tail).
    pub run_metadata_bytes: Option<u64>,
    /// From `pmempool info`: slots of runs that stayed empty (partly filled runs, bitmap limits).
    pub empty_slot_bytes: Option<u64>,
    /// From `pmempool info`: whole chunks left free (stranded: too small for another run or object).
    pub free_chunk_bytes: Option<u64>,
    /// Pool header, zone and chunk headers, and what is not accounted above.
    pub other_bytes: u64,
}

/// One fill of a fresh pool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Fill {
    pub object_bytes: u64,
    pub objects: u64,
    /// objects × size ÷ pool size.
    pub utilisation: f64,
    pub class: Option<Class>,
    pub custom_class: bool,
    pub usable_bytes: Option<u64>,
    pub breakdown: Breakdown,
    pub seconds: f64,
}

/// The best custom class found for a size.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    pub object_bytes: u64,
    pub default_utilisation: Option<f64>,
    /// Candidates verified by a fill: predicted vs measured utilisation.
    pub verified: Vec<(Class, f64, Option<f64>)>,
    pub best: Option<Fill>,
    /// Candidates whose fill fell short of the arithmetic, or PMDK rejected: what the quirks were.
    pub quirks: Vec<String>,
    /// The C to use.
    pub ctl_set: Option<String>,
}

/// How much of the pool was free (not held by live objects) when allocations failed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FreeAtFailure {
    /// Median share of the pool free at a failure (0–1).
    pub median: f64,
    /// Least share free at any failure (0–1).
    pub least: f64,
}

impl FreeAtFailure {
    /// From failures counted per whole percent free (index 0 ..= 100).
    pub fn of(histogram: &[u64]) -> Option<Self> {
        let total: u64 = histogram.iter().sum();
        if total == 0 {
            return None;
        }
        let least = histogram.iter().position(|&n| n > 0)?;
        let mut seen = 0;
        let median = histogram.iter().position(|&n| {
            seen += n;
            2 * seen >= total
        })?;
        Some(FreeAtFailure {
            median: median as f64 / 100.0,
            least: least as f64 / 100.0,
        })
    }
}

/// One strategy of the concurrency study.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StrategyResult {
    pub strategy: String,
    pub allocations: u64,
    pub failures: u64,
    pub rescued: u64,
    /// Failures another arena could have served (arena imbalance): the retry's rescues, else
    /// a probe allocation in the other arenas, freed at once.
    #[serde(default)]
    pub imbalance: u64,
    /// Failures no arena could serve (the pool was out of room for the size).
    #[serde(default)]
    pub exhausted: u64,
    /// Share of the pool not held by live objects at the failures: median and least, when
    /// there were failures.
    #[serde(default)]
    pub free_at_failure: Option<FreeAtFailure>,
    pub failure_rate: f64,
    pub allocations_per_s: f64,
    pub arenas: Option<u32>,
    pub error: Option<String>,
}

/// The command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PmemResults {
    pub method: String,
    pub pool_dir: String,
    pub pool_bytes: u64,
    pub emulated: bool,
    pub fills: Vec<Fill>,
    pub search: Vec<SearchResult>,
    pub concurrency: Vec<StrategyResult>,
    /// The pool's allocation classes (`--classes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<Class>,
    /// Fills through the class given with `--class`, one per size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub custom: Vec<Fill>,
    /// The volume workload per strategy (`--volume`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume: Vec<volume::VolumeResult>,
    /// Findings with the figures they cite (bare strings before schema 4).
    pub findings: Vec<memsight_core::finding::Finding>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_at_failure_reads_the_histogram() {
        let mut h = vec![0u64; 101];
        assert_eq!(FreeAtFailure::of(&h), None);
        h[40] = 3;
        h[45] = 1;
        h[60] = 2;
        let f = FreeAtFailure::of(&h).unwrap();
        assert_eq!((f.median, f.least), (0.40, 0.40));
        h[60] = 10;
        assert_eq!(FreeAtFailure::of(&h).unwrap().median, 0.60);
    }
}
