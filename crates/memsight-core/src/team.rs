//! Timed measurements by a team of pinned threads.
//!
//! Every thread sets up its own state on its own CPU (so first touch places its memory locally),
//! then all threads run each sample together, released by a spinning barrier (so they start
//! within a few hundred ns of each other) and joined by another. A sample is timed over the span
//! in which the team worked: from the earliest thread's start to the latest thread's end, as
//! STREAM times its parallel region from outside. Timing each thread alone and taking the
//! longest would let a thread that left the barrier late run on its own afterwards, and the
//! bytes of work that did not overlap would be divided by one thread's time (measured on a
//! 2-vCPU guest with CPU 1 stolen 3 ms in 10: 1.4–1.8× the undisturbed rate). Samples in which a
//! thread lost its CPU, or the threads started far apart, are dropped and counted
//! ([`crate::cpuclock`]). Thread 0 drives the engine's stop rule.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::cpuclock::{SpinBarrier, TeamClock, TeamSpan};
use crate::error::Result;
use crate::stats::{Sampled, StopRule, Taken, sample_until};

/// The outcome of a team measurement.
#[derive(Debug, Clone)]
pub struct TeamSample {
    pub sampled: Sampled,
    /// Passes of the work per thread per sample.
    pub passes: u64,
    /// Rounds (samples, warm-up and dropped ones included) run between the bracket's calls.
    pub rounds: u64,
}

/// Runs `setup(i, cpu)` on each pinned thread, calibrates how many passes of `work` make a sample
/// of about `sample_ns`, then samples until `rule` says stop. `value(passes, span_ns)` turns a
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
    sample_team_bracketed(cpus, rule, sample_ns, setup, work, value, &Bracket::NONE)
}

/// Called by the first thread right before the first sampled round and right after the last
/// (after setup, warm-up and calibration): what must watch exactly the sampled rounds, such as
/// memory-controller counters, which count for a whole socket.
pub struct Bracket<'a> {
    pub open: &'a (dyn Fn() + Sync),
    pub close: &'a (dyn Fn() + Sync),
}

impl Bracket<'_> {
    /// Nothing to call.
    pub const NONE: Bracket<'static> = Bracket {
        open: &|| {},
        close: &|| {},
    };
}

/// [`sample_team`], calling `bracket` around the sampled rounds; [`TeamSample::rounds`] says how
/// many rounds ran inside it.
pub fn sample_team_bracketed<S>(
    cpus: &[usize],
    rule: &StopRule,
    sample_ns: f64,
    setup: impl Fn(usize, usize) -> Result<S> + Sync,
    work: impl Fn(&mut S, u64) + Sync,
    value: impl Fn(u64, f64) -> f64 + Sync,
    bracket: &Bracket,
) -> Result<Option<TeamSample>> {
    let go = AtomicBool::new(false);
    let failed = AtomicBool::new(false);
    let passes = AtomicU64::new(1);
    let clock = TeamClock::new(cpus.len());
    let start = SpinBarrier::new(cpus.len());
    let results = crate::pin::run_team(cpus, |i, cpu, barrier| -> Result<Option<TeamSample>> {
        // A setup that panics breaks the team (run_team), so nobody waits for it below.
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
            start.wait();
            clock.time(i, || work(state, p));
        };
        if i == 0 {
            let round = |state: &mut S| -> TeamSpan {
                go.store(true, Ordering::SeqCst);
                barrier.wait();
                run(state);
                barrier.wait();
                clock.span()
            };
            // Warm-up and calibration: one pass, then as many as make a sample of sample_ns.
            round(&mut state);
            let one = round(&mut state).ns;
            let p = ((sample_ns / one).ceil() as u64).max(1);
            passes.store(p, Ordering::SeqCst);
            let mut rounds = 0;
            (bracket.open)();
            let sampled = sample_until(rule, || {
                let span = round(&mut state);
                rounds += 1;
                Taken::spanned(value(p, span.ns), &span)
            });
            (bracket.close)();
            go.store(false, Ordering::SeqCst);
            barrier.wait();
            Ok(sampled.map(|sampled| TeamSample {
                sampled,
                passes: p,
                rounds,
            }))
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
                let t = std::time::Instant::now();
                while t.elapsed() < std::time::Duration::from_micros(200) {
                    std::hint::spin_loop();
                }
            },
            |p, ns| p as f64 / ns,
        )
        .unwrap()
        .unwrap();
        let s = &out.sampled.summary;
        let taken = (s.n + s.dropped) as u64;
        assert!(s.n >= 5 || s.shortfall.is_some());
        // 2 unrecorded rounds of 1 pass, then every sample taken (kept or dropped) of `passes`,
        // on every thread.
        let want = cpus.len() as u64 * (1 + 1 + taken * out.passes);
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
        // A setup that panics (an indexing bug) fails it too, instead of leaving the other
        // threads at the barrier.
        let out = sample_team(
            &cpus,
            &rule,
            1e5,
            |i, _| -> crate::error::Result<()> {
                if i + 1 == cpus.len() {
                    panic!("setup bug");
                }
                Ok(())
            },
            |_, _| {},
            |_, _| 1.0,
        );
        assert!(matches!(out, Err(Error::System(_))), "{out:?}");
    }

    #[test]
    fn a_panic_while_measuring_fails_the_team_without_hanging() {
        let cpus = crate::pin::current_affinity().unwrap();
        let rule = StopRule {
            warmup: 0,
            min_samples: 50,
            max_samples: 50,
            target_rel_ci: 0.0,
            budget_s: 10.0,
        };
        // The last thread (or thread 0, which drives the samples) panics in its third pass: the
        // others are then at the team's barrier or inside a pass, and must all come out.
        for culprit in [cpus.len() - 1, 0] {
            let passes = AtomicU64::new(0);
            let out = sample_team(
                &cpus,
                &rule,
                1e4,
                |i, _| Ok(i),
                |i, _| {
                    if *i == culprit && passes.fetch_add(1, Ordering::SeqCst) == 2 {
                        panic!("kernel bug");
                    }
                },
                |_, _| 1.0,
            );
            let e = out.expect_err("a panicking pass must fail the measurement");
            assert!(matches!(e, Error::System(_)), "{e:?}");
            assert!(e.to_string().contains("kernel bug"), "{e}");
        }
    }
}
