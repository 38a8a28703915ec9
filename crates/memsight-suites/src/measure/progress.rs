//! What a suite says while it measures, and what it hands back when it stops: one progress
//! callback type and one completion type for every suite.

/// The progress callback a suite calls once per finished step, with what it finished
/// (`64 MiB`, `read 2t`); it may be called from any of the suite's threads.
pub type Tick<'a> = &'a (dyn Fn(&str) + Sync);

/// A suite's results, and whether it ran to its end: `complete` is false when a stop request
/// (Ctrl-C, SIGTERM) cut it short and the results hold what was measured until then.
#[derive(Debug)]
pub struct Completed<R> {
    pub results: R,
    pub complete: bool,
}

impl<R> Completed<R> {
    /// Results of a run that ended (`complete`) or was cut short.
    pub fn new(results: R, complete: bool) -> Self {
        Completed { results, complete }
    }

    /// The same completion around other results (what a suite builds from its parts).
    pub fn map<S>(self, f: impl FnOnce(R) -> S) -> Completed<S> {
        Completed {
            results: f(self.results),
            complete: self.complete,
        }
    }
}
