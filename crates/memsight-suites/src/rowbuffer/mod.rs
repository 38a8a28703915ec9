//! `memsight rowbuffer`: DRAM row-buffer conflicts and physical page mapping (the Catamount
//! study as a command).
//!
//! 1. Physical mapping: how contiguous each buffer is, from `/proc/self/pagemap` (root), with the
//!    run-length distribution; without root the frames are hidden and said to be.
//! 2. Offset sweep: STREAM COPY and TRIAD with the arrays `N + OFFSET` apart, OFFSET swept finely,
//!    on contiguous memory (hugetlb 1 GiB/2 MiB, else THP with a warning) and on demand-paged
//!    4 KiB memory, several repetitions each (a fresh buffer every time); dips are detected
//!    (`detect`) and their period compared with the linear-interleave model of the DIMMs.
//! 3. Row-conflict probe (`probe`): row hit vs row conflict latency, and bank bits when clear.
//! 4. Fragmentation (`--fragment`): the 4 KiB sweep again after scattering free memory.
//! 5. Advice: offsets to avoid, a safe padding, and huge vs 4 KiB pages (peak vs worst case).

mod estimate;
pub use estimate::estimate;
mod advice;
pub use crate::measure::counters;
pub use advice::recurring_dips;
mod crosspage;
pub mod detect;
pub mod hpccg;
mod layouts;
pub mod model;
mod pairs;
mod settings;
mod suite;
pub use model::{ModelInfo, ModelSource, OffsetRange};
pub use settings::RowbufferSettings;
pub use suite::Rowbuffer;
pub use sweep::Stat;
pub mod probe;
pub mod sweep;

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use memsight_core::buffer::{Buffer, BufferReport, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::hugepool::Reservation;
use memsight_core::stats::summarize;
use memsight_core::units::format_bytes;
use memsight_core::{Result, cancel};
use memsight_kernels::bandwidth::{Isa, StreamOp};
use memsight_model::rowbuffer::{BankHash, Interleave};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A kernel the sweep runs: one of STREAM's four, or the HPCCG-style conjugate-gradient solve
/// (the application case of the Catamount paper, Ferreira et al., CUG 2008).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Kernel {
    Copy,
    Scale,
    Add,
    Triad,
    Hpccg,
}

impl Kernel {
    pub const ALL: [Kernel; 5] = [
        Kernel::Copy,
        Kernel::Scale,
        Kernel::Add,
        Kernel::Triad,
        Kernel::Hpccg,
    ];

    /// The STREAM kernel, for the four of STREAM.
    pub fn stream(self) -> Option<StreamOp> {
        match self {
            Kernel::Copy => Some(StreamOp::Copy),
            Kernel::Scale => Some(StreamOp::Scale),
            Kernel::Add => Some(StreamOp::Add),
            Kernel::Triad => Some(StreamOp::Triad),
            Kernel::Hpccg => None,
        }
    }

    /// Name as STREAM (or HPCCG) prints it.
    pub fn name(self) -> &'static str {
        match self.stream() {
            Some(op) => op.name(),
            None => "HPCCG",
        }
    }
}

/// One memory layout the sweep runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Memory {
    /// Huge pages: physically contiguous within each page (1 GiB or 2 MiB, THP as fallback).
    Contiguous,
    /// Demand-paged 4 KiB pages.
    Paged4k,
    /// 4 KiB pages allocated after free memory was scattered (`--fragment`).
    Fragmented4k,
}

impl Memory {
    pub fn name(self) -> &'static str {
        match self {
            Memory::Contiguous => "contiguous",
            Memory::Paged4k => "4k",
            Memory::Fragmented4k => "4k-fragmented",
        }
    }
}

/// The study's settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RowbufferConfig {
    /// The streaming check behind a default array size (`crate::measure::reach::stream`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<crate::measure::reach::stream::StreamCheck>,
    pub kernels: Vec<Kernel>,
    pub offsets: Vec<u64>,
    pub array_bytes: u64,
    pub reps: usize,
    pub samples: usize,
    pub cpus: Vec<usize>,
    pub isa: Isa,
    pub fragment_bytes: Option<u64>,
    pub probe: bool,
    pub probe_bases: usize,
    pub reserve_huge: bool,
    pub seed: u64,
    /// The interleave model of every socket, when one is known (it chose the default range).
    #[serde(default)]
    pub model: Option<ModelInfo>,
    /// Why the OFFSET range is what it is, in words.
    #[serde(default)]
    pub range: String,
    /// Memory-controller events asked for besides the controllers' named ones.
    #[serde(default)]
    pub counters: Vec<counters::CounterSpec>,
    /// A bank mapping as XOR functions (`--bank-xor`), for the dips it predicts.
    #[serde(default)]
    pub bank_hash: Option<BankHash>,
    /// Which pass of each point the curves, dips and summaries use.
    #[serde(default)]
    pub stat: sweep::Stat,
}

/// One sweep: a kernel on one buffer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Curve {
    pub kernel: Kernel,
    pub memory: Memory,
    pub rep: usize,
    pub buffer: BufferReport,
    pub points: Vec<sweep::Point>,
    pub detection: detect::Detection,
}

/// Where the three arrays together fall short of the size from which one core streams from
/// memory: part of each pass may come from a cache, which flattens the dips.
fn streaming_finding(cfg: &RowbufferConfig) -> Option<Finding> {
    let s = cfg.streaming?;
    (3 * cfg.array_bytes < s.from_bytes).then(|| {
        let text = format!(
            "the arrays ({} together) are smaller than the {} from which streams come from memory ({}): part of each pass may be served from a cache, which makes dips shallower (not elsewhere); --array-size {} puts them in memory and takes about {:.1}× as long",
            format_bytes(3 * cfg.array_bytes),
            format_bytes(s.from_bytes),
            s.describe(),
            s.from_bytes
                .div_ceil(3)
                .next_multiple_of(256 * cfg.cpus.len().max(1) as u64),
            s.from_bytes as f64 / (3 * cfg.array_bytes) as f64
        );
        // Advice on a check whose readings contradict a cache is not given as fact.
        let cites = vec![Cited::value("the streaming check's rate", s.gbs, "GB/s", false)];
        if s.coherent() {
            Finding::citing(text, cites)
        } else {
            Finding::unconfirmed(
                text,
                cites,
                "the streaming check it rests on read a smaller set slower than a larger one, so the machine moved between its readings",
            )
        }
    })
}

/// A kernel on one memory layout, over all repetitions and offsets.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LayoutSummary {
    pub kernel: Kernel,
    pub memory: Memory,
    /// Highest, median and lowest point medians, GB/s.
    pub peak_gbs: f64,
    pub median_gbs: f64,
    pub worst_gbs: f64,
    /// Coefficient of variation of the point medians over offsets and repetitions.
    pub cv: f64,
    pub points: usize,
    pub dips: usize,
    /// Points resting on disturbed samples: left out of peak, median and worst while any point
    /// is clean (absent in files before schema 4).
    #[serde(default)]
    pub disturbed_points: usize,
    /// Clean points left out of peak and worst as outliers (modified Z-score above 3.5).
    #[serde(default)]
    pub outlying_points: usize,
    /// One point's noise: the median over its points of half the median's confidence interval,
    /// as a share of the median. Two layouts' figures closer than the sum of theirs are the
    /// same (0 in files before it was kept).
    #[serde(default)]
    pub point_noise: f64,
}

impl LayoutSummary {
    /// Whether its figures rest on disturbed points only.
    pub fn disturbed(&self) -> bool {
        self.disturbed_points >= self.points && self.points > 0
    }
}

/// What the DIMM model predicts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Prediction {
    pub model: Interleave,
    pub source: String,
    /// Bank cycle in the address space, bytes.
    pub bank_cycle_bytes: u64,
    /// Expected dip period in OFFSET (COPY's arrays are two strides apart), bytes.
    pub offset_period_bytes: u64,
    /// How the measured period compares, in words.
    pub verdict: String,
}

/// What a given XOR bank hash predicts for COPY over the swept range.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HashPrediction {
    pub hash: BankHash,
    /// Offsets where at least half of COPY's line pairs (a and c, two strides apart) fall in
    /// one bank and different rows.
    pub dips: Vec<u64>,
    /// Offsets where COPY dipped on contiguous memory in two repetitions.
    pub measured: Vec<u64>,
    pub verdict: String,
}

/// Scattering free memory before the fragmented sweep.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Fragmentation {
    pub held_bytes: u64,
    pub released_bytes: u64,
}

/// The command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RowbufferResults {
    pub method: String,
    pub config: RowbufferConfig,
    pub curves: Vec<Curve>,
    pub summaries: Vec<LayoutSummary>,
    pub prediction: Option<Prediction>,
    /// The dips a given bank hash predicts (`--bank-xor`).
    #[serde(default)]
    pub hash_prediction: Option<HashPrediction>,
    pub probe: Option<probe::ProbeResults>,
    pub fragmentation: Option<Fragmentation>,
    pub advice: Vec<Finding>,
    pub findings: Vec<Finding>,
    /// What could not run here, with the reason.
    pub skipped: Vec<String>,
}

impl RowbufferConfig {
    fn elements(&self) -> usize {
        (self.array_bytes / 8) as usize
    }

    /// The HPCCG problem of each thread: the footprint of COPY's two arrays, shared out.
    pub fn grid(&self) -> hpccg::Grid {
        hpccg::Grid::for_bytes(2 * self.array_bytes / self.cpus.len().max(1) as u64)
    }

    /// Bytes of one layout's buffer: what the largest offset needs, for every kernel swept.
    pub fn buffer_bytes(&self) -> u64 {
        let max = *self.offsets.last().expect("offsets");
        let stream = sweep::buffer_bytes(self.elements(), max);
        if self.kernels.contains(&Kernel::Hpccg) {
            stream.max(hpccg::buffer_bytes(self.grid(), self.cpus.len(), max))
        } else {
            stream
        }
    }

    /// Sweep steps in total, for the progress bar.
    pub fn total_steps(&self) -> u64 {
        let layouts = 2 + self.fragment_bytes.is_some() as u64;
        layouts * self.reps as u64 * self.kernels.len() as u64 * self.offsets.len() as u64
    }
}

fn allocate(memory: Memory, cfg: &RowbufferConfig, env: &Environment) -> Result<Buffer> {
    let req = BufferRequest {
        bytes: cfg.buffer_bytes(),
        kind: match memory {
            Memory::Contiguous => PageKind::Huge1G,
            _ => PageKind::Base4K,
        },
        node: None,
        dax: None,
    };
    let mut b = match memory {
        Memory::Contiguous => Buffer::allocate_preferring(req, env)?,
        _ => Buffer::allocate(req, env)?,
    };
    b.touch();
    Ok(b)
}

/// How the study ran, in words.
fn method(cfg: &RowbufferConfig) -> String {
    let mut text = format!(
        "STREAM {} with arrays of {} laid out as STREAM does (a, b, c each N + OFFSET elements apart) in one buffer per layout and repetition; OFFSET swept {} .. {} in {} B steps ({}); {} thread(s) on CPUs {}, {}; per offset one warm-up pass and {} timed passes (each timed from the earliest thread's start to the latest end; passes in which a thread lost its CPU dropped and counted), {} GB/s of program bytes (STREAM counting; DRAM traffic adds one read-for-ownership per stored element); {} repetition(s), a fresh buffer each",
        cfg.kernels
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", "),
        format_bytes(cfg.array_bytes),
        format_bytes(cfg.offsets[0]),
        format_bytes(*cfg.offsets.last().expect("offsets")),
        cfg.offsets.get(1).map_or(0, |o| o - cfg.offsets[0]),
        cfg.range,
        cfg.cpus.len(),
        memsight_core::units::format_list(&cfg.cpus),
        if sweep::aligned(&cfg.offsets) {
            format!("{} kernels", cfg.isa.name())
        } else {
            "scalar kernels (offsets not all multiples of 64 B leave the arrays unaligned for vector loads)".to_string()
        },
        cfg.samples,
        match cfg.stat {
            sweep::Stat::Median => "the median pass's",
            sweep::Stat::Best => "the best pass's (as STREAM reports)",
        },
        cfg.reps
    );
    if cfg.kernels.contains(&Kernel::Hpccg) {
        let g = cfg.grid();
        text.push_str(&format!(
            "; HPCCG: each thread solves its own {n}³-point 27-point-stencil system (CSR; {} of matrix and vectors, in HPCCG's order values, columns, row pointers, x, r, p, Ap, b, each followed by OFFSET bytes) with {} CG iterations per timed solve from x = 0; GB/s of program bytes per iteration (matrix values and columns, row pointers, x gathered once, Ap written, two dot products, three vector updates); every solve's residual must fall and be identical across offsets and threads; time per solve is the team's span of one timed solve",
            format_bytes(g.bytes()),
            hpccg::ITERATIONS,
            n = g.n
        ));
    }
    text
}

/// What the contiguous layout really got: a THP fallback, hidden frame numbers.
fn contiguity_findings(curves: &[Curve]) -> Vec<String> {
    let mut findings = Vec::new();
    if let Some(c) = curves.iter().find(|c| c.memory == Memory::Contiguous) {
        if !c.buffer.kind.is_huge() || c.buffer.kind == PageKind::Thp {
            findings.push(format!(
                "contiguous memory fell back to {} ({}): physically contiguous only within 2 MiB; for the setting of the Catamount paper (Ferreira et al., CUG 2008) reserve hugetlb pages (--reserve-huge as root)",
                c.buffer.kind,
                c.buffer.warnings.join("; ")
            ));
        }
        if let Some(p) = &c.buffer.physical
            && !p.frames_visible
        {
            findings.push("physical frame numbers are hidden (not root): contiguity is not reported, and the probe used only bits inside one huge page".into());
        }
    }
    findings
}

/// Reserves the hugetlb pages the contiguous layout will use for the run: 1 GiB pages where the
/// kernel can still assemble them, else 2 MiB. Released when the guard drops: at the end, on an
/// error and after Ctrl-C alike.
fn reserve(cfg: &RowbufferConfig, skipped: &mut Vec<String>) -> Option<Reservation> {
    let bytes = cfg.buffer_bytes();
    let mut why = Vec::new();
    for (kind, spare) in [(PageKind::Huge1G, 1), (PageKind::Huge2M, 2)] {
        match Reservation::ensure(kind, bytes.div_ceil(kind.page_bytes()) + spare) {
            Ok(r) => return r,
            Err(e) => why.push(format!("{kind}: {e}")),
        }
    }
    skipped.push(format!("huge page reservation: {}", why.join("; ")));
    None
}

/// The memory controllers to count on, when the kernel exposes them and lets us open them;
/// otherwise why not, once, in `skipped`.
fn controllers(cfg: &RowbufferConfig, skipped: &mut Vec<String>) -> Option<counters::Controllers> {
    let fs = memsight_core::sysfs::FsRoot::from_env();
    let c = counters::Controllers::plan(&fs, &cfg.counters)
        .map_err(|why| skipped.push(why))
        .ok()?;
    // Open them once now: a refusal is said here, not at every point.
    c.start().map_err(|why| skipped.push(why)).ok()?.finish();
    Some(c)
}

/// Where the controllers counted the most of each event on contiguous memory, against where
/// bandwidth was lowest: row conflicts explain a dip when the two offsets meet.
fn counter_findings(curves: &[Curve], stat: sweep::Stat) -> Vec<String> {
    let mut out = Vec::new();
    for c in curves
        .iter()
        .filter(|c| c.memory == Memory::Contiguous && c.rep == 0)
    {
        let Some(worst) = c
            .points
            .iter()
            .min_by(|a, b| a.value(stat).total_cmp(&b.value(stat)))
        else {
            continue;
        };
        let events: std::collections::BTreeSet<&String> =
            c.points.iter().flat_map(|p| p.counts.keys()).collect();
        for e in events {
            let at = |p: &sweep::Point| p.counts.get(e).copied().unwrap_or(0);
            let (Some(lo), Some(hi)) = (
                c.points.iter().min_by_key(|p| at(p)),
                c.points.iter().max_by_key(|p| at(p)),
            ) else {
                continue;
            };
            out.push(format!(
                "{} on contiguous memory, {e}: {}–{} per point, the most at OFFSET {}; bandwidth is lowest at OFFSET {}{}",
                c.kernel.name(),
                at(lo),
                at(hi),
                format_bytes(hi.offset_bytes),
                format_bytes(worst.offset_bytes),
                if hi.offset_bytes == worst.offset_bytes { " (the same point: the controller sees the conflicts)" } else { "" }
            ));
        }
    }
    out
}

/// What the guest cannot see of the memory system.
fn hypervisor_finding(env: &Environment) -> Option<String> {
    let hv = env.cpu.hypervisor.as_deref()?;
    Some(format!(
        "running under a hypervisor ({hv}): physical contiguity, frame numbers and the probe's bank bits are the guest's view (guest-physical addresses); the dips follow the host's mapping of those frames, which memsight cannot see, so a missing or irregular period here says little about the DIMMs"
    ))
}

/// Runs the study; returns results and whether it completed.
pub fn run(
    cfg: &RowbufferConfig,
    env: &Environment,
    tick: Tick<'_>,
) -> Result<Completed<RowbufferResults>> {
    let mut skipped = Vec::new();
    let controllers = controllers(cfg, &mut skipped);
    let mut findings: Vec<Finding> = hypervisor_finding(env)
        .into_iter()
        .map(Finding::from)
        .collect();
    let _reservation = if cfg.reserve_huge {
        reserve(cfg, &mut skipped)
    } else {
        None
    };
    let probe = run_probe(cfg, env, &mut skipped)?;
    let (curves, fragmentation) = layouts::sweep_layouts(cfg, env, controllers.as_ref(), tick)?;
    let complete = !cancel::requested();
    findings.extend(curve_findings(cfg, &curves));
    let summaries = summarise(&curves, cfg);
    let prediction = cfg.model.as_ref().map(|m| advice::predict(m, &curves, cfg));
    let hash_prediction = cfg
        .bank_hash
        .as_ref()
        .map(|h| advice::predict_hash(h, &curves, cfg));
    if prediction.is_none() {
        skipped.push("period prediction: no DIMM inventory (SMBIOS unreadable here): pass --dmidecode FILE or --banks/--ranks/--channels/--row-bytes".into());
    }
    let advice = advice::advise(&summaries, &curves, cfg);
    findings.extend(advice::variance_findings(&summaries));
    let method = method(cfg);
    Ok(Completed::new(
        RowbufferResults {
            method,
            config: cfg.clone(),
            curves,
            summaries,
            prediction,
            hash_prediction,
            probe,
            fragmentation,
            advice,
            findings,
            skipped,
        },
        complete,
    ))
}

/// The row-conflict probe, unless `--no-probe`; what it could not test goes to `skipped`.
fn run_probe(
    cfg: &RowbufferConfig,
    env: &Environment,
    skipped: &mut Vec<String>,
) -> Result<Option<probe::ProbeResults>> {
    if !cfg.probe {
        skipped.push("row-conflict probe: --no-probe".into());
        return Ok(None);
    }
    let p = probe::run(env, cfg.probe_bases, cfg.seed)?;
    if let Some(why) = &p.high_bits_skipped {
        skipped.push(format!(
            "row-conflict probe above bit {}: {why}; bank functions that use higher address bits were not tested",
            p.max_bit
        ));
    }
    Ok(Some(p))
}

/// What the sweeps say beside the advice: streaming stores, contiguity, the controllers'
/// counts and the solver's times.
fn curve_findings(cfg: &RowbufferConfig, curves: &[Curve]) -> Vec<Finding> {
    let mut findings: Vec<Finding> = streaming_finding(cfg).into_iter().collect();
    findings.extend(contiguity_findings(curves).into_iter().map(Finding::from));
    findings.extend(
        counter_findings(curves, cfg.stat)
            .into_iter()
            .map(Finding::from),
    );
    findings.extend(hpccg::time_findings(curves, cfg.stat));
    findings
}

/// One kernel's sweep over every offset on one buffer.
fn sweep_one(
    kernel: Kernel,
    cfg: &RowbufferConfig,
    counters: Option<&counters::Controllers>,
    buf: &mut Buffer,
    tick: Tick<'_>,
) -> Result<Vec<sweep::Point>> {
    match kernel.stream() {
        Some(op) => sweep::run(
            &sweep::Plan {
                op,
                isa: cfg.isa,
                cpus: &cfg.cpus,
                elements: cfg.elements(),
                offsets: &cfg.offsets,
                samples: cfg.samples,
                counters,
            },
            buf,
            tick,
        ),
        None => hpccg::run(
            &hpccg::Plan {
                grid: cfg.grid(),
                cpus: &cfg.cpus,
                offsets: &cfg.offsets,
                samples: cfg.samples,
                counters,
            },
            buf,
            tick,
        ),
    }
}

fn summarise(curves: &[Curve], cfg: &RowbufferConfig) -> Vec<LayoutSummary> {
    let mut out = Vec::new();
    for &op in &cfg.kernels {
        for memory in [Memory::Contiguous, Memory::Paged4k, Memory::Fragmented4k] {
            let set: Vec<&Curve> = curves
                .iter()
                .filter(|c| c.kernel == op && c.memory == memory)
                .collect();
            let points: Vec<&sweep::Point> = set.iter().flat_map(|c| c.points.iter()).collect();
            if points.is_empty() {
                continue;
            }
            let disturbed = points.iter().filter(|p| p.gbs.rests_on_disturbed()).count();
            // Clean points only, while there are any: a disturbed pass only loses bandwidth,
            // so it reads as a dip that is not there.
            let values: Vec<f64> = points
                .iter()
                .filter(|p| disturbed == points.len() || !p.gbs.rests_on_disturbed())
                .map(|p| p.value(cfg.stat))
                .collect();
            let s = summarize(&values);
            let noise: Vec<f64> = points
                .iter()
                .filter(|p| p.gbs.median > 0.0)
                .map(|p| (p.gbs.ci_high - p.gbs.ci_low) / (2.0 * p.gbs.median))
                .filter(|n| n.is_finite())
                .collect();
            // Peak and worst over the points that are not outliers: one lucky or unlucky point
            // is not the layout's best or worst case.
            let sigma = memsight_core::stats::mad_sigma(&values);
            let typical: Vec<f64> = values
                .iter()
                .copied()
                .filter(|v| sigma <= 0.0 || (v - s.median).abs() <= 3.5 * sigma)
                .collect();
            let (lo, hi) = typical
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(*v), h.max(*v))
                });
            out.push(LayoutSummary {
                kernel: op,
                memory,
                peak_gbs: hi,
                median_gbs: s.median,
                worst_gbs: lo,
                cv: s.cv,
                points: points.len(),
                dips: set.iter().map(|c| c.detection.dips.len()).sum(),
                disturbed_points: disturbed,
                outlying_points: values.len() - typical.len(),
                point_noise: if noise.is_empty() {
                    0.0
                } else {
                    memsight_core::stats::median(&noise)
                },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_recurring_dips_count() {
        let step = 8192;
        let reps = vec![
            vec![120 << 10, 640 << 10],
            vec![128 << 10, 920 << 10],
            vec![248 << 10],
        ];
        // 120 KiB and 128 KiB are one step apart: the same dip seen twice; the rest once.
        assert_eq!(recurring_dips(&reps, step), vec![120 << 10]);
        assert!(
            recurring_dips(&[vec![1 << 20]], step).is_empty(),
            "one repetition confirms nothing"
        );
    }
}
