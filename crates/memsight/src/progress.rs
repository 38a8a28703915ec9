//! One progress display on stderr, hidden when stderr is not a terminal or when asked.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Runs `work` with a progress callback: a bar over `total` steps when the count is known, a
/// spinner otherwise. Each call of the callback is one finished step described by its message.
pub fn with_progress<T>(
    total: Option<u64>,
    hidden: bool,
    work: impl FnOnce(memsight_suites::measure::progress::Tick) -> T,
) -> T {
    let target = if hidden {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let pb = ProgressBar::with_draw_target(total, target);
    let template = if total.is_some() {
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}"
    } else {
        "{spinner} [{elapsed_precise}] {pos} steps {msg}"
    };
    pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
    let tick = |msg: &str| {
        pb.inc(1);
        pb.set_message(msg.to_string());
    };
    let out = work(&tick);
    pb.finish_and_clear();
    out
}
