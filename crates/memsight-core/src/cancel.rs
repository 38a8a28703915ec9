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
