//! Memory tiers: DRAM, HBM, CXL expanders and persistent memory, each characterised as Intel's
//! Optane talk (Looi and Xu, Hot Chips 2019) characterised its two tiers.
//!
//! Per node of every tier (and DAX memory given with `--dax`): idle read latency (pointer chase)
//! and write latency (the same chase writing every line it visits), read, write and
//! non-temporal-write bandwidth, the loaded-latency knee with read traffic, and bandwidth of
//! random whole-block accesses per block size (the media's access granularity), beside what the
//! firmware claims (ACPI HMAT). Where a memory-side cache sits in front of a node, the working
//! set is swept against it ([`nearmem`]); where a slower tier exists, pages are interleaved by
//! weight between a fast and a slow node ([`sweeps`]).
//!
//! A composite study: besides the measuring layer it runs other suites as parts of its own
//! (the loaded-latency curve of `loaded`, the DIMM inventory and ceilings of `dimms`, the
//! firmware's claims as `numa` reads them), so that a tier is judged with the same figures
//! those commands print. `scripts/check-layers.py` allows it these imports and no other suite.

mod estimate;
pub use estimate::estimate;
pub mod granularity;
pub mod measure;
pub mod nearmem;
pub mod plan;
mod suite;
pub mod sweeps;
pub mod weights;
pub use suite::{Tiers, TiersPlan};

use crate::measure::level::Level;
use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::buffer::{DaxTarget, PageKind};
use memsight_core::env::Environment;
use memsight_core::sysfs::FsRoot;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use memsight_kernels::granular::Access;

use measure::{MemTarget, TargetFigures, Where};
use plan::{NearMemory, TierPlan};
use sweeps::{NearSweep, WeightedSweep};

/// The parts of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Part {
    Latency,
    Bandwidth,
    Loaded,
    Granularity,
    Near,
    Weighted,
}

impl Part {
    pub const ALL: [Part; 6] = [
        Part::Latency,
        Part::Bandwidth,
        Part::Loaded,
        Part::Granularity,
        Part::Near,
        Part::Weighted,
    ];

    /// Name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            Part::Latency => "latency",
            Part::Bandwidth => "bandwidth",
            Part::Loaded => "loaded",
            Part::Granularity => "granularity",
            Part::Near => "near",
            Part::Weighted => "weighted",
        }
    }
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct TiersSettings {
    /// Only these nodes (default: every allowed node with memory).
    pub nodes: Option<Vec<usize>>,
    /// Also measure DAX memory (`--dax`).
    pub dax: Option<&'static DaxTarget>,
    /// Measure only the DAX memory, no node.
    pub dax_only: bool,
    /// Measure one node per tier (the one nearest the first CPUs), as `memsight run` does by
    /// default to bound its time on many-node machines.
    pub one_per_tier: bool,
    /// Near-memory size to sweep against (`--near-size`), overriding what the system says.
    pub near_size: Option<u64>,
    /// Measure only where there is something to compare (more than one tier, or near memory
    /// in front of far memory), as `memsight run` does; the command measures one tier anyway.
    pub only_if_tiered: bool,
    /// Installed DRAM when SMBIOS says persistent memory runs in Memory Mode.
    pub memory_mode_dram: Option<u64>,
    /// A dmidecode text or binary dump to read Memory Mode from (when `memory_mode_dram` is
    /// not already known).
    pub dmidecode: Option<std::path::PathBuf>,
    pub parts: Vec<Part>,
    pub blocks: Vec<usize>,
    pub accesses: Vec<Access>,
    /// Access sizes of the idle-latency-by-size chase (each step reads a whole block).
    pub latency_blocks: Vec<usize>,
    /// Working set of the latency points (default max(4 × LLC, 256 MiB)).
    pub latency_bytes: Option<u64>,
    /// Working set per thread of the bandwidth points; `None`: [`TiersSettings::bandwidth_for`].
    pub bandwidth_bytes: Option<u64>,
    /// The streaming check default bandwidth sizes follow: filled by [`run`] from the
    /// [`crate::measure::machine::Machine`] it is given (leave `None`).
    pub streaming: Option<crate::measure::reach::stream::StreamCheck>,
    /// Working set of all threads of a granularity point (default as latency).
    pub granularity_bytes: Option<u64>,
    pub page_kind: PageKind,
    /// Per point.
    pub sampling: crate::measure::sampling::Sampling,
}

impl TiersSettings {
    /// What `memsight run` measures at `level`: nothing in a quick run; every part with shorter
    /// points otherwise, one node per tier unless thorough. The run adds Memory Mode's DRAM from
    /// its inventory.
    pub fn at_level(self, level: Level) -> Option<Self> {
        if level == Level::Quick {
            return None;
        }
        Some(TiersSettings {
            one_per_tier: level != Level::Thorough,
            only_if_tiered: true,
            sampling: crate::measure::sampling::Sampling {
                min_samples: 5,
                point_budget: 0.2,
                ..self.sampling
            },
            ..self
        })
    }
}

impl Default for TiersSettings {
    fn default() -> Self {
        TiersSettings {
            nodes: None,
            dax: None,
            dax_only: false,
            one_per_tier: false,
            only_if_tiered: false,
            near_size: None,
            memory_mode_dram: None,
            dmidecode: None,
            parts: Part::ALL.to_vec(),
            blocks: granularity::BLOCKS.to_vec(),
            accesses: Access::ALL.to_vec(),
            latency_blocks: vec![64, 128, 256, 512],
            latency_bytes: None,
            bandwidth_bytes: None,
            streaming: None,
            granularity_bytes: None,
            page_kind: PageKind::Thp,
            sampling: crate::measure::sampling::Sampling {
                target_ci: 0.02,
                min_samples: 7,
                point_budget: 0.3,
                sample_ms: 10.0,
            },
        }
    }
}

impl TiersSettings {
    /// Working set per thread of a bandwidth point on `threads` CPUs: as given, or 128 MiB and
    /// the threads together at least the streaming check's size (`crate::measure::reach::stream`).
    pub fn bandwidth_for(&self, threads: usize) -> u64 {
        self.bandwidth_bytes
            .unwrap_or_else(|| crate::measure::reach::stream::cell_bytes(self.streaming, threads))
    }
}

/// The `tiers` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TiersResults {
    pub method: String,
    pub plan: TierPlan,
    /// One entry per measured node (fastest tier first), then DAX memory.
    pub targets: Vec<TargetFigures>,
    pub near: Option<NearSweep>,
    pub weighted: Option<WeightedSweep>,
    pub findings: Vec<memsight_core::finding::Finding>,
}

/// Builds the plan: tiers, near memory, weighted pair, and the notes on what does not apply.
pub fn make_plan(a: &TiersSettings, env: &Environment, fs: &FsRoot) -> Result<TierPlan> {
    let tiers = select_nodes(a, plan::tiers(&env.topology, env, fs))?;
    let mut notes = Vec::new();
    if tiers.iter().all(|t| t.id.is_none()) {
        notes.push("the kernel publishes no memory tiers (/sys/devices/virtual/memory_tiering, Linux 6.1+): nodes are grouped by the kind hwloc reports (HBM, DRAM, CXL, NVM)".to_string());
    }
    notes.extend(env.topology.memory_devices.iter().filter_map(device_note));
    let near = plan_near(a, env, fs, &tiers, &mut notes)?;
    let weighted = match plan::weighted(&tiers, fs) {
        Ok(w) => Some(w),
        Err(why) => {
            notes.push(format!("weighted interleave: {why}"));
            None
        }
    };
    let persistence = memsight_core::nvdimm::regions(fs);
    notes.extend(persistence.iter().map(memsight_core::nvdimm::describe));
    Ok(TierPlan {
        tiers,
        near,
        weighted,
        notes,
        persistence,
    })
}

/// The tiers' nodes `--nodes` and `--one-per-tier` keep; refused when none is left.
fn select_nodes(a: &TiersSettings, mut tiers: Vec<plan::Tier>) -> Result<Vec<plan::Tier>> {
    if let Some(only) = &a.nodes {
        for n in only {
            if !tiers.iter().any(|t| t.nodes.iter().any(|x| x.node == *n)) {
                return Err(Error::input(format!(
                    "node {n} is not a memory node this process may use (memsight env lists them)"
                )));
            }
        }
        for t in &mut tiers {
            t.nodes.retain(|x| only.contains(&x.node));
        }
        tiers.retain(|t| !t.nodes.is_empty());
    }
    // Before one node per tier is picked: picking reads the first tier's first node.
    if tiers.is_empty() {
        return Err(Error::input(
            "no NUMA node with memory and reachable CPUs is allowed here: check the cpuset (memsight env)",
        ));
    }
    if a.one_per_tier {
        let first = tiers[0].nodes[0].initiator;
        for t in &mut tiers {
            let keep = t
                .nodes
                .iter()
                .position(|n| n.initiator == first)
                .unwrap_or(0);
            let n = t.nodes.swap_remove(keep);
            t.nodes = vec![n];
        }
    }
    Ok(tiers)
}

/// The memory-side cache the working-set sweep runs against, on the first node sysfs gives one
/// for (else the fastest tier's first node), with the sizes it sweeps; notes where Memory Mode
/// supplied it or there is none.
fn plan_near(
    a: &TiersSettings,
    env: &Environment,
    fs: &FsRoot,
    tiers: &[plan::Tier],
    notes: &mut Vec<String>,
) -> Result<Option<NearMemory>> {
    let near_node = tiers
        .iter()
        .flat_map(|t| &t.nodes)
        .find(|n| {
            plan::near_memory(&env.topology, fs, n.node, None, None)
                .is_some_and(|(_, s)| s == plan::NearSource::Sysfs)
        })
        .or_else(|| tiers[0].nodes.first())
        .expect("a tier has nodes");
    let mode = memory_mode_dram(a)?;
    let near = plan::near_memory(&env.topology, fs, near_node.node, a.near_size, mode).map(
        |(bytes, source)| {
            // This process's memory limits apply to this machine, not to a recorded one.
            let live = env.topology.source == memsight_core::topology::TopologySource::Live;
            let usable = env.memory.usable_bytes().filter(|_| live);
            let (sizes, capped) = plan::near_sizes(bytes, near_node.memory_bytes, usable);
            NearMemory {
                node: near_node.node,
                bytes,
                source,
                sizes,
                capped,
            }
        },
    );
    if let (Some(n), Some(m)) = (&near, mode)
        && n.source == plan::NearSource::MemoryMode
    {
        notes.push(m.describe(n.bytes, memory_nodes(&env.topology)));
    }
    if near.is_none() {
        notes.push("no memory-side cache here (no sysfs memory_side_cache, no hwloc memory-side cache, no SMBIOS Memory Mode): the working-set sweep against near memory does not apply; --near-size SIZE runs it anyway (e.g. the L3 size)".to_string());
    }
    Ok(near)
}

/// What to say about a memory device hwloc reports outside the NUMA nodes.
fn device_note(d: &memsight_core::topology::MemoryDevice) -> Option<String> {
    let info = |k: &str| d.info.get(k).map(String::as_str);
    if let Some(t) = info("DAXType") {
        return Some(format!(
            "DAX device {} ({t}, {}): not a NUMA node here; measure it with --dax /dev/{} (or online it as a node with daxctl reconfigure-device --mode=system-ram)",
            d.name,
            info("Size").unwrap_or("size unknown"),
            d.name
        ));
    }
    if d.subtype.as_deref() == Some("CXLMem") {
        let cap: Vec<String> = [("CXLRAMSize", "volatile"), ("CXLPMEMSize", "persistent")]
            .iter()
            .filter_map(|(k, what)| Some(format!("{} {what}", info(k)?)))
            .collect();
        return Some(format!(
            "CXL memory device {} ({}): reachable once a region is created (cxl create-region) and onlined as a NUMA node or exposed as devdax (--dax)",
            d.name,
            cap.join(", ")
        ));
    }
    None
}

impl TiersSettings {
    /// Refuses block sizes the granularity sweep cannot use and accesses this CPU cannot do.
    pub fn check(&self) -> Result<()> {
        for &b in &self.blocks {
            if b < 64 || !b.is_power_of_two() || b > 1 << 20 {
                return Err(Error::input(format!(
                    "block {b} B: use a power of two from 64 B (a line) to 1 MiB"
                )));
            }
        }
        for a in &self.accesses {
            a.supported().map_err(Error::input)?;
        }
        for &b in &self.latency_blocks {
            if b < 64 || !b.is_power_of_two() || b > 4096 {
                return Err(Error::input(format!(
                    "--latency-blocks {b}: use a power of two from 64 B to 4 KiB"
                )));
            }
        }
        Ok(())
    }
}

/// Installed DRAM when SMBIOS says persistent memory runs in Memory Mode: as given (split over
/// this machine's nodes), or from the dmidecode dump given, with the sockets it describes (each
/// socket's DRAM caches its own far memory).
fn memory_mode_dram(a: &TiersSettings) -> Result<Option<plan::MemoryModeDram>> {
    match (a.memory_mode_dram, &a.dmidecode) {
        (Some(bytes), _) => Ok(Some(plan::MemoryModeDram { bytes, sockets: 1 })),
        (None, Some(path)) => {
            let d = crate::dimms::run(&crate::dimms::DimmsSettings {
                dmidecode: Some(path.clone()),
                ..Default::default()
            })?;
            Ok(d.memory_mode.then_some(plan::MemoryModeDram {
                bytes: d.dram_bytes,
                sockets: d.ceilings.sockets.len().max(1),
            }))
        }
        (None, None) => Ok(None),
    }
}

/// Nodes with memory on this machine (or recording).
fn memory_nodes(topo: &memsight_core::topology::Topology) -> usize {
    topo.numa_nodes
        .iter()
        .filter(|n| n.memory_bytes > 0)
        .count()
}

/// The plan alone, as results with nothing measured (`memsight tiers --plan`).
pub fn planned(a: &TiersSettings, env: &Environment) -> Result<TiersResults> {
    a.check()?;
    let plan = make_plan(a, env, &FsRoot::from_env())?;
    let findings = findings::findings(&plan, &[], None, None);
    Ok(TiersResults {
        method: "plan only (--plan): nothing was measured".to_string(),
        plan,
        targets: Vec::new(),
        near: None,
        weighted: None,
        findings,
    })
}

/// Measures the plan. Returns results and whether everything ran.
pub fn run(
    a: &TiersSettings,
    plan: &TierPlan,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    tick: Tick<'_>,
) -> Result<Completed<TiersResults>> {
    let (rule, sample_ns) = a.sampling.rule()?;
    // The sizes and the DAX target given as flags are checked before the reach probe that
    // sizes the rest, so that a bad flag is refused before anything is measured.
    check_given_sizes(a, plan, env)?;
    let wheres = wheres(a, plan)?;
    let (a, lat, in_memory) = &resolve_sets(a, env, machine)?;
    let mut targets = Vec::new();
    let mut complete = true;
    for w in &wheres {
        let (f, done) = measure::measure(w, a, env, machine, (rule, sample_ns), tick)?;
        targets.push(f);
        if !done {
            complete = false;
            break;
        }
    }
    let mut near = None;
    if complete
        && a.parts.contains(&Part::Near)
        && !a.dax_only
        && let Some(nm) = &plan.near
    {
        let cpus = plan
            .nodes()
            .find(|n| n.node == nm.node)
            .map(|n| n.cpus.clone())
            .unwrap_or_default();
        near = sweeps::near_sweep(nm, &cpus, a, env, rule, sample_ns, tick)?;
        complete &= !cancel::requested();
    }
    let mut weighted = None;
    let mut weighted_error = None;
    if complete
        && a.parts.contains(&Part::Weighted)
        && !a.dax_only
        && let Some(wp) = &plan.weighted
    {
        match sweeps::weighted_sweep(wp, measured(&targets, wp), a, env, rule, sample_ns, tick) {
            Ok(w) => weighted = Some(w),
            // Everything else was measured: keep it and say why the sweep is missing.
            Err(e) => weighted_error = Some(format!("weighted interleave not measured: {e}")),
        }
        complete &= !cancel::requested();
    }
    let mut findings = findings::findings(plan, &targets, near.as_ref(), weighted.as_ref());
    findings.extend(weighted_error.map(memsight_core::finding::Finding::from));
    let method = method(a, *lat, in_memory);
    Ok(Completed::new(
        TiersResults {
            method,
            plan: plan.clone(),
            targets,
            near,
            weighted,
            findings,
        },
        complete,
    ))
}

/// The config with its working sets resolved once, from the core's latency curve where not
/// given; with the latency working set and what it says about where that set sits.
fn resolve_sets(
    a: &TiersSettings,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
) -> Result<(TiersSettings, u64, String)> {
    let (lat, in_memory) = machine.working_set(a.latency_bytes, env)?;
    let streaming = match a.bandwidth_bytes {
        None if a.parts.contains(&Part::Bandwidth) || a.parts.contains(&Part::Weighted) => {
            machine.streaming(env)?.stream
        }
        _ => None,
    };
    let a = TiersSettings {
        latency_bytes: Some(lat),
        streaming,
        granularity_bytes: Some(a.granularity_bytes.unwrap_or(lat)),
        ..a.clone()
    };
    Ok((a, lat, in_memory))
}

/// The working sets given as flags for the parts that run, against the memory this process may
/// use (a bandwidth set is per thread: the largest node's team holds it once per CPU).
fn check_given_sizes(a: &TiersSettings, plan: &TierPlan, env: &Environment) -> Result<()> {
    use memsight_core::buffer::check_size;
    let part = |p: Part| a.parts.contains(&p);
    let given = [
        (Part::Latency, a.latency_bytes),
        (Part::Granularity, a.granularity_bytes),
    ];
    for (_, bytes) in given.into_iter().filter(|(p, _)| part(*p)) {
        bytes.map_or(Ok(()), |b| check_size(b, env))?;
    }
    if let (true, Some(bytes)) = (part(Part::Bandwidth), a.bandwidth_bytes) {
        let team = plan
            .tiers
            .iter()
            .flat_map(|t| &t.nodes)
            .map(|n| n.cpus.len())
            .max()
            .unwrap_or(1);
        check_size(bytes.saturating_mul(team as u64), env)?;
    }
    Ok(())
}

/// What is measured, in order: every planned node (fastest tier first) unless `--dax-only`,
/// then the DAX memory given, from the fastest tier's first node's CPUs.
fn wheres<'p>(a: &TiersSettings, plan: &'p TierPlan) -> Result<Vec<Where<'p>>> {
    let mut wheres: Vec<Where> = Vec::new();
    if !a.dax_only {
        for (ti, t) in plan.tiers.iter().enumerate() {
            for n in &t.nodes {
                wheres.push(Where {
                    target: MemTarget::Node { node: n.node },
                    tier: Some(ti),
                    kind: n.kind.clone(),
                    node: Some(n.node),
                    dax: None,
                    cpus: &n.cpus,
                });
            }
        }
    }
    if let Some(d) = a.dax {
        let backing = d.probe()?;
        let kind = Some(match backing.kind {
            memsight_core::buffer::DaxKind::DevDax => "devdax".to_string(),
            memsight_core::buffer::DaxKind::FsDax => format!("fsdax ({})", backing.filesystem),
            memsight_core::buffer::DaxKind::Emulated => {
                format!("emulated ({})", backing.filesystem)
            }
        });
        wheres.push(Where {
            target: MemTarget::Dax { backing },
            tier: None,
            kind,
            node: None,
            dax: Some(d),
            cpus: &plan.tiers[0].nodes[0].cpus,
        });
    }
    Ok(wheres)
}

/// The weighted pair's measured read bandwidths (fast, slow), when both nodes were measured.
fn measured(targets: &[TargetFigures], wp: &plan::WeightedPlan) -> Option<(f64, f64)> {
    let bw = |node: usize| {
        targets
            .iter()
            .find(|t| matches!(t.target, MemTarget::Node { node: n } if n == node))
            .and_then(|t| t.read_gbs.as_ref().map(|s| s.median))
    };
    bw(wp.fast).zip(bw(wp.slow))
}

fn method(a: &TiersSettings, lat: u64, in_memory: &str) -> String {
    format!(
        "Per node, from the allowed CPUs nearest it (its own, else those hwloc places it beside): idle read latency = pointer chase over {} ({} pages, 128 B stride, random within 256 KiB windows), median ns per load; write latency = the same chase incrementing the word beside each pointer (multichase incr), ns per dependent read-modify-write; read, write and non-temporal-write bandwidth on every CPU, {} per thread, GB/s of program bytes; loaded-latency knee: read traffic, where latency reaches 2 × idle, GB/s of estimated DRAM bytes; granularity: random whole-block reads, writes, non-temporal writes and writes followed by a line write-back + sfence per block, in a random permutation of 2^k blocks per thread ({} in all), GB/s of program bytes, 1 thread and every CPU; effective granule = largest block whose access costs ≤ 1.25 × a 64 B access. Samples taken over the span the team ran together; samples in which a thread lost its CPU dropped. Firmware claims: ACPI HMAT access class 0 (sysfs). Latency working set: {in_memory}.",
        format_bytes(lat),
        a.page_kind.name(),
        a.bandwidth_bytes.map_or_else(
            || "128 MiB, more where the CPUs together fall short of the size from which one core streams from memory,".to_string(),
            format_bytes
        ),
        format_bytes(a.granularity_bytes.unwrap_or(lat)),
    )
}

mod findings;
