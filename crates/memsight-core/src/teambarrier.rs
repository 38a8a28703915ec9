//! The barrier of a team of measurement threads, and what happens when one of them panics.
//!
//! The threads of a team meet at barriers many times per measurement. A thread that panics (a bug
//! in a kernel or a suite) never arrives again, and with a plain barrier the others would wait
//! for it for ever: the command would hang instead of failing. So the team's barrier can be
//! broken: [`crate::pin::run_team`] catches a member's panic and breaks it, and every thread
//! waiting at it, or arriving later, leaves by unwinding too (without printing a second panic).
//! The spinning barriers and the flag loops a team uses between its meetings look at the same
//! mark ([`team_aborted`]), so they let go as well.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The unwinding payload of a thread that leaves because another member of its team panicked.
pub(crate) struct TeamAborted;

thread_local! {
    /// The broken mark of the team this thread belongs to, if any.
    static TEAM: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// True when this thread belongs to a team one of whose members panicked: loops that wait for a
/// partner (a flag, a spinning barrier) stop waiting and call [`leave_if_aborted`].
pub fn team_aborted() -> bool {
    TEAM.with(|t| {
        t.borrow()
            .as_ref()
            .is_some_and(|a| a.load(Ordering::Relaxed))
    })
}

/// Unwinds out of this thread's part of the team when the team is broken. The unwinding does not
/// call the panic hook: the member that panicked already reported it.
pub fn leave_if_aborted() {
    if team_aborted() {
        std::panic::resume_unwind(Box::new(TeamAborted));
    }
}

/// Marks the calling thread as a member of the team whose broken mark is `aborted`.
pub(crate) fn join(aborted: &Arc<AtomicBool>) {
    TEAM.with(|t| *t.borrow_mut() = Some(Arc::clone(aborted)));
}

/// A barrier for `threads` threads that a panicking member breaks (see the module's text).
pub struct TeamBarrier {
    threads: usize,
    /// Threads arrived in this generation, and the generation.
    state: Mutex<(usize, u64)>,
    released: Condvar,
    pub(crate) aborted: Arc<AtomicBool>,
}

impl TeamBarrier {
    pub fn new(threads: usize) -> Self {
        TeamBarrier {
            threads: threads.max(1),
            state: Mutex::new((0, 0)),
            released: Condvar::new(),
            aborted: Arc::new(AtomicBool::new(false)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (usize, u64)> {
        // Nobody panics while holding it; a poisoned lock still holds consistent counts.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until all threads of the team have arrived. Unwinds (see [`leave_if_aborted`])
    /// instead when the team is, or becomes, broken.
    pub fn wait(&self) {
        let mut s = self.lock();
        if self.aborted.load(Ordering::SeqCst) {
            drop(s);
            std::panic::resume_unwind(Box::new(TeamAborted));
        }
        let generation = s.1;
        s.0 += 1;
        if s.0 == self.threads {
            *s = (0, generation + 1);
            self.released.notify_all();
            return;
        }
        while s.1 == generation {
            if self.aborted.load(Ordering::SeqCst) {
                drop(s);
                std::panic::resume_unwind(Box::new(TeamAborted));
            }
            s = self.released.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Breaks the barrier: every thread waiting at it, and every one that arrives later, unwinds.
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        // Under the lock, so a thread between its check and its wait cannot miss the wake-up.
        let _s = self.lock();
        self.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_barrier_releases_every_round_and_a_break_releases_the_waiters() {
        let b = TeamBarrier::new(3);
        let rounds = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..50 {
                        b.wait();
                        rounds.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(rounds.load(Ordering::SeqCst), 150);

        // Two of three arrive; the third breaks the barrier instead of arriving.
        let b = TeamBarrier::new(3);
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.wait())))
                })
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(20));
            b.abort();
            for w in waiters {
                let out = w.join().unwrap();
                let payload = out.expect_err("a waiter left normally from a broken barrier");
                assert!(payload.is::<TeamAborted>());
            }
        });
        // Arriving after the break unwinds at once.
        let late = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.wait()));
        assert!(late.is_err());
    }
}
