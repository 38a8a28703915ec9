//! `memsight profile`: a program on this machine's memory. It starts the program (`-- CMD`) or
//! watches a running one (`--pid`), and reads from `/proc` every interval what it holds (RSS,
//! anonymous, file and shared memory, swap; its glibc arenas), how much of its anonymous memory
//! is on huge pages, its pages per NUMA node and the CPUs its threads run on; then it says where
//! its memory sits against its threads (remote share, slower tier) and what to change.

pub mod placement;
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
#[derive(Debug, Clone, PartialEq)]
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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            command: Vec::new(),
            pid: None,
            watch_s: 60.0,
            timeout_s: 3600.0,
            interval_ms: 200,
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
    pub findings: Vec<String>,
}

/// Profiles the program of `a`. Returns the results and whether the profile is complete (not
/// stopped by Ctrl-C).
pub fn run(
    a: &Config,
    env: &Environment,
    tick: &(dyn Fn(&str) + Sync),
) -> Result<(ProfileResults, bool)> {
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
    let interval = Duration::from_millis(a.interval_ms);
    let (watched, command) = match a.pid {
        Some(pid) => {
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
            let w = sample(
                pid,
                None,
                Duration::from_secs_f64(a.watch_s),
                interval,
                tick,
            );
            (w, name)
        }
        None => {
            let mut cmd = Command::new(&a.command[0]);
            cmd.args(&a.command[1..]).stdin(Stdio::null());
            // The program's output goes to memsight's stderr, so that `--json` stays one document.
            if let Ok(err) = std::os::fd::AsFd::as_fd(&std::io::stderr()).try_clone_to_owned() {
                cmd.stdout(Stdio::from(err));
            }
            let child = cmd.spawn().map_err(|e| {
                Error::input(format!("profile: cannot start {}: {e}", a.command[0]))
            })?;
            let w = sample(
                child.id(),
                Some(child),
                Duration::from_secs_f64(a.timeout_s),
                interval,
                tick,
            );
            (w, a.command.join(" "))
        }
    };
    let Watched {
        pid,
        timeline,
        cpus,
        arenas,
        ending,
        seconds,
    } = watched;
    let peak = timeline.iter().max_by_key(|s| s.held.rss).cloned();
    let cpu_samples: Vec<(usize, u64)> = cpus.into_iter().collect();
    let placement = peak
        .as_ref()
        .map(|p| placement::assess(&p.nodes, &cpu_samples, &env.topology));
    let thp_mode = env.thp_enabled.clone();
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
        thp_mode,
        findings: Vec::new(),
    };
    r.findings = findings(&r, env.allowed_cpus.len());
    // A time limit is what was asked for: only Ctrl-C leaves the profile incomplete.
    let complete = ending != Ending::Interrupted;
    Ok((r, complete))
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
    tick: &(dyn Fn(&str) + Sync),
) -> Watched {
    let started = Instant::now();
    let (mut timeline, mut cpus, mut arena_samples) = (Vec::new(), BTreeMap::new(), Vec::new());
    let mut next_arenas = Duration::ZERO;
    let ending = loop {
        let t = started.elapsed();
        if let Some(e) = child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
            break exit_ending(e);
        }
        match procfs::snapshot(pid, t.as_secs_f64()) {
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
            arena_samples.extend(arenas::sample(pid, t.as_secs_f64()));
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
    format!(
        "every {} ms: /proc/PID/status (RSS, anonymous, file and shared memory, swap, threads), /proc/PID/smaps_rollup (anonymous memory on transparent huge pages, hugetlb pages), /proc/PID/numa_maps (pages per node: N<node>=pages × kernelpagesize_kB) and the CPU each thread last ran on (/proc/PID/task/*/stat field 39); glibc arenas every {} ms from its mappings (and its memory where readable). Placement and huge-page coverage describe the reading at the largest RSS; the nodes its threads ran on are those of every reading. Bytes are the program's resident bytes as the kernel counts them.",
        a.interval_ms,
        arenas::SAMPLE_EVERY
            .as_millis()
            .max(u128::from(a.interval_ms)),
    )
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
