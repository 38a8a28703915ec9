//! The one contract every suite keeps ([`SuiteContract`]): settings (what the user sets), the
//! level that decides whether `memsight run` measures it and how, a plan that checks every
//! setting against the machine and predicts its time, and the measurement. The binary drives
//! every suite through it, as a command and as a step of `memsight run`, with the same code:
//! what the binary still knows of one suite is its flags and where its run settings come from.
//!
//! Settings → plan is ripgrep's `LowArgs` → `HiArgs`: the settings are what was asked, the plan
//! is what will be done (sizes found, CPUs chosen, every input checked), so that a bad setting
//! is refused before the first measurement and `measure` has nothing left to refuse.

use memsight_core::Result;
use memsight_core::env::Environment;

use crate::measure::level::Level;
use crate::measure::machine::Machine;
use crate::measure::progress::{Completed, Tick};
use crate::measure::timing::Estimate;
use crate::suite_id::SuiteId;

/// Where a suite plans and measures: the process's environment and the machine facts the suites
/// size working sets from. In `memsight run --plan` (and the run's prediction) the machine is
/// [`Machine::for_planning`]'s, which answers from what is known or reported and never measures.
pub struct At<'a> {
    pub env: &'a Environment,
    pub machine: &'a Machine,
    /// The run's streaming check still to be made, predicted in seconds (0 once made, and
    /// outside a prediction): the first suite that needs it pays it in its estimate.
    pub streaming_s: f64,
}

impl<'a> At<'a> {
    /// Measuring here, with these machine facts.
    pub fn new(env: &'a Environment, machine: &'a Machine) -> Self {
        At {
            env,
            machine,
            streaming_s: 0.0,
        }
    }
}

/// What a plan decided.
#[derive(Debug)]
pub enum Planned<P> {
    /// It will measure this.
    Runs(P),
    /// Why it cannot measure here, whatever it was asked (one CPU for a core-to-core matrix, no
    /// SMBIOS tables, one memory tier): `memsight run` skips it with these words, a command
    /// refuses with them.
    Skips(String),
}

/// A suite: what it takes, how it plans, how it measures.
pub trait SuiteContract {
    /// The suite, as the run's list of suites names it.
    const ID: SuiteId;
    /// What it measures, in a run's skip lines ("core-to-core latency: not in a quick run").
    const WHAT: &'static str;
    /// What the user sets; `Default` is the command's defaults.
    type Settings: Default;
    /// The settings checked and resolved against the machine: all that `measure` needs.
    type Plan;
    type Results;

    /// The settings `memsight run` at `level` measures with, from those the run's flags give
    /// (the suite's defaults, for most); `None`: not at this level. The run's level is decided
    /// here and nowhere else. Suites that are commands only are in no run.
    fn at_level(settings: Self::Settings, level: Level) -> Option<Self::Settings> {
        let _ = (settings, level);
        None
    }

    /// Checks every setting and resolves it against the machine, or says why the suite cannot
    /// run here. What it may measure is only what `at.machine` finds (where memory begins), and
    /// a planning machine finds nothing by measuring.
    fn plan(settings: Self::Settings, at: &At) -> Result<Planned<Self::Plan>>;

    /// The plan's predicted time in `memsight run`, from its settings and the machine, with the
    /// costs of [`crate::measure::timing`].
    fn estimate(plan: &Self::Plan, at: &At) -> Result<Estimate> {
        let _ = (plan, at);
        Err(memsight_core::Error::input(format!(
            "{}: only the suites of memsight run predict their time",
            Self::ID.name()
        )))
    }

    /// How many progress steps measuring takes, where known before it starts (a bar, not a
    /// spinner).
    fn steps(plan: &Self::Plan) -> Option<u64> {
        let _ = plan;
        None
    }

    /// Measures the plan, calling `tick` once per finished step. A stop request (Ctrl-C,
    /// SIGTERM) ends it early with what was measured, `complete: false`.
    fn measure(plan: &Self::Plan, at: &At, tick: Tick) -> Result<Completed<Self::Results>>;
}

/// Why a suite that needs a second CPU (a load beside the chase, a peer core) cannot run here.
pub fn needs_two_cpus(env: &Environment, what: &str) -> Option<String> {
    (env.allowed_cpus.len() < 2).then(|| format!("{what}: needs at least 2 CPUs"))
}
