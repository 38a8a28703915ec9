//! The bandwidth suite's method, in words: kernels, threads, buffers, sampling and byte counting.

use memsight_core::units::format_bytes;

use super::BandwidthConfig;

/// The method text of a run with `cfg`.
pub fn describe(cfg: &BandwidthConfig) -> String {
    format!(
        "{} kernels ({} B vectors), {} pinned thread(s) on CPUs {}, each with {} buffer of {} ({} pages{}), first-touched by {}, its arrays {} apart{}; samples of ≥{:.0} ms, each timed from the earliest thread's start to the latest thread's end (samples in which a thread lost its CPU, or the threads started apart, are dropped and counted), repeated until the median's 95% CI is within {:.1}% (≥{} samples, ≤{:.1} s). GB/s = 10^9 B/s. Program bytes count what the kernel loads and stores; DRAM bytes are an estimate that adds a read-for-ownership for every regular store (none for NT stores, CLZERO or read-modify-write), which cores that skip that read for full-line stores (Ice Lake-SP and later Xeons, Neoverse V2) make too high; where the memory controllers' CAS counters can be read, each point also carries the DRAM bytes they counted over its sampled rounds (the whole socket's traffic).",
        cfg.isa.name(),
        cfg.isa.vector_bytes(),
        cfg.cpus.len(),
        memsight_core::units::format_list(&cfg.cpus),
        if cfg.shared {
            "its part of one shared"
        } else {
            "its own"
        },
        format_bytes(cfg.bytes_per_thread),
        cfg.page_kind,
        cfg.node
            .map_or(String::new(), |n| format!(", bound to node {n}")),
        if cfg.shared {
            "the first thread"
        } else {
            "its thread"
        },
        format_bytes(cfg.array_gap as u64),
        if cfg.array_gap.is_multiple_of(4096) {
            " (every array at the same page offset: loads may wait on stores to another array 4 KiB away)"
        } else {
            ""
        },
        cfg.sample_ns / 1e6,
        100.0 * cfg.rule.target_rel_ci,
        cfg.rule.min_samples,
        cfg.rule.budget_s,
    )
}
