//! Background memory traffic at a controlled rate, for loaded-latency curves.
//!
//! A load thread walks its buffer one 64-byte line at a time, doing one 8-byte access per line
//! (enough to move the whole line) in the pattern of its read:write mix, and spins `delay` cycles
//! between lines. Delay 0 is the most traffic one thread can make; larger delays throttle it. The
//! delay is a chain of dependent decrements (one per cycle), so it does not touch memory.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What each line visit does. Ratios are DRAM reads : writes with regular stores paying an RFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrafficMix {
    /// Load one line (1:0).
    Reads,
    /// Load two lines, store one (3:1 with the store's RFO).
    R3W1,
    /// Load one line, store one (2:1 with the RFO).
    R2W1,
    /// Load one line, non-temporal store one (1:1).
    R1W1Nt,
    /// Non-temporal stores only (0:1).
    NtWrites,
}

impl TrafficMix {
    /// (lines read, lines written) per visit, program bytes.
    pub fn lines(self) -> (u64, u64) {
        match self {
            TrafficMix::Reads => (1, 0),
            TrafficMix::R3W1 => (2, 1),
            TrafficMix::R2W1 => (1, 1),
            TrafficMix::R1W1Nt => (1, 1),
            TrafficMix::NtWrites => (0, 1),
        }
    }

    /// DRAM bytes per visit (regular stores add the RFO read).
    pub fn dram_bytes(self) -> u64 {
        let (r, w) = self.lines();
        let rfo = match self {
            TrafficMix::R3W1 | TrafficMix::R2W1 => w,
            _ => 0,
        };
        64 * (r + w + rfo)
    }

    pub fn name(self) -> &'static str {
        match self {
            TrafficMix::Reads => "all reads",
            TrafficMix::R3W1 => "3:1",
            TrafficMix::R2W1 => "2:1",
            TrafficMix::R1W1Nt => "1:1 NT",
            TrafficMix::NtWrites => "NT writes",
        }
    }
}

/// Spins about `cycles` cycles without touching memory.
#[inline(always)]
pub fn delay(cycles: u64) {
    if cycles == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register-only loop.
    unsafe {
        std::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) cycles => _, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register-only loop.
    unsafe {
        std::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) cycles => _, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..cycles {
        std::hint::spin_loop();
    }
}

/// Generates traffic over `buf` (split into three regions: two read streams and one write
/// stream) until `stop` is set, adding the visits made to `visits` every 256 visits.
pub fn generate(
    buf: &mut [u8],
    mix: TrafficMix,
    delay_cycles: &AtomicU64,
    stop: &AtomicBool,
    visits: &AtomicU64,
) {
    let third = buf.len() / 3 / 64 * 64;
    assert!(
        third >= 64 && (buf.as_ptr() as usize).is_multiple_of(8),
        "load buffer too small or misaligned"
    );
    let base = buf.as_mut_ptr();
    let lines = third / 64;
    let mut i = 0usize;
    let mut sum = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let d = delay_cycles.load(Ordering::Relaxed);
        for _ in 0..256 {
            let a = i * 64;
            // SAFETY: a < third, so a, third + a and 2·third + a are inside `buf` (3·third ≤ len);
            // all 8-byte aligned.
            unsafe {
                let x = base.add(a).cast::<u64>();
                let y = base.add(third + a).cast::<u64>();
                let z = base.add(2 * third + a).cast::<u64>();
                match mix {
                    TrafficMix::Reads => sum = sum.wrapping_add(x.read_volatile()),
                    TrafficMix::R3W1 => {
                        z.write_volatile(x.read_volatile().wrapping_add(y.read_volatile()))
                    }
                    TrafficMix::R2W1 => z.write_volatile(x.read_volatile()),
                    TrafficMix::R1W1Nt => nt_store(z, x.read_volatile()),
                    TrafficMix::NtWrites => nt_store(z, i as u64),
                }
            }
            i = if i + 1 == lines { 0 } else { i + 1 };
            delay(d);
        }
        visits.fetch_add(256, Ordering::Relaxed);
    }
    fence();
    std::hint::black_box(sum);
}

#[inline(always)]
unsafe fn nt_store(p: *mut u64, v: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: p is aligned and inside the caller's buffer; movnti is SSE2 (x86_64 baseline).
    unsafe {
        std::arch::x86_64::_mm_stream_si64(p.cast(), v as i64)
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above; a regular store where no scalar NT store exists.
    unsafe {
        p.write_volatile(v)
    };
}

fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mix_generates_visits_and_stops() {
        for mix in [
            TrafficMix::Reads,
            TrafficMix::R3W1,
            TrafficMix::R2W1,
            TrafficMix::R1W1Nt,
            TrafficMix::NtWrites,
        ] {
            let mut buf = vec![1u8; 1 << 20];
            let stop = AtomicBool::new(false);
            let visits = AtomicU64::new(0);
            let d = AtomicU64::new(10);
            std::thread::scope(|s| {
                s.spawn(|| generate(&mut buf, mix, &d, &stop, &visits));
                std::thread::sleep(std::time::Duration::from_millis(20));
                stop.store(true, Ordering::Relaxed);
            });
            assert!(visits.load(Ordering::Relaxed) > 0, "{mix:?}");
        }
    }

    #[test]
    fn longer_delays_mean_fewer_visits() {
        let run = |cycles: u64| {
            let mut buf = vec![1u8; 64 << 10];
            let stop = AtomicBool::new(false);
            let visits = AtomicU64::new(0);
            let d = AtomicU64::new(cycles);
            std::thread::scope(|s| {
                s.spawn(|| generate(&mut buf, TrafficMix::Reads, &d, &stop, &visits));
                std::thread::sleep(std::time::Duration::from_millis(50));
                stop.store(true, Ordering::Relaxed);
            });
            visits.load(Ordering::Relaxed)
        };
        // 10 000 cycles between visits is far slower than none (cache-resident buffer).
        assert!(run(0) > 5 * run(10_000));
    }

    #[test]
    fn dram_bytes_count_rfo() {
        assert_eq!(TrafficMix::Reads.dram_bytes(), 64);
        assert_eq!(TrafficMix::R2W1.dram_bytes(), 192);
        assert_eq!(TrafficMix::R1W1Nt.dram_bytes(), 128);
        assert_eq!(TrafficMix::R3W1.dram_bytes(), 256);
    }
}
