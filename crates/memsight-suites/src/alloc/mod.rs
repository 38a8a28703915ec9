//! `memsight alloc`: how much memory an allocator holds for a given live heap (the DDR4/TCMalloc
//! seed: glibc's per-thread arenas made a service's RSS 2.5–3× its live heap; TCMalloc fixed it).
//!
//! The built-in workload (`memsight_kernels::allocwork`) runs in a child process — memsight
//! itself, as the hidden `alloc-worker` command — once per allocator configuration (LD_PRELOAD
//! and environment), `--repeat` times each. memsight samples the child's RSS every few
//! milliseconds while the child reports its live bytes after every phase, its operation count and
//! its allocator's own statistics; after the child has freed everything memsight samples the RSS
//! once more (what the allocator keeps). `memsight alloc -- CMD ARGS…` runs the user's program the
//! same way and compares RSS over time and wall time.

pub mod arenas;
pub mod attach;
pub mod child;
pub mod configs;
mod findings;
mod results;
mod suite;
pub use suite::Alloc;

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use findings::judge;
pub use results::*;

use std::process::Command;
use std::time::Duration;

use memsight_core::env::Environment;
use memsight_core::stats::summarize;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use memsight_kernels::allocstats;
use memsight_kernels::allocwork::{self, Preset, Workload};

/// What the allocator study runs.
#[derive(Debug, Clone)]
pub struct AllocSettings {
    /// The built-in workload; `None` when the user's command runs instead.
    pub workload: Option<Workload>,
    /// Configurations to run by name; `None`: all that are installed.
    pub configs: Option<Vec<String>>,
    /// More allocators to preload: NAME=PATH.
    pub allocators: Vec<String>,
    /// Runs per configuration.
    pub repeat: usize,
    /// RSS sampling interval.
    pub interval_ms: u64,
    /// Stop a run after this long.
    pub timeout_s: f64,
    /// Kill a run whose RSS exceeds this; `None`: 8 × live + 1 GiB, at most 90% of available.
    pub max_rss: Option<u64>,
    /// The user's program and its arguments (empty: the built-in workload).
    pub command: Vec<String>,
    /// Watch this running process instead of starting anything.
    pub pid: Option<u32>,
    /// How long to watch it, seconds.
    pub watch_s: f64,
}

impl Default for AllocSettings {
    fn default() -> Self {
        AllocSettings {
            workload: None,
            configs: None,
            allocators: Vec::new(),
            repeat: 2,
            interval_ms: 10,
            timeout_s: 120.0,
            max_rss: None,
            command: Vec::new(),
            pid: None,
            watch_s: 60.0,
        }
    }
}
use child::{Ending, Limits};
use configs::AllocConfig;

/// Defaults per preset: (threads, live, min, max, phases, churn).
fn preset_defaults(p: Preset) -> (usize, u64, usize, usize, usize, u64) {
    match p {
        Preset::Bursty => (8, 256 << 20, 64, 16 << 10, 8, 20_000),
        Preset::Pinning => (4, 128 << 20, 32, 64 << 10, 8, 5_000),
        Preset::SizePhases => (4, 128 << 20, 32, 64 << 10, 6, 20_000),
        Preset::Steady | Preset::CrossThread => (4, 128 << 20, 32, 16 << 10, 4, 50_000),
    }
}

/// The built-in workload as asked for; `None` takes the preset's default.
#[derive(Debug, Clone)]
pub struct WorkloadSettings {
    pub preset: Preset,
    pub threads: Option<usize>,
    /// Live heap the workload holds in total.
    pub live: Option<u64>,
    /// Smallest object (sizes are log-uniform between the two).
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    pub phases: Option<usize>,
    /// Free + allocate pairs per thread per phase at constant live bytes.
    pub churn: Option<u64>,
    /// pinning: keep 1 in N objects when shrinking.
    pub survivors: u64,
    /// Seed of every size and free decision (same seed, same sequence).
    pub seed: u64,
}

impl Default for WorkloadSettings {
    fn default() -> Self {
        WorkloadSettings {
            preset: Preset::Bursty,
            threads: None,
            live: None,
            min_size: None,
            max_size: None,
            phases: None,
            churn: None,
            survivors: 64,
            seed: 1,
        }
    }
}

impl WorkloadSettings {
    /// The workload, its preset's defaults filled in, checked.
    pub fn resolve(&self) -> Result<Workload> {
        let (threads, live, lo, hi, phases, churn) = preset_defaults(self.preset);
        let w = Workload {
            preset: self.preset,
            threads: self.threads.unwrap_or(threads),
            live_bytes: self.live.unwrap_or(live),
            min_size: self.min_size.map_or(lo, |v| v as usize),
            max_size: self.max_size.map_or(hi, |v| v as usize),
            phases: self.phases.unwrap_or(phases),
            churn: self.churn.unwrap_or(churn),
            survivors: self.survivors,
            seed: self.seed,
        };
        if !(1..=1024).contains(&w.threads) {
            return Err(Error::input("--threads must be 1 … 1024"));
        }
        if w.min_size == 0 || w.min_size > w.max_size || w.max_size > (1 << 30) {
            return Err(Error::input(format!(
                "object sizes {} … {}: need 1 B ≤ min ≤ max ≤ 1 GiB",
                w.min_size, w.max_size
            )));
        }
        if w.live_bytes < w.max_size as u64 * w.threads as u64 {
            return Err(Error::input(format!(
                "--live {} is too small for {} threads of objects up to {}",
                memsight_core::units::format_bytes(w.live_bytes),
                w.threads,
                memsight_core::units::format_bytes(w.max_size as u64)
            )));
        }
        if !(1..=10_000).contains(&w.phases) || w.survivors == 0 || w.churn > 100_000_000 {
            return Err(Error::input(
                "--phases must be 1 … 10000, --survivors at least 1, --churn at most 1e8",
            ));
        }
        Ok(w)
    }
}

/// `memsight alloc-worker`: runs the workload in this process and reports on stdout as JSON
/// lines; waits for a line on stdin after freeing everything so the parent can measure.
pub fn worker(w: &Workload, trim: bool) -> Result<()> {
    let out = std::io::stdout();
    let say = |v: serde_json::Value| {
        use std::io::Write;
        let mut o = out.lock();
        let _ = writeln!(o, "{v}");
        let _ = o.flush();
    };
    say(serde_json::json!({"event": "start", "allocator": allocstats::allocator_name()}));
    let stats = std::sync::Mutex::new(Vec::new());
    let totals = allocwork::run(
        w,
        &|e| {
            if trim {
                allocstats::trim();
            }
            if e.phase + 1 == w.phases {
                *stats.lock().expect("stats") = allocstats::allocator_stats();
            }
            // Measured here, with every thread waiting at the barrier: no race with the next
            // phase's frees (the parent's sampling could land after them).
            let rss = child::rss_bytes(std::process::id());
            say(
                serde_json::json!({"event": "phase", "phase": e.phase, "live": e.live_bytes, "rss": rss, "t": e.seconds}),
            );
        },
        &|| false,
    );
    if trim {
        allocstats::trim();
    }
    say(serde_json::json!({
        "event": "done",
        "ops": totals.ops,
        "seconds": totals.seconds,
        "peak_live": totals.peak_live_bytes,
        "failed": totals.failed_allocations,
        "stats": stats.into_inner().expect("stats"),
    }));
    say(serde_json::json!({"event": "freed", "final_live": totals.final_live_bytes}));
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    Ok(())
}

fn run_once(cmd: Command, config: &AllocConfig, limits: &Limits, capture: bool) -> Result<Run> {
    let w = child::watch(cmd, config, limits, capture)?;
    let mut run = Run {
        ending: w.ending.clone(),
        seconds: w.seconds,
        allocator_seen: None,
        peak_rss_bytes: w.samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        rss: w.samples.clone(),
        phases: Vec::new(),
        final_rss_bytes: None,
        final_live_bytes: None,
        peak_live_bytes: None,
        after_free_rss_bytes: w.rss_after_free,
        ops: None,
        ops_per_s: None,
        stats: Vec::new(),
        arenas: w.arenas.clone(),
    };
    for (t, line) in &w.lines {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match v["event"].as_str() {
            Some("start") => run.allocator_seen = v["allocator"].as_str().map(String::from),
            Some("phase") => {
                let rss = v["rss"].as_u64().or_else(|| {
                    w.samples
                        .iter()
                        .find(|s| s.seconds >= *t)
                        .map(|s| s.rss_bytes)
                });
                run.phases.push(PhasePoint {
                    phase: v["phase"].as_u64().unwrap_or(0) as usize,
                    seconds: *t,
                    live_bytes: v["live"].as_i64().unwrap_or(0),
                    rss_bytes: rss,
                });
            }
            Some("done") => {
                run.ops = v["ops"].as_u64();
                let secs = v["seconds"].as_f64().unwrap_or(0.0);
                run.ops_per_s = run.ops.filter(|_| secs > 0.0).map(|o| o as f64 / secs);
                run.peak_live_bytes = v["peak_live"].as_i64();
                run.stats = serde_json::from_value(v["stats"].clone()).unwrap_or_default();
            }
            _ => {}
        }
    }
    if let Some(last) = run.phases.last() {
        run.final_live_bytes = Some(last.live_bytes);
        run.final_rss_bytes = last.rss_bytes;
    }
    Ok(run)
}

fn summarise(config: AllocConfig, runs: Vec<Run>, workload: bool) -> ConfigResult {
    // A command watched up to the time limit keeps its samples: the limit is the window.
    let usable =
        |r: &Run| r.ending == Ending::Exited(0) || (!workload && r.ending == Ending::TimedOut);
    let ok: Vec<&Run> = runs.iter().filter(|r| usable(r)).collect();
    let stat = |f: &dyn Fn(&Run) -> Option<f64>| {
        let v: Vec<f64> = ok.iter().filter_map(|r| f(r)).collect();
        (!v.is_empty()).then(|| summarize(&v))
    };
    let mut problems = Vec::new();
    for r in &runs {
        if !usable(r) {
            problems.push(format!("a run ended {}", r.ending));
        }
        if workload && let Some(seen) = &r.allocator_seen {
            let expected = if config.preload.is_some() {
                config.name.split('-').next().unwrap_or("")
            } else {
                "glibc"
            };
            if ["glibc", "tcmalloc", "jemalloc", "mimalloc"].contains(&expected) && seen != expected
            {
                problems.push(format!(
                    "the child's malloc was served by {seen}, not {expected}: the preload did not take"
                ));
            }
        }
    }
    problems.dedup();
    ConfigResult {
        peak_rss: stat(&|r| Some(r.peak_rss_bytes as f64)),
        rss_over_live: stat(&|r| match (r.final_rss_bytes, r.final_live_bytes) {
            (Some(rss), Some(live)) if live > 0 => Some(rss as f64 / live as f64),
            _ => None,
        }),
        peak_rss_over_peak_live: stat(&|r| match r.peak_live_bytes {
            Some(live) if live > 0 => Some(r.peak_rss_bytes as f64 / live as f64),
            _ => None,
        }),
        peak_rss_over_live_set: stat(&|r| {
            let live = r.phases.iter().map(|p| p.live_bytes).max()?;
            (live > 0).then(|| r.peak_rss_bytes as f64 / live as f64)
        }),
        after_free_rss: stat(&|r| r.after_free_rss_bytes.map(|b| b as f64)),
        ops_per_s: stat(&|r| r.ops_per_s),
        wall_s: stat(&|r| matches!(r.ending, Ending::Exited(_)).then_some(r.seconds)),
        arenas: stat(&|r| r.allocator_arenas().map(f64::from)),
        threads: stat(&|r| r.peak_threads().map(f64::from)),
        config,
        runs,
        problems,
    }
}

/// Runs every configuration; returns results and whether all ran.
pub fn run(
    a: &AllocSettings,
    env: &Environment,
    tick: Tick<'_>,
) -> Result<Completed<AllocResults>> {
    if let Some(pid) = a.pid {
        return watch_process(a, env, pid).map(|(r, done)| Completed::new(r, done));
    }
    let user = (!a.command.is_empty()).then(|| a.command.clone());
    let (configs, skipped) = select(a)?;
    let w = workload(a, user.is_some(), env)?;
    let limits = limits(a, w.as_ref(), env);
    if a.repeat == 0 {
        return Err(Error::input("--repeat must be at least 1"));
    }
    let exe = std::env::current_exe()
        .map_err(|e| Error::system(format!("cannot find memsight's own binary: {e}")))?;
    let (results, complete) = run_configs(
        a,
        &configs,
        user.as_deref(),
        w.as_ref(),
        &exe,
        &limits,
        tick,
    )?;
    let (recommendation, mut findings) = judge(&results, user.is_some());
    findings.extend(run_findings(&results, user.is_some(), env, &limits));
    let method = method(a, w.as_ref(), &limits);
    Ok(Completed::new(
        AllocResults {
            method,
            workload: w,
            command: user,
            configs: results,
            skipped,
            recommendation,
            findings,
            process: None,
        },
        complete,
    ))
}

/// The built-in workload, unless the user's command runs instead; refused when its live heap
/// is more than half the available memory.
fn workload(a: &AllocSettings, user: bool, env: &Environment) -> Result<Option<Workload>> {
    // The time limit becomes a `Duration`, which an infinite one cannot.
    if !(a.timeout_s > 0.0 && a.timeout_s <= 366.0 * 86400.0) {
        return Err(Error::input(
            "--timeout-s must be more than 0 and at most a year",
        ));
    }
    let w = match user {
        false => Some(a.workload.clone().ok_or_else(|| {
            Error::input(
                "no workload and no command: give the built-in workload's options or `-- CMD ARGS`",
            )
        })?),
        true => None,
    };
    let available = env.memory.available_bytes.unwrap_or(u64::MAX);
    if let Some(w) = &w
        && w.live_bytes > available / 2
    {
        return Err(Error::input(format!(
            "--live {} is more than half the available memory ({}): allocators may hold several times the live heap",
            format_bytes(w.live_bytes),
            format_bytes(available)
        )));
    }
    Ok(w)
}

/// Sampling interval, time limit and memory cap of every run (the cap by default 8 × the live
/// heap + 1 GiB, at most 90% of the available memory).
fn limits(a: &AllocSettings, w: Option<&Workload>, env: &Environment) -> Limits {
    let available = env.memory.available_bytes.unwrap_or(u64::MAX);
    let max_rss = match a.max_rss {
        Some(s) => s,
        None => match w {
            Some(w) => (w.live_bytes * 8 + (1 << 30)).min(available / 10 * 9),
            None => available / 10 * 9,
        },
    };
    Limits {
        interval: Duration::from_millis(a.interval_ms.max(1)),
        timeout: Duration::from_secs_f64(a.timeout_s.max(0.1)),
        max_rss,
    }
}

/// `--repeat` runs of every configuration in turn; false when interrupted (the interrupted
/// configuration keeps the runs it made).
fn run_configs(
    a: &AllocSettings,
    configs: &[AllocConfig],
    user: Option<&[String]>,
    w: Option<&Workload>,
    exe: &std::path::Path,
    limits: &Limits,
    tick: Tick<'_>,
) -> Result<(Vec<ConfigResult>, bool)> {
    let workload = user.is_none();
    let mut results = Vec::new();
    for c in configs {
        let mut runs = Vec::new();
        for rep in 0..a.repeat {
            if cancel::requested() {
                return Ok((results, false));
            }
            tick(&format!("{} run {}", c.name, rep + 1));
            let cmd = command(user, w, exe, c);
            let r = run_once(cmd, c, limits, workload)?;
            if r.ending == Ending::Interrupted {
                runs.push(r);
                results.push(summarise(c.clone(), runs, workload));
                return Ok((results, false));
            }
            runs.push(r);
        }
        results.push(summarise(c.clone(), runs, workload));
    }
    Ok((results, true))
}

/// Per configuration: glibc's arena finding from its first run, and a note where the user's
/// command was stopped at the time limit.
fn run_findings(
    results: &[ConfigResult],
    user: bool,
    env: &Environment,
    limits: &Limits,
) -> Vec<memsight_core::finding::Finding> {
    let mut findings = Vec::new();
    let cpus = env.topology.cpus.len();
    for c in results {
        if c.config.preload.is_none()
            && let Some(f) = c
                .runs
                .first()
                .and_then(|r| attach::arena_finding(&r.arenas, cpus))
        {
            findings.push(format!("{} (first run): {f}", c.config.name).into());
        }
        if user && c.runs.iter().any(|r| r.ending == Ending::TimedOut) {
            findings.push(
                format!(
                    "{}: the command was still running at the time limit ({:.0} s); its figures cover that window",
                    c.config.name,
                    limits.timeout.as_secs_f64()
                )
                .into(),
            );
        }
    }
    findings
}

/// `--pid`: watch a running process, start nothing.
fn watch_process(a: &AllocSettings, env: &Environment, pid: u32) -> Result<(AllocResults, bool)> {
    if !(a.watch_s > 0.0 && a.watch_s <= 366.0 * 86400.0) {
        return Err(Error::input("--for must be more than 0 and at most a year"));
    }
    if !a.command.is_empty() {
        return Err(Error::input(
            "--pid watches a running process: give no command",
        ));
    }
    let interval = Duration::from_millis(a.interval_ms.max(1));
    let w = attach::watch(pid, Duration::from_secs_f64(a.watch_s), interval)?;
    let complete = w.ending != attach::WatchEnding::Interrupted;
    let findings = attach::findings(&w, env.topology.cpus.len())
        .into_iter()
        .map(Into::into)
        .collect();
    Ok((
        AllocResults {
            method: format!(
                "a running process watched for {:.0} s without restarting it: RSS (VmRSS) every {} ms; glibc arena heaps (64 MiB-aligned anonymous regions of /proc/PID/maps) confirmed and grouped into arenas by their heap headers (/proc/PID/mem) and threads every {} ms; trend = least-squares slope of RSS",
                a.watch_s,
                interval.as_millis(),
                arenas::SAMPLE_EVERY.max(interval).as_millis()
            ),
            workload: None,
            command: Some(vec![w.command.clone()]),
            configs: Vec::new(),
            skipped: Vec::new(),
            recommendation: Vec::new(),
            findings,
            process: Some(w),
        },
        complete,
    ))
}

/// The configurations to run (asked for, or all that are installed) and those skipped, with
/// the reason.
fn select(a: &AllocSettings) -> Result<(Vec<AllocConfig>, Vec<String>)> {
    let mut skipped = Vec::new();
    let mut configs: Vec<AllocConfig> = Vec::new();
    let wanted = a.configs.clone();
    let builtin = configs::builtin();
    if let Some(w) = &wanted {
        for name in w {
            if !builtin.iter().any(|(c, _)| &c.name == name)
                && !a
                    .allocators
                    .iter()
                    .any(|s| s.starts_with(&format!("{name}=")))
            {
                return Err(Error::input(format!(
                    "unknown configuration '{name}': {}",
                    builtin
                        .iter()
                        .map(|(c, _)| c.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    for (c, reason) in builtin {
        if wanted.as_ref().is_some_and(|w| !w.contains(&c.name)) {
            continue;
        }
        match reason {
            Some(r) => skipped.push(r),
            None => configs.push(c),
        }
    }
    for spec in &a.allocators {
        configs.push(configs::custom(spec)?);
    }
    if !a.command.is_empty() {
        configs.retain(|c| {
            if c.trim_each_phase {
                skipped.push(format!(
                    "{}: malloc_trim can only be called inside the built-in workload",
                    c.name
                ));
                false
            } else {
                true
            }
        });
    }
    Ok((configs, skipped))
}

/// The child's command: the user's program, or `memsight alloc-worker` with the workload.
fn command(
    user: Option<&[String]>,
    w: Option<&Workload>,
    exe: &std::path::Path,
    c: &AllocConfig,
) -> Command {
    match (user, w) {
        (Some(argv), _) => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            cmd
        }
        // Without a user command the workload was resolved by `run`.
        (None, w) => {
            let w = w.expect("a workload when no command is given");
            let mut cmd = Command::new(exe);
            cmd.arg("alloc-worker").args(worker_args(w));
            if c.trim_each_phase {
                cmd.arg("--trim");
            }
            cmd
        }
    }
}

/// How the study ran, in words.
fn method(a: &AllocSettings, w: Option<&Workload>, limits: &Limits) -> String {
    match w {
        Some(w) => format!(
            "built-in workload '{}' ({} threads, live set {}, sizes {} … {} log-uniform, {} phases, {} churn pairs per thread per phase, seed {}) in a child process per configuration, {} run(s) each; RSS (VmRSS) sampled every {} ms; live bytes reported by the workload after each phase; RSS after free sampled 50 ms after the workload freed everything; ops = mallocs + frees; figures are medians over runs with min–max",
            w.preset.name(),
            w.threads,
            format_bytes(w.live_bytes),
            format_bytes(w.min_size as u64),
            format_bytes(w.max_size as u64),
            w.phases,
            w.churn,
            w.seed,
            a.repeat,
            limits.interval.as_millis()
        ),
        None => format!(
            "the user's command under each configuration (LD_PRELOAD / environment), {} run(s) each; RSS (VmRSS of the command's main process) sampled every {} ms; wall time to exit; time limit {:.0} s, memory cap {}",
            a.repeat,
            limits.interval.as_millis(),
            limits.timeout.as_secs_f64(),
            format_bytes(limits.max_rss)
        ),
    }
}

/// The resolved workload as `alloc-worker` arguments for the child: every value given, so
/// the child runs exactly this workload.
fn worker_args(w: &Workload) -> Vec<String> {
    [
        ("--preset", w.preset.name().to_string()),
        ("--threads", w.threads.to_string()),
        ("--live", w.live_bytes.to_string()),
        ("--min-size", w.min_size.to_string()),
        ("--max-size", w.max_size.to_string()),
        ("--phases", w.phases.to_string()),
        ("--churn", w.churn.to_string()),
        ("--survivors", w.survivors.to_string()),
        ("--seed", w.seed.to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}
