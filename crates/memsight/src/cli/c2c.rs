//! `memsight c2c`: the flags, and the matrix as a command and as a step of `memsight run`.

use memsight_core::env::Environment;
use memsight_suites::c2c::{self, C2cResults, C2cSettings};
use memsight_suites::measure::progress::Completed;

use super::sampling::SamplingArgs;

use super::in_run::{InRun, PlanCtx, Planned, RunCtx, Step, needs_two_cpus, not_at_level};
use crate::suite::{Outcome, Suite, Ui};

/// Core-to-core latency: cache-line transfers between pairs of CPUs (modified and clean).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// CPUs of the matrix (default: one per last-level-cache domain, or one per core up to 16); or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Only the modified-line ping-pong (skip the clean-line probe).
    #[arg(long)]
    pub modified_only: bool,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

impl Args {
    /// The suite's config: its defaults, with the flags given.
    pub fn config(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<C2cSettings> {
        Ok(C2cSettings {
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            modified_only: self.modified_only,
            sampling: self.sampling.over(C2cSettings::default().sampling),
        })
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        let cfg = self.config(&env.topology)?;
        let Completed { results, complete } =
            ui.progress(None, |tick| c2c::run(&cfg, env, tick))?;
        Ok(Outcome::of(results, complete))
    }
}

/// The suite in a run's skip lines.
const WHAT: &str = "core-to-core latency";

impl InRun for Args {
    type Results = C2cResults;

    fn plan(ctx: &PlanCtx) -> anyhow::Result<Planned> {
        let Some(cfg) = C2cSettings::for_level(ctx.level) else {
            return Ok(Planned::Skips(not_at_level(ctx.level, WHAT)));
        };
        if let Some(why) = needs_two_cpus(ctx.env, WHAT) {
            return Ok(Planned::Skips(why));
        }
        Ok(Planned::Runs(c2c::estimate(&cfg, ctx.env)?))
    }

    /// Needs two CPUs.
    fn in_run(ctx: &RunCtx) -> anyhow::Result<Step<C2cResults>> {
        let Some(cfg) = C2cSettings::for_level(ctx.level) else {
            return Ok(Step::Skipped(not_at_level(ctx.level, WHAT)));
        };
        if let Some(why) = needs_two_cpus(ctx.env, WHAT) {
            return Ok(Step::Skipped(why));
        }
        let Completed {
            results: r,
            complete: done,
        } = ctx.ticking("core to core", |tick| c2c::run(&cfg, ctx.env, tick))?;
        Ok(Step::Ran(r, done))
    }
}
