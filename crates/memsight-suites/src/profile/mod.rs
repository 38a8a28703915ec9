//! `memsight profile`: a program on this machine's memory. It starts the program (`-- CMD`) or
//! watches a running one (`--pid`), and reads from `/proc` every interval what it holds (RSS,
//! anonymous, file and shared memory, swap; its glibc arenas), how much of its anonymous memory
//! is on huge pages, its pages per NUMA node and the CPUs its threads run on; then it says where
//! its memory sits against its threads (remote share, slower tier) and what to change.

pub mod placement;
pub mod pressure;
mod probe;
pub mod procfs;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memsight_core::env::Environment;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::alloc::arenas::{self, ArenaSample};
use placement::Placement;
use procfs::Snapshot;

/// What to profile and how often.
#[derive(Debug, Clone)]
pub struct Config {
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
    /// The highest saturation bandwidth of the family, GB/s.
    pub saturation_gbs: f64,
    /// Probe samples dropped because the probe lost its CPU, of all taken.
    pub dropped: usize,
    pub samples: usize,
}

/// One probe window.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PressureReading {
    pub seconds: f64,
    /// Scaled latency, ns (none: every sample of the window was disturbed).
    pub latency_ns: Option<f64>,
    pub pressure: Option<pressure::Pressure>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
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
    /// glibc arenas and threads over time (empty where its memory could not be read).
    pub arenas: Vec<ArenaSample>,
    /// The kernel's THP mode (`always`, `madvise`, `never`).
    pub thp_mode: Option<String>,
    /// Bandwidth pressure read off the machine's curve family (none without a family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureTrace>,
    pub findings: Vec<String>,
}

/// Profiles the program of `a`. Returns the results and whether the profile is complete (not
/// stopped by Ctrl-C).
pub fn run(
    a: &Config,
    env: &Environment,
    machine: &crate::machine::Machine,
    tick: &(dyn Fn(&str) + Sync),
) -> Result<(ProfileResults, bool)> {
    validate(a, env)?;
    let origin = Instant::now();
    // The probe starts first: with the program not yet running it reads the idle latency.
    let probe = match &a.family {
        Some(f) => Some(start_probe(a, f, env, machine, origin, tick)?),
        None => None,
    };
    let (watched, command) = watch_target(a, origin, tick)?;
    let Watched {
        pid,
        timeline,
        cpus,
        arenas,
        ending,
        seconds,
    } = watched;
    let pressure = probe.map(|(p, setup)| {
        let windows = p.take();
        drop(p);
        trace(
            setup,
            &windows,
            a.family.as_ref().expect("a probe has a family"),
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
        arenas,
        thp_mode: env.thp_enabled.clone(),
        pressure,
        findings: Vec::new(),
    };
    r.findings = findings(&r, env.allowed_cpus.len());
    // A time limit is what was asked for: only Ctrl-C leaves the profile incomplete.
    let complete = ending != Ending::Interrupted;
    Ok((r, complete))
}

fn validate(a: &Config, env: &Environment) -> Result<()> {
    if a.command.is_empty() == a.pid.is_none() {
        return Err(Error::input(
            "profile: give a program after `--`, or --pid PID (not both)",
        ));
    }
    if !(a.interval_ms >= 10 && a.watch_s > 0.0 && a.timeout_s > 0.0) {
        return Err(Error::input(
            "profile: --interval-ms must be at least 10 and the durations positive",
        ));
    }
    if let Some(c) = a.probe_cpu {
        memsight_core::pin::validate_cpus(&[c], &env.allowed_cpus)?;
    }
    Ok(())
}

/// Starts the program, or finds the process, and reads it until it ends.
fn watch_target(
    a: &Config,
    origin: Instant,
    tick: &(dyn Fn(&str) + Sync),
) -> Result<(Watched, String)> {
    let interval = Duration::from_millis(a.interval_ms);
    if let Some(pid) = a.pid {
        let name = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                Error::input(format!("--pid {pid}: no such process (or a kernel thread)"))
            })?;
        let name = String::from_utf8_lossy(&name)
            .replace('\0', " ")
            .trim()
            .to_string();
        let limit = Duration::from_secs_f64(a.watch_s);
        return Ok((sample(pid, None, limit, interval, origin, tick), name));
    }
    let mut cmd = Command::new(&a.command[0]);
    cmd.args(&a.command[1..]).stdin(Stdio::null());
    // The program's output goes to memsight's stderr, so that `--json` stays one document.
    if let Ok(err) = std::os::fd::AsFd::as_fd(&std::io::stderr()).try_clone_to_owned() {
        cmd.stdout(Stdio::from(err));
    }
    let child = cmd
        .spawn()
        .map_err(|e| Error::input(format!("profile: cannot start {}: {e}", a.command[0])))?;
    let limit = Duration::from_secs_f64(a.timeout_s);
    let w = sample(child.id(), Some(child), limit, interval, origin, tick);
    Ok((w, a.command.join(" ")))
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
    a: &Config,
    family: &Family,
    env: &Environment,
    machine: &crate::machine::Machine,
    origin: Instant,
    tick: &(dyn Fn(&str) + Sync),
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
fn trace(setup: ProbeSetup, windows: &[probe::Window], family: &Family) -> PressureTrace {
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
    PressureTrace {
        family_source: family.source.clone(),
        probe_cpu: setup.cpu,
        probe_bytes: setup.bytes,
        family_idle_ns: family_idle,
        probe_idle_ns: setup.idle_ns,
        scale,
        overall: overall_ns.and_then(|n| pressure::infer(n, &family.curves)),
        overall_ns,
        saturation_gbs: family
            .curves
            .iter()
            .map(|c| c.saturation_gbs)
            .fold(0.0, f64::max),
        dropped: setup.dropped_idle + windows.iter().map(|w| w.dropped).sum::<usize>(),
        samples: windows.iter().map(|w| w.dropped + w.clean).sum(),
        readings,
    }
}

/// What sampling gave.
struct Watched {
    pid: u32,
    timeline: Vec<Snapshot>,
    /// Thread readings per CPU.
    cpus: BTreeMap<usize, u64>,
    arenas: Vec<ArenaSample>,
    ending: Ending,
    seconds: f64,
}

/// Reads `pid` every `interval` until it ends, `limit` passes or Ctrl-C; a started `child` is
/// stopped at the limit and always reaped.
fn sample(
    pid: u32,
    mut child: Option<std::process::Child>,
    limit: Duration,
    interval: Duration,
    origin: Instant,
    tick: &(dyn Fn(&str) + Sync),
) -> Watched {
    let started = Instant::now();
    let since = |t: Duration| (started - origin + t).as_secs_f64();
    let (mut timeline, mut cpus, mut arena_samples) = (Vec::new(), BTreeMap::new(), Vec::new());
    let mut next_arenas = Duration::ZERO;
    let ending = loop {
        let t = started.elapsed();
        if let Some(e) = child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
            break exit_ending(e);
        }
        match procfs::snapshot(pid, since(t)) {
            Some(s) => {
                tick(&format!("{} resident", format_bytes(s.held.rss)));
                timeline.push(s);
            }
            None if child.is_none() => break Ending::ProcessExited,
            None => {}
        }
        for c in procfs::thread_cpus(pid) {
            *cpus.entry(c).or_insert(0u64) += 1;
        }
        if t >= next_arenas {
            next_arenas = t + arenas::SAMPLE_EVERY.max(interval);
            arena_samples.extend(arenas::sample(pid, since(t)));
        }
        if cancel::requested() {
            break Ending::Interrupted;
        }
        if t >= limit {
            break if child.is_some() {
                Ending::TimedOut
            } else {
                Ending::Completed
            };
        }
        // Short sleeps, so that the program's exit and Ctrl-C are answered within 20 ms.
        let wake = t + interval;
        while started.elapsed() < wake.min(limit) && !cancel::requested() {
            if child
                .as_mut()
                .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
            {
                break;
            }
            std::thread::sleep(
                Duration::from_millis(20).min(wake.saturating_sub(started.elapsed())),
            );
        }
    };
    if let Some(mut c) = child {
        if matches!(ending, Ending::TimedOut | Ending::Interrupted) {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
    Watched {
        pid,
        timeline,
        cpus,
        arenas: arena_samples,
        ending,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn exit_ending(e: std::process::ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (e.code(), e.signal()) {
        (Some(c), _) => Ending::Exited(c),
        (None, Some(s)) => Ending::Signalled(s),
        (None, None) => Ending::Exited(-1),
    }
}

fn method(a: &Config) -> String {
    let pressure = if a.family.is_some() {
        format!(
            " Bandwidth pressure: a probe thread pinned on its own CPU chases a DRAM-sized chain (128 B stride, random within 256 KiB windows) in samples of about 2 ms, dropping those in which it lost its CPU, and keeps the median of every {} ms; before the program starts it reads the idle latency for {} ms, and every latency is scaled by (the curves' idle ÷ that idle) and read off each loaded-latency curve (latency → the bandwidth that produces it, between measured points by linear interpolation, a curve read as its running maximum): the interval spans the mixes; where a latency lies within the idle point's noise (5% or its CI) the curve only bounds the bandwidth from above.",
            PROBE_WINDOW.as_millis(),
            PROBE_IDLE.as_millis()
        )
    } else {
        String::new()
    };
    format!(
        "every {} ms: /proc/PID/status (RSS, anonymous, file and shared memory, swap, threads), /proc/PID/smaps_rollup (anonymous memory on transparent huge pages, hugetlb pages), /proc/PID/numa_maps (pages per node: N<node>=pages × kernelpagesize_kB) and the CPU each thread last ran on (/proc/PID/task/*/stat field 39); glibc arenas every {} ms from its mappings (and its memory where readable). Placement and huge-page coverage describe the reading at the largest RSS; the nodes its threads ran on are those of every reading. Bytes are the program's resident bytes as the kernel counts them.",
        a.interval_ms,
        arenas::SAMPLE_EVERY
            .as_millis()
            .max(u128::from(a.interval_ms)),
    ) + &pressure
}

/// Anonymous memory above this, mostly on small pages, is worth a huge-page change.
const LARGE_ANON: u64 = 256 << 20;

/// Memory held, huge-page coverage, placement, arenas: each with the change to make.
fn findings(r: &ProfileResults, cpus: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Some(peak) = &r.peak else {
        out.push(format!(
            "no reading of pid {} was taken: it ended before the first one (or its /proc files could not be read)",
            r.pid
        ));
        return out;
    };
    let h = peak.held;
    out.push(format!(
        "memory held at the peak: RSS {} (anonymous {}, file {}, shared {}), swap {}, {} thread{}",
        format_bytes(h.rss),
        format_bytes(h.anon),
        format_bytes(h.file),
        format_bytes(h.shmem),
        format_bytes(h.swap),
        h.threads,
        if h.threads == 1 { "" } else { "s" }
    ));
    if h.swap > 0 {
        out.push(format!(
            "{} of it was in swap: every touch of a swapped page waits for the disk; give it memory (or a larger cgroup limit) before tuning anything else",
            format_bytes(h.swap)
        ));
    }
    out.extend(r.pressure.as_ref().and_then(pressure_finding));
    out.extend(huge_finding(peak, r.thp_mode.as_deref()));
    if let Some(p) = &r.placement {
        out.extend(placement::findings(p));
    }
    out.extend(crate::alloc::attach::arena_finding(&r.arenas, cpus));
    if matches!(r.ending, Ending::Interrupted | Ending::TimedOut) {
        out.push(format!(
            "the profile was stopped ({}) after {:.1} s: the readings up to then are kept",
            if r.ending == Ending::Interrupted {
                "Ctrl-C"
            } else {
                "time limit"
            },
            r.seconds
        ));
    }
    out
}

/// Where the program sat on the curve family, from the probe's median latency while it ran.
fn pressure_finding(p: &PressureTrace) -> Option<String> {
    let (ns, what) = (p.overall_ns?, p.overall?);
    let times = ns / p.family_idle_ns;
    let dropped = if p.dropped > 0 {
        format!(
            "; {} of {} probe samples were dropped because the probe lost CPU {} (to the program or other work)",
            p.dropped, p.samples, p.probe_cpu
        )
    } else {
        String::new()
    };
    let head = format!(
        "bandwidth pressure: the probe's latency while it ran was {ns:.0} ns, {times:.2}× idle"
    );
    let body = match what {
        pressure::Pressure::Flat { below_gbs } => format!(
            "memory traffic below {below_gbs:.1} GB/s: the curves are flat there, so latency says no more than that; memory bandwidth does not hold it up"
        ),
        pressure::Pressure::Within { low_gbs, high_gbs } => {
            let share = high_gbs / p.saturation_gbs;
            format!(
                "memory traffic {low_gbs:.1}–{high_gbs:.1} GB/s (the interval spans the read:write mixes it may have), up to {:.0}% of the {:.1} GB/s the curves saturate at{}",
                share * 100.0,
                p.saturation_gbs,
                if share >= 0.7 && times >= 1.3 {
                    ": memory-bound; less traffic (blocking, fewer passes, smaller types) or more memory channels would speed it up"
                } else {
                    ""
                }
            )
        }
        pressure::Pressure::Saturated { at_least_gbs } => format!(
            "memory saturated (at least {at_least_gbs:.1} GB/s, the lowest saturation of the curves): memory-bound; only less traffic or more bandwidth (channels, nodes) speeds it up"
        ),
    };
    Some(format!(
        "{head}: {body}. This is the traffic of the whole machine's memory while it ran, its own and any other work's, read off the loaded-latency curves ({}){dropped}",
        p.family_source
    ))
}

/// Huge-page coverage of its anonymous memory, against the kernel's THP mode.
fn huge_finding(peak: &Snapshot, thp_mode: Option<&str>) -> Option<String> {
    let c = peak.huge;
    let share = c.thp_share()?;
    let hugetlb = if c.hugetlb > 0 {
        format!("; {} on hugetlb pages", format_bytes(c.hugetlb))
    } else {
        String::new()
    };
    let advice = if c.anonymous >= LARGE_ANON && share < 0.5 {
        match thp_mode {
            Some("never") => {
                "; THP is off on this machine (`never`): hugetlb pages or THP `madvise` would cut its TLB misses on large arrays"
            }
            Some("madvise") => {
                "; THP is `madvise` here: the program gets huge pages only where it asks, so madvise(MADV_HUGEPAGE) its large buffers (or run it with THP `always`) to cut TLB misses"
            }
            _ => {
                "; THP is on, yet most of it is on small pages: memory may be fragmented (compare /proc/buddyinfo) or the buffers are too small or not 2 MiB-aligned"
            }
        }
    } else {
        ""
    };
    Some(format!(
        "huge pages: {:.0}% of its {} of anonymous memory is on transparent huge pages{hugetlb}{advice}",
        share * 100.0,
        format_bytes(c.anonymous)
    ))
}
