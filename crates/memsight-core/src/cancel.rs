//! Cooperative interruption: Ctrl-C (SIGINT), SIGTERM and SIGHUP set a flag, measurement loops
//! check it between samples and stop, and the command writes what it measured so far.
//!
//! The binary installs [`on_signal`] as the handler before it does anything else, so a stop that
//! arrives at any moment (while the arguments are parsed, the environment probed, a suite
//! measures, the result is written) is recorded, never the default action's silent death. What
//! the request then does depends on the command ([`OnStop`]): a measuring command keeps going to
//! its next check and writes a partial result; a command that only reads stored results has
//! nothing to keep and exits at once; a worker process leaves the decision to its parent.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static ON_STOP: AtomicU8 = AtomicU8::new(OnStop::Record as u8);
/// A worker's parent when it was told to ignore stops ([`OnStop::Ignore`]).
static PARENT: AtomicI32 = AtomicI32::new(0);

/// What a stop request does in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum OnStop {
    /// Recorded for the measurement to see at its next check (the default, from the first
    /// instruction on).
    Record = 0,
    /// Exit at once with 130: the command measures nothing and holds nothing to keep.
    Exit = 1,
    /// Ignored: a worker process whose parent (which got the same signal from the terminal or
    /// the service manager) stops it and keeps its results.
    Ignore = 2,
}

/// Sets what a stop request does from now on. A request already recorded before a command that
/// has nothing to keep learns what it is ([`OnStop::Exit`]) is not lost: the caller checks
/// [`requested`] right after.
pub fn on_stop(mode: OnStop) {
    PARENT.store(parent(), Ordering::SeqCst);
    ON_STOP.store(mode as u8, Ordering::SeqCst);
}

/// The signal handler's body (it runs on the handler's own thread, not in signal context). A
/// worker whose parent is gone (killed outright, so nobody will stop it) exits like a command.
pub fn on_signal() {
    let exit = || std::process::exit(crate::error::Exit::Interrupted.code().into());
    match ON_STOP.load(Ordering::SeqCst) {
        m if m == OnStop::Exit as u8 => exit(),
        m if m == OnStop::Ignore as u8 => {
            if parent() != PARENT.load(Ordering::SeqCst) {
                exit();
            }
        }
        _ => request(),
    }
}

fn parent() -> i32 {
    // SAFETY: getppid(2) takes nothing and cannot fail.
    unsafe { libc::getppid() }
}

/// Whether SIGHUP is ignored now, as `nohup` leaves it: the stop handler, which takes SIGHUP
/// too, must then leave it ignored ([`ignore_hangup`]), or closing the terminal would stop a
/// run its user meant to outlive it.
pub fn hangup_ignored() -> bool {
    // SAFETY: sigaction(2) with a null new action only reads the current one into `old`, a
    // zeroed struct of the right type.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Ignores SIGHUP again after the stop handler was installed (`nohup`).
pub fn ignore_hangup() {
    // SAFETY: signal(2) with SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
}

/// Asks every running measurement to stop at its next check.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// True once a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Whether a child that died of `signal` was stopped with this process: a terminal's Ctrl-C and
/// a service manager's SIGTERM reach the whole process group, and this process's handler may
/// record the request a moment after the child died. Waits up to 200 ms for it.
pub fn stopped_with_us(signal: i32) -> bool {
    if ![libc::SIGINT, libc::SIGTERM, libc::SIGHUP].contains(&signal) {
        return false;
    }
    let t0 = std::time::Instant::now();
    while !requested() && t0.elapsed() < std::time::Duration::from_millis(200) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    requested()
}

/// A reader that closes standard output early (`memsight … | head`) ends the process quietly,
/// as it ends `cat` or `ls`: SIGPIPE's default action (the shell sees 141) instead of Rust's
/// ignored SIGPIPE, which turns the next `println!` into a panic. Call it first in `main`.
pub fn end_quietly_when_the_reader_leaves() {
    // SAFETY: signal(2) with SIG_DFL installs no handler code; it only restores the kernel's
    // default disposition, which no other part of memsight relies on (Ctrl-C uses SIGINT/SIGTERM,
    // child processes are waited for, not written to through sockets).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
