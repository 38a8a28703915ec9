//! `memsight run`: the one-command characterisation. Every registered suite that `memsight run`
//! runs (`memsight_results::with_suites!`, the ones with a run field) takes its turn in the
//! registry's order and decides, from the level and what the suites before it found, whether and
//! how it runs (its `SuiteContract`, driven by `cli::in_run`); suites that cannot run here are
//! skipped with the reason. The full JSON goes to a directory per run with the HTML report, the headline
//! figures and findings to the terminal, the run to the history.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use memsight_core::env::Environment;
use memsight_core::report::Envelope;
use memsight_core::{Error, Result};
use memsight_results::document::{Document, Level, Results, RunResults};
use memsight_results::history::History;

use crate::cli::in_run::{PlanCtx, Planned, RunCtx, step};
use crate::cli::{GlobalArgs, RunArgs};
use crate::show::Show;
use memsight_suites::measure::machine::Machine;
use memsight_suites::measure::timing::{self, RunTiming};
use memsight_suites::probes::prober::{self, Prober};

/// How long within a suite between two drift probes.
const DRIFT_EVERY: std::time::Duration = std::time::Duration::from_secs(5);
use crate::{output, show};

/// Runs every suite that runs in `memsight run`, in the registry's order.
macro_rules! run_steps {
    ($($m:ident $variant:ident $name:literal $tm:ident :: $tn:ident $(, run $field:ident)?;)*) => {
        fn steps(ctx: &mut RunCtx) -> anyhow::Result<()> {
            $($(
                if ctx.selected($name) {
                    step::<crate::cli::$m::Args>(ctx, $name, |run, r| run.$field = Some(r))?;
                } else {
                    ctx.run.skipped.push(format!("{}: {}", $name, memsight_results::document::SKIP_NOT_SELECTED));
                }
            )?)*
            Ok(())
        }

        /// Each suite's plan, in the registry's order, for the suites `--only` and `--skip` leave.
        fn plans(a: &RunArgs, ctx: &PlanCtx) -> anyhow::Result<Vec<(&'static str, Planned)>> {
            let mut out = Vec::new();
            $($(
                if crate::cli::in_run::selected(a, $name) {
                    let _ = stringify!($field);
                    out.push(($name, fits(crate::cli::in_run::plan::<crate::cli::$m::Args>(ctx), $name)?));
                }
            )?)*
            Ok(out)
        }
    };
}

memsight_results::with_suites!(run_steps);

/// `memsight run`: every suite under one progress display, the tables at the end, the results
/// saved to a directory and the history. (`--fleet DIR` goes to [`crate::fleetrun::rank`].)
pub fn run(a: &RunArgs, env: Environment, show: &Show) -> anyhow::Result<ExitCode> {
    if a.plan {
        return plan_only(a, env.recorded_memory(), show.g.json);
    }
    let dir = out_dir(a, &env);
    check_out_dir(&dir)?;
    // A database that cannot be used is refused now, before minutes of measuring.
    let mut history = if a.no_history {
        None
    } else {
        Some(History::open(&a.db.path(), true)?)
    };
    let envelope = measure(a, env, show.g, show.started, &dir, show.g.json)?;
    save(&envelope, &dir, history.as_mut(), show.g.json)?;
    show::emit(show.g, envelope)
}

/// The level the flags ask for.
fn level(a: &RunArgs) -> Level {
    match (a.quick, a.thorough) {
        (true, _) => Level::Quick,
        (_, true) => Level::Thorough,
        _ => Level::Default,
    }
}

/// The measurements of `memsight run`, printed as they are shown, as a document for `dir`.
pub fn measure(
    a: &RunArgs,
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
    dir: &Path,
    quiet: bool,
) -> anyhow::Result<Document> {
    let began = std::time::Instant::now();
    if !crate::cli::RUN_SUITES
        .iter()
        .any(|n| crate::cli::in_run::selected(a, n))
    {
        return Err(memsight_core::Error::input(
            "--only and --skip leave no suite to run: nothing would be measured",
        )
        .into());
    }
    let level = level(a);
    // Flags refused now, before the first probe: the ladder's (its plan reads them again) and a
    // `--dmidecode` file (read at the DIMM step, after the suites).
    a.latency.settings(&env.topology)?;
    a.dmidecode.as_deref().map_or(Ok(()), |p| {
        memsight_suites::measure::inventory::read(Some(p)).map(drop)
    })?;
    if !quiet {
        output::env::print(&env);
    }
    show::require_live(&env)?;
    let machine = Machine::new();
    let prober::Plan {
        probe,
        suite_env,
        interrupted,
    } = prober::plan(&env, &machine, a.no_drift)?;
    let planning = machine.for_planning(&suite_env);
    let pctx = plan_ctx(a, level, &suite_env, &planning);
    let (timing, _) = timing(a, &pctx, probe.is_some())?;
    if !quiet {
        say!("\n{}", timing.line());
    }
    let (results, done) = crate::progress::with_progress(None, g.no_progress, |tick| {
        std::thread::scope(|scope| {
            let drift =
                probe.map(|(cpu, bytes)| Prober::start(scope, &suite_env, cpu, bytes, DRIFT_EVERY));
            let mut ctx = RunCtx {
                level,
                env: &suite_env,
                args: a,
                machine,
                drift: drift.as_ref(),
                main: std::thread::current().id(),
                run: RunResults::new(level),
                complete: true,
                tick,
                timing,
                // The budget counts from before the probes' buffer and where memory begins
                // (a monotonic clock: a wall clock stepped at boot would move it).
                started: began,
            };
            ctx.run.skipped.extend(interrupted);
            let stepped = steps(&mut ctx);
            let (mut run, complete) = (ctx.run, ctx.complete);
            run.timing = Some(ctx.timing);
            // The series is kept whatever happened to the steps (Ctrl-C keeps what was probed).
            run.drift = drift.map(Prober::finish);
            stepped?;
            anyhow::Ok((run, complete))
        })
    })?;
    document(results, done, env, started, dir, quiet)
}

/// The run's document from its results, shown unless `quiet`.
fn document(
    mut results: RunResults,
    done: bool,
    env: Environment,
    started: SystemTime,
    dir: &Path,
    quiet: bool,
) -> anyhow::Result<Document> {
    // A stop request makes the run partial whenever it came, even after the last suite's last
    // check: whatever came after it in the plan did not run. (Taken here, where the result is
    // made; a request during the writing that follows finds the measurements done.)
    let stopped = memsight_core::cancel::requested();
    if done && stopped {
        results.skipped.push(
            "run: interrupted after its last suite: what followed the stop (the closing drift probe, a suite's work after its last check) may be cut".into(),
        );
    }
    let done = done && !stopped;
    if !done && results.suites().is_empty() {
        results.level = Level::Interrupted;
    }
    if done && results.suites().is_empty() {
        return Err(memsight_core::Error::input(format!(
            "nothing was measured, every suite was skipped ({}): choose suites this run level and machine run with --only",
            results.skipped.join("; ")
        ))
        .into());
    }
    results.summary = results.headlines();
    results.directory = Some(dir.display().to_string());
    if !quiet {
        for view in results.views(&env.topology.caches) {
            output::draw(&view);
        }
        output::run_summary(&results);
    }
    Ok(Envelope::new(
        "run",
        started,
        env,
        Results::Run(Box::new(results)),
        done,
    ))
}

/// A plan whose working set does not fit this process: the suite will be skipped with the
/// reason, as the run skips it.
fn fits(plan: anyhow::Result<Planned>, name: &str) -> anyhow::Result<Planned> {
    match plan {
        Err(e) => match e.downcast_ref::<Error>() {
            Some(Error::DoesNotFit(why)) => Ok(Planned::Skips(format!("{name}: {why}"))),
            _ => Err(e),
        },
        ok => ok,
    }
}

fn plan_ctx<'a>(
    a: &'a RunArgs,
    level: Level,
    env: &'a Environment,
    (machine, streaming_s): &'a (Machine, f64),
) -> PlanCtx<'a> {
    PlanCtx {
        level,
        env,
        args: a,
        machine,
        streaming_s: *streaming_s,
    }
}

/// The run's plan ([`RunTiming::assemble`]), fitted to `--time-budget`; and why the suites
/// that will not run will not.
fn timing(a: &RunArgs, ctx: &PlanCtx, drift: bool) -> anyhow::Result<(RunTiming, Vec<String>)> {
    let planned = plans(a, ctx)?.into_iter().map(|(name, p)| match p {
        Planned::Runs(e) => (name, Ok(e)),
        Planned::Skips(why) => (name, Err(why)),
    });
    let (t, skipped) = RunTiming::assemble(planned, drift);
    let Some(budget) = a.time_budget else {
        return Ok((t, skipped));
    };
    let t = timing::fit(t, budget).map_err(|least| {
        Error::input(format!(
            "--time-budget {budget}s: what it cannot leave out (latency, bandwidth) is predicted at {least:.1} s here (see memsight run --plan): give a longer budget, or --quick"
        ))
    })?;
    Ok((t, skipped))
}

/// `memsight run --plan`: the predicted times, measuring nothing (the reported caches stand in
/// for where memory begins).
fn plan_only(a: &RunArgs, env: Environment, json: bool) -> anyhow::Result<ExitCode> {
    let level = level(a);
    let machine = Machine::new().for_planning(&env);
    let (t, skipped) = timing(a, &plan_ctx(a, level, &env, &machine), !a.no_drift)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        output::draw(&memsight_results::present::timing::view(&t, &skipped));
    }
    Ok(ExitCode::SUCCESS)
}

/// The results directory for this run.
pub fn out_dir(a: &RunArgs, env: &Environment) -> PathBuf {
    a.out.clone().unwrap_or_else(|| {
        let host = env.hostname.clone().unwrap_or_else(|| "host".into());
        let t = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .replace(':', "");
        PathBuf::from("memsight-results").join(format!("{host}-{t}"))
    })
}

/// Refuses a results directory that cannot be created or written, before anything is measured.
pub fn check_out_dir(dir: &Path) -> Result<()> {
    let refuse = |e: std::io::Error| match Error::io("write", dir, e) {
        Error::Input(why) => Error::input(format!("{why}; choose a writable directory with --out")),
        other => other,
    };
    std::fs::create_dir_all(dir).map_err(refuse)?;
    let probe = dir.join(".memsight-write-test");
    std::fs::write(&probe, b"").map_err(refuse)?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes run.json and report.html into `dir` and stores the run in the history. Files come
/// first: a history that fails afterwards loses nothing.
pub fn save(doc: &Document, dir: &Path, history: Option<&mut History>, quiet: bool) -> Result<()> {
    save_as(doc, dir, "run.json", history, quiet)
}

/// [`save`], the result named `file` (a suite's result in fleet mode).
pub fn save_as(
    doc: &Document,
    dir: &Path,
    file: &str,
    history: Option<&mut History>,
    quiet: bool,
) -> Result<()> {
    let json = dir.join(file);
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| Error::system(format!("cannot encode the results: {e}")))?;
    // (Whole or not at all: a stop that cuts the process short leaves the old file or the new.)
    memsight_core::files::write_text(&json, &text)?;
    let html = dir.join("report.html");
    memsight_core::files::write_text(&html, &crate::report::render(doc))?;
    if !quiet {
        say!("  results: {}", json.display());
        say!("  report:  {}", html.display());
    }
    if let Some(h) = history {
        let id = h.insert(doc).map_err(|e| {
            Error::storage(format!("{e}; the results are safe in {}", dir.display()))
        })?;
        if !quiet {
            say!(
                "  history: run {id} in {} (memsight history, memsight compare latest~1 latest)",
                h.path().display()
            );
        }
    }
    Ok(())
}
