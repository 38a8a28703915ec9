//! A suite as the binary knows it as a command (`Suite`, which `main` dispatches through one
//! generic path: its flags become its settings, and [`measured`] plans and measures them through
//! the suite's `SuiteContract`); its step of `memsight run` is `cli::in_run::InRun`. Each suite
//! implements both in its flags file, `cli/<suite>.rs`; the list of suites is
//! `memsight_results::with_suites!`.

use std::path::Path;

use memsight_core::env::Environment;
use memsight_results::document::Results;
use memsight_suites::contract::{At, Planned, SuiteContract};
use memsight_suites::measure::machine::Machine;
use memsight_suites::measure::progress::Completed;

pub use memsight_suites::measure::progress::Tick;

/// How a command shows its progress.
pub struct Ui {
    pub no_progress: bool,
}

impl Ui {
    /// Runs `work` under a progress bar over `steps` (a spinner when unknown).
    pub fn progress<T>(&self, steps: Option<u64>, work: impl FnOnce(Tick) -> T) -> T {
        crate::progress::with_progress(steps, self.no_progress, work)
    }
}

/// What a command produced.
pub struct Outcome {
    pub results: Results,
    /// False after Ctrl-C: the results are partial.
    pub complete: bool,
    /// A failure the results show (exit 3 after they are written): STREAM's validation, an
    /// allocator run that failed.
    pub failure: Option<String>,
}

impl Outcome {
    /// Results and completeness, no failure.
    pub fn of(results: impl Into<Results>, complete: bool) -> Self {
        Outcome {
            results: results.into(),
            complete,
            failure: None,
        }
    }
}

/// A suite as a command: flags resolved into the suite's settings, then run.
pub trait Suite {
    /// Measures the live machine: refused on a recorded topology.
    fn live(&self) -> bool {
        true
    }

    /// The environment's warnings come first: they can distort the figures.
    fn warns(&self) -> bool {
        self.live()
    }

    /// The HTML page asked for (`--html FILE`), if the command takes one.
    fn html(&self) -> Option<&Path> {
        None
    }

    /// Fleet mode (`--fleet DIR`, with rank 0's wait in seconds), for the suites that take it.
    fn fleet(&self) -> Option<(&Path, u64)> {
        None
    }

    /// Resolves the flags against the environment and runs the suite.
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome>;
}

/// Plans and measures suite `S` as a command, with machine facts of its own, under a progress
/// bar where its steps are known. A suite that cannot run here refuses with why.
pub fn measured<S: SuiteContract>(
    settings: S::Settings,
    env: &Environment,
    ui: &Ui,
) -> anyhow::Result<Completed<S::Results>> {
    measured_on::<S>(settings, env, &Machine::new(), ui)
}

/// [`measured`], with machine facts the command found before (a composite study's).
pub fn measured_on<S: SuiteContract>(
    settings: S::Settings,
    env: &Environment,
    machine: &Machine,
    ui: &Ui,
) -> anyhow::Result<Completed<S::Results>> {
    let at = At::new(env, machine);
    let plan = match S::plan(settings, &at)? {
        Planned::Runs(plan) => plan,
        Planned::Skips(why) => return Err(memsight_core::Error::input(why).into()),
    };
    Ok(ui.progress(S::steps(&plan), |tick| S::measure(&plan, &at, tick))?)
}

/// [`measured`], as what the command produced.
pub fn command<S: SuiteContract>(
    settings: S::Settings,
    env: &Environment,
    ui: &Ui,
) -> anyhow::Result<Outcome>
where
    S::Results: Into<Results>,
{
    let Completed { results, complete } = measured::<S>(settings, env, ui)?;
    Ok(Outcome::of(results, complete))
}
