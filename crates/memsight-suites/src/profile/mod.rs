//! `memsight profile`: a program on this machine's memory. It starts the program (`-- CMD`) or
//! watches a running one (`--pid`), and reads from `/proc` every interval what it holds (RSS,
//! anonymous, file and shared memory, swap; its glibc arenas), how much of its anonymous memory
//! is on huge pages, its pages per NUMA node and the CPUs its threads run on; then it says where
//! its memory sits against its threads (remote share, slower tier) and what to change.
//!
//! A composite study: it places the program on the loaded-latency curves of `loaded` and reads
//! its heap as `alloc` reads an allocator's, so that its figures are those commands' figures.
//! `scripts/check-layers.py` allows it these imports and no other suite.

mod findings;
pub mod placement;
pub mod pressure;
mod probe;
pub mod procfs;
mod suite;
pub use suite::Profile;
mod watch;

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use std::time::{Duration, Instant};

use memsight_core::env::Environment;
use memsight_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::alloc::arenas::{self, ArenaSample};
use placement::Placement;
use procfs::Snapshot;
use watch::{Watched, watch_target};

/// What to profile and how often.
#[derive(Debug, Clone)]
pub struct ProfileSettings {
    /// The program and its arguments (empty: `pid`).
    pub command: Vec<String>,
    /// A running process to watch instead.
    pub pid: Option<u32>,
    /// How long to watch `pid`, seconds.
    pub watch_s: f64,
    /// Stop a started program after this long, seconds.
    pub timeout_s: f64,
    /// Between readings.
    pub interval_ms: u64,
    /// The machine's loaded-latency curves, to read bandwidth pressure off (`None`: none read).
    pub family: Option<Family>,
    /// The probe chase's CPU (`None`: the last allowed CPU).
    pub probe_cpu: Option<usize>,
}

/// The loaded-latency curve family a probe latency is read against, and where it came from.
#[derive(Debug, Clone)]
pub struct Family {
    pub curves: Vec<crate::loaded::Curve>,
    /// "run 12 of 2026-11-27T03:10:00Z" or "measured before the program".
    pub source: String,
}

/// Bandwidth pressure over the profile: probe latencies and what the family makes of them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PressureTrace {
    /// Where the curve family came from.
    pub family_source: String,
    pub probe_cpu: usize,
    /// The probe's chase working set, bytes.
    pub probe_bytes: u64,
    /// The family's idle latency, ns.
    pub family_idle_ns: f64,
    /// The probe's latency before the program started (none for `--pid`), ns.
    pub probe_idle_ns: Option<f64>,
    /// Each probe latency is multiplied by this (family idle ÷ probe idle) before it is read.
    pub scale: f64,
    pub readings: Vec<PressureReading>,
    /// What the median latency while the program ran says.
    pub overall: Option<pressure::Pressure>,
    /// That median latency (scaled), ns.
    pub overall_ns: Option<f64>,
    /// What the curves' merged points alone make of it, where reading each round's sweep too
    /// widened the interval (the machine answered one load at different latencies while the
    /// curves were measured); none where the rounds change nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overall_merged: Option<pressure::Pressure>,
    /// The highest bandwidth the family reached, GB/s (one round's, where its rounds differ:
    /// an interval read off that round reaches it).
    pub saturation_gbs: f64,
    /// Probe samples dropped because the probe lost its CPU, of all taken.
    pub dropped: usize,
    pub samples: usize,
    /// The hypervisor this ran under, if any: its host can change how much latency the same
    /// traffic raises from one run to the next, which one profile cannot see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
}

/// DRAM traffic counted by the memory controllers over the program's run (the whole socket's:
/// other work's traffic included).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CountedTraffic {
    pub read_gbs: f64,
    pub write_gbs: f64,
    pub seconds: f64,
    /// The PMUs and events read.
    pub source: String,
}

/// The program's own memory traffic, counted by resctrl memory-bandwidth monitoring for its
/// tasks (their RMID: its threads and the processes it starts, nobody else's).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MonitoredTraffic {
    /// Bytes moved between the L3 and memory per second over the run, GB/s.
    pub gbs: f64,
    /// Of which served by the L3's local node (where the CPU counts it).
    pub local_share: Option<f64>,
    pub bytes: u64,
    pub seconds: f64,
    /// The monitoring group read.
    pub group: String,
}

/// The memory cgroup whose page cache and swap the readings carry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MemoryGroup {
    /// Its path inside its hierarchy.
    pub name: String,
    pub cgroup_v2: bool,
    /// Made by memsight for the program alone (else the group the watched process was in).
    pub own: bool,
    /// The most processes seen in it at one reading.
    pub processes: usize,
}

/// One probe window.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PressureReading {
    pub seconds: f64,
    /// Scaled latency, ns (none: every sample of the window was disturbed).
    pub latency_ns: Option<f64>,
    pub pressure: Option<pressure::Pressure>,
}

impl Default for ProfileSettings {
    fn default() -> Self {
        ProfileSettings {
            command: Vec::new(),
            pid: None,
            watch_s: 60.0,
            timeout_s: 3600.0,
            interval_ms: 200,
            family: None,
            probe_cpu: None,
        }
    }
}

/// How the profile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// The program exited with this code.
    Exited(i32),
    /// The program was killed by this signal (not by memsight).
    Signalled(i32),
    /// The watch of `--pid` lasted the time asked for.
    Completed,
    /// The watched process exited during the watch.
    ProcessExited,
    /// memsight stopped the program at `--timeout`.
    TimedOut,
    /// Ctrl-C.
    Interrupted,
}

/// The `profile` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProfileResults {
    pub method: String,
    pub command: String,
    pub pid: u32,
    pub ending: Ending,
    pub seconds: f64,
    /// Every reading, in time order.
    pub timeline: Vec<Snapshot>,
    /// The reading at the largest resident set (what the placement and coverage describe).
    pub peak: Option<Snapshot>,
    /// Where its pages were at the peak against where its threads ran during the whole run.
    pub placement: Option<Placement>,
    /// CPUs its threads were seen on, with how many readings saw a thread there (absent before
    /// schema 4): the probe's CPU among them shares its time with the program.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program_cpus: Vec<(usize, u64)>,
    /// glibc arenas and threads over time (empty where its memory could not be read).
    pub arenas: Vec<ArenaSample>,
    /// The kernel's THP mode (`always`, `madvise`, `never`).
    pub thp_mode: Option<String>,
    /// Bandwidth pressure read off the machine's curve family (none without a family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureTrace>,
    /// DRAM traffic counted by the memory controllers, where they can be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<CountedTraffic>,
    /// Why DRAM traffic was not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_counted: Option<String>,
    /// The program's own memory traffic, where resctrl monitors bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitored: Option<MonitoredTraffic>,
    /// Why it was not monitored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_monitored: Option<String>,
    /// The memory cgroup read for page cache and swap charged to the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_group: Option<MemoryGroup>,
    /// Why no cgroup was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_memory_group: Option<String>,
    pub findings: Vec<memsight_core::finding::Finding>,
}

/// Profiles the program of `a`. Returns the results and whether the profile is complete (not
/// stopped by Ctrl-C).
pub fn run(
    a: &ProfileSettings,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    tick: Tick<'_>,
) -> Result<Completed<ProfileResults>> {
    validate(a, env)?;
    let origin = Instant::now();
    // The probe starts first: with the program not yet running it reads the idle latency.
    let probe = match &a.family {
        Some(f) => Some(start_probe(a, f, env, machine, origin, tick)?),
        None => None,
    };
    // Where the memory controllers can be read, they count the bytes the probe infers.
    let controllers =
        crate::measure::counters::Controllers::cas(&memsight_core::sysfs::FsRoot::from_env())
            .and_then(|c| Ok((c.start()?, c.describe())));
    let counting_since = Instant::now();
    let (watched, command) = watch_target(a, origin, tick)?;
    let (counted, not_counted) = counted_traffic(controllers, counting_since);
    let Watched {
        pid,
        timeline,
        cpus,
        arenas,
        ending,
        seconds,
        group,
        monitored,
    } = watched;
    let (monitored, not_monitored) = match monitored {
        Ok(m) => (Some(m), None),
        Err(why) => (None, Some(why)),
    };
    let (memory_group, no_memory_group) = memory_group(group);
    let pressure = probe.map(|(p, setup)| {
        let windows = p.take();
        drop(p);
        trace(
            setup,
            &windows,
            a.family.as_ref().expect("a probe has a family"),
            env.cpu.hypervisor.clone(),
        )
    });
    let peak = timeline.iter().max_by_key(|s| s.held.rss).cloned();
    let cpu_samples: Vec<(usize, u64)> = cpus.into_iter().collect();
    let placement = peak
        .as_ref()
        .map(|p| placement::assess(&p.nodes, &cpu_samples, &env.topology));
    let mut r = ProfileResults {
        method: method(a),
        command,
        pid,
        ending,
        seconds,
        timeline,
        peak,
        placement,
        program_cpus: cpu_samples.clone(),
        arenas,
        thp_mode: env.thp_enabled.clone(),
        pressure,
        counted,
        not_counted,
        monitored,
        not_monitored,
        memory_group,
        no_memory_group,
        findings: Vec::new(),
    };
    r.findings = findings::findings(&r, env.allowed_cpus.len());
    // A time limit is what was asked for: only Ctrl-C leaves the profile incomplete.
    let complete = ending != Ending::Interrupted;
    Ok(Completed::new(r, complete))
}

/// DRAM traffic the memory controllers counted over the watch, or why they did not.
fn counted_traffic(
    controllers: std::result::Result<(crate::measure::counters::Running, String), String>,
    since: Instant,
) -> (Option<CountedTraffic>, Option<String>) {
    match controllers {
        Ok((running, source)) => {
            let seconds = since.elapsed().as_secs_f64();
            let bytes = running.finish_cas_bytes();
            let gbs = |k: &str| bytes.get(k).copied().unwrap_or(0) as f64 / seconds / 1e9;
            let c = CountedTraffic {
                read_gbs: gbs("cas_count_read"),
                write_gbs: gbs("cas_count_write"),
                seconds,
                source,
            };
            (Some(c), None)
        }
        Err(why) => (None, Some(why)),
    }
}

/// The memory cgroup read as reported, or why none was.
fn memory_group(
    group: std::result::Result<(watch::Found, usize), String>,
) -> (Option<MemoryGroup>, Option<String>) {
    match group {
        Ok((found, processes)) => {
            let g = MemoryGroup {
                name: found.dir.name,
                cgroup_v2: found.dir.v2,
                own: found.own,
                processes,
            };
            (Some(g), None)
        }
        Err(why) => (None, Some(why)),
    }
}

/// Checks every setting that needs no measurement: the command line calls it before it measures
/// the pressure curves, and [`run`] before its probe.
pub fn validate(a: &ProfileSettings, env: &Environment) -> Result<()> {
    if a.command.is_empty() == a.pid.is_none() {
        return Err(Error::input(
            "profile: give a program after `--`, or --pid PID (not both)",
        ));
    }
    // At most a year: a duration becomes a `Duration`, which an infinite one cannot.
    const YEAR_S: f64 = 366.0 * 86400.0;
    let duration = |s: f64| s > 0.0 && s <= YEAR_S;
    if !(a.interval_ms >= 10 && duration(a.watch_s) && duration(a.timeout_s)) {
        return Err(Error::input(
            "profile: --interval-ms must be at least 10 and the durations positive and at most a year",
        ));
    }
    if let Some(c) = a.probe_cpu {
        memsight_core::pin::validate_cpus(&[c], &env.allowed_cpus)?;
    }
    Ok(())
}

/// How the probe was set up.
struct ProbeSetup {
    cpu: usize,
    bytes: u64,
    idle_ns: Option<f64>,
    dropped_idle: usize,
}

/// How long the probe reads idle latency before the program starts, and its window.
const PROBE_IDLE: Duration = Duration::from_millis(600);
const PROBE_WINDOW: Duration = Duration::from_millis(100);

fn start_probe(
    a: &ProfileSettings,
    family: &Family,
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    origin: Instant,
    tick: Tick<'_>,
) -> Result<(probe::Probe, ProbeSetup)> {
    if pressure::idle_ns(&family.curves).is_none() {
        return Err(Error::input(
            "profile: the loaded-latency curves given have no points to read bandwidth from",
        ));
    }
    let cpu = a
        .probe_cpu
        .or_else(|| env.allowed_cpus.last().copied())
        .ok_or_else(|| Error::input("this process may not run on any CPU (empty cpuset)"))?;
    let (bytes, _) = machine.working_set(None, env)?;
    memsight_core::buffer::check_size(bytes, env)?;
    tick("probe: idle latency");
    // Watching a running process: its traffic is already there, so no idle reading.
    let idle = if a.pid.is_some() {
        Duration::ZERO
    } else {
        PROBE_IDLE
    };
    let p = probe::Probe::start(cpu, bytes, env, PROBE_WINDOW, idle, origin)?;
    let setup = ProbeSetup {
        cpu,
        bytes,
        idle_ns: probe::median_ns(&p.idle),
        dropped_idle: p.idle.iter().map(|w| w.dropped).sum(),
    };
    Ok((p, setup))
}

/// The probe's windows read against the family.
fn trace(
    setup: ProbeSetup,
    windows: &[probe::Window],
    family: &Family,
    hypervisor: Option<String>,
) -> PressureTrace {
    let family_idle = pressure::idle_ns(&family.curves).unwrap_or(f64::NAN);
    // The probe's own idle latency stands for the machine's state now; the family's curves
    // are moved by the ratio, so that a machine that is a little slower or faster than when the
    // family was measured does not read as traffic.
    let scale = setup
        .idle_ns
        .map_or(1.0, |i| family_idle / i)
        .clamp(0.5, 2.0);
    let readings: Vec<PressureReading> = windows
        .iter()
        .map(|w| {
            let ns = w.ns.map(|n| n * scale);
            PressureReading {
                seconds: w.seconds,
                latency_ns: ns,
                pressure: ns.and_then(|n| pressure::infer(n, &family.curves)),
            }
        })
        .collect();
    let overall_ns = probe::median_ns(windows).map(|n| n * scale);
    let overall = overall_ns.and_then(|n| pressure::infer(n, &family.curves));
    PressureTrace {
        family_source: family.source.clone(),
        probe_cpu: setup.cpu,
        probe_bytes: setup.bytes,
        family_idle_ns: family_idle,
        probe_idle_ns: setup.idle_ns,
        scale,
        overall,
        overall_merged: overall_ns
            .zip(overall)
            .and_then(|(n, full)| pressure::infer_merged(n, &family.curves, &full)),
        overall_ns,
        saturation_gbs: pressure::highest_gbs(&family.curves),
        dropped: setup.dropped_idle + windows.iter().map(|w| w.dropped).sum::<usize>(),
        samples: windows.iter().map(|w| w.dropped + w.clean).sum(),
        readings,
        hypervisor,
    }
}

fn method(a: &ProfileSettings) -> String {
    let pressure = if a.family.is_some() {
        format!(
            " Bandwidth pressure: a probe thread pinned on its own CPU chases a DRAM-sized chain (128 B stride, random within 256 KiB windows) in samples of about 2 ms, dropping those in which it lost its CPU, and keeps the median of every {} ms; before the program starts it reads the idle latency for {} ms, and every latency is scaled by (the curves' idle ÷ that idle) and read off each loaded-latency curve as a rise over that curve's own idle point (latency → the bandwidth that produces it, between measured points by linear interpolation, a curve read as its running maximum), and likewise off each round's sweep of a curve measured in rounds: the interval spans the mixes and the rounds; where a latency lies within the idle point's noise (5% or its CI) the curve only bounds the bandwidth from above, and a curve that never leaves that noise bounds nothing.",
            PROBE_WINDOW.as_millis(),
            PROBE_IDLE.as_millis()
        )
    } else {
        String::new()
    };
    format!(
        "every {} ms: /proc/PID/status (RSS, anonymous, file and shared memory, swap, threads), /proc/PID/smaps_rollup (anonymous memory on transparent huge pages, hugetlb pages), /proc/PID/numa_maps (pages per node: N<node>=pages × kernelpagesize_kB; the kernel walks the page tables to write it, so it is read again only after 20× its last read's time, and readings between carry its last figures) and the CPU each thread last ran on (/proc/PID/task/*/stat field 39); its memory cgroup's memory.stat (page cache charged to it, which the kernel charges to the group of the task that first brings a page in, so pages others cached first are not counted; dirty pages; swap), from a cgroup memsight makes for a program it starts (where it may: as root or in a delegated tree) or the group a watched process is in; where resctrl monitors memory bandwidth, the bytes counted by a monitoring group made for its tasks (mbm_total_bytes summed over the L3 domains, since the group was made); glibc arenas every {} ms from its mappings (and its memory where readable). Placement and huge-page coverage describe the reading at the largest RSS; the nodes its threads ran on are those of every reading. Bytes are the program's resident bytes as the kernel counts them.",
        a.interval_ms,
        arenas::SAMPLE_EVERY
            .as_millis()
            .max(u128::from(a.interval_ms)),
    ) + &pressure
}
