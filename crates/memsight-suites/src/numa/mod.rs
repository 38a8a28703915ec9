//! NUMA and memory-tier matrices.
//!
//! Rows are CPU nodes (one representative CPU for latency, all the node's allowed CPUs for
//! bandwidth), columns are memory nodes, CPU-less ones (CXL, PMEM, HBM) included and marked, plus
//! an "interleaved" column (pages spread over every allowed node: what a NUMA-unaware program
//! gets). Latency is the pointer chase of the latency ladder at one DRAM-sized working set with the
//! buffer bound to the column's node; bandwidth is the read kernel of `memsight bandwidth`. Beside
//! them, what the firmware claims (ACPI HMAT through `/sys/devices/system/node/nodeN/access0`) and
//! the measured ÷ claimed ratio.

use crate::measure::level::Level;
use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use memsight_core::env::Environment;
use memsight_core::finding::Finding;
use memsight_core::stats::Summary;
use memsight_core::sysfs::FsRoot;
use memsight_core::{Error, Result};
use placement::{NumaPlan, numa_plan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::measure::rate::{BandwidthConfig, Named};
use memsight_core::buffer::PageKind;

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct NumaSettings {
    /// Working set of each latency cell; `None`: max(4 × LLC, 256 MiB).
    pub latency_bytes: Option<u64>,
    /// Working set per thread of each bandwidth cell; `None`: 128 MiB, more where the row's
    /// CPUs together would fall short of the streaming check's size (`crate::measure::reach::stream`).
    pub bandwidth_bytes: Option<u64>,
    /// Measure the bandwidth matrices too.
    pub bandwidth: bool,
    /// The bandwidth kernels, one matrix each (default: read, write and NT write, as the EPYC
    /// 7002 review reports per NUMA domain).
    pub tests: Vec<crate::measure::rate::TestSpec>,
    /// Leave out (and say so) the tests this CPU cannot run instead of refusing them: for the
    /// default list, not for the user's `--test`.
    pub skip_unsupported: bool,
    pub page_kind: PageKind,
    /// Per cell.
    pub sampling: crate::measure::sampling::Sampling,
    /// Alternating rounds over the cells (every cell once a round; 1: one cell after another).
    pub rounds: usize,
}

impl NumaSettings {
    /// What `memsight run` measures at `level`: nothing in a quick run; otherwise shorter cells
    /// than the command's, in two
    /// rounds: every round allocates and first-touches each cell's buffers again, which costs as
    /// much as the measurement on a small machine.
    pub fn at_level(self, level: Level) -> Option<Self> {
        if level == Level::Quick {
            return None;
        }
        let d = self;
        Some(NumaSettings {
            sampling: crate::measure::sampling::Sampling {
                min_samples: 5,
                point_budget: 0.3,
                ..d.sampling
            },
            rounds: 2,
            ..d
        })
    }
}

impl Default for NumaSettings {
    fn default() -> Self {
        NumaSettings {
            latency_bytes: None,
            bandwidth_bytes: None,
            bandwidth: true,
            tests: [Named::Read, Named::Write, Named::WriteNt]
                .map(Named::spec)
                .to_vec(),
            skip_unsupported: true,
            page_kind: PageKind::Thp,
            sampling: crate::measure::sampling::Sampling {
                target_ci: 0.01,
                min_samples: 7,
                point_budget: 0.5,
                sample_ms: 20.0,
            },
            rounds: 3,
        }
    }
}
use crate::measure::chase::LadderConfig;

mod estimate;
pub mod placement;
mod suite;
pub use estimate::estimate;
pub use suite::Numa;
mod findings;
mod rounds;

/// A column: a memory node, or the interleaved placement.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Column {
    /// `node N` or `interleaved`.
    pub label: String,
    pub node: Option<usize>,
    pub cpu_less: bool,
    pub kind: Option<String>,
    /// Kernel memory tier (`/sys/devices/virtual/memory_tiering`), lower is faster.
    pub tier: Option<u32>,
}

/// One cell's figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Cell {
    pub latency_ns: Option<Summary>,
    /// The read kernel's GB/s, where read was among the tests.
    pub bandwidth_gbs: Option<Summary>,
    /// The other kernels' GB/s (write, write-nt …), in the order asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelCell>,
    /// How far the latency moved between rounds: (highest − lowest round median) ÷ the merged
    /// median (one round: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_between_rounds: Option<f64>,
    /// The same for the read bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_between_rounds: Option<f64>,
}

/// One more bandwidth kernel's figure in a cell.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct KernelCell {
    /// The test's name (`write`, `write-nt`, `read-nta` …).
    pub test: String,
    /// GB/s of program bytes.
    pub gbs: Summary,
}

impl Cell {
    /// The figure of a test by name (`read` included).
    pub fn gbs(&self, test: &str) -> Option<&Summary> {
        if test == "read" {
            return self.bandwidth_gbs.as_ref();
        }
        self.kernels.iter().find(|k| k.test == test).map(|k| &k.gbs)
    }
}

/// What the firmware says about a memory node for its local initiators (access class 0).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Claim {
    pub node: usize,
    /// CPU nodes the claim is for.
    pub initiators: Vec<usize>,
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
    pub read_bandwidth_mbs: Option<u64>,
    pub write_bandwidth_mbs: Option<u64>,
    /// Measured ÷ claimed latency from the first initiator's row.
    pub latency_ratio: Option<f64>,
    /// Measured ÷ claimed read bandwidth from the first initiator's row.
    pub bandwidth_ratio: Option<f64>,
    /// Measured NT-write ÷ claimed write bandwidth from the first initiator's row (NT stores
    /// move no read-for-ownership, so their program bytes are the memory's write bytes).
    #[serde(default)]
    pub write_bandwidth_ratio: Option<f64>,
}

/// The `numa` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NumaResults {
    pub method: String,
    pub plan: NumaPlan,
    pub columns: Vec<Column>,
    /// `cells[row][column]`, rows in `plan.initiators` order.
    pub cells: Vec<Vec<Cell>>,
    pub claims: Vec<Claim>,
    /// The firmware's node distances (ACPI SLIT, `/sys/devices/system/node/nodeN/distance`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distances: Option<Distances>,
    pub findings: Vec<Finding>,
}

/// ACPI SLIT node distances: 10 is a node to itself; 20 claims twice as far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Distances {
    /// The nodes, in the order of the rows and columns.
    pub nodes: Vec<usize>,
    /// `distance[i][j]`: from `nodes[i]` to `nodes[j]`.
    pub distance: Vec<Vec<u32>>,
}

impl Distances {
    /// The distance from node `a` to node `b`, where both are known.
    pub fn between(&self, a: usize, b: usize) -> Option<u32> {
        let i = self.nodes.iter().position(|n| *n == a)?;
        let j = self.nodes.iter().position(|n| *n == b)?;
        self.distance.get(i)?.get(j).copied()
    }
}

/// Reads the SLIT distances of every node sysfs lists (each node's `distance` file lists the
/// online nodes in order); `None` where the machine has no such files.
pub fn read_distances(fs: &FsRoot) -> Option<Distances> {
    let mut nodes: Vec<usize> = fs
        .list("/sys/devices/system/node")
        .iter()
        .filter_map(|n| n.strip_prefix("node")?.parse().ok())
        .collect();
    nodes.sort_unstable();
    let distance: Vec<Vec<u32>> = nodes
        .iter()
        .map(|n| {
            fs.read(&format!("/sys/devices/system/node/node{n}/distance"))
                .map(|t| {
                    t.split_whitespace()
                        .filter_map(|x| x.parse().ok())
                        .collect()
                })
        })
        .collect::<Option<_>>()?;
    let square = distance.iter().all(|r: &Vec<u32>| r.len() == nodes.len());
    (!nodes.is_empty() && square).then_some(Distances { nodes, distance })
}

/// Reads the firmware's claims for `node` (ACPI HMAT via sysfs), if the machine exposes them.
pub fn read_claim(fs: &FsRoot, node: usize) -> Option<Claim> {
    let base = format!("/sys/devices/system/node/node{node}/access0/initiators");
    let names = fs.list(&base);
    if names.is_empty() {
        return None;
    }
    let initiators = names
        .iter()
        .filter_map(|n| n.strip_prefix("node")?.parse().ok())
        .collect();
    let f = |name: &str| fs.read_u64(&format!("{base}/{name}"));
    Some(Claim {
        node,
        initiators,
        read_latency_ns: f("read_latency"),
        write_latency_ns: f("write_latency"),
        read_bandwidth_mbs: f("read_bandwidth"),
        write_bandwidth_mbs: f("write_bandwidth"),
        latency_ratio: None,
        bandwidth_ratio: None,
        write_bandwidth_ratio: None,
    })
}

/// Measures the matrices. Returns results and whether every cell was measured.
pub fn run(
    a: &NumaSettings,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    tick: Tick<'_>,
) -> Result<Completed<NumaResults>> {
    let s = Setup::new(a, env, machine)?;
    let (taken, complete) = s.rounds(env, tick)?;
    let cells = rounds::cells(taken);
    let claims = claims(&s.plan, &s.columns, &cells);
    let mut findings = findings::findings(&s.plan, &s.columns, &cells, &claims);
    findings.extend(rounds::finding(&s.plan, &s.columns, &cells).map(Finding::from));
    let method = s.method();
    let Setup {
        plan,
        columns,
        skipped,
        ..
    } = s;
    findings.extend(skipped.into_iter().map(Finding::from));
    Ok(Completed::new(
        NumaResults {
            method,
            plan,
            columns,
            cells,
            claims,
            distances: read_distances(&FsRoot::from_env()),
            findings,
        },
        complete,
    ))
}

/// The matrices as planned before the first cell: rows, columns, kernels and sizes.
struct Setup<'a> {
    a: &'a NumaSettings,
    plan: NumaPlan,
    columns: Vec<Column>,
    /// The bandwidth kernels this CPU runs (none without bandwidth).
    tests: Vec<crate::measure::rate::TestSpec>,
    /// Why each default kernel this CPU cannot run was left out.
    skipped: Vec<String>,
    rule: memsight_core::stats::StopRule,
    sample_ns: f64,
    latency_size: u64,
    /// How the latency working set was chosen, for the method.
    in_memory: String,
    /// The streaming check the bandwidth cells size by, where they are sized by it.
    stream: Option<crate::measure::reach::stream::StreamCheck>,
}

impl<'a> Setup<'a> {
    /// Refuses what cannot be measured here before anything is: no node with both CPUs and
    /// memory, a bad rule, no kernel, a kernel the CPU lacks, buffers larger than the memory.
    fn new(
        a: &'a NumaSettings,
        env: &Environment,
        machine: &crate::measure::machine::Machine,
    ) -> Result<Self> {
        let plan = numa_plan(&env.topology, &env.allowed_cpus, &env.allowed_nodes);
        if plan.initiators.is_empty() || plan.targets.is_empty() {
            return Err(Error::input(
                "no NUMA node has both allowed CPUs and allowed memory here: check the cpuset (memsight env)",
            ));
        }
        let (rule, sample_ns) = a.sampling.rule()?;
        crate::measure::sampling::check_rounds(a.rounds)?;
        let (tests, skipped) = bandwidth_tests(a)?;
        // The sizes given as flags are refused before the probes that size the rest run.
        let largest_row = plan
            .initiators
            .iter()
            .map(|i| i.cpus.len())
            .max()
            .unwrap_or(0);
        a.latency_bytes
            .map_or(Ok(()), |b| memsight_core::buffer::check_size(b, env))?;
        if let (true, Some(b)) = (a.bandwidth, a.bandwidth_bytes) {
            memsight_core::buffer::check_size(b.saturating_mul(largest_row as u64), env)?;
        }
        let (latency_size, in_memory) = machine.working_set(a.latency_bytes, env)?;
        // Per thread of a row: as given, or 128 MiB and together past the streaming check.
        let stream = match (a.bandwidth, a.bandwidth_bytes) {
            (true, None) => machine.streaming(env)?.stream,
            _ => None,
        };
        let s = Setup {
            a,
            columns: columns(&plan),
            plan,
            tests,
            skipped,
            rule,
            sample_ns,
            latency_size,
            in_memory,
            stream,
        };
        memsight_core::buffer::check_size(latency_size, env)?;
        let largest_team = s
            .plan
            .initiators
            .iter()
            .map(|i| s.bandwidth_bytes(i.cpus.len()) * i.cpus.len() as u64)
            .max()
            .unwrap_or(0);
        if a.bandwidth {
            memsight_core::buffer::check_size(largest_team, env)?;
        }
        Ok(s)
    }

    /// Bytes per thread of a bandwidth cell whose row has `cpus` CPUs.
    fn bandwidth_bytes(&self, cpus: usize) -> u64 {
        self.a
            .bandwidth_bytes
            .unwrap_or_else(|| crate::measure::reach::stream::cell_bytes(self.stream, cpus))
    }

    /// Every cell's rounds, `[row][column][round]`: A B C A B C …, so that a machine that moves
    /// meanwhile moves every cell alike; and whether every round of every cell ran.
    fn rounds(&self, env: &Environment, tick: Tick<'_>) -> Result<(Vec<Vec<Vec<Cell>>>, bool)> {
        let n = self.a.rounds;
        let round_rule = self.rule.per_round(n);
        let mut taken: Vec<Vec<Vec<Cell>>> = self
            .plan
            .initiators
            .iter()
            .map(|_| vec![Vec::new(); self.columns.len()])
            .collect();
        for r in 0..n {
            for (init, row) in self.plan.initiators.iter().zip(taken.iter_mut()) {
                for (col, slot) in self.columns.iter().zip(row.iter_mut()) {
                    let of = crate::measure::sampling::round_label(r, n);
                    tick(&format!("CPU node {} → {}{of}", init.node, col.label));
                    let (cell, done) = measure_cell(
                        &Target {
                            init,
                            col,
                            latency_size: self.latency_size,
                            bandwidth_bytes: self
                                .a
                                .bandwidth
                                .then(|| self.bandwidth_bytes(init.cpus.len())),
                            tests: &self.tests,
                            page_kind: self.a.page_kind,
                            rule: round_rule,
                            sample_ns: self.sample_ns,
                        },
                        env,
                    )?;
                    slot.push(cell);
                    if !done || memsight_core::cancel::requested() {
                        return Ok((taken, false));
                    }
                }
            }
        }
        Ok((taken, true))
    }

    /// How the matrices were measured.
    fn method(&self) -> String {
        let a = self.a;
        rounds::method(a.rounds)
            + &format!(
                "latency: pointer chase (128 B stride, random within 256 KiB windows) over {} on {} pages bound to the column's node (or interleaved over all allowed nodes), from one CPU of the row's node, median ns per load; bandwidth: the {} kernel(s) of `memsight bandwidth` on every allowed CPU of the row's node, {}, GB/s of program bytes (a regular write also reads each line for ownership, so DRAM moves twice its program bytes; NT writes do not). Firmware claims: ACPI HMAT access class 0 from sysfs. Working set: {}.",
                memsight_core::units::format_bytes(self.latency_size),
                a.page_kind.name(),
                self.tests
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                match (a.bandwidth_bytes, self.stream) {
                    (Some(b), _) => format!("{} per thread", memsight_core::units::format_bytes(b)),
                    (None, Some(s)) => format!(
                        "max(128 MiB, {} ÷ the row's CPUs) per thread ({})",
                        memsight_core::units::format_bytes(s.from_bytes),
                        s.describe()
                    ),
                    (None, None) => "128 MiB per thread".to_string(),
                },
                self.in_memory
            )
    }
}

/// The bandwidth kernels to measure (none without bandwidth), and why any default one this CPU
/// cannot run was left out; a kernel the user named that it cannot run is refused.
fn bandwidth_tests(a: &NumaSettings) -> Result<(Vec<crate::measure::rate::TestSpec>, Vec<String>)> {
    if a.bandwidth && a.tests.is_empty() {
        return Err(Error::input(
            "--test: name at least one bandwidth kernel, or --no-bandwidth",
        ));
    }
    let mut tests = Vec::new();
    let mut skipped = Vec::new();
    for t in a.tests.iter().filter(|_| a.bandwidth) {
        match t.supported(memsight_kernels::bandwidth::Isa::widest()) {
            Ok(()) => tests.push(t.clone()),
            Err(why) if a.skip_unsupported => {
                skipped.push(format!("{} matrix not measured: {why}", t.name))
            }
            Err(why) => return Err(Error::input(format!("--test {}: {why}", t.name))),
        }
    }
    Ok((tests, skipped))
}

/// One column per target node, and one for memory interleaved over all of them.
fn columns(plan: &NumaPlan) -> Vec<Column> {
    let mut columns: Vec<Column> = plan
        .targets
        .iter()
        .map(|t| Column {
            label: format!("node {}", t.node),
            node: Some(t.node),
            cpu_less: t.cpu_less,
            kind: t.kind.clone(),
            tier: t.tier,
        })
        .collect();
    columns.push(Column {
        label: "interleaved".into(),
        node: None,
        cpu_less: false,
        kind: None,
        tier: None,
    });
    columns
}

/// One cell's measurement: from the row's CPUs to the column's memory.
struct Target<'a> {
    init: &'a placement::Initiator,
    col: &'a Column,
    latency_size: u64,
    /// Bytes per thread of the bandwidth cell; `None`: latency only.
    bandwidth_bytes: Option<u64>,
    tests: &'a [crate::measure::rate::TestSpec],
    page_kind: memsight_core::buffer::PageKind,
    rule: memsight_core::stats::StopRule,
    sample_ns: f64,
}

/// Latency (one CPU of the row's node) and read bandwidth (all of them) of one cell; whether
/// the latency point completed.
fn measure_cell(t: &Target, env: &Environment) -> Result<(Cell, bool)> {
    let lat_cfg = LadderConfig {
        node: t.col.node,
        interleave: t.col.node.is_none(),
        ..LadderConfig::chase_point(&[t.latency_size], t.init.cpu, t.page_kind, t.rule)
    };
    let timer = memsight_core::timer::calibrate();
    let (points, done) = crate::measure::chase::points(&lat_cfg, env, timer.min_sample_ns)?;
    let latency_ns = points.first().map(|p| p.ns.clone());
    let mut cell = Cell {
        latency_ns,
        bandwidth_gbs: None,
        kernels: Vec::new(),
        latency_between_rounds: None,
        bandwidth_between_rounds: None,
    };
    if let (true, Some(bytes)) = (done, t.bandwidth_bytes) {
        for test in t.tests {
            if memsight_core::cancel::requested() {
                break;
            }
            let bw_cfg = BandwidthConfig {
                interleave: t.col.node.is_none(),
                node: t.col.node,
                ..BandwidthConfig::single(
                    test.clone(),
                    &t.init.cpus,
                    bytes,
                    t.page_kind,
                    t.rule,
                    t.sample_ns,
                )?
            };
            let Some(gbs) = bw_cfg.measure_single(env)? else {
                continue;
            };
            if test.name == "read" {
                cell.bandwidth_gbs = Some(gbs);
            } else {
                cell.kernels.push(KernelCell {
                    test: test.name.clone(),
                    gbs,
                });
            }
        }
    }
    Ok((cell, done))
}

/// The cell a claim is set against: the first initiator row the claim names, the claim's
/// node's column.
fn claim_cell<'a>(
    plan: &NumaPlan,
    columns: &[Column],
    cells: &'a [Vec<Cell>],
    c: &Claim,
) -> Option<&'a Cell> {
    let row = plan
        .initiators
        .iter()
        .position(|i| c.initiators.contains(&i.node))?;
    let col = columns.iter().position(|x| x.node == Some(c.node))?;
    cells.get(row)?.get(col)
}

/// The firmware's claims (HMAT) per target node, with measured ÷ claimed where both exist.
fn claims(plan: &NumaPlan, columns: &[Column], cells: &[Vec<Cell>]) -> Vec<Claim> {
    let fs = FsRoot::from_env();
    let mut claims: Vec<Claim> = plan
        .targets
        .iter()
        .filter_map(|t| read_claim(&fs, t.node))
        .collect();
    for c in &mut claims {
        let Some(cell) = claim_cell(plan, columns, cells, c) else {
            continue;
        };
        c.latency_ratio = match (&cell.latency_ns, c.read_latency_ns) {
            (Some(m), Some(cl)) if cl > 0 => Some(m.median / cl as f64),
            _ => None,
        };
        c.bandwidth_ratio = match (&cell.bandwidth_gbs, c.read_bandwidth_mbs) {
            (Some(m), Some(cl)) if cl > 0 => Some(m.median * 1000.0 / cl as f64),
            _ => None,
        };
        c.write_bandwidth_ratio = match (cell.gbs("write-nt"), c.write_bandwidth_mbs) {
            (Some(m), Some(cl)) if cl > 0 => Some(m.median * 1000.0 / cl as f64),
            _ => None,
        };
    }
    claims
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmat_claims_are_read_from_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir
            .path()
            .join("sys/devices/system/node/node2/access0/initiators");
        std::fs::create_dir_all(base.join("node0")).unwrap();
        for (f, v) in [
            ("read_latency", "250"),
            ("write_latency", "300"),
            ("read_bandwidth", "30000"),
            ("write_bandwidth", "20000"),
        ] {
            std::fs::write(base.join(f), v).unwrap();
        }
        let fs = FsRoot::at(dir.path().to_path_buf());
        let c = read_claim(&fs, 2).unwrap();
        assert_eq!(c.initiators, vec![0]);
        assert_eq!(
            (c.read_latency_ns, c.read_bandwidth_mbs),
            (Some(250), Some(30000))
        );
        assert!(read_claim(&fs, 3).is_none());
    }

    #[test]
    fn slit_distances_read_from_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        // Two sockets and a CPU-less CXL node, as a kernel lists them.
        for (n, d) in [(0, "10 21 24"), (1, "21 10 14"), (2, "24 14 10")] {
            let node = dir.path().join(format!("sys/devices/system/node/node{n}"));
            std::fs::create_dir_all(&node).unwrap();
            std::fs::write(node.join("distance"), format!("{d}\n")).unwrap();
        }
        let fs = FsRoot::at(dir.path().to_path_buf());
        let d = read_distances(&fs).unwrap();
        assert_eq!(d.nodes, vec![0, 1, 2]);
        assert_eq!(d.between(0, 2), Some(24));
        assert_eq!(d.between(2, 1), Some(14));
        assert_eq!(d.between(0, 7), None);
        // A ragged file is not a matrix.
        std::fs::write(
            dir.path().join("sys/devices/system/node/node1/distance"),
            "21 10\n",
        )
        .unwrap();
        assert!(read_distances(&fs).is_none());
    }
}
