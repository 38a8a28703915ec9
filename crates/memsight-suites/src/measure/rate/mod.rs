//! A team's bandwidth over a test's arrays: the engine every bandwidth figure is measured with
//! (the bandwidth suite's points and sweep, STREAM's team, NUMA cells, tier bandwidths, the DIMM
//! ceilings' comparison). One pinned thread per CPU, each with its own buffer first-touched on
//! its CPU (or its part of one shared buffer), split into the test's arrays
//! ([`arrays`]); samples start on a spinning barrier and run enough passes to take the sample
//! time; a sample in which a thread lost its CPU is dropped and counted.

mod arrays;
pub mod counted;
mod single;
pub mod spec;
mod team;

use crate::measure::memlevel::MemLevel;
use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_core::stats::{StopReason, StopRule, Summary};
use memsight_core::team::sample_team_bracketed;
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{self as k, Isa, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use arrays::DEFAULT_ARRAY_GAP;
pub(crate) use arrays::{Arrays, Region, default_array_gap, layout};
pub use spec::{Fill, Named, Op, TestSpec};
pub use team::{Threads, supported_isa, team};

/// The byte every non-zero write writes (as 0xefefefefefefefef words).
pub const NONZERO: u64 = 0xefef_efef_efef_efef;

/// A validated plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BandwidthConfig {
    pub tests: Vec<TestSpec>,
    pub isa: Isa,
    pub cpus: Vec<usize>,
    /// Thread counts of the scaling sweep (just the full count without --scaling).
    pub thread_counts: Vec<usize>,
    pub bytes_per_thread: u64,
    /// One buffer for all threads, first-touched by the first (instead of one per thread).
    pub shared: bool,
    /// Interleave every buffer over all allowed nodes (NUMA-unaware placement).
    #[serde(default)]
    pub interleave: bool,
    /// Working-set sizes of the sweep, per thread.
    pub sweep_sizes: Vec<u64>,
    pub node: Option<usize>,
    pub page_kind: PageKind,
    /// Patterns written by write tests.
    pub patterns: Vec<u64>,
    pub rule: StopRule,
    pub sample_ns: f64,
    /// Tests left out of the defaults because this CPU cannot run them, with the reason.
    pub skipped: Vec<String>,
    /// Spread every buffer's pages over nodes by weight (the tier study's interleave sweep).
    #[serde(default)]
    pub weighted: Option<memsight_core::buffer::Weighted>,
    /// Map every buffer from this DAX device or directory instead (`--dax`).
    #[serde(skip)]
    #[schemars(skip)]
    pub dax: Option<&'static memsight_core::buffer::DaxTarget>,
    /// Where memory begins for a core, from its latency curve: what labels the sweep's levels
    /// (a size past the memory plateau's start is memory whatever the OS claims of its caches).
    #[serde(default)]
    pub reach: Option<crate::measure::reach::MemoryReach>,
    /// Bytes between a thread's arrays ([`DEFAULT_ARRAY_GAP`] unless `--array-gap` said).
    #[serde(default = "default_array_gap")]
    pub array_gap: usize,
    /// Bytes each array of a test takes at least, all threads of a team together (the
    /// streaming check's size, `crate::measure::reach::stream`), for default sizes; 0 otherwise.
    #[serde(default)]
    pub team_array_floor: u64,
    /// Rounds the tests are measured in, alternating (A B C A B C …), each with its share of
    /// the stop rule, so that a drift of the machine touches every test alike; 1: one test
    /// after another.
    #[serde(default = "crate::measure::sampling::one_round")]
    pub rounds: usize,
}

impl BandwidthConfig {
    /// Working set per thread of `spec` run by `threads` threads: the configured size, or more
    /// where its arrays together would fall short of [`Self::team_array_floor`].
    pub fn bytes_for(&self, spec: &TestSpec, threads: usize) -> u64 {
        let per_array = self
            .team_array_floor
            .div_ceil(threads.max(1) as u64)
            .next_multiple_of(k::GRANULE as u64);
        self.bytes_per_thread.max(spec.arrays() as u64 * per_array)
    }
}

impl BandwidthConfig {
    /// Points the plan will measure, for a progress bar.
    pub fn total_points(&self) -> u64 {
        let per_count: usize = self.tests.iter().map(|t| self.patterns_of(t).len()).sum();
        (per_count * self.thread_counts.len() + 3 * self.sweep_sizes.len()) as u64
    }

    /// The words `spec` writes, one point each: the chosen patterns for fills; zeros alone for
    /// CLZERO, which writes nothing else; and for non-temporal fills beside CLZERO also zeros,
    /// so that CLZERO is compared with stores of the same data (zero lines can be cheaper on
    /// the way to memory whatever instruction wrote them). Tests that write no fill: one point.
    pub fn patterns_of(&self, spec: &TestSpec) -> Vec<u64> {
        if !spec.writes_pattern() {
            return vec![NONZERO];
        }
        if spec.store == Store::Clzero {
            return vec![0];
        }
        let mut p = self.patterns.clone();
        let beside_clzero = self.tests.iter().any(|t| t.store == Store::Clzero);
        if beside_clzero && spec.store == Store::Nt && !p.contains(&0) {
            p.push(0);
        }
        p
    }
}

/// One measured point.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    pub test: TestSpec,
    pub isa: Isa,
    pub threads: usize,
    pub cpus: Vec<usize>,
    /// Working set per thread (all arrays), bytes.
    pub bytes_per_thread: u64,
    /// Bytes per array per thread.
    pub array_bytes: u64,
    /// The 64-bit word every store wrote (written in hex), for fills; other writing tests write
    /// data derived from their non-zero sources.
    #[schemars(with = "Option<String>")]
    pub pattern: Option<Fill>,
    /// GB/s of program bytes (10⁹ B/s): median, CI, min (worst) and max (best sample).
    pub program_gbs: Summary,
    /// GB/s of estimated DRAM bytes (program bytes plus read-for-ownership of regular stores).
    pub dram_gbs: Summary,
    /// DRAM read:write ratio of the test.
    pub dram_ratio: String,
    pub passes_per_sample: u64,
    pub stop: StopReason,
    pub noisy: bool,
    /// Which cache level the per-thread working set fits (sweep points), or memory.
    #[schemars(with = "Option<String>")]
    pub level: Option<MemLevel>,
    /// DRAM bytes the memory controllers counted over the sampled rounds, where they can be
    /// read ([`counted`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_dram: Option<counted::CountedDram>,
    /// The median of each alternating round, GB/s of program bytes (empty: one round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_medians: Vec<f64>,
    /// (Highest − lowest round median) ÷ the median: how far the machine moved between rounds,
    /// beside the CI of the samples within them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_rounds: Option<f64>,
}

impl Point {
    /// Whether the stores wrote zeros (a fill with the zero pattern).
    pub fn zero_data(&self) -> bool {
        self.pattern == Some(Fill(0))
    }

    /// What the stores wrote, in words: `-` for read-only tests, `zeros`, the fill word, or
    /// `from sources` for copies and mixes.
    pub fn data(&self) -> String {
        match self.pattern {
            _ if self.zero_data() => "zeros".to_string(),
            Some(x) => x.to_string(),
            None if matches!(self.test.op, Op::Read | Op::Mix { writes: 0, .. }) => "-".to_string(),
            None => "from sources".to_string(),
        }
    }
}

/// A summary of GB/s scaled by `k` (program bytes to DRAM bytes).
pub fn scale(s: &Summary, k: f64) -> Summary {
    Summary {
        median: s.median * k,
        ci_low: s.ci_low * k,
        ci_high: s.ci_high * k,
        min: s.min * k,
        max: s.max * k,
        mean: s.mean * k,
        samples: s.samples.iter().map(|x| x * k).collect(),
        ..s.clone()
    }
}

/// Prepares a thread's arrays: its own buffer (allocated and first-touched here, on its CPU), or
/// its part of the shared buffer; sources get non-zero data, the triad STREAM's initial values.
pub(crate) fn setup<'a>(
    spec: &TestSpec,
    cfg: &BandwidthConfig,
    env: &Environment,
    bytes: u64,
    shared: Option<&'a mut [u8]>,
) -> Result<Arrays<'a>> {
    let (len, region) = layout(spec, bytes, cfg.array_gap);
    let region = match shared {
        Some(part) => Region::Shared(part),
        None => {
            let req = BufferRequest {
                bytes: region as u64,
                kind: cfg.page_kind,
                node: cfg.node,
                dax: cfg.dax,
            };
            let mut b = Buffer::allocate(req, env)?;
            if cfg.interleave {
                b.interleave(&env.allowed_nodes)?;
            }
            if let Some(w) = &cfg.weighted {
                b.interleave_weighted(w)?;
            }
            Region::Own(Box::new(b))
        }
    };
    let mut a = Arrays {
        region,
        len,
        gap: cfg.array_gap,
    };
    a.bytes().fill(0x5a);
    if spec.op == Op::Triad {
        let (x, y, z) = a.split_f64();
        x.fill(1.0);
        y.fill(2.0);
        z.fill(0.0);
    } else {
        for arr in a.split(spec.arrays()) {
            k::write(Isa::Scalar, Store::Regular, arr, 0x0123_4567_89ab_cdef, 1);
        }
    }
    Ok(a)
}

/// `passes` passes of the test over this thread's arrays. The arrays are split once per call, so
/// nothing but the kernels runs between passes (small working sets take ~100 ns a pass).
fn work(spec: &TestSpec, isa: Isa, pattern: u64, a: &mut Arrays, passes: u64) {
    match spec.op {
        Op::Read => {
            let v = a.split(1);
            std::hint::black_box(k::read_with(isa, spec.load, v[0], passes));
        }
        Op::Write => {
            let mut v = a.split(1);
            k::write(isa, spec.store, v[0], pattern, passes);
            std::hint::black_box(&mut v);
        }
        Op::Rmw => {
            let mut v = a.split(1);
            for _ in 0..passes {
                k::rmw(isa, v[0], pattern);
            }
        }
        Op::Copy => {
            let mut v = a.split(2);
            let dst = v.pop().expect("two arrays");
            k::copy(isa, spec.store, dst, v[0], passes);
        }
        // Reads only (MLC's all-reads, `R:0`): the read kernel over each stream, as MLC and
        // likwid-bench read. The mix kernel's generic stream loop spends several instructions
        // per load, which keeps fewer misses in flight: it read memory at 0.6× the read kernel
        // on a Sapphire Rapids-class core, so "all reads" looked slower than a 3:1 mix.
        Op::Mix { reads, writes: 0 } => {
            let v = a.split(reads);
            for s in v {
                std::hint::black_box(k::read_with(isa, spec.load, s, passes));
            }
        }
        Op::Mix { reads, writes } => {
            let mut v = a.split(reads + writes);
            let mut dsts = v.split_off(reads);
            let srcs: Vec<&[u8]> = v.into_iter().map(|s| &*s).collect();
            for _ in 0..passes {
                std::hint::black_box(k::mix(isa, spec.store, &srcs, &mut dsts, pattern));
            }
        }
        Op::Triad => {
            let (x, y, z) = a.split_f64();
            for _ in 0..passes {
                k::stream(isa, spec.store, k::StreamOp::Triad, x, y, z, 3.0);
            }
        }
    }
}

/// Measures one test on `cpus` with `bytes` per thread writing `pattern`.
pub fn measure(
    spec: &TestSpec,
    cfg: &BandwidthConfig,
    env: &Environment,
    cpus: &[usize],
    bytes: u64,
    pattern: u64,
) -> Result<Option<Point>> {
    measure_counted(
        spec,
        cfg,
        env,
        cpus,
        bytes,
        pattern,
        &counted::Counting::new(None),
    )
}

/// With `--shared`, one buffer of `region` bytes per thread for the whole team, first-touched by
/// the first thread (so it all lands on that thread's node), each thread to work on its own part;
/// else none (each thread allocates its own).
fn shared_buffer(
    cfg: &BandwidthConfig,
    env: &Environment,
    cpus: &[usize],
    region: usize,
) -> Result<Option<Buffer>> {
    if !cfg.shared {
        return Ok(None);
    }
    let req = BufferRequest {
        bytes: region as u64 * cpus.len() as u64,
        kind: cfg.page_kind,
        node: cfg.node,
        dax: cfg.dax,
    };
    let b = std::sync::Mutex::new(Buffer::allocate(req, env)?);
    memsight_core::pin::run_team(&cpus[..1], |_, _, _| {
        if let Ok(mut b) = b.lock() {
            b.touch();
        }
    })?;
    Ok(Some(
        b.into_inner()
            .map_err(|_| Error::system("first-touch thread failed"))?,
    ))
}

/// [`measure`], with the memory controllers' CAS counters read over the sampled rounds where
/// `counting` has them.
pub fn measure_counted(
    spec: &TestSpec,
    cfg: &BandwidthConfig,
    env: &Environment,
    cpus: &[usize],
    bytes: u64,
    pattern: u64,
    counting: &counted::Counting,
) -> Result<Option<Point>> {
    let arrays = spec.arrays() as u64;
    let (len, region) = layout(spec, bytes, cfg.array_gap);
    let len = len as u64;
    let per_pass = spec.bytes(len);
    let threads = cpus.len() as u64;
    let program = per_pass.program() * threads;
    let mut shared = shared_buffer(cfg, env, cpus, region)?;
    let parts: std::sync::Mutex<Vec<Option<&mut [u8]>>> =
        std::sync::Mutex::new(match shared.as_mut() {
            Some(b) => b.as_mut_slice().chunks_mut(region).map(Some).collect(),
            None => Vec::new(),
        });
    let out = counting.around(|bracket| {
        sample_team_bracketed(
            cpus,
            &cfg.rule,
            cfg.sample_ns,
            |i, _| {
                let part = parts
                    .lock()
                    .map_or(None, |mut p| p.get_mut(i).and_then(Option::take));
                setup(spec, cfg, env, bytes, part)
            },
            |a, passes| work(spec, cfg.isa, pattern, a, passes),
            |passes, ns| (passes * program) as f64 / ns,
            bracket,
        )
    })?;
    Ok(out.map(|t| {
        let counted_dram = counting.result(t.rounds * t.passes * program);
        let dram_factor = per_pass.dram() as f64 / per_pass.program() as f64;
        Point {
            test: spec.clone(),
            isa: cfg.isa,
            threads: cpus.len(),
            cpus: cpus.to_vec(),
            bytes_per_thread: len * arrays,
            array_bytes: len,
            pattern: spec.writes_pattern().then_some(Fill(pattern)),
            dram_gbs: scale(&t.sampled.summary, dram_factor),
            program_gbs: t.sampled.summary.clone(),
            dram_ratio: spec.dram_ratio(),
            passes_per_sample: t.passes,
            stop: t.sampled.stop,
            noisy: t.sampled.is_noisy(),
            level: None,
            counted_dram,
            round_medians: Vec::new(),
            between_rounds: None,
        }
    }))
}
