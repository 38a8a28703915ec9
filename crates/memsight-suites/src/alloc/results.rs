//! What `memsight alloc` returns: per configuration its runs (RSS over time, live bytes at the
//! phase ends, arenas, speed) and their summaries.

use memsight_core::stats::Summary;
use memsight_kernels::allocwork::Workload;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arenas::ArenaSample;
use super::attach;
use super::child::{Ending, RssSample};
use super::configs::AllocConfig;

/// Live bytes at a phase end, and the RSS around it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PhasePoint {
    pub phase: usize,
    pub seconds: f64,
    pub live_bytes: i64,
    /// RSS at the phase end, read by the workload itself while every thread waits.
    pub rss_bytes: Option<u64>,
}

/// One run of one configuration.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    pub ending: Ending,
    pub seconds: f64,
    /// The allocator the child found serving malloc (checks the preload took effect).
    pub allocator_seen: Option<String>,
    pub rss: Vec<RssSample>,
    pub phases: Vec<PhasePoint>,
    pub peak_rss_bytes: u64,
    /// RSS at the last phase end, with the final live set still held.
    pub final_rss_bytes: Option<u64>,
    pub final_live_bytes: Option<i64>,
    pub peak_live_bytes: Option<i64>,
    /// RSS after the program freed everything.
    pub after_free_rss_bytes: Option<u64>,
    pub ops: Option<u64>,
    pub ops_per_s: Option<f64>,
    /// The allocator's own statistics at the last phase end.
    pub stats: Vec<(String, f64)>,
    /// glibc arena heaps, arenas and threads over the run (read from outside the process).
    #[serde(default)]
    pub arenas: Vec<ArenaSample>,
}

impl Run {
    /// Most arenas seen at once (confirmed by their heaps' headers).
    pub fn peak_arenas(&self) -> Option<u32> {
        self.arenas.iter().filter_map(|a| a.arenas).max()
    }

    /// Arenas of the allocator that served malloc: glibc's most at once (counted from outside
    /// the process), jemalloc's own count (`arenas.narenas`); none for allocators without
    /// arenas (tcmalloc and mimalloc serve threads from per-thread caches and heaps).
    pub fn allocator_arenas(&self) -> Option<u32> {
        match self.allocator_seen.as_deref() {
            None | Some("glibc") => self.peak_arenas(),
            Some("jemalloc") => self
                .stats
                .iter()
                .find(|(k, _)| k == "arenas.narenas")
                .map(|(_, v)| *v as u32),
            Some(_) => None,
        }
    }

    /// Most threads seen at once.
    pub fn peak_threads(&self) -> Option<u32> {
        self.arenas.iter().filter_map(|a| a.threads).max()
    }
}

/// One configuration over its repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConfigResult {
    pub config: AllocConfig,
    pub runs: Vec<Run>,
    /// Peak RSS, bytes, over the runs.
    pub peak_rss: Option<Summary>,
    /// RSS ÷ live at the last phase end (workload), over the runs.
    pub rss_over_live: Option<Summary>,
    /// Peak RSS ÷ peak live bytes.
    pub peak_rss_over_peak_live: Option<Summary>,
    /// Peak RSS ÷ the workload's live set (the largest live heap at a phase's end, the same
    /// for every configuration): what the recommendation compares, since the transient peak
    /// of live bytes moves with how threads' frees interleave and so differs by
    /// configuration. Absent before schema 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_over_live_set: Option<Summary>,
    pub after_free_rss: Option<Summary>,
    pub ops_per_s: Option<Summary>,
    pub wall_s: Option<Summary>,
    /// Arenas of the allocator that served malloc ([`Run::allocator_arenas`]: glibc's most at
    /// once, the main one included, or jemalloc's count), over the runs.
    #[serde(default)]
    pub arenas: Option<Summary>,
    /// Most threads at once, over the runs.
    #[serde(default)]
    pub threads: Option<Summary>,
    pub problems: Vec<String>,
}

impl ConfigResult {
    /// Peak RSS ÷ the workload's live set, or, in files before schema 4, ÷ the peak of live
    /// bytes: what the recommendation and the table compare.
    pub fn live_set_ratio(&self) -> Option<&Summary> {
        self.peak_rss_over_live_set
            .as_ref()
            .or(self.peak_rss_over_peak_live.as_ref())
    }
}

/// The command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AllocResults {
    pub method: String,
    pub workload: Option<Workload>,
    /// The user's command, when one was given.
    pub command: Option<Vec<String>>,
    pub configs: Vec<ConfigResult>,
    pub skipped: Vec<String>,
    /// Advice with the figures it compares (bare strings before schema 4).
    pub recommendation: Vec<memsight_core::finding::Finding>,
    /// Findings with the figures they cite (bare strings before schema 4).
    pub findings: Vec<memsight_core::finding::Finding>,
    /// A running process watched (`--pid`).
    #[serde(default)]
    pub process: Option<attach::ProcessWatch>,
}
