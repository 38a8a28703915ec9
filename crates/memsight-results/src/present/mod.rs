//! Presenters: each suite's results as a [`View`], the one presentation model both the terminal
//! and the HTML report draw, and as [`Figure`]s for history, `compare` and the export. A suite's
//! presenter is `present/<suite>.rs`; it has no renderer code.

// One presenter per suite, declared outside any macro so that rustfmt sees them.
mod alloc;
mod bandwidth;
mod c2c;
mod coherence;
mod dimms;
mod latency;
mod loaded;
mod numa;
mod pmem;
mod profile;
mod rowbuffer;
mod scan;
mod stream;
mod tiers;

mod dimm_grid;
pub(crate) mod drift;
pub mod env;
mod fleet;
pub(crate) mod story;
pub mod timing;

use memsight_core::topology::CacheGroup;
use memsight_suites::dimms::DimmsResults;

use crate::figure::Figure;
use crate::view::View;

/// What the other suites of a run found, for the views that draw it beside their own figures.
pub struct Context<'a> {
    /// The cache sizes the OS reports (the ladder's chart marks them).
    pub caches: &'a [CacheGroup],
    /// The DIMM inventory (bandwidth draws its ceilings).
    pub dimms: Option<&'a DimmsResults>,
}

/// A suite's results, shown: the view both renderers draw, and the figures history, `compare`
/// and the export keep.
pub trait Present {
    fn view(&self) -> View;
    fn figures(&self) -> Vec<Figure>;
    /// The view inside `memsight run`, with what the other suites found.
    fn view_in(&self, _ctx: &Context) -> View {
        self.view()
    }
    /// The suite's lines in a run's summary.
    fn headline(&self) -> Vec<String> {
        Vec::new()
    }
}
