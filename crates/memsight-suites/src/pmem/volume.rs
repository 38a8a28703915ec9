//! MemVerge's concurrency workload (Li and Kang, 2019): allocating threads and freeing threads
//! on one pool, power-of-two objects of 4 KiB … 64 MiB each from a class of its own, batches
//! freed in one transaction each (the transaction's log is itself allocated from the pool, so a
//! free can fail when the pool is full), until a total volume was allocated; the metric is the
//! time to finish, per arena strategy.

use std::path::Path;
use std::time::Duration;

use memsight_core::finding::{Cited, Finding};
use memsight_core::units::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::worker::{self, VolumeReport};
use super::{PmemSettings, child};

/// One strategy's run of the volume workload.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct VolumeResult {
    pub strategy: String,
    /// Whether the volume was allocated (and everything freed) within the time limit, in
    /// every round.
    pub finished: bool,
    /// The median round's time (the other fields are that round's too).
    pub seconds: f64,
    /// Every round's time, in the order run.
    #[serde(default)]
    pub round_seconds: Vec<f64>,
    pub allocated_bytes: u64,
    pub allocations: u64,
    pub alloc_failures: u64,
    pub rescued: u64,
    /// Freeing transactions that aborted.
    pub free_failures: u64,
    /// Sizes whose own class PMDK refused (they used its built-in classes).
    pub classes_refused: Vec<u64>,
    pub arenas: Option<u32>,
    pub error: Option<String>,
}

/// The rounds' spread in words: "median of 3 rounds, 1.10–1.40 s" (nothing for one round).
pub fn spread(r: &VolumeResult) -> String {
    let (lo, hi) = r
        .round_seconds
        .iter()
        .fold((f64::INFINITY, 0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    match r.round_seconds.len() {
        0 | 1 => String::new(),
        n => format!("median of {n} rounds, {lo:.3}–{hi:.3} s"),
    }
}

/// One strategy's rounds as one result: the median round (by time; an unfinished round counts
/// as slowest), with every round's time and the first error.
pub fn merge(mut rounds: Vec<VolumeResult>) -> Option<VolumeResult> {
    let times: Vec<f64> = rounds.iter().map(|r| r.seconds).collect();
    let finished = rounds.iter().all(|r| r.finished);
    let error = rounds.iter().find_map(|r| r.error.clone());
    let key = |r: &VolumeResult| (!r.finished, r.seconds);
    rounds.sort_by(|a, b| {
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mid = rounds.len().checked_sub(1)? / 2;
    let mut m = rounds.swap_remove(mid);
    m.finished = finished;
    m.round_seconds = times;
    m.error = error;
    Some(m)
}

/// Power-of-two sizes from `lo` to `hi`, the largest no more than a sixteenth of the pool.
pub fn sizes(lo: u64, hi: u64, pool: u64) -> Vec<u64> {
    let top = hi.min(pool / 16);
    std::iter::successors(Some(lo.next_power_of_two()), |s| Some(s * 2))
        .take_while(|&s| s <= top)
        .collect()
}

/// Runs the workload under `strategy` on a fresh pool at `path`.
pub fn run(path: &Path, a: &PmemSettings, strategy: &str) -> VolumeResult {
    let sizes = sizes(a.volume_min, a.volume_max, a.pool_bytes);
    let task = worker::Task {
        task: worker::TaskKind::Volume,
        pool_size: a.pool_bytes,
        strategy: strategy.into(),
        alloc_threads: a.alloc_threads,
        free_threads: a.free_threads,
        seconds: a.volume_seconds,
        seed: a.seed,
        sizes: sizes.iter().map(|&s| s as usize).collect(),
        volume_bytes: a.volume_bytes(),
        batch: a.batch,
        class_per_size: true,
        zero: a.volume_zero,
        ..Default::default()
    };
    let timeout = Duration::from_secs_f64(a.volume_seconds + 60.0);
    let failed = |e: String| VolumeResult {
        strategy: strategy.into(),
        finished: false,
        seconds: 0.0,
        round_seconds: Vec::new(),
        allocated_bytes: 0,
        allocations: 0,
        alloc_failures: 0,
        rescued: 0,
        free_failures: 0,
        classes_refused: Vec::new(),
        arenas: None,
        error: Some(e),
    };
    match child(path, &task, timeout) {
        Err(e) => failed(e.to_string()),
        Ok((out, _)) => match serde_json::from_str::<VolumeReport>(out.trim()) {
            Err(e) => failed(format!("unexpected worker output ({e})")),
            Ok(r) => VolumeResult {
                strategy: strategy.into(),
                finished: r.finished,
                seconds: r.seconds,
                round_seconds: Vec::new(),
                allocated_bytes: r.allocated_bytes,
                allocations: r.allocations,
                alloc_failures: r.alloc_failures,
                rescued: r.rescued,
                free_failures: r.free_failures,
                classes_refused: r.classes_refused.iter().map(|&s| s as u64).collect(),
                arenas: r.arenas,
                error: r.stuck,
            },
        },
    }
}

/// The study's table in words: time to finish per strategy against the fastest, failures.
pub fn findings(results: &[VolumeResult]) -> Vec<Finding> {
    let mut out = Vec::new();
    let done: Vec<&VolumeResult> = results.iter().filter(|r| r.finished).collect();
    let fastest = done.iter().map(|r| r.seconds).fold(f64::INFINITY, f64::min);
    for r in results {
        if let Some(e) = &r.error {
            out.push(Finding::unsampled(format!(
                "volume workload, {}: {e}",
                r.strategy
            )));
            continue;
        }
        // Strategies alternate within each round, so a neighbour's burst falls on all of them;
        // the time is the workload's own wall time, with no disturbance count of its own.
        let mut cites = vec![Cited::value(
            format!("{} time", r.strategy),
            r.seconds,
            "s",
            false,
        )];
        if r.finished && done.len() > 1 && r.seconds > fastest {
            cites.push(Cited::value("fastest time", fastest, "s", false));
        }
        let text = format!(
            "volume workload, {}: {} in {:.3} s{} ({}{} allocations, {} refused{}, {} freeing transactions aborted)",
            r.strategy,
            format_bytes(r.allocated_bytes),
            r.seconds,
            if !r.finished {
                ": did not finish in the time limit".to_string()
            } else if done.len() > 1 && r.seconds > fastest {
                format!(", {:.2}× the fastest", r.seconds / fastest)
            } else {
                String::new()
            },
            match spread(r) {
                s if s.is_empty() => s,
                s => format!("{s}; "),
            },
            r.allocations,
            r.alloc_failures,
            if r.rescued > 0 {
                format!(", {} rescued by another arena", r.rescued)
            } else {
                String::new()
            },
            r.free_failures
        );
        out.push(Finding::citing(text, cites));
    }
    if let Some(r) = results.iter().find(|r| !r.classes_refused.is_empty()) {
        out.push(Finding::unsampled(format!(
            "PMDK refused a class of its own for {} objects: they came from its built-in classes",
            r.classes_refused
                .iter()
                .map(|&s| format_bytes(s))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_powers_of_two_within_a_sixteenth_of_the_pool() {
        let k = 1024u64;
        let all = sizes(4 * k, 64 * k * k, 8 << 30);
        assert_eq!(all.len(), 15, "4 KiB … 64 MiB as the study swept");
        assert_eq!((all[0], all[14]), (4 * k, 64 * k * k));
        let small = sizes(4 * k, 64 * k * k, 1 << 30);
        assert_eq!(*small.last().unwrap(), 64 * k * k);
        let tiny = sizes(4 * k, 64 * k * k, 64 << 20);
        assert_eq!(*tiny.last().unwrap(), 4 * k * k);
    }

    #[test]
    fn findings_compare_with_the_fastest_and_say_what_failed() {
        let r = |strategy: &str, seconds: f64, finished: bool| VolumeResult {
            strategy: strategy.into(),
            finished,
            seconds,
            round_seconds: vec![seconds],
            allocated_bytes: 32 << 30,
            allocations: 1000,
            alloc_failures: 3,
            rescued: 0,
            free_failures: 1,
            classes_refused: Vec::new(),
            arenas: Some(4),
            error: None,
        };
        let f = findings(&[
            r("single", 46.1, true),
            r("retry", 33.1, true),
            r("default", 9.0, false),
        ]);
        assert!(f[0].contains("1.39× the fastest"), "{f:?}");
        assert!(!f[1].contains("fastest"), "{f:?}");
        assert!(f[2].contains("did not finish"), "{f:?}");
    }

    #[test]
    fn rounds_merge_to_the_median_and_an_unfinished_round_counts_as_slowest() {
        let r = |seconds: f64, finished: bool, allocations: u64| VolumeResult {
            strategy: "retry".into(),
            finished,
            seconds,
            round_seconds: Vec::new(),
            allocated_bytes: 1 << 30,
            allocations,
            alloc_failures: 0,
            rescued: 0,
            free_failures: 0,
            classes_refused: Vec::new(),
            arenas: None,
            error: None,
        };
        let m = merge(vec![r(3.0, true, 3), r(1.0, true, 1), r(2.0, true, 2)]).unwrap();
        assert_eq!(
            (m.seconds, m.allocations),
            (2.0, 2),
            "the median round, whole"
        );
        assert_eq!(m.round_seconds, vec![3.0, 1.0, 2.0]);
        assert!(spread(&m).contains("1.000–3.000 s"), "{}", spread(&m));
        let m = merge(vec![r(0.5, false, 9), r(1.0, true, 1), r(2.0, true, 2)]).unwrap();
        assert_eq!(m.seconds, 2.0, "a round cut short is not a fast one");
        assert!(!m.finished);
        assert!(merge(Vec::new()).is_none());
    }
}
