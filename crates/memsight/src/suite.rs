//! A suite as the binary knows it as a command (`Suite`, which `main` dispatches through one
//! generic path); its step of `memsight run` is `cli::in_run::InRun`. Each suite implements both
//! in its flags file, `cli/<suite>.rs`; the list of suites is `memsight_results::with_suites!`.

use std::path::Path;

use memsight_core::env::Environment;
use memsight_results::document::Results;

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
