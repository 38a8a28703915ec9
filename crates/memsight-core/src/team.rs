//! Timed measurements by a team of pinned threads.
//!
//! Every thread sets up its own state on its own CPU (so first touch places its memory locally),
//! then all threads run each sample together, released by one barrier and joined by another. A
//! sample lasts as long as its slowest thread (STREAM and MLC do the same), so a figure can only
//! claim bandwidth that every thread sustained at once. Thread 0 drives the engine's stop rule.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::error::Result;
use crate::stats::{Sampled, StopRule, sample_until};

/// The outcome of a team measurement.
#[derive(Debug, Clone)]
pub struct TeamSample {
    pub sampled: Sampled,
    /// Passes of the work per thread per sample.
    pub passes: u64,
}

/// Runs `setup(i, cpu)` on each pinned thread, calibrates how many passes of `work` make a sample
/// of about `sample_ns`, then samples until `rule` says stop. `value(passes, slowest_ns)` turns a
/// sample into the figure recorded (e.g. bytes per second). Returns `None` when interrupted
/// before the first sample; a failing setup on any thread fails the whole measurement.
pub fn sample_team<S>(
    cpus: &[usize],
    rule: &StopRule,
    sample_ns: f64,
    setup: impl Fn(usize, usize) -> Result<S> + Sync,
    work: impl Fn(&mut S, u64) + Sync,
    value: impl Fn(u64, f64) -> f64 + Sync,
) -> Result<Option<TeamSample>> {
    let go = AtomicBool::new(false);
    let failed = AtomicBool::new(false);
    let passes = AtomicU64::new(1);
    let durations: Vec<AtomicU64> = cpus.iter().map(|_| AtomicU64::new(0)).collect();
    let results = crate::pin::run_team(cpus, |i, cpu, barrier| -> Result<Option<TeamSample>> {
        let state = setup(i, cpu);
        if state.is_err() {
            failed.store(true, Ordering::SeqCst);
        }
        barrier.wait();
        if failed.load(Ordering::SeqCst) {
            return state.map(|_| None);
        }
        let mut state = state?;
        let run = |state: &mut S| {
            let p = passes.load(Ordering::SeqCst);
            let t = Instant::now();
            work(state, p);
            durations[i].store(t.elapsed().as_nanos() as u64, Ordering::SeqCst);
        };
        if i == 0 {
            let round = |state: &mut S| -> f64 {
                go.store(true, Ordering::SeqCst);
                barrier.wait();
                run(state);
                barrier.wait();
                durations
                    .iter()
                    .map(|d| d.load(Ordering::SeqCst))
                    .max()
                    .unwrap_or(0)
                    .max(1) as f64
            };
            // Warm-up and calibration: one pass, then as many as make a sample of sample_ns.
            round(&mut state);
            let one = round(&mut state);
            let p = ((sample_ns / one).ceil() as u64).max(1);
            passes.store(p, Ordering::SeqCst);
            let sampled = sample_until(rule, || value(p, round(&mut state)));
            go.store(false, Ordering::SeqCst);
            barrier.wait();
            Ok(sampled.map(|sampled| TeamSample { sampled, passes: p }))
        } else {
            loop {
                barrier.wait();
                if !go.load(Ordering::SeqCst) {
                    break;
                }
                run(&mut state);
                barrier.wait();
            }
            Ok(None)
        }
    })?;
    let mut out = None;
    for r in results {
        if let Some(s) = r? {
            out = Some(s);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn every_thread_runs_every_sample() {
        let cpus = crate::pin::current_affinity().unwrap();
        let counter = AtomicU64::new(0);
        let rule = StopRule {
            warmup: 0,
            min_samples: 5,
            max_samples: 5,
            target_rel_ci: 0.0,
            budget_s: 10.0,
        };
        let out = sample_team(
            &cpus,
            &rule,
            1e5,
            |i, _| Ok(i),
            |_, passes| {
                counter.fetch_add(passes, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_micros(200));
            },
            |p, ns| p as f64 / ns,
        )
        .unwrap()
        .unwrap();
        assert_eq!(out.sampled.summary.n, 5);
        // 2 unrecorded rounds of 1 pass, then 5 samples of `passes`, on every thread.
        let want = cpus.len() as u64 * (1 + 1 + 5 * out.passes);
        assert_eq!(counter.load(Ordering::SeqCst), want);
    }

    #[test]
    fn a_failing_setup_fails_the_team_without_hanging() {
        let cpus = crate::pin::current_affinity().unwrap();
        let rule = StopRule::default();
        let out = sample_team(
            &cpus,
            &rule,
            1e5,
            |i, _| {
                if i + 1 == cpus.len() {
                    Err(Error::input("no"))
                } else {
                    Ok(())
                }
            },
            |_, _| {},
            |_, _| 1.0,
        );
        assert!(matches!(out, Err(Error::Input(_))));
    }
}
