//! Cooperative interruption: Ctrl-C sets a flag, measurement loops check it between samples and
//! stop, and the command writes what it measured so far.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every running measurement to stop at its next check.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// True once a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
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
