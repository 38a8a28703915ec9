//! `memsight scan`: find the slow memory. Most of the free memory is taken, each page's physical
//! frame read (`/proc/self/pagemap`, root only), the pages grouped by physical range (1 GiB by
//! default), and every range measured on its own: read bandwidth with every allowed CPU
//! streaming over that range's pages, and idle latency with a chase confined to them. Each range
//! is mapped to what the kernel knows (NUMA node, memory blocks and zones, hot-plug state, CXL
//! region) and put beside the EDAC error counts; ranges that stand out within their node are
//! named with what to do. Without root the frames are hidden and the scan groups by virtual
//! range instead, which still finds a slow node but not a slow part.
//!
//! Intel MLC's `--memory_bandwidth_scan` measures every 1 GB physical range the same way (Intel
//! only, closed source, no mapping to parts).

mod findings;
mod measure;
mod suite;
pub use suite::Scan;

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use std::collections::BTreeMap;

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::edac::{self, Controller};
use memsight_core::env::Environment;
use memsight_core::memblocks;
use memsight_core::stats::Summary;
use memsight_core::sysfs::FsRoot;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use findings::{flag, judged, robust_scores};

const PAGE: usize = 4096;
/// Most chase elements per range: 2^20 lines of 128 B spread over the range's pages, far more
/// than any core's caches hold.
const MAX_CHASE_ELEMENTS: usize = 1 << 20;

/// What the scan measures.
#[derive(Debug, Clone)]
pub struct ScanSettings {
    /// Bytes to scan; `None`: most of the memory this process may use (see [`default_size`]).
    pub size: Option<u64>,
    /// Physical (or, without root, virtual) range per figure.
    pub granule: u64,
    /// CPUs streaming each range; `None`: every allowed CPU.
    pub cpus: Option<Vec<usize>>,
    pub page_kind: PageKind,
    /// Skip the latency chase (bandwidth only: twice as fast).
    pub no_latency: bool,
    pub sampling: crate::measure::sampling::Sampling,
}

impl Default for ScanSettings {
    fn default() -> Self {
        ScanSettings {
            size: None,
            granule: 1 << 30,
            cpus: None,
            page_kind: PageKind::Thp,
            no_latency: false,
            sampling: crate::measure::sampling::Sampling {
                target_ci: 0.03,
                min_samples: 5,
                point_budget: 0.25,
                sample_ms: 5.0,
            },
        }
    }
}

/// One range's figures and what it maps to.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RangeFigures {
    /// First address of the range (physical when `frames_visible`, else virtual offset).
    pub start: u64,
    pub granule: u64,
    /// Bytes of the scan's buffer that lie in the range.
    pub bytes: u64,
    pub node: Option<usize>,
    /// Memory blocks overlapping the range, and their zones; `movable`: the blocks can only be
    /// in the Movable zone, where hot-plugged memory is onlined.
    pub blocks: Vec<u64>,
    pub zones: Vec<String>,
    pub movable: bool,
    pub cxl_region: Option<String>,
    /// GB/s of program bytes, every CPU.
    pub read_gbs: Option<Summary>,
    /// ns per dependent load, one CPU.
    pub latency_ns: Option<Summary>,
    /// Robust score of the bandwidth within the node (negative: slower).
    pub read_score: Option<f64>,
    pub latency_score: Option<f64>,
    pub flagged: bool,
    /// Measured twice because it stood out the first time (the better figure is kept).
    #[serde(default)]
    pub remeasured: bool,
}

/// The scan's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScanResults {
    pub method: String,
    /// False without root: ranges are virtual.
    pub frames_visible: bool,
    pub granule: u64,
    pub scanned_bytes: u64,
    pub seconds: f64,
    pub cpus: Vec<usize>,
    pub ranges: Vec<RangeFigures>,
    /// EDAC counts at the end of the scan.
    pub memory_errors: Vec<Controller>,
    /// Where DIMM and channel come from, or why they do not.
    pub dimm_mapping: String,
    pub findings: Vec<memsight_core::finding::Finding>,
}

impl ScanSettings {
    /// Refuses what cannot be scanned.
    pub fn check(&self) -> Result<()> {
        if !self.granule.is_power_of_two() || self.granule < (2 << 20) {
            return Err(Error::input(format!(
                "--granule {}: a power of two of at least 2 MiB",
                format_bytes(self.granule)
            )));
        }
        Ok(())
    }
}

/// Most of what this process may use: 90% of it, leaving at least 1 GiB for the system, in
/// whole 2 MiB pages, at most 64 GiB so a default scan takes minutes.
pub fn default_size(env: &Environment) -> u64 {
    let usable = env.memory.usable_bytes().unwrap_or(1 << 30);
    // The buffer check allows 90% of the usable memory; stay a little under it.
    let most = (usable / 10 * 9).min(usable.saturating_sub(1 << 30));
    // Whole 2 MiB pages.
    (most.saturating_sub(64 << 20) & !((2 << 20) - 1)).clamp(256 << 20, 64 << 30)
}

/// Runs the scan; the flag is false when interrupted (the ranges measured so far are kept).
pub fn run(a: &ScanSettings, env: &Environment, tick: Tick<'_>) -> Result<Completed<ScanResults>> {
    a.check()?;
    let started = std::time::Instant::now();
    let size = a.size.unwrap_or_else(|| default_size(env));
    let cpus = match &a.cpus {
        Some(c) => c.clone(),
        None => env.allowed_cpus.clone(),
    };
    let (rule, sample_ns) = a.sampling.rule()?;
    tick(&format!("allocating and touching {}", format_bytes(size)));
    let (mut buf, frames, visible) = allocate(a, size, env)?;
    let groups = group(&frames, visible, a.granule);
    let fs = FsRoot::live();
    let mut scan = Scanning {
        a,
        buf: &mut buf,
        groups: &groups,
        cpus: &cpus,
        rule: &rule,
        sample_ns,
    };
    let (mut ranges, complete) = scan.measure(visible, &fs, tick)?;
    findings::score(&mut ranges);
    scan.remeasure_suspects(&mut ranges, tick)?;
    let memory_errors = edac::controllers(&fs);
    let dimm_mapping = dimm_mapping(&memory_errors);
    let findings = findings::findings(&ranges, visible, &memory_errors, &dimm_mapping);
    let seconds = started.elapsed().as_secs_f64();
    Ok(Completed::new(
        ScanResults {
            method: method(a, size, visible, &cpus),
            frames_visible: visible,
            granule: a.granule,
            scanned_bytes: ranges.iter().map(|r| r.bytes).sum(),
            seconds,
            cpus,
            ranges,
            memory_errors,
            dimm_mapping,
            findings,
        },
        complete,
    ))
}

/// The scanned buffer, touched, with each whole page's physical frame and whether frames are
/// visible (root) at all.
fn allocate(
    a: &ScanSettings,
    size: u64,
    env: &Environment,
) -> Result<(Buffer, Vec<Option<u64>>, bool)> {
    let mut buf = Buffer::allocate_preferring(
        BufferRequest {
            bytes: size,
            kind: a.page_kind,
            node: None,
            dax: None,
        },
        env,
    )?;
    buf.touch();
    let (mut frames, visible) = memsight_core::pagemap::frames(buf.as_ptr() as usize, buf.len())
        .map_err(|e| Error::system(format!("cannot read /proc/self/pagemap: {e}")))?;
    // Whole pages only: a last partial page is not the scan's to read.
    frames.truncate(buf.len() / PAGE);
    Ok((buf, frames, visible))
}

/// What measuring the ranges needs: the buffer, its pages grouped by range, and how to sample.
struct Scanning<'a> {
    a: &'a ScanSettings,
    buf: &'a mut Buffer,
    groups: &'a BTreeMap<u64, Vec<usize>>,
    cpus: &'a [usize],
    rule: &'a memsight_core::stats::StopRule,
    sample_ns: f64,
}

impl Scanning<'_> {
    /// Every range in address order, mapped and measured; false when interrupted.
    fn measure(
        &mut self,
        visible: bool,
        fs: &FsRoot,
        tick: Tick<'_>,
    ) -> Result<(Vec<RangeFigures>, bool)> {
        let (blocks, cxl) = (memblocks::blocks(fs), memblocks::cxl_regions(fs));
        let (a, groups) = (self.a, self.groups);
        let mut ranges = Vec::new();
        for (i, (&start, pages)) in groups.iter().enumerate() {
            if cancel::requested() {
                return Ok((ranges, false));
            }
            tick(&format!(
                "range {}/{} at {start:#x}: {} pages",
                i + 1,
                groups.len(),
                pages.len()
            ));
            let mut r = map_range(start, a.granule, pages, visible, &blocks, &cxl, self.buf);
            r.read_gbs = measure::bandwidth(self.buf, pages, self.cpus, self.rule, self.sample_ns)?;
            if !a.no_latency && !cancel::requested() {
                r.latency_ns =
                    measure::latency(self.buf, pages, self.cpus[0], self.rule, i as u64)?;
            }
            ranges.push(r);
        }
        Ok((ranges, true))
    }

    /// A neighbour's burst can make one range look slow: measure the ranges that stand out
    /// again and keep each one's better figure (a disturbance never makes memory faster), then
    /// judge again; only ranges slow both times are named.
    fn remeasure_suspects(&mut self, ranges: &mut [RangeFigures], tick: Tick<'_>) -> Result<()> {
        let suspects: Vec<usize> = (0..ranges.len()).filter(|&i| ranges[i].flagged).collect();
        for &i in &suspects {
            if cancel::requested() {
                break;
            }
            let (start, pages) = self.groups.iter().nth(i).expect("a range per group");
            tick(&format!("measuring range {start:#x} again"));
            let again = measure::bandwidth(self.buf, pages, self.cpus, self.rule, self.sample_ns)?;
            let r = &mut ranges[i];
            r.read_gbs = better(r.read_gbs.take(), again, true);
            if r.latency_ns.is_some() {
                let again =
                    measure::latency(self.buf, pages, self.cpus[0], self.rule, i as u64 + 1)?;
                let r = &mut ranges[i];
                r.latency_ns = better(r.latency_ns.take(), again, false);
            }
            ranges[i].remeasured = true;
        }
        if !suspects.is_empty() {
            findings::score(ranges);
        }
        Ok(())
    }
}

/// The better of two measurements of one range: higher bandwidth, or lower latency.
fn better(a: Option<Summary>, b: Option<Summary>, higher: bool) -> Option<Summary> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if (b.median > a.median) == higher {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}

/// Page indices of the buffer per range start: by physical frame when visible, else by offset.
pub fn group(frames: &[Option<u64>], visible: bool, granule: u64) -> BTreeMap<u64, Vec<usize>> {
    let mut out: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, f) in frames.iter().enumerate() {
        let addr = match (visible, f) {
            (true, Some(pfn)) => pfn * PAGE as u64,
            (true, None) => continue,
            (false, _) => (i * PAGE) as u64,
        };
        out.entry(addr / granule * granule).or_default().push(i);
    }
    out
}

/// What the kernel knows about a range.
fn map_range(
    start: u64,
    granule: u64,
    pages: &[usize],
    visible: bool,
    blocks: &[memblocks::MemoryBlock],
    cxl: &[memblocks::CxlRegion],
    buf: &Buffer,
) -> RangeFigures {
    let over: Vec<&memblocks::MemoryBlock> = if visible {
        memblocks::overlapping(blocks, start, granule)
    } else {
        Vec::new()
    };
    let mut zones: Vec<String> = over.iter().filter_map(|b| b.zones.clone()).collect();
    zones.sort();
    zones.dedup();
    let node = over.iter().find_map(|b| b.node).or_else(|| {
        // Virtual ranges (or no memory blocks): ask the kernel where a few pages live.
        let first = pages.first()? * PAGE;
        let nodes = memsight_core::pagemap::page_nodes(buf.as_ptr() as usize + first, PAGE, 1);
        nodes.first().and_then(|&(n, _)| usize::try_from(n).ok())
    });
    RangeFigures {
        start,
        granule,
        bytes: (pages.len() * PAGE) as u64,
        node,
        blocks: over.iter().map(|b| b.index).collect(),
        zones,
        movable: over
            .iter()
            .any(|b| b.zones.as_deref().is_some_and(|z| z.trim() == "Movable")),
        cxl_region: cxl
            .iter()
            .find(|c| visible && c.start <= start && start < c.start + c.bytes)
            .map(|c| c.name.clone()),
        read_gbs: None,
        latency_ns: None,
        read_score: None,
        latency_score: None,
        flagged: false,
        remeasured: false,
    }
}

/// Whether DIMM and channel can be named from an address here.
fn dimm_mapping(mcs: &[Controller]) -> String {
    if mcs.is_empty() {
        "not exposed: no EDAC driver is loaded (usual in a VM), so neither DIMMs nor error counts are known".to_string()
    } else {
        format!(
            "not exposed by address: the EDAC driver ({}) counts errors per DIMM but the kernel publishes no address-to-DIMM decoding in sysfs; its DIMMs and counts are listed",
            mcs.iter()
                .filter_map(|m| m.driver_name.clone())
                .next()
                .unwrap_or_else(|| "unnamed".into())
        )
    }
}

fn method(a: &ScanSettings, size: u64, visible: bool, cpus: &[usize]) -> String {
    format!(
        "{} of {} pages touched, grouped by {} range of {} ({}); per range: read bandwidth with CPUs {} streaming over that range's pages (GB/s of program bytes, team-timed samples, disturbed samples dropped){}; ranges holding at least an eighth of their span scored within their node by median and MAD (robust z), flagged beyond ±3.5 and 10% off the median, measured again, and named only when they stand out both times",
        format_bytes(size),
        a.page_kind,
        if visible { "physical" } else { "virtual" },
        format_bytes(a.granule),
        if visible {
            "frames from /proc/self/pagemap"
        } else {
            "frames hidden without root: virtual ranges find a slow node, not a slow part"
        },
        memsight_core::units::format_list(cpus),
        if a.no_latency {
            String::new()
        } else {
            format!(
                "; idle latency of a chase confined to the range (up to {MAX_CHASE_ELEMENTS} lines at 128 B stride in random order over its pages, one CPU)"
            )
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_group_by_physical_frame_or_by_offset() {
        // Frames: two pages in the first 1 GiB, one in the third, one absent.
        let gib = 1u64 << 30;
        let frames = [Some(1), Some(2 * gib / 4096 + 5), None, Some(7)];
        let g = group(&frames, true, gib);
        assert_eq!(g.keys().copied().collect::<Vec<_>>(), [0, 2 * gib]);
        assert_eq!(g[&0], [0, 3]);
        // Hidden frames: consecutive offsets, 2 pages per 8 KiB granule.
        let g = group(&[Some(0); 5], false, 8192);
        assert_eq!(g.values().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    }

    #[test]
    fn bad_granules_are_refused() {
        for g in [3 << 20, 1 << 20] {
            let c = ScanSettings {
                granule: g,
                ..ScanSettings::default()
            };
            assert!(c.check().is_err());
        }
        assert!(ScanSettings::default().check().is_ok());
    }
}
