//! `memsight run`: the one-command characterisation. Runs every suite that applies to this
//! machine within a time budget set by the level (on the project's 2-core VM: quick ≈ 4–5 s,
//! default ≈ 25 s, thorough ≈ 2 min; README "memsight run"), writes the full JSON to a directory per run, and prints the
//! headline figures and findings. Suites that cannot run here (one CPU for loaded latency, no
//! SMBIOS for DIMMs) are skipped with the reason.

use std::path::{Path, PathBuf};

use clap::{Args, Parser};
use memsight_core::env::Environment;
use memsight_core::{Error, Result};

use crate::cli::{BandwidthArgs, DataArg, LatencyArgs, RowbufferArgs, RunArgs};
use crate::{bandwidth, c2c, dimms, latency, loaded, numa, rowbuffer, tiers};
use memsight_results::document::{Document, Level, RunResults};

/// A suite's flags at their defaults: the defaults stay defined once, in the flag definitions.
fn defaults<T: Args>() -> T {
    #[derive(Parser)]
    struct Wrap<U: Args> {
        #[command(flatten)]
        inner: U,
    }
    Wrap::<T>::try_parse_from(["memsight"])
        .expect("every suite flag has a default or is optional")
        .inner
}

/// The results directory for this run.
pub fn out_dir(a: &RunArgs, env: &Environment) -> PathBuf {
    a.out.clone().unwrap_or_else(|| {
        let host = env.hostname.clone().unwrap_or_else(|| "host".into());
        let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace(':', "");
        PathBuf::from("memsight-results").join(format!("{host}-{t}"))
    })
}

/// Refuses a results directory that cannot be created or written, before anything is measured.
pub fn check_out_dir(dir: &Path) -> Result<()> {
    let refuse = |e: std::io::Error| {
        Error::input(format!(
            "cannot write results to '{}': {e}; choose a writable directory with --out",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(refuse)?;
    let probe = dir.join(".memsight-write-test");
    std::fs::write(&probe, b"").map_err(refuse)?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes run.json and report.html into `dir` and stores the run in the history. Files come
/// first: a history that fails afterwards loses nothing.
pub fn save(
    doc: &Document,
    dir: &Path,
    history: Option<&mut memsight_results::history::History>,
    quiet: bool,
) -> Result<()> {
    let json = dir.join("run.json");
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| Error::input(format!("cannot encode the results: {e}")))?;
    std::fs::write(&json, text)
        .map_err(|e| Error::input(format!("cannot write {}: {e}", json.display())))?;
    let html = dir.join("report.html");
    std::fs::write(&html, crate::report::render(doc))
        .map_err(|e| Error::input(format!("cannot write {}: {e}", html.display())))?;
    if !quiet {
        println!("  results: {}", json.display());
        println!("  report:  {}", html.display());
    }
    if let Some(h) = history {
        let id = h
            .insert(doc)
            .map_err(|e| Error::input(format!("{e}; the results are safe in {}", dir.display())))?;
        if !quiet {
            println!(
                "  history: run {id} in {} (memsight history, memsight compare latest~1 latest)",
                h.path().display()
            );
        }
    }
    Ok(())
}

/// What a run has done so far: suites skipped (with the reason) and whether all completed.
#[derive(Default)]
struct Progress {
    skipped: Vec<String>,
    complete: bool,
}

impl Progress {
    /// Runs one suite unless `skip` gives a reason (or Ctrl-C came): its results, or `None`.
    fn suite<R>(
        &mut self,
        skip: Option<String>,
        f: impl FnOnce() -> Result<(R, bool)>,
    ) -> Result<Option<R>> {
        if let Some(why) = skip {
            self.skipped.push(why);
            return Ok(None);
        }
        if memsight_core::cancel::requested() {
            return Ok(None);
        }
        let (r, done) = f()?;
        self.complete &= done;
        Ok(Some(r))
    }
}

/// The row-buffer study of a thorough run: the default range (three predicted periods) with
/// fewer points, and two repetitions so that advice can flag an offset: fewer points, not fewer
/// repetitions.
fn thorough_rowbuffer(dmidecode: Option<PathBuf>) -> RowbufferArgs {
    RowbufferArgs {
        points_per_period: 6,
        kernels: "copy".into(),
        reps: 2,
        samples: 3,
        dmidecode,
        ..defaults()
    }
}

/// The bandwidth tests of a level.
fn bandwidth_args(level: Level) -> BandwidthArgs {
    let tests = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
    match level {
        Level::Quick => BandwidthArgs {
            test: tests(&["read", "write", "copy-nt"]),
            min_samples: 3,
            point_budget: 0.3,
            ..defaults()
        },
        Level::Default => BandwidthArgs {
            test: tests(&[
                "read",
                "write",
                "write-nt",
                "copy",
                "copy-nt",
                "3:1",
                "2:1",
                "stream-triad-like",
            ]),
            min_samples: 5,
            point_budget: 0.5,
            ..defaults()
        },
        _ => BandwidthArgs {
            scaling: true,
            pattern: DataArg::Both,
            sweep: true,
            ..defaults()
        },
    }
}

/// The loaded-latency curves of a level: reads and 2:1 by default, every mix when thorough.
fn loaded_config(level: Level) -> loaded::Config {
    if level == Level::Default {
        loaded::Config {
            mixes: vec![
                memsight_kernels::loadgen::TrafficMix::Reads,
                memsight_kernels::loadgen::TrafficMix::R2W1,
            ],
            points: 5,
            settle_ms: 50,
            min_samples: 5,
            point_budget: 0.2,
            ..Default::default()
        }
    } else {
        loaded::Config::default()
    }
}

/// Why a suite needing two CPUs, or more than a quick run, is skipped (`None`: it runs).
fn skip(what: &str, level: Level, ncpu: usize, needs_two: bool) -> Option<String> {
    if needs_two && ncpu < 2 {
        Some(format!("{what}: needs at least 2 CPUs"))
    } else if level == Level::Quick {
        Some(format!("{what}: not in a quick run"))
    } else {
        None
    }
}

/// The tier study in a run: every part, shorter points, Memory Mode from the inventory; one node
/// per tier unless thorough.
fn tiers_config(level: Level, dimms: Option<&dimms::DimmsResults>) -> tiers::Config {
    tiers::Config {
        one_per_tier: level != Level::Thorough,
        memory_mode_dram: dimms.filter(|d| d.memory_mode).map(|d| d.dram_bytes),
        min_samples: 5,
        point_budget: 0.2,
        ..Default::default()
    }
}

/// Why the tier study is not part of this run (`None`: it runs): it is, where the machine has
/// more than one memory tier or near memory in front of far memory.
fn tiers_skip(
    level: Level,
    env: &Environment,
    dimms: Option<&dimms::DimmsResults>,
) -> Result<Option<String>> {
    if level == Level::Quick {
        return Ok(Some("memory tiers: not in a quick run".into()));
    }
    let plan = tiers::make_plan(
        &tiers_config(level, dimms),
        env,
        &memsight_core::sysfs::FsRoot::from_env(),
    )?;
    Ok((plan.tiers.len() < 2 && plan.near.is_none()).then(|| {
        "memory tiers: one memory tier and no near memory here (memsight tiers measures it anyway)".to_string()
    }))
}

/// Runs every suite. `latency` holds the already measured ladder (it needs the CLI's progress).
pub fn rest(
    a: &RunArgs,
    env: &Environment,
    latency: latency::LatencyResults,
    tick: &(dyn Fn(&str) + Sync),
) -> Result<(RunResults, bool)> {
    let level = if a.quick {
        Level::Quick
    } else if a.thorough {
        Level::Thorough
    } else {
        Level::Default
    };
    let ncpu = env.allowed_cpus.len();
    let mut p = Progress {
        complete: true,
        ..Default::default()
    };
    let cfg = bandwidth_args(level).config(env)?;
    let (bandwidth, done) = bandwidth::run(&cfg, env, &|m: &str| tick(&format!("bandwidth: {m}")))?;
    p.complete &= done;
    let loaded_latency = p.suite(skip("loaded latency", level, ncpu, true), || {
        loaded::run(&loaded_config(level), env, &|m: &str| {
            tick(&format!("loaded latency: {m}"))
        })
    })?;
    let numa = p.suite(skip("NUMA matrices", level, ncpu, false), || {
        let cfg = numa::Config {
            min_samples: 5,
            point_budget: 0.3,
            ..Default::default()
        };
        numa::run(&cfg, env, &|m: &str| tick(&format!("NUMA: {m}")))
    })?;
    let c2c = p.suite(skip("core-to-core latency", level, ncpu, true), || {
        let cfg = c2c::Config {
            sampling: crate::sampling::Sampling {
                point_budget: 0.3,
                ..c2c::SAMPLING
            },
            ..Default::default()
        };
        c2c::run(&cfg, env, &|m: &str| tick(&format!("core to core: {m}")))
    })?;
    let dimms = match dimms::run(&dimms::Config {
        dmidecode: a.dmidecode.clone(),
        ..Default::default()
    }) {
        Ok(r) => Some(r),
        Err(e) => {
            p.skipped.push(format!("DIMM inventory: {e}"));
            None
        }
    };
    let tiers = p.suite(tiers_skip(level, env, dimms.as_ref())?, || {
        let cfg = tiers_config(level, dimms.as_ref());
        tiers::run(&cfg, env, &|m: &str| tick(&format!("tiers: {m}")))
    })?;
    let thorough_only = (level != Level::Thorough)
        .then(|| "row-buffer study: thorough runs only (memsight rowbuffer)".to_string());
    let rowbuffer = p.suite(thorough_only, || {
        let ra = thorough_rowbuffer(a.dmidecode.clone());
        rowbuffer::run(&ra.config(env)?, env, &|m: &str| {
            tick(&format!("row buffer: {m}"))
        })
    })?;
    let mut summary = summary(
        &latency,
        &bandwidth,
        loaded_latency.as_ref(),
        c2c.as_ref(),
        dimms.as_ref(),
    );
    summary.extend(tiers.as_ref().map(tiers_summary));
    Ok((
        RunResults {
            level,
            latency,
            bandwidth: Some(bandwidth),
            loaded_latency,
            numa,
            c2c,
            dimms,
            rowbuffer,
            tiers,
            skipped: p.skipped,
            summary,
            directory: None,
        },
        p.complete,
    ))
}

/// The latency arguments for a level.
pub fn latency_args(a: &RunArgs) -> LatencyArgs {
    let mut l = a.latency.clone();
    if a.quick {
        l.points_per_octave = l.points_per_octave.min(2);
        l.parallel = 1;
        l.no_tlb = true;
        l.point_budget = l.point_budget.min(0.15);
    }
    l
}

/// One line for the memory tiers: each measured target's idle read latency and read bandwidth.
fn tiers_summary(t: &tiers::TiersResults) -> String {
    let parts: Vec<String> = t
        .targets
        .iter()
        .map(|f| {
            let med = |s: &Option<memsight_core::stats::Summary>| {
                s.as_ref()
                    .map_or("-".to_string(), |s| format!("{:.1}", s.median))
            };
            format!(
                "{} ({}) {} ns, {} GB/s",
                f.target.label(),
                f.kind.as_deref().unwrap_or("kind not reported"),
                med(&f.read_latency_ns),
                med(&f.read_gbs)
            )
        })
        .collect();
    format!(
        "memory tiers (read latency, read bandwidth): {}",
        parts.join("; ")
    )
}

fn summary(
    lat: &latency::LatencyResults,
    bw: &bandwidth::BandwidthResults,
    loaded: Option<&loaded::LoadedResults>,
    c2c: Option<&c2c::C2cResults>,
    dimms: Option<&dimms::DimmsResults>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(l) = lat.ladders.first() {
        let levels: Vec<String> = l
            .levels
            .plateaus
            .iter()
            .map(|p| format!("{} {:.1} ns", p.name, p.ns))
            .collect();
        out.push(format!("latency (CPU {}): {}", l.cpu, levels.join(", ")));
    }
    let best = |name: &str| {
        bw.points
            .iter()
            .filter(|p| p.test.name == name)
            .map(|p| p.program_gbs.median)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    let figures: Vec<String> = ["read", "write", "copy", "copy-nt", "stream-triad-like"]
        .iter()
        .filter_map(|n| best(n).map(|v| format!("{n} {v:.1}")))
        .collect();
    out.push(format!(
        "bandwidth, GB/s of program bytes on {} thread(s): {}",
        bw.config.cpus.len(),
        figures.join(", ")
    ));
    if let Some(ld) = loaded {
        for c in &ld.curves {
            out.push(format!(
                "loaded latency ({}): saturation {:.1} GB/s, knee {}",
                c.mix.name(),
                c.saturation_gbs,
                c.knee_gbs
                    .map_or("not reached".to_string(), |k| format!("{k:.1} GB/s"))
            ));
        }
    }
    if let Some(p) = c2c.and_then(|c| c.pairs.first()) {
        out.push(format!(
            "core-to-core: CPU {} ↔ {} {:.0} ns (modified line)",
            p.a, p.b, p.modified_ns.median
        ));
    }
    if let Some(d) = dimms {
        out.push(format!(
            "DIMMs: {} of {} slots, {} MB/s theoretical peak",
            d.populated, d.slots, d.ceilings.system_dram_mbs
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thorough_run_can_flag_an_offset() {
        let env = Environment::collect(
            &memsight_core::sysfs::FsRoot::from_env(),
            memsight_core::topology::Topology::load().unwrap(),
            false,
        );
        let dmi = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../testdata/dmidecode/dell-poweredge-r7525-2s-epyc7742-ddr4-rdimm-hynix-hmaa8gr7ajr4n.txt",
        );
        let cfg = thorough_rowbuffer(Some(dmi)).config(&env).unwrap();
        // Advice needs the same dip in two repetitions; detection needs three periods.
        assert!(cfg.reps >= 2);
        let period = cfg.model.as_ref().unwrap().periods(&cfg.kernels).unwrap();
        assert!(*cfg.offsets.last().unwrap() >= 3 * period.longest);
        assert!(cfg.offsets.len() <= 24, "{} points", cfg.offsets.len());
    }
}
