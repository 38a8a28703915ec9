//! `memsight profile`: the flags, and the profile as a command.

use memsight_core::env::Environment;
use memsight_suites::profile::{self, Config};

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
    #[arg(long, value_name = "MS", default_value_t = Config::default().interval_ms)]
    pub interval_ms: u64,
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
        let cfg = Config {
            command: self.command.clone(),
            pid: self.pid,
            watch_s: self.watch,
            timeout_s: self.timeout,
            interval_ms: self.interval_ms,
        };
        let (results, complete) = ui.progress(None, |tick| profile::run(&cfg, env, tick))?;
        let failure = match results.ending {
            profile::Ending::Exited(c) if c != 0 => Some(format!("the program exited with code {c}")),
            profile::Ending::Signalled(s) => Some(format!("the program was killed by signal {s}")),
            _ => None,
        };
        Ok(Outcome {
            failure,
            ..Outcome::of(results, complete)
        })
    }
}
