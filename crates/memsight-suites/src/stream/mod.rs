//! STREAM-compatible kernels under STREAM's rules (McCalpin, STREAM 5.10).
//!
//! - Three f64 arrays of N elements, N ≥ 4 × the sum of the last-level caches ÷ 8 B (and ≥ 10 M
//!   as STREAM's default), optionally padded by `OFFSET` elements between arrays.
//! - Initialised a = 1, b = 2, c = 0 by the threads that will use each chunk (first touch), then
//!   a = 2·a (STREAM's timer-granularity step).
//! - NTIMES iterations of Copy (c = a), Scale (b = s·c), Add (c = a + b), Triad (a = b + s·c) with
//!   s = 3; every kernel run is timed on its own and must last ≥ 20 clock ticks.
//! - Statistics exclude the first iteration: best (min), average and max time per kernel; rate
//!   from the best time with STREAM's byte counting (2 or 3 arrays × 8 B × N); plus the engine's
//!   median and CI of the rate.
//! - Validation replays the recurrence on scalars and fails when the average absolute error of
//!   any array, relative to the expected value, exceeds 1e-13.
//!
//! - Before the timed iterations, Triad runs at every vector width the CPU has, alternating,
//!   three passes each, on the same arrays (Triad leaves the initial values as they are): where
//!   a narrower width moves clearly more than the one used (the widest, as STREAM compiled with
//!   `-march=native` uses), a finding gives both figures.
//!
//! These are STREAM-compatible kernels run by memsight, not STREAM benchmark results.

mod suite;
pub use suite::Stream;

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use std::sync::atomic::{AtomicU64, Ordering};

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::cpuclock::{SpinBarrier, TeamClock, TeamSpan};
use memsight_core::env::Environment;
use memsight_core::pin::TeamBarrier;
use memsight_core::stats::{Summary, Taken, summarize_taken};
use memsight_core::timer::ClockInfo;
use memsight_core::{Error, Result, cancel};
use memsight_kernels::bandwidth::{self as k, Isa, Store, StreamOp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// STREAM's scalar.
pub const SCALAR: f64 = 3.0;
/// STREAM's bound on the average relative error for f64.
pub const EPSILON: f64 = 1e-13;

/// A validated plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StreamConfig {
    pub elements: usize,
    pub ntimes: usize,
    pub offset: usize,
    pub cpus: Vec<usize>,
    pub isa: Isa,
    pub store: Store,
    pub page_kind: PageKind,
    pub node: Option<usize>,
}

/// STREAM as asked for; `None` where the machine decides.
#[derive(Debug, Clone)]
pub struct StreamSettings {
    /// Elements per array; `None`: STREAM's rule, at least 4 × what the threads hold in caches
    /// (from the core's latency curve, not the OS's claim) and 10 million.
    pub elements: Option<usize>,
    /// Times each kernel runs; the first is excluded from the statistics (STREAM's NTIMES).
    pub ntimes: u32,
    /// Padding between the arrays in elements (STREAM's OFFSET); a multiple of 8.
    pub offset: usize,
    pub threads: crate::measure::rate::Threads,
    pub cpus: Option<Vec<usize>>,
    pub isa: Option<Isa>,
    /// Regular (STREAM's) or non-temporal stores.
    pub store: Store,
    pub page_kind: PageKind,
    pub node: Option<usize>,
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings {
            elements: None,
            ntimes: 20,
            offset: 0,
            threads: crate::measure::rate::Threads::All,
            cpus: None,
            isa: None,
            store: Store::Regular,
            page_kind: PageKind::Base4K,
            node: None,
        }
    }
}

impl StreamSettings {
    /// The validated plan.
    pub fn resolve(
        &self,
        env: &Environment,
        machine: &crate::measure::machine::Machine,
    ) -> Result<StreamConfig> {
        let isa = crate::measure::rate::supported_isa(self.isa)?;
        memsight_kernels::bandwidth::supports(isa, self.store).map_err(Error::input)?;
        let cpus = crate::measure::rate::team(self.threads, self.cpus.as_deref(), env)?;
        // Each thread's chunk is a multiple of 32 elements (4 AVX-512 vectors).
        let unit = 32 * cpus.len();
        if self.elements == Some(0) {
            return Err(Error::input("--elements must be at least 1"));
        }
        if !self.offset.is_multiple_of(8) {
            return Err(Error::input(format!(
                "--offset {} is not a multiple of 8 elements (64 bytes): the kernels use aligned vector loads; use {} or {}",
                self.offset,
                self.offset / 8 * 8,
                self.offset.div_ceil(8) * 8
            )));
        }
        env.check_node(self.node)?;
        let want = match self.elements {
            Some(e) => e,
            None => {
                let r = machine.streaming(env)?;
                10_000_000usize.max((r.team_stream_bytes(cpus.len(), env) / 8) as usize)
            }
        };
        let elements = want.div_ceil(unit) * unit;
        let bytes = 3 * (elements + self.offset) as u64 * 8;
        memsight_core::buffer::check_size(bytes, env)?;
        Ok(StreamConfig {
            elements,
            ntimes: self.ntimes as usize,
            offset: self.offset,
            cpus,
            isa,
            store: self.store,
            page_kind: self.page_kind,
            node: self.node,
        })
    }
}

/// One kernel's figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct KernelResult {
    pub function: String,
    /// STREAM's byte count per run: arrays × 8 B × N.
    pub bytes: u64,
    /// Estimated DRAM bytes per run (plus read-for-ownership of the written array with regular stores).
    pub dram_bytes: u64,
    /// From the best (minimum) time, MB/s = 10^6 B/s, as STREAM prints it.
    pub best_rate_mbs: f64,
    pub avg_time_s: f64,
    pub min_time_s: f64,
    pub max_time_s: f64,
    /// GB/s over the timed iterations (first excluded): median, CI, min, max.
    pub gbs: Summary,
    /// Shortest run in clock ticks (STREAM asks for ≥ 20).
    pub min_ticks: f64,
}

/// STREAM's validation outcome.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Validation {
    pub passed: bool,
    /// Average absolute error of each array relative to its expected value.
    pub relative_error: [f64; 3],
    pub expected: [f64; 3],
    pub message: String,
}

/// Triad at one vector width on the run's own arrays, before the timed iterations.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WidthReading {
    pub isa: Isa,
    /// GB/s of STREAM's Triad bytes over the passes, alternating with the other widths.
    pub triad_gbs: Summary,
}

/// Passes of Triad per vector width in the width check, alternating A B C A B C …
const WIDTH_ROUNDS: usize = 3;

/// The `stream` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StreamResults {
    pub label: String,
    pub config: StreamConfig,
    pub array_bytes: u64,
    pub total_bytes: u64,
    pub iterations_run: usize,
    pub kernels: Vec<KernelResult>,
    pub validation: Option<Validation>,
    pub warnings: Vec<String>,
    /// Triad at every vector width the CPU has, alternating, on the same arrays before the
    /// timed iterations (absent before schema 4, and where one width is all there is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widths: Vec<WidthReading>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<memsight_core::finding::Finding>,
}

/// STREAM's expected values after `n` iterations, starting from a = 1 (doubled once), b = 2, c = 0.
pub fn expected(n: usize) -> [f64; 3] {
    let (mut a, mut b, mut c) = (1.0f64, 2.0f64, 0.0f64);
    a *= 2.0;
    for _ in 0..n {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    [a, b, c]
}

/// STREAM's check: the average absolute error of each array relative to the expected value must
/// not exceed [`EPSILON`].
pub fn validate(a: &[f64], b: &[f64], c: &[f64], iterations: usize) -> Validation {
    let exp = expected(iterations);
    let mut rel = [0.0; 3];
    for (k, arr) in [a, b, c].iter().enumerate() {
        let avg = arr.iter().map(|x| (x - exp[k]).abs()).sum::<f64>() / arr.len().max(1) as f64;
        rel[k] = avg / exp[k].abs();
    }
    let bad: Vec<String> = ["a", "b", "c"]
        .iter()
        .zip(rel)
        .filter(|(_, e)| e.is_nan() || *e > EPSILON)
        .map(|(n, e)| format!("array {n}: average relative error {e:.3e} > {EPSILON:e}"))
        .collect();
    Validation {
        passed: bad.is_empty(),
        relative_error: rel,
        expected: exp,
        message: if bad.is_empty() {
            format!("Solution Validates: avg error less than {EPSILON:e} on all three arrays")
        } else {
            format!("VALIDATION FAILED: {}", bad.join("; "))
        },
    }
}

/// One thread's share of the three arrays.
type Chunk<'a> = (&'a mut [f64], &'a mut [f64], &'a mut [f64]);

/// Runs the plan; returns results and whether every iteration ran.
pub fn run(
    cfg: &StreamConfig,
    env: &Environment,
    clock: &ClockInfo,
    tick: Tick<'_>,
) -> Result<Completed<StreamResults>> {
    let n = cfg.elements;
    let stride = n + cfg.offset;
    let req = BufferRequest {
        bytes: 3 * stride as u64 * 8,
        kind: cfg.page_kind,
        node: cfg.node,
        dax: None,
    };
    let mut buf = Buffer::allocate(req, env)?;
    let team = Team::new(cfg);
    team.run(&mut buf, tick)?;
    let iterations = team.done.load(Ordering::SeqCst) as usize;
    let complete = iterations == cfg.ntimes;
    let (kernels, warnings) = kernels(&team.clocks, iterations, cfg, clock);
    let widths = width_readings(&team.widths, &team.width_clocks, n);
    let findings = width_finding(&widths, cfg.isa).into_iter().collect();
    let validation = complete.then(|| {
        let all = buf.as_f64_mut();
        let (a, rest) = all.split_at(stride);
        let (b, c) = rest.split_at(stride);
        validate(&a[..n], &b[..n], &c[..n], iterations)
    });
    let results = StreamResults {
        label: "STREAM-compatible kernels run by memsight (not STREAM benchmark results)"
            .to_string(),
        config: cfg.clone(),
        array_bytes: (8 * n) as u64,
        total_bytes: (3 * 8 * n) as u64,
        iterations_run: iterations,
        kernels,
        validation,
        warnings,
        widths,
        findings,
    };
    Ok(Completed::new(results, complete))
}

/// What the team's threads share while they run: the clocks of the width check and of the timed
/// iterations, the barrier that starts every timed kernel run and the iterations done.
struct Team<'a> {
    cfg: &'a StreamConfig,
    /// The widths of the width check; empty where the CPU has only one.
    widths: Vec<Isa>,
    /// One per pass of the width check, the widths alternating.
    width_clocks: Vec<TeamClock>,
    /// One per iteration and kernel: each timing spans the earliest start to the latest end over
    /// the threads, as STREAM times its parallel region.
    clocks: Vec<TeamClock>,
    start: SpinBarrier,
    /// Iterations every thread finished.
    done: AtomicU64,
}

impl<'a> Team<'a> {
    fn new(cfg: &'a StreamConfig) -> Self {
        let threads = cfg.cpus.len();
        let clocks: Vec<TeamClock> = (0..cfg.ntimes * 4)
            .map(|_| TeamClock::new(threads))
            .collect();
        // The width check: every vector width the CPU has (and the store kind allows), Triad on
        // these arrays, alternating. Triad is idempotent on the initial values (a = b + s·c = 2 +
        // 0 = 2, as a holds after STREAM's doubling), so the check leaves STREAM's recurrence as
        // it was.
        let widths: Vec<Isa> = Isa::available()
            .into_iter()
            .filter(|&w| w != Isa::Scalar && k::supports(w, cfg.store).is_ok())
            .collect();
        let widths = if widths.len() > 1 { widths } else { Vec::new() };
        let width_clocks: Vec<TeamClock> = (0..widths.len() * WIDTH_ROUNDS)
            .map(|_| TeamClock::new(threads))
            .collect();
        Team {
            cfg,
            widths,
            width_clocks,
            clocks,
            start: SpinBarrier::new(threads),
            done: AtomicU64::new(0),
        }
    }

    /// Every thread on its own chunk of the arrays in `buf`: first touch, the width check, the
    /// timed iterations.
    fn run(&self, buf: &mut Buffer, tick: Tick<'_>) -> Result<()> {
        let (n, stride) = (self.cfg.elements, self.cfg.elements + self.cfg.offset);
        let chunk = n / self.cfg.cpus.len();
        let all = buf.as_f64_mut();
        let (a, rest) = all.split_at_mut(stride);
        let (b, c) = rest.split_at_mut(stride);
        let mut parts: Vec<Option<Chunk>> = a[..n]
            .chunks_mut(chunk)
            .zip(b[..n].chunks_mut(chunk))
            .zip(c[..n].chunks_mut(chunk))
            .map(|((a, b), c)| Some((a, b, c)))
            .collect();
        let parts = std::sync::Mutex::new(&mut parts);
        memsight_core::pin::run_team(&self.cfg.cpus, |i, _, barrier| {
            let part = parts.lock().expect("parts")[i]
                .take()
                .expect("one part per thread");
            self.thread(i, part, barrier, tick);
        })?;
        Ok(())
    }

    /// Thread `i` of the team on its chunk.
    fn thread(&self, i: usize, (a, b, c): Chunk, barrier: &TeamBarrier, tick: &dyn Fn(&str)) {
        let cfg = self.cfg;
        // First touch by the thread that uses the chunk, element by element across the three
        // arrays as STREAM's OpenMP initialisation, so the three arrays' pages are faulted in
        // turn as in STREAM. Filling one array after the other read a median 0.93× STREAM's
        // Triad per round on 4 KiB pages of a Zen 4 guest; this order with STREAM's loop shape
        // 1.04× (bench/results/2026-11-27-stream-peer-vm-2232.md).
        for ((x, y), z) in a.iter_mut().zip(b.iter_mut()).zip(c.iter_mut()) {
            *x = 1.0;
            *y = 2.0;
            *z = 0.0;
        }
        for x in a.iter_mut() {
            *x *= 2.0;
        }
        for (j, clock) in self.width_clocks.iter().enumerate() {
            let w = self.widths[j % self.widths.len()];
            self.start.wait();
            clock.time(i, || {
                k::stream(w, cfg.store, StreamOp::Triad, a, b, c, SCALAR)
            });
        }
        for it in 0..cfg.ntimes {
            for (kk, op) in StreamOp::ALL.iter().enumerate() {
                self.start.wait();
                self.clocks[it * 4 + kk]
                    .time(i, || k::stream(cfg.isa, cfg.store, *op, a, b, c, SCALAR));
            }
            barrier.wait();
            if i == 0 {
                self.done.store(it as u64 + 1, Ordering::SeqCst);
                tick(&format!("iteration {}", it + 1));
            }
            barrier.wait();
            if cancel::requested() {
                break;
            }
        }
    }
}

/// Each kernel's figures and warnings over the iterations that ran, the first excluded as in
/// STREAM; none unless at least two ran.
fn kernels(
    clocks: &[TeamClock],
    iterations: usize,
    cfg: &StreamConfig,
    clock: &ClockInfo,
) -> (Vec<KernelResult>, Vec<String>) {
    let mut kernels = Vec::new();
    let mut warnings = Vec::new();
    if iterations >= 2 {
        for (kk, op) in StreamOp::ALL.iter().enumerate() {
            let spans: Vec<TeamSpan> = (1..iterations)
                .map(|it| clocks[it * 4 + kk].span())
                .collect();
            let (k, warning) = kernel(*op, &spans, cfg, clock);
            kernels.push(k);
            warnings.extend(warning);
        }
    }
    (kernels, warnings)
}

/// Each width's Triad rates from its passes of the width check.
fn width_readings(widths: &[Isa], clocks: &[TeamClock], n: usize) -> Vec<WidthReading> {
    let bytes = (StreamOp::Triad.arrays() * 8 * n) as f64;
    widths
        .iter()
        .enumerate()
        .map(|(w, &isa)| {
            let rates: Vec<Taken> = clocks
                .iter()
                .skip(w)
                .step_by(widths.len())
                .map(|c| {
                    let span = c.span();
                    Taken::spanned(bytes / span.ns, &span)
                })
                .collect();
            WidthReading {
                isa,
                triad_gbs: summarize_taken(&rates, rates.len()),
            }
        })
        .collect()
}

/// Where another vector width moved clearly more than the one the run used (its lowest pass
/// above the used width's highest, by more than 5% of medians): said, with both figures, since
/// STREAM compiled for the machine uses the widest and its figure is then not the most the
/// memory gives.
fn width_finding(widths: &[WidthReading], used: Isa) -> Option<memsight_core::finding::Finding> {
    use memsight_core::finding::{Cited, Finding};
    // The sentence compares the widest (what STREAM compiled for the machine uses) with a
    // narrower one; with --isa forcing another width it does not apply.
    if widths.last().is_some_and(|w| w.isa != used) {
        return None;
    }
    let this = widths.iter().find(|w| w.isa == used)?;
    let best = widths
        .iter()
        .filter(|w| w.isa != used)
        .max_by(|a, b| a.triad_gbs.median.total_cmp(&b.triad_gbs.median))?;
    let (b, t) = (&best.triad_gbs, &this.triad_gbs);
    (b.median > 1.05 * t.median && b.min > t.max).then(|| {
        Finding::citing(
            format!(
                "a {} loop moved {:.1} GB/s in Triad against {:.1} GB/s at {} ({:.2}×; {WIDTH_ROUNDS} alternating passes each on these arrays): on this machine narrower vectors draw more from memory, so the {} figures here, like STREAM's compiled with -march=native, are not the most this memory gives; --isa {} measures the higher one",
                best.isa.name(),
                b.median,
                t.median,
                used.name(),
                b.median / t.median,
                used.name(),
                best.isa.name()
            ),
            vec![
                Cited::of(format!("Triad at {}", best.isa.name()), "GB/s", b),
                Cited::of(format!("Triad at {}", used.name()), "GB/s", t),
            ],
        )
    })
}

/// One kernel's STREAM figures from its timed iterations (the first already left out).
fn kernel(
    op: StreamOp,
    spans: &[TeamSpan],
    cfg: &StreamConfig,
    clock: &ClockInfo,
) -> (KernelResult, Option<String>) {
    // STREAM's best/avg/min/max over the iterations nothing disturbed (all of them when
    // none was clean: disturbance only adds time).
    let clean: Vec<f64> = spans
        .iter()
        .filter(|s| s.disturbance().is_none())
        .map(|s| s.ns * 1e-9)
        .collect();
    let times = if clean.is_empty() {
        spans.iter().map(|s| s.ns * 1e-9).collect()
    } else {
        clean
    };
    let n = cfg.elements;
    let bytes = (op.arrays() * 8 * n) as u64;
    let rfo = if cfg.store == Store::Regular {
        (8 * n) as u64
    } else {
        0
    };
    let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = times.iter().cloned().fold(0.0, f64::max);
    let avg = times.iter().sum::<f64>() / times.len() as f64;
    let rates: Vec<Taken> = spans
        .iter()
        .map(|s| Taken::spanned(bytes as f64 / s.ns, s))
        .collect();
    let min_ticks = min * 1e9 / clock.granularity_ns;
    let warning = (min_ticks < 20.0).then(|| {
        format!(
            "{}: the shortest run lasted {min_ticks:.0} clock ticks (< 20): use more --elements",
            op.name()
        )
    });
    let result = KernelResult {
        function: op.name().to_string(),
        bytes,
        dram_bytes: bytes + rfo,
        best_rate_mbs: bytes as f64 / min / 1e6,
        avg_time_s: avg,
        min_time_s: min,
        max_time_s: max,
        gbs: summarize_taken(&rates, rates.len()),
        min_ticks,
    };
    (result, warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_values_follow_streams_recurrence() {
        // After 0 iterations: a doubled once.
        assert_eq!(expected(0), [2.0, 2.0, 0.0]);
        // One iteration by hand: c = 2, b = 6, c = 8, a = 6 + 24 = 30.
        assert_eq!(expected(1), [30.0, 6.0, 8.0]);
    }

    fn arrays(n: usize, it: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let e = expected(it);
        (vec![e[0]; n], vec![e[1]; n], vec![e[2]; n])
    }

    #[test]
    fn correct_results_validate() {
        let (a, b, c) = arrays(1000, 10);
        let v = validate(&a, &b, &c, 10);
        assert!(v.passed, "{}", v.message);
    }

    #[test]
    fn corrupted_results_fail_loudly() {
        let (mut a, b, mut c) = arrays(1000, 10);
        a[17] *= 1.0 + 1e-6;
        let v = validate(&a, &b, &c, 10);
        assert!(!v.passed);
        assert!(
            v.message.contains("VALIDATION FAILED") && v.message.contains("array a"),
            "{}",
            v.message
        );
        // A NaN anywhere fails too.
        let (a2, b2, _) = arrays(1000, 10);
        c[3] = f64::NAN;
        assert!(!validate(&a2, &b2, &c, 10).passed);
        // So does the wrong iteration count (a kernel skipped once).
        let (a, b, c) = arrays(1000, 9);
        assert!(!validate(&a, &b, &c, 10).passed);
    }
}
