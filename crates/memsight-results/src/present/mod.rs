//! Presenters: each suite's results as a [`View`], the one presentation model both the terminal
//! (`output::draw`) and the HTML report (`report::draw`) draw. A suite moved here has no
//! renderer code of its own.

mod alloc;
pub mod bandwidth;
mod c2c;
mod dimms;
mod fleet;
pub mod latency;
mod loaded;
mod numa;
mod pmem;
mod rowbuffer;
mod stream;
mod tiers;

use crate::view::View;

/// A suite's results, shown: the view both renderers draw, and the figures history, `compare`
/// and the export keep.
pub trait Present {
    fn view(&self) -> View;
    fn figures(&self) -> Vec<crate::figure::Figure>;
}
