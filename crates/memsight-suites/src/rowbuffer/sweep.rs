//! The offset sweep: one of STREAM's four kernels over three arrays laid out as STREAM lays them
//! out (`a`, `b`, `c`, each `N + OFFSET` elements apart), for every offset of the sweep, in one
//! buffer, so the physical mapping stays fixed while only the arrays' relative placement moves.
//! Offsets that are all multiples of 64 B keep the arrays aligned for the vector kernels; any
//! other multiple of 8 B runs the whole sweep on the scalar kernels (one ISA per sweep, so the
//! offsets stay comparable).
//!
//! Per offset: one warm-up pass, then `samples` timed passes on every thread at once (each thread
//! its own slice of all three arrays, started together at a spinning barrier); a sample is timed
//! from the earliest thread's start to the latest thread's end, and samples in which a thread
//! lost its CPU are dropped and counted. Bytes are STREAM's count (COPY and SCALE 16 B, ADD and
//! TRIAD 24 B per element: program bytes; the DRAM also reads each destination line for
//! ownership: +8 B per element).

use crate::measure::progress::Tick;
use std::sync::Mutex;

use memsight_core::buffer::Buffer;
use memsight_core::cpuclock::{SpinBarrier, TeamClock};
use memsight_core::stats::{Summary, Taken, summarize_taken};
use memsight_core::{Result, cancel};
use memsight_kernels::bandwidth::{self as k, Isa, Store, StreamOp};

/// One point of a sweep.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Point {
    pub offset_bytes: u64,
    /// GB/s of program bytes (STREAM counting), over the samples.
    pub gbs: Summary,
    /// Program bytes of one timed pass (all threads; for HPCCG one solve), so that a rate
    /// gives the time of a pass.
    #[serde(default)]
    pub pass_bytes: f64,
    /// Memory-controller counts over the point (warm-up and timed passes), summed over the
    /// controllers, by event; empty where none are read.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub counts: std::collections::BTreeMap<String, u64>,
}

impl Point {
    /// The point of one offset: `bytes` per sample over each team clock's span.
    pub fn timed(offset_bytes: u64, bytes: f64, clocks: &[TeamClock], want: usize) -> Point {
        let rates: Vec<Taken> = clocks
            .iter()
            .map(|c| {
                let span = c.span();
                Taken::spanned(bytes / span.ns, &span)
            })
            .collect();
        Point {
            offset_bytes,
            gbs: summarize_taken(&rates, want),
            pass_bytes: bytes,
            counts: Default::default(),
        }
    }

    /// GB/s by the statistic asked for: the median pass, or the best as STREAM reports.
    pub fn value(&self, stat: Stat) -> f64 {
        match stat {
            Stat::Median => self.gbs.median,
            Stat::Best => self.gbs.max,
        }
    }

    /// Milliseconds of one pass (one HPCCG solve) at that statistic, where the pass is known.
    pub fn pass_ms(&self, stat: Stat) -> Option<f64> {
        let gbs = self.value(stat);
        (self.pass_bytes > 0.0 && gbs > 0.0).then(|| self.pass_bytes / gbs / 1e6)
    }
}

/// Which pass of a point stands for it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Stat {
    /// The median of the timed passes: robust to a pass another tenant slowed.
    #[default]
    Median,
    /// The fastest pass, as STREAM reports (and the Catamount paper's figures use).
    Best,
}

impl Stat {
    pub fn name(self) -> &'static str {
        match self {
            Stat::Median => "median",
            Stat::Best => "best",
        }
    }
}

/// What one sweep needs.
pub struct Plan<'a> {
    pub op: StreamOp,
    pub isa: Isa,
    pub cpus: &'a [usize],
    /// Elements per array.
    pub elements: usize,
    pub offsets: &'a [u64],
    pub samples: usize,
    /// Memory-controller counters to read around each point.
    pub counters: Option<&'a crate::measure::counters::Controllers>,
}

/// Whether every offset keeps the arrays 64-byte aligned (the vector kernels need it).
pub fn aligned(offsets: &[u64]) -> bool {
    offsets.iter().all(|o| o % 64 == 0)
}

/// The value every element of the written array holds after a pass, and its name (the arrays
/// start as a = 1, b = 2, c = 0.5; each kernel alone is idempotent).
fn expected(op: StreamOp) -> (usize, f64, &'static str) {
    match op {
        StreamOp::Copy => (2, 1.0, "c"),
        StreamOp::Scale => (1, 3.0 * 0.5, "b"),
        StreamOp::Add => (2, 1.0 + 2.0, "c"),
        StreamOp::Triad => (0, 2.0 + 3.0 * 0.5, "a"),
    }
}

/// Program bytes of one pass.
pub fn pass_bytes(op: StreamOp, elements: usize) -> u64 {
    (op.arrays() * 8 * elements) as u64
}

/// Buffer bytes the sweep needs: three arrays and two of the largest offset.
pub fn buffer_bytes(elements: usize, max_offset: u64) -> u64 {
    3 * (elements as u64 * 8 + max_offset) + 4096
}

type Chunk<'a> = (&'a mut [f64], &'a mut [f64], &'a mut [f64]);

/// Runs the sweep in `buf`; `tick` after each offset. Returns the points measured (fewer when
/// interrupted). Each offset gets a fresh pinned team, handed disjoint slices of the arrays.
pub fn run(plan: &Plan, buf: &mut Buffer, tick: Tick<'_>) -> Result<Vec<Point>> {
    let threads = plan.cpus.len();
    let n = plan.elements;
    let chunk = n.div_ceil(threads);
    let nsamples = plan.samples.max(1);
    let bytes = pass_bytes(plan.op, n) as f64;
    let vector = aligned(plan.offsets);
    let mut points = Vec::new();
    for &off in plan.offsets {
        if cancel::requested() {
            break;
        }
        let stride = n + off as usize / 8;
        let all = buf.as_f64_mut();
        assert!(2 * stride + n <= all.len(), "the buffer holds every offset");
        let (a, rest) = all.split_at_mut(stride);
        let (b, c) = rest.split_at_mut(stride);
        let parts: Vec<Option<Chunk>> = a[..n]
            .chunks_mut(chunk)
            .zip(b[..n].chunks_mut(chunk))
            .zip(c[..n].chunks_mut(chunk))
            .map(|((a, b), c)| Some((a, b, c)))
            .collect();
        let parts = Mutex::new(parts);
        let running = plan.counters.and_then(|c| c.start().ok());
        // One team clock per sample: each spans the earliest start to the latest end.
        let clocks: Vec<TeamClock> = (0..nsamples).map(|_| TeamClock::new(threads)).collect();
        let start = SpinBarrier::new(threads);
        memsight_core::pin::run_team(plan.cpus, |i, _, barrier| {
            // A thread without a slice (fewer elements than threads) still meets every barrier.
            let mut part = parts
                .lock()
                .expect("parts")
                .get_mut(i)
                .and_then(Option::take);
            let pass = |part: &mut Option<Chunk>| {
                if let Some((a, b, c)) = part {
                    if vector {
                        k::stream(plan.isa, Store::Regular, plan.op, a, b, c, 3.0);
                    } else {
                        k::stream_unaligned(plan.op, a, b, c, 3.0);
                    }
                }
            };
            if let Some((a, b, c)) = &mut part {
                a.fill(1.0);
                b.fill(2.0);
                c.fill(0.5);
            }
            barrier.wait();
            pass(&mut part);
            for clock in &clocks {
                start.wait();
                clock.time(i, || pass(&mut part));
            }
        })?;
        check(plan.op, buf, off, stride, n)?;
        let mut point = Point::timed(off, bytes, &clocks, nsamples);
        point.counts = running.map(|r| r.finish()).unwrap_or_default();
        points.push(point);
        tick(&format!("offset {off} B"));
    }
    Ok(points)
}

/// STREAM-style check that the kernel computed what it claims, on a sample of elements of the
/// array the pass at offset `off` (arrays `stride` elements apart, `n` long) wrote.
fn check(op: StreamOp, buf: &mut Buffer, off: u64, stride: usize, n: usize) -> Result<()> {
    let all = buf.as_f64_mut();
    let (array, want, name) = expected(op);
    let got = &all[array * stride..array * stride + n];
    if let Some(i) = (0..n)
        .step_by(4099)
        .chain(std::iter::once(n - 1))
        .find(|&i| got[i] != want)
    {
        return Err(memsight_core::Error::system(format!(
            "{} at offset {off} B computed {name}[{i}] = {} instead of {want}: the kernel is broken",
            op.name(),
            got[i]
        )));
    }
    Ok(())
}
