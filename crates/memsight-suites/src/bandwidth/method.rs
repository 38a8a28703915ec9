//! The bandwidth suite's method, in words: kernels, threads, buffers, sampling and byte counting.

use memsight_core::units::format_bytes;

use super::BandwidthConfig;

/// The method text of a run with `cfg`.
pub fn describe(cfg: &BandwidthConfig) -> String {
    format!(
        "{} kernels ({} B vectors), {} pinned thread(s) on CPUs {}, each with {} buffer of {} ({} pages{}), first-touched by {}, its arrays {} apart{}; samples of ≥{:.0} ms, each timed from the earliest thread's start to the latest thread's end (samples in which a thread lost its CPU, or the threads started apart, are dropped and counted), repeated until the median's 95% CI is within {:.1}% (≥{} samples, ≤{:.1} s). GB/s = 10^9 B/s. Program bytes count what the kernel loads and stores; DRAM bytes are an estimate that adds a read-for-ownership for every regular store (none for NT stores, CLZERO or read-modify-write), which cores that skip that read for full-line stores (Ice Lake-SP and later Xeons, Arm's Neoverse cores) make too high; where the memory controllers' CAS counters can be read, each point also carries the DRAM bytes they counted over its sampled rounds (the whole socket's traffic).",
        cfg.isa.name(),
        cfg.isa.vector_bytes(),
        cfg.cpus.len(),
        memsight_core::units::format_list(&cfg.cpus),
        if cfg.shared {
            "its part of one shared"
        } else {
            "its own"
        },
        sizes(cfg),
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
    ) + &rounds(cfg)
        + &streaming(cfg)
}

/// The alternating rounds, where there are several.
fn rounds(cfg: &BandwidthConfig) -> String {
    if cfg.rounds < 2 {
        return String::new();
    }
    format!(
        " The tests ran in {} alternating rounds (each test once per round, in turn), each round with a {}-th of the samples and budget; a point's figure is the median of all its rounds' samples, and \"rounds apart\" is (highest − lowest round median) ÷ that median: how far the machine moved between rounds, beside the CV within them.",
        cfg.rounds, cfg.rounds
    )
}

/// The buffer size: the configured one, and how tests with more arrays grow it.
fn sizes(cfg: &BandwidthConfig) -> String {
    if cfg.team_array_floor == 0 {
        return format_bytes(cfg.bytes_per_thread);
    }
    format!(
        "{} or, where a test's arrays would together fall short of {} per array over the team, more (each point gives its size)",
        format_bytes(cfg.bytes_per_thread),
        format_bytes(cfg.team_array_floor)
    )
}

/// The streaming check behind a default size, where it was made (`crate::measure::reach::stream`).
fn streaming(cfg: &BandwidthConfig) -> String {
    match cfg.reach.and_then(|r| r.stream) {
        Some(s) => format!(
            " Memory for streams: {}; points whose arrays, all threads together, are smaller are labelled with the last-level cache.",
            s.describe()
        ),
        None => String::new(),
    }
}
