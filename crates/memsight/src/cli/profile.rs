//! `memsight profile`: the flags, and the profile as a command.

use memsight_core::env::Environment;
use memsight_kernels::loadgen::TrafficMix;
use memsight_suites::loaded;
use memsight_suites::measure::machine::Machine;
use memsight_suites::measure::progress::Completed;
use memsight_suites::profile::{self, Family, ProfileSettings};

use super::values::duration;
use crate::suite::{Outcome, Suite, Ui};

/// A program on this machine's memory: memory held, huge-page coverage, pages per NUMA node
/// against where its threads ran, glibc arenas; findings with the change to make. Start it
/// (`-- CMD ARGS`) or watch it running (`--pid PID --for DURATION`).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Watch this running process instead of starting one.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,
    /// How long to watch --pid: seconds or 30s, 10m, 2h.
    #[arg(long = "for", value_name = "DURATION", value_parser = duration, default_value = "60", requires = "pid")]
    pub watch: f64,
    /// Stop a started program after this long: seconds or 30s, 10m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "1h", conflicts_with = "pid")]
    pub timeout: f64,
    /// Between readings of the program's /proc files.
    #[arg(long, value_name = "MS", default_value_t = ProfileSettings::default().interval_ms)]
    pub interval_ms: u64,
    /// Loaded-latency curves to read bandwidth pressure off: a result file, a run directory, a
    /// history run id or `latest` (default: this machine's newest in the history, else measured
    /// first: all reads, 2:1 and all writes, about a minute).
    #[arg(long, value_name = "RUN", conflicts_with = "no_pressure")]
    pub curves: Option<String>,
    /// No bandwidth pressure: no probe chase, no curves.
    #[arg(long)]
    pub no_pressure: bool,
    /// CPU of the probe chase (default: the last allowed CPU); one the program does not use.
    #[arg(long, value_name = "CPU")]
    pub probe_cpu: Option<usize>,
    #[command(flatten)]
    pub db: super::DbArgs,
    /// Your program and its arguments, after `--` (its output goes to stderr).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl Suite for Args {
    /// The figures are the program's, not the machine's.
    fn warns(&self) -> bool {
        false
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        let machine = Machine::new();
        let mut cfg = ProfileSettings {
            command: self.command.clone(),
            pid: self.pid,
            watch_s: self.watch,
            timeout_s: self.timeout,
            interval_ms: self.interval_ms,
            family: None,
            probe_cpu: self.probe_cpu,
        };
        // Every flag is checked before the pressure curves are measured (about a minute).
        profile::validate(&cfg, env)?;
        if !self.no_pressure {
            cfg.family = self.family(env, &machine, ui)?;
        }
        let Completed { results, complete } =
            crate::suite::measured_on::<profile::Profile>(cfg, env, &machine, ui)?;
        let failure = match results.ending {
            profile::Ending::Exited(c) if c != 0 => {
                Some(format!("the program exited with code {c}"))
            }
            profile::Ending::Signalled(s) => Some(format!("the program was killed by signal {s}")),
            _ => None,
        };
        Ok(Outcome {
            failure,
            ..Outcome::of(results, complete)
        })
    }
}

impl Args {
    /// The curve family: the run named, this machine's newest in the history, or measured now
    /// (none on one CPU: the curves need a CPU to load memory beside the one that chases).
    fn family(
        &self,
        env: &Environment,
        machine: &Machine,
        ui: &Ui,
    ) -> anyhow::Result<Option<Family>> {
        let db = self.db.path();
        if let Some(reference) = &self.curves {
            let doc = memsight_results::history::resolve(reference, &db)?;
            let r = memsight_results::history::curves_of(&doc).ok_or_else(|| {
                memsight_core::Error::input(format!(
                    "--curves {reference}: it holds no loaded-latency curves (a `loaded-latency` result or a `run` that measured them)"
                ))
            })?;
            return Ok(Some(Family {
                curves: r.curves,
                source: format!("{reference}, {}", doc.started),
            }));
        }
        let fingerprint = memsight_results::history::fingerprint(env);
        if let Some((source, r)) = memsight_results::history::latest_curves(&db, &fingerprint)? {
            return Ok(Some(Family {
                curves: r.curves,
                source,
            }));
        }
        if env.allowed_cpus.len() < 2 {
            eprintln!(
                "memsight: no loaded-latency curves of this machine in the history, and one CPU cannot measure them: no bandwidth pressure"
            );
            return Ok(None);
        }
        let cfg = loaded::LoadedSettings {
            mixes: vec![TrafficMix::Reads, TrafficMix::R2W1, TrafficMix::Writes],
            points: 6,
            // Each round's sweep is read as well as their merge: a host that answers one load at
            // two latencies shows both, and a reading in either is held.
            rounds: 3,
            ..loaded::LoadedSettings::default()
        };
        let Completed {
            results: r,
            complete: done,
        } = ui.progress(None, |tick| loaded::run(&cfg, env, machine, tick))?;
        if !done {
            // Ctrl-C before the program started: nothing of it to keep.
            anyhow::bail!(memsight_core::Error::Interrupted);
        }
        Ok(Some(Family {
            curves: r.curves,
            source: "measured before the program started: all reads, 2:1 and all writes".into(),
        }))
    }
}
