//! A suite as a step of `memsight run`, which `run` iterates in the registry's order: the one
//! [`plan`] (whether it runs at the run's level and its predicted time, measuring nothing) and
//! the one [`in_run`] that drive every suite through its `SuiteContract`, with what the run gives
//! every suite ([`PlanCtx`], [`RunCtx`]) and the one [`step`] that files its results. A suite's
//! flags file says only which suite it is and where its run settings come from ([`InRun`]).

use memsight_core::env::Environment;
use memsight_results::document::{Level, RunResults};

use memsight_suites::contract::{self, At, SuiteContract};
use memsight_suites::measure::timing::Estimate;

use super::RunArgs;
use crate::suite::Tick;

/// What a suite's plan in `memsight run` sees: enough to predict its time, nothing to measure
/// with (its machine answers from what is known or reported, never by measuring).
pub struct PlanCtx<'a> {
    pub level: Level,
    pub env: &'a Environment,
    /// The run's flags: each suite reads its own (the ladder's, `--dmidecode`).
    pub args: &'a RunArgs,
    pub machine: &'a memsight_suites::measure::machine::Machine,
    /// What the run's streaming check will take, seconds (the first suite needing it makes it).
    pub streaming_s: f64,
}

/// What a suite would do in a run, predicted: its estimate, or why it will not run.
pub type Planned = memsight_suites::contract::Planned<Estimate>;

/// Why a suite a run's level leaves out (its `at_level` said `None`) is skipped: the words the
/// Prometheus export reads as "not at this level" (`check` counts any skipped suite it needs as
/// incomplete). Whether it runs at a level is the suite's to say; this only words it.
pub fn not_at_level(level: Level, what: &str) -> String {
    let why = match level {
        Level::Quick => memsight_results::document::SKIP_NOT_QUICK,
        _ => memsight_results::document::SKIP_THOROUGH_ONLY,
    };
    format!("{what}: {why}")
}

/// What `memsight run` gives every suite.
pub struct RunCtx<'a> {
    pub level: Level,
    pub env: &'a Environment,
    /// The run's flags: each suite reads its own (the ladder's, `--dmidecode`), the run its
    /// `--only` and `--skip`.
    pub args: &'a RunArgs,
    /// The machine facts every suite of the run sizes its working sets from: found once (from
    /// the latency ladder, else by the first suite that needs them) and passed to each.
    pub machine: memsight_suites::measure::machine::Machine,
    /// The reference probes of the run's drift (`--no-drift`: none).
    pub drift: Option<&'a memsight_suites::probes::prober::Prober<'a>>,
    /// The thread that runs the steps: within a suite, probes are taken only from it, between
    /// the suite's points, never while a team of its threads measures.
    pub main: std::thread::ThreadId,
    /// What the suites before this one measured.
    pub run: RunResults,
    /// Whether every suite so far ran to its end.
    pub complete: bool,
    pub tick: Tick<'a>,
    /// Each suite's predicted time (what it took is filled in as it runs), the budget, and the
    /// suites the budget left out.
    pub timing: memsight_suites::measure::timing::RunTiming,
    /// When the run started, for the budget's check before each suite.
    pub started: std::time::Instant,
}

impl RunCtx<'_> {
    /// Whether `--only` and `--skip` leave the suite `name` in.
    pub fn selected(&self, name: &str) -> bool {
        selected(self.args, name)
    }

    /// The progress callback with the suite's name in front of each step.
    pub fn ticking<T>(&self, what: &str, f: impl FnOnce(Tick) -> T) -> T {
        let tick = |m: &str| {
            (self.tick)(&format!("{what}: {m}"));
            if let Some(d) = self.drift
                && std::thread::current().id() == self.main
            {
                d.maybe(what);
            }
        };
        f(&tick)
    }
}

/// What a suite did in a run.
pub enum Step<R> {
    /// Its results, and whether it ran to the end.
    Ran(R, bool),
    /// Why it did not run.
    Skipped(String),
}

/// What a suite's settings in a run may come from: the run's flags, and (while measuring, not
/// in the prediction) what the suites before it found.
pub struct Given<'a> {
    pub args: &'a RunArgs,
    pub env: &'a Environment,
    pub run: Option<&'a RunResults>,
}

/// A suite as a step of `memsight run`: the suite ([`SuiteContract`]) and where its settings
/// come from. Whether it runs at the run's level, its plan, its estimate and its measurement
/// are the suite's; [`plan`] and [`in_run`] drive every suite alike.
pub trait InRun {
    type Suite: SuiteContract;

    /// The settings the run's flags give the suite, before its level decides: its defaults,
    /// unless it reads a run flag (the ladder's flags, `--dmidecode`) or what a suite before it
    /// found.
    fn settings(given: &Given) -> anyhow::Result<Settings<Self>> {
        let _ = given;
        Ok(Default::default())
    }
}

/// The settings type of an [`InRun`]'s suite.
pub type Settings<I> = <<I as InRun>::Suite as SuiteContract>::Settings;
/// The results type of an [`InRun`]'s suite.
pub type Results<I> = <<I as InRun>::Suite as SuiteContract>::Results;

/// What the suite would do at `ctx.level` here and how long it is predicted to take, without
/// measuring.
pub fn plan<I: InRun>(ctx: &PlanCtx) -> anyhow::Result<Planned> {
    let given = Given {
        args: ctx.args,
        env: ctx.env,
        run: None,
    };
    let Some(settings) = I::Suite::at_level(I::settings(&given)?, ctx.level) else {
        return Ok(Planned::Skips(not_at_level(ctx.level, I::Suite::WHAT)));
    };
    let at = At {
        env: ctx.env,
        machine: ctx.machine,
        streaming_s: ctx.streaming_s,
    };
    Ok(match I::Suite::plan(settings, &at)? {
        contract::Planned::Runs(plan) => Planned::Runs(I::Suite::estimate(&plan, &at)?),
        contract::Planned::Skips(why) => Planned::Skips(why),
    })
}

/// Runs the suite as `ctx.level` asks, with what the suites before it found.
pub fn in_run<I: InRun>(ctx: &RunCtx) -> anyhow::Result<Step<Results<I>>> {
    let given = Given {
        args: ctx.args,
        env: ctx.env,
        run: Some(&ctx.run),
    };
    let Some(settings) = I::Suite::at_level(I::settings(&given)?, ctx.level) else {
        return Ok(Step::Skipped(not_at_level(ctx.level, I::Suite::WHAT)));
    };
    let at = At::new(ctx.env, &ctx.machine);
    let plan = match I::Suite::plan(settings, &at)? {
        contract::Planned::Runs(plan) => plan,
        contract::Planned::Skips(why) => return Ok(Step::Skipped(why)),
    };
    let done = ctx.ticking(I::Suite::WHAT, |tick| I::Suite::measure(&plan, &at, tick))?;
    Ok(Step::Ran(done.results, done.complete))
}

/// Runs one step and files its results with `store`. After a stop request (Ctrl-C, SIGTERM)
/// nothing more runs: this suite and every later one are recorded as interrupted, so that the
/// result reads as partial whenever the request came (before a suite, inside it, or as it
/// failed because of it). A run stopped during its first suite is marked `interrupted`.
pub fn step<I: InRun>(
    ctx: &mut RunCtx,
    name: &str,
    store: impl FnOnce(&mut RunResults, Results<I>),
) -> anyhow::Result<()> {
    if memsight_core::cancel::requested() {
        interrupted(ctx, name, "not run: interrupted before its turn");
        return Ok(());
    }
    let used = ctx.started.elapsed().as_secs_f64();
    if let Some(why) = ctx.timing.over_budget(name, used) {
        ctx.timing.leave_out(name);
        ctx.run.skipped.push(why);
        return Ok(());
    }
    let first = ctx.run.suites().is_empty();
    let began = std::time::Instant::now();
    if let Some(d) = ctx.drift {
        d.begin(name);
    }
    let outcome = match in_run::<I>(ctx) {
        // (A suite whose setup a stop cut short, such as its reach probe, fails with it.)
        Err(e) if memsight_core::cancel::requested() => {
            if let Some(d) = ctx.drift {
                d.end(false);
            }
            interrupted(ctx, name, &format!("interrupted ({e})"));
            return Ok(());
        }
        Err(e) => match e.downcast_ref::<memsight_core::Error>() {
            // A default working set larger than this process may have (a cgroup's limit): the
            // suite is skipped with the reason, the run goes on.
            Some(memsight_core::Error::DoesNotFit(why)) => Step::Skipped(format!("{name}: {why}")),
            _ => return Err(e),
        },
        Ok(s) => s,
    };
    if let Some(d) = ctx.drift {
        d.end(matches!(outcome, Step::Ran(..)));
    }
    if let Step::Ran(..) = outcome {
        ctx.timing.took(name, began.elapsed().as_secs_f64());
    }
    match outcome {
        Step::Ran(r, done) => {
            store(&mut ctx.run, r);
            ctx.complete &= done;
            if !done && first {
                ctx.run.level = Level::Interrupted;
            }
        }
        // Each line starts with the suite's command name, so `check` can tell which suite a
        // reference needs was skipped ("dimms: DIMM inventory: no SMBIOS tables …").
        Step::Skipped(why) => ctx
            .run
            .skipped
            .push(if why.starts_with(&format!("{name}:")) {
                why
            } else {
                format!("{name}: {why}")
            }),
    }
    Ok(())
}

/// Records suite `name` as not run because of a stop request: the run is partial, and
/// `interrupted` when no suite holds results.
fn interrupted(ctx: &mut RunCtx, name: &str, why: &str) {
    ctx.complete = false;
    ctx.run.skipped.push(format!("{name}: {why}"));
    if ctx.run.suites().is_empty() {
        ctx.run.level = Level::Interrupted;
    }
}

/// Whether `--only` and `--skip` leave suite `name` in.
pub fn selected(a: &RunArgs, name: &str) -> bool {
    (a.only.is_empty() || a.only.iter().any(|s| s == name)) && !a.skip.iter().any(|s| s == name)
}
