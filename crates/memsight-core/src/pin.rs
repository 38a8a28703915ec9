//! Pinning threads to CPUs, and a team of pinned threads that start together.
//!
//! Every measurement thread is pinned before it touches its memory, so first-touch places pages on
//! the thread's node and the scheduler cannot move it mid-sample. The team starts on a barrier so
//! that concurrent threads measure concurrently, not one after another.

use std::panic::AssertUnwindSafe;

use crate::teambarrier::TeamAborted;
pub use crate::teambarrier::TeamBarrier;

use crate::error::{Error, Result};

/// CPUs this process may run on now (`sched_getaffinity`), by OS index.
pub fn current_affinity() -> Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: we pass the size of the set we own; pid 0 means this thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(Error::last_os("sched_getaffinity"));
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads a bit of the set we own, index below its capacity.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<()> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if cpu >= max {
        return Err(Error::input(format!(
            "CPU {cpu} is beyond the {max} CPUs memsight can pin to"
        )));
    }
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: index checked against the set's capacity above.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: we pass the size of the set we own; pid 0 means this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(Error::input(format!(
            "cannot pin to CPU {cpu}: {}; choose one of the CPUs this process may use (see 'memsight env')",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Checks a requested CPU list against the CPUs this process may use.
pub fn validate_cpus(requested: &[usize], allowed: &[usize]) -> Result<()> {
    if requested.is_empty() {
        return Err(Error::input("no CPU chosen: give at least one CPU"));
    }
    if requested.len() > allowed.len() {
        return Err(Error::input(format!(
            "{} threads requested but only {} CPUs are allowed ({}); use at most {}",
            requested.len(),
            allowed.len(),
            crate::units::format_list(allowed),
            allowed.len()
        )));
    }
    if let Some(bad) = requested.iter().find(|c| !allowed.contains(c)) {
        return Err(Error::input(format!(
            "CPU {bad} is outside this process's cpuset ({}); choose CPUs from that list",
            crate::units::format_list(allowed)
        )));
    }
    Ok(())
}

/// Parses a CPU list as Linux prints it (`0-3,8`) and checks it against the allowed CPUs.
pub fn parse_cpus(list: &str, allowed: &[usize]) -> Result<Vec<usize>> {
    let cpus = crate::units::parse_cpu_list(list)?;
    validate_cpus(&cpus, allowed)?;
    Ok(cpus)
}

/// Chooses `count` CPUs from the allowed list, spreading over cores first: one hardware thread per
/// core before any SMT sibling. `core_of` maps a CPU to its core.
pub fn choose_cpus(
    count: usize,
    allowed: &[usize],
    core_of: impl Fn(usize) -> usize,
) -> Result<Vec<usize>> {
    if count == 0 {
        return Err(Error::input("thread count must be at least 1"));
    }
    if count > allowed.len() {
        return Err(Error::input(format!(
            "{count} threads requested but only {} CPUs are allowed ({}); use at most {}",
            allowed.len(),
            crate::units::format_list(allowed),
            allowed.len()
        )));
    }
    let mut seen_cores = std::collections::BTreeSet::new();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for &c in allowed {
        if seen_cores.insert(core_of(c)) {
            first.push(c);
        } else {
            rest.push(c);
        }
    }
    first.extend(rest);
    first.truncate(count);
    Ok(first)
}

/// Runs `work(i, cpu)` on one thread per CPU, each pinned before it starts, all released by one
/// barrier. Returns each thread's result in CPU order. A thread that fails to pin returns the error.
/// A thread that panics breaks the team's barrier, so the others leave instead of waiting for it
/// ([`crate::teambarrier`]), and the team returns an error naming the panic.
pub fn run_team<T, F>(cpus: &[usize], work: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(usize, usize, &TeamBarrier) -> T + Sync,
{
    let barrier = TeamBarrier::new(cpus.len());
    let outcomes: Vec<std::thread::Result<Result<T>>> = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let barrier = &barrier;
                let work = &work;
                s.spawn(move || {
                    crate::teambarrier::join(&barrier.aborted);
                    let out = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        let pinned = pin_current_thread(cpu);
                        // Everyone reaches the barrier, even on failure, so nobody waits forever.
                        barrier.wait();
                        if pinned.is_err() {
                            // The others wait for this thread at their own barriers: break
                            // the team so they leave (a cpuset that shrank mid-run).
                            barrier.abort();
                        }
                        pinned.map(|_| work(i, cpu, barrier))
                    }));
                    if out.is_err() {
                        barrier.abort();
                    }
                    out
                })
            })
            .collect();
        // The threads catch their own panics, so joining them cannot fail.
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(Err))
            .collect()
    });
    // The first panic that was not a member leaving a broken team is the one to report.
    let mut cause = None;
    let mut results = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(payload) if payload.is::<TeamAborted>() => {}
            Err(payload) => {
                cause.get_or_insert(panic_message(payload.as_ref()));
            }
        }
    }
    if let Some(why) = cause {
        return Err(Error::system(format!(
            "a measurement thread panicked ({why}); the measurement was abandoned"
        )));
    }
    results.into_iter().collect()
}

/// The text a panic was raised with, when it was raised with one.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member that cannot be pinned (a CPU that left the cpuset mid-run) breaks the team:
    /// the others, waiting for it at their next barrier, leave and the team fails.
    #[test]
    fn a_member_that_cannot_be_pinned_does_not_hang_the_team() {
        let cpu = current_affinity().unwrap()[0];
        let out = run_team(&[cpu, 1 << 20], |_, _, barrier| {
            barrier.wait();
        });
        assert!(out.is_err());
    }

    #[test]
    fn affinity_is_nonempty_and_pinning_works() {
        let cpus = current_affinity().unwrap();
        assert!(!cpus.is_empty());
        let c = cpus[0];
        std::thread::spawn(move || {
            pin_current_thread(c).unwrap();
            assert_eq!(current_affinity().unwrap(), vec![c]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn validation_names_the_problem() {
        let allowed = [0, 1];
        assert!(validate_cpus(&[0, 1], &allowed).is_ok());
        let e = validate_cpus(&[0, 1, 2], &allowed).unwrap_err().to_string();
        assert!(e.contains("3 threads requested"), "{e}");
        let e = validate_cpus(&[5], &allowed).unwrap_err().to_string();
        assert!(e.contains("CPU 5 is outside"), "{e}");
        assert!(choose_cpus(3, &allowed, |c| c).is_err());
        assert!(choose_cpus(0, &allowed, |c| c).is_err());
    }

    #[test]
    fn choose_spreads_over_cores_before_siblings() {
        // CPUs 0,1 on core 0; 2,3 on core 1 (Intel-style sibling numbering differs; irrelevant).
        let picked = choose_cpus(2, &[0, 1, 2, 3], |c| c / 2).unwrap();
        assert_eq!(picked, vec![0, 2]);
        let picked = choose_cpus(4, &[0, 1, 2, 3], |c| c / 2).unwrap();
        assert_eq!(picked, vec![0, 2, 1, 3]);
    }

    #[test]
    fn team_runs_pinned_threads() {
        let cpus = current_affinity().unwrap();
        let out = run_team(&cpus, |i, cpu, _| (i, cpu, current_affinity().unwrap())).unwrap();
        for (i, (j, cpu, aff)) in out.into_iter().enumerate() {
            assert_eq!(i, j);
            assert_eq!(aff, vec![cpu]);
        }
    }
}
