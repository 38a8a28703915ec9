//! Background memory traffic at a controlled rate, for loaded-latency curves.
//!
//! A load thread walks its buffer one 64-byte line at a time in the pattern of its read:write mix,
//! and spins `delay` cycles between lines. A read or a regular store needs only one 8-byte access
//! to move the whole line (the cache fills it, and a written line goes back whole, after its
//! read for ownership). A non-temporal store bypasses the cache: it moves only the bytes it
//! names, and a partial line costs the memory controller a partial write, so every NT visit
//! writes the whole line (one 64-byte `vmovntdq` with AVX-512, else four 16-byte `movntdq` that the
//! write-combining buffer merges into one full-line write), as MLC's NT traffic does. Delay 0 is the most traffic one thread can make; larger delays throttle it. The
//! delay is a chain of dependent decrements (one per cycle), so it does not touch memory.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What each line visit does. Ratios are DRAM reads : writes with regular stores paying an RFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TrafficMix {
    /// Load one line (1:0: 100% of DRAM bytes read).
    #[cfg_attr(feature = "clap", value(alias = "all-reads"))]
    Reads,
    /// Load eight lines, store one (9:1 with the store's RFO: 90% of DRAM bytes read).
    #[cfg_attr(feature = "clap", value(name = "9:1"))]
    R9W1,
    /// Load three lines, store one (4:1 with the RFO: 80% read).
    #[cfg_attr(feature = "clap", value(name = "4:1"))]
    R4W1,
    /// Load two lines, store one (3:1 with the store's RFO: 75% read).
    #[cfg_attr(feature = "clap", value(name = "3:1"))]
    R3W1,
    /// Load one line, store one (2:1 with the RFO: 67% read).
    #[cfg_attr(feature = "clap", value(name = "2:1"))]
    R2W1,
    /// Load one line, store two (3:2 with the RFOs: 60% read).
    #[cfg_attr(feature = "clap", value(name = "3:2"))]
    R3W2,
    /// Store one line (1:1: the store's RFO is the only read, 50%).
    #[cfg_attr(feature = "clap", value(alias = "all-writes"))]
    Writes,
    /// Load one line, non-temporal store one (1:1).
    #[cfg_attr(feature = "clap", value(name = "1:1-nt", alias = "1:1"))]
    R1W1Nt,
    /// Non-temporal stores only (0:1).
    NtWrites,
}

impl TrafficMix {
    /// (lines read, lines written) per visit, program bytes.
    pub fn lines(self) -> (u64, u64) {
        match self {
            TrafficMix::Reads => (1, 0),
            TrafficMix::R9W1 => (8, 1),
            TrafficMix::R4W1 => (3, 1),
            TrafficMix::R3W1 => (2, 1),
            TrafficMix::R2W1 => (1, 1),
            TrafficMix::R3W2 => (1, 2),
            TrafficMix::Writes => (0, 1),
            TrafficMix::R1W1Nt => (1, 1),
            TrafficMix::NtWrites => (0, 1),
        }
    }

    /// Whether the stores bypass the cache (no read for ownership).
    pub fn non_temporal(self) -> bool {
        matches!(self, TrafficMix::R1W1Nt | TrafficMix::NtWrites)
    }

    /// (DRAM lines read, DRAM lines written) per visit: a regular store's line is read first.
    pub fn dram_lines(self) -> (u64, u64) {
        let (r, w) = self.lines();
        let rfo = if self.non_temporal() { 0 } else { w };
        (r + rfo, w)
    }

    /// DRAM bytes per visit (regular stores add the RFO read).
    pub fn dram_bytes(self) -> u64 {
        let (r, w) = self.dram_lines();
        64 * (r + w)
    }

    /// The share of DRAM bytes that are reads (1 for all reads, 0.5 for all regular stores).
    pub fn read_share(self) -> f64 {
        let (r, w) = self.dram_lines();
        r as f64 / (r + w) as f64
    }

    /// The regular-store mixes, one per read share from 100% to 50% (the curve family of
    /// Esmaili-Dokht et al., MICRO 2024), then the non-temporal ones.
    pub const FAMILY: [TrafficMix; 9] = [
        TrafficMix::Reads,
        TrafficMix::R9W1,
        TrafficMix::R4W1,
        TrafficMix::R3W1,
        TrafficMix::R2W1,
        TrafficMix::R3W2,
        TrafficMix::Writes,
        TrafficMix::R1W1Nt,
        TrafficMix::NtWrites,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TrafficMix::Reads => "all reads",
            TrafficMix::R9W1 => "9:1",
            TrafficMix::R4W1 => "4:1",
            TrafficMix::R3W1 => "3:1",
            TrafficMix::R2W1 => "2:1",
            TrafficMix::R3W2 => "3:2",
            TrafficMix::Writes => "all writes",
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

/// Generates traffic over `buf` (split into three padded regions: two read streams and one write
/// stream) until `stop` is set, adding the visits made to `visits` every 256 visits.
pub fn generate(
    buf: &mut [u8],
    mix: TrafficMix,
    delay_cycles: &AtomicU64,
    stop: &AtomicBool,
    visits: &AtomicU64,
) {
    if matches!(
        mix,
        TrafficMix::R9W1 | TrafficMix::R4W1 | TrafficMix::R3W2 | TrafficMix::Writes
    ) {
        generate_family(buf, mix, delay_cycles, stop, visits);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F.
        unsafe { generate_avx512(buf, mix, delay_cycles, stop, visits) };
        return;
    }
    generate_with(buf, mix, delay_cycles, stop, visits, |p, v| {
        // SAFETY: `generate_with` passes a 64-byte aligned line inside the buffer.
        unsafe { nt_line_128(p, v) }
    });
}

/// The generator compiled for AVX-512, so that its one-instruction line store inlines.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn generate_avx512(
    buf: &mut [u8],
    mix: TrafficMix,
    delay_cycles: &AtomicU64,
    stop: &AtomicBool,
    visits: &AtomicU64,
) {
    use std::arch::x86_64::{_mm512_set1_epi64, _mm512_stream_si512};
    generate_with(buf, mix, delay_cycles, stop, visits, |p, v| {
        // SAFETY: `generate_with` passes a 64-byte aligned line inside the buffer; the feature
        // is enabled for this function.
        unsafe { _mm512_stream_si512(p.cast(), _mm512_set1_epi64(v as i64)) }
    });
}

#[inline(always)]
fn generate_with(
    buf: &mut [u8],
    mix: TrafficMix,
    delay_cycles: &AtomicU64,
    stop: &AtomicBool,
    visits: &AtomicU64,
    nt_line: impl Fn(*mut u64, u64),
) {
    let (third, second, last) = regions(buf);
    let base = buf.as_mut_ptr();
    let lines = third / 64;
    let mut i = 0usize;
    let mut sum = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let d = delay_cycles.load(Ordering::Relaxed);
        for _ in 0..256 {
            let a = i * 64;
            // SAFETY: a < third, so the lines at a, second + a and last + a are inside `buf`
            // (last + third = 3·third + 2·PAD ≤ len); all 64-byte aligned (base is, and third,
            // PAD and a are multiples of 64).
            unsafe {
                let x = base.add(a).cast::<u64>();
                let y = base.add(second + a).cast::<u64>();
                let z = base.add(last + a).cast::<u64>();
                match mix {
                    TrafficMix::Reads => sum = sum.wrapping_add(x.read_volatile()),
                    TrafficMix::R3W1 => {
                        z.write_volatile(x.read_volatile().wrapping_add(y.read_volatile()))
                    }
                    TrafficMix::R2W1 => z.write_volatile(x.read_volatile()),
                    TrafficMix::R1W1Nt => nt_line(z, x.read_volatile()),
                    TrafficMix::NtWrites => nt_line(z, i as u64),
                    // generate() sends the other mixes to generate_family.
                    _ => {}
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

/// The three regions' length and the offsets of the second and the last, in bytes.
fn regions(buf: &[u8]) -> (usize, usize, usize) {
    // The three regions start PAD bytes further apart than their length, so that the same line
    // of each never shares its low 12 address bits (a load behind a store to an address 4 KiB
    // away waits for it: "4K aliasing") nor its L1 set; `bandwidth` pads its arrays the same way.
    const PAD: usize = 2048 + 64;
    let third = buf.len().saturating_sub(2 * PAD) / 3 / 64 * 64;
    assert!(
        third >= 64 && (buf.as_ptr() as usize).is_multiple_of(64),
        "load buffer too small or not 64-byte aligned"
    );
    (third, third + PAD, 2 * (third + PAD))
}

/// Lines of the read region, and offset and lines of the write region, of the read-share
/// family's generator over `len` bytes: the buffer split in the mix's proportion of lines read to
/// lines written (so that both regions wrap together and the whole buffer is the footprint, as in
/// the other mixes: a third of it would partly stay in a large cache), PAD bytes between them;
/// all of it written where nothing is read.
pub fn family_regions(len: usize, r: u64, w: u64) -> (usize, usize, usize) {
    const PAD: usize = 2048 + 64;
    let total = len / 64;
    if r == 0 {
        return (0, 0, total);
    }
    let usable = total.saturating_sub(PAD / 64);
    let read = usable * r as usize / (r + w) as usize;
    (read, read * 64 + PAD, usable - read)
}

/// The other regular-store mixes of the read-share family: each visit loads `r` lines of the
/// read region and stores their sum + 1 into `w` lines of the write region, each region walked
/// by a cursor of its own ([`family_regions`]).
fn generate_family(
    buf: &mut [u8],
    mix: TrafficMix,
    delay_cycles: &AtomicU64,
    stop: &AtomicBool,
    visits: &AtomicU64,
) {
    let (r, w) = mix.lines();
    let (read_lines, write_at, write_lines) = family_regions(buf.len(), r, w);
    assert!(
        write_lines >= 1
            && (r == 0 || read_lines >= 1)
            && (buf.as_ptr() as usize).is_multiple_of(64),
        "load buffer too small or not 64-byte aligned"
    );
    let base = buf.as_mut_ptr();
    let (mut rc, mut wc) = (0usize, 0usize);
    while !stop.load(Ordering::Relaxed) {
        let d = delay_cycles.load(Ordering::Relaxed);
        for _ in 0..256 {
            let mut s = 0u64;
            for _ in 0..r {
                // SAFETY: rc < read_lines, and the read region's read_lines·64 bytes start the
                // buffer; base is 64-byte aligned.
                s = s.wrapping_add(unsafe { base.add(rc * 64).cast::<u64>().read_volatile() });
                rc = if rc + 1 == read_lines { 0 } else { rc + 1 };
            }
            for _ in 0..w {
                // SAFETY: wc < write_lines and write_at + write_lines·64 ≤ len
                // (family_regions), write_at a multiple of 64.
                unsafe {
                    base.add(write_at + wc * 64)
                        .cast::<u64>()
                        .write_volatile(s.wrapping_add(1))
                };
                wc = if wc + 1 == write_lines { 0 } else { wc + 1 };
            }
            delay(d);
        }
        visits.fetch_add(256, Ordering::Relaxed);
    }
}

/// Writes the whole 64-byte line at `p` with four non-temporal 16-byte stores of `v`.
///
/// # Safety
/// `p` must be 64-byte aligned with 64 writable bytes behind it.
unsafe fn nt_line_128(p: *mut u64, v: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller guarantees 64 aligned writable bytes; movntdq is SSE2 (x86_64 baseline).
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_set1_epi64x, _mm_stream_si128};
        let x = _mm_set1_epi64x(v as i64);
        let q = p.cast::<__m128i>();
        _mm_stream_si128(q, x);
        _mm_stream_si128(q.add(1), x);
        _mm_stream_si128(q.add(2), x);
        _mm_stream_si128(q.add(3), x);
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above; regular stores where no NT store is used.
    unsafe {
        for k in 0..8 {
            p.add(k).write_volatile(v);
        }
    }
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

    /// One cache line, 64-byte aligned.
    #[derive(Clone, Copy, Debug)]
    #[repr(C, align(64))]
    struct Line([u64; 8]);

    /// A 64-byte aligned buffer of `bytes`, every word 1 (Vec<u8> is only byte-aligned).
    fn lines(bytes: usize) -> Vec<Line> {
        vec![Line([1u64; 8]); bytes / 64]
    }

    fn as_bytes(v: &mut [Line]) -> &mut [u8] {
        let n = std::mem::size_of_val(v);
        // SAFETY: Line is plain old data without padding; the byte view covers the same memory.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), n) }
    }

    #[test]
    fn nt_visits_write_whole_lines() {
        for mix in [TrafficMix::R1W1Nt, TrafficMix::NtWrites] {
            // Three regions of 64 lines, 2112 B (33 lines) of padding between them.
            let mut buf = lines(3 * 64 * 64 + 2 * 2112);
            // The read regions hold 7s, so copying them (R1W1Nt) changes the 1s written over.
            for l in &mut buf[..2 * (64 + 33)] {
                l.0 = [7; 8];
            }
            let stop = AtomicBool::new(false);
            let visits = AtomicU64::new(0);
            let d = AtomicU64::new(0);
            std::thread::scope(|s| {
                let h = s.spawn(|| generate(as_bytes(&mut buf), mix, &d, &stop, &visits));
                while visits.load(Ordering::Relaxed) < 1024 && !h.is_finished() {
                    std::thread::yield_now();
                }
                stop.store(true, Ordering::Relaxed);
            });
            // The write region is the last third: every line visited holds one value in all
            // eight words (a partial write would leave the initial 1s in some of them).
            for line in &buf[128..] {
                assert!(line.0.iter().all(|w| *w == line.0[0]), "{mix:?}: {line:?}");
            }
            assert!(
                buf[128..].iter().any(|l| l.0[0] != 1),
                "{mix:?} wrote nothing"
            );
        }
    }

    #[test]
    fn every_mix_generates_visits_and_stops() {
        for mix in TrafficMix::FAMILY {
            let mut buf = lines(1 << 20);
            let stop = AtomicBool::new(false);
            let visits = AtomicU64::new(0);
            let d = AtomicU64::new(10);
            std::thread::scope(|s| {
                s.spawn(|| generate(as_bytes(&mut buf), mix, &d, &stop, &visits));
                std::thread::sleep(std::time::Duration::from_millis(20));
                stop.store(true, Ordering::Relaxed);
            });
            assert!(visits.load(Ordering::Relaxed) > 0, "{mix:?}");
        }
    }

    #[test]
    fn longer_delays_mean_fewer_visits() {
        let run = |cycles: u64| {
            let mut buf = lines(64 << 10);
            let stop = AtomicBool::new(false);
            let visits = AtomicU64::new(0);
            let d = AtomicU64::new(cycles);
            std::thread::scope(|s| {
                s.spawn(|| generate(as_bytes(&mut buf), TrafficMix::Reads, &d, &stop, &visits));
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
        assert_eq!(TrafficMix::R9W1.dram_bytes(), 640);
        assert_eq!(TrafficMix::Writes.dram_bytes(), 128);
        let shares: Vec<u32> = TrafficMix::FAMILY
            .iter()
            .map(|m| (m.read_share() * 100.0).round() as u32)
            .collect();
        assert_eq!(shares, [100, 90, 80, 75, 67, 60, 50, 50, 0]);
    }

    /// The family's generator reads exactly `r` lines and writes exactly `w` lines a visit, over
    /// the whole buffer: the read region's line k holds k + 10, so each written value (the sum of the lines read in
    /// its visit, + 1) names the lines that visit read; lines past the last visit are untouched.
    #[test]
    fn family_visits_touch_exactly_their_lines() {
        for mix in [
            TrafficMix::R9W1,
            TrafficMix::R4W1,
            TrafficMix::R3W2,
            TrafficMix::Writes,
        ] {
            let (r, w) = (mix.lines().0 as usize, mix.lines().1 as usize);
            // 96 Ki lines, split in the mix's proportion (family_regions).
            let total = 3 * 32768;
            let mut buf = lines(64 * total);
            let (n, write_at, write_lines) = family_regions(64 * total, r as u64, w as u64);
            let first_written = write_at / 64;
            assert!(write_lines > 1000 && first_written + write_lines <= total);
            assert_eq!(
                n + write_lines + if r > 0 { 33 } else { 0 },
                total,
                "the whole buffer"
            );
            for (k, l) in buf[..n].iter_mut().enumerate() {
                l.0 = [k as u64 + 10; 8];
            }
            for l in &mut buf[first_written..] {
                l.0 = [0; 8];
            }
            let stop = AtomicBool::new(false);
            let visits = AtomicU64::new(0);
            // Slow visits, so that the first 256 do not wrap the write region before `stop`.
            let d = AtomicU64::new(4000);
            std::thread::scope(|s| {
                let h = s.spawn(|| generate(as_bytes(&mut buf), mix, &d, &stop, &visits));
                while visits.load(Ordering::Relaxed) == 0 && !h.is_finished() {
                    std::thread::yield_now();
                }
                stop.store(true, Ordering::Relaxed);
            });
            let v = visits.load(Ordering::Relaxed) as usize;
            let written = &buf[first_written..];
            if v * w >= write_lines {
                // The writes wrapped (the test thread was held up): every line was written.
                assert!(written.iter().all(|l| l.0[0] != 0), "{mix:?}");
                continue;
            }
            for (j, l) in written.iter().enumerate() {
                let want = if j < v * w {
                    let visit = j / w;
                    (0..r)
                        .map(|t| ((visit * r + t) % n) as u64 + 10)
                        .sum::<u64>()
                        + 1
                } else {
                    0
                };
                assert_eq!(l.0[0], want, "{mix:?}: write line {j} after {v} visits");
                assert!(l.0[1..].iter().all(|&x| x == 0), "{mix:?}: one word a line");
            }
        }
    }
}
