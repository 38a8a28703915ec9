//! The core's effective clock while it runs our code, for converting nanoseconds into cycles.
//!
//! A chain of dependent integer adds retires one add per cycle on every x86_64 and AArch64 core
//! (single-cycle ALU latency), so adds ÷ seconds is the clock the core actually ran at, turbo and
//! hypervisor throttling included. This is what `cycles` figures are computed from; inside a VM
//! the nominal frequency is often not even visible.

use std::time::Instant;

/// Adds per call of [`dependent_adds`] per iteration.
pub const ADDS_PER_ITER: u64 = 128;

/// Runs `iters` × 128 dependent adds; returns the elapsed nanoseconds.
pub fn dependent_adds(iters: u64) -> f64 {
    let t = Instant::now();
    run_adds(iters);
    t.elapsed().as_nanos() as f64
}

#[cfg(target_arch = "x86_64")]
fn run_adds(iters: u64) {
    let mut acc: u64 = 0;
    // SAFETY: register-only arithmetic; no memory is touched.
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept 128",
            "add {acc}, 1",
            ".endr",
            "dec {n}",
            "jnz 2b",
            acc = inout(reg) acc,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(acc);
}

#[cfg(target_arch = "aarch64")]
fn run_adds(iters: u64) {
    let mut acc: u64 = 0;
    // SAFETY: register-only arithmetic; no memory is touched.
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept 128",
            "add {acc}, {acc}, #1",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            acc = inout(reg) acc,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(acc);
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn run_adds(iters: u64) {
    let mut acc = 0u64;
    for _ in 0..iters.max(1) * ADDS_PER_ITER {
        acc = std::hint::black_box(acc + 1);
    }
}

/// One estimate of the clock in GHz from a run lasting about `target_ns`.
pub fn sample_ghz(target_ns: f64) -> f64 {
    // Calibrate the iteration count on a short run, then do the real one.
    let probe = 1000;
    let ns = dependent_adds(probe).max(1.0);
    let iters = ((target_ns / ns) * probe as f64).max(1.0) as u64;
    let ns = dependent_adds(iters);
    (iters * ADDS_PER_ITER) as f64 / ns
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_is_plausible() {
        let ghz = super::sample_ghz(2e6);
        assert!(ghz > 0.2 && ghz < 10.0, "{ghz} GHz");
    }
}
