//! One progress bar on stderr, hidden when stderr is not a terminal or when asked.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over `total` steps.
pub fn bar(total: u64, hidden: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(total),
        if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    pb
}
