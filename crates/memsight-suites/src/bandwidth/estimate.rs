//! The bandwidth suite's predicted time in `memsight run` ([`crate::measure::timing`]).

use crate::measure::rate::BandwidthConfig;
use crate::measure::timing::{Estimate, fill_s, point_s};

/// Every test × pattern × thread count × round: its team's buffers touched and filled again (and
/// written once more before timing), then its share of the sampling; then the single-thread
/// sweep; and `streaming_s`, the streaming check it makes first where the run has not
/// ([`crate::measure::machine::Machine::for_planning`]). `nodes`: the NUMA nodes the team's CPUs
/// sit on.
pub fn estimate(cfg: &BandwidthConfig, nodes: usize, streaming_s: f64) -> Estimate {
    let rounds = cfg.rounds.max(1);
    let point = point_s(&cfg.rule.per_round(rounds), cfg.sample_ns);
    let mut seconds = 0.0;
    let mut points = 0;
    for t in &cfg.tests {
        let patterns = cfg.patterns_of(t).len();
        for &n in &cfg.thread_counts {
            let setup = 2.0 * fill_s(cfg.bytes_for(t, n), n, nodes);
            seconds += (patterns * rounds) as f64 * (setup + point);
            points += patterns * rounds;
        }
    }
    let sweep_point = point_s(&cfg.rule, cfg.sample_ns);
    for &b in &cfg.sweep_sizes {
        seconds += 3.0 * (2.0 * fill_s(b, 1, 1) + sweep_point);
    }
    seconds += streaming_s;
    let threads = cfg.thread_counts.iter().max().copied().unwrap_or(1);
    Estimate::new(
        seconds,
        format!(
            "{points} points ({} tests, up to {threads} threads, {rounds} round(s)){}",
            cfg.tests.len(),
            if cfg.sweep_sizes.is_empty() {
                String::new()
            } else {
                format!(", a sweep of {} sizes", cfg.sweep_sizes.len())
            }
        ),
    )
}
