//! Random block accesses: the access-granularity kernels of the memory-tier study.
//!
//! A buffer of `2^k` blocks of `block` bytes is visited in a pseudo-random order that is a
//! permutation of the blocks: block `order(i)` for i = start, start + 1, … (mod 2^k). Each visit
//! reads or writes the whole block, so a 64-byte block is one line and a 4096-byte block one page.
//! On media whose internal access unit is larger than a line (Optane's 256 bytes, CXL devices
//! with their own buffers), small random blocks cost a whole unit each: bandwidth per block size
//! shows the unit as the size where it stops rising steeply.
//!
//! The order needs no index table over the buffer (which would add its own memory traffic):
//! `order` is a bijection on k-bit numbers built from multiplications by odd constants and
//! xor-shifts, both invertible modulo 2^k. The next 256 offsets are computed into a small,
//! L1-resident array before they are visited, so the access loop is a few instructions per block;
//! successive visits are independent and the core keeps many misses in flight, as MLC's
//! random-access bandwidth (`-U`) does.
//!
//! Writes are regular stores (the line is read for ownership first), non-temporal stores
//! (x86_64 only; an `sfence` ends each call) or regular stores followed by a cache-line write-back
//! of every line (`clwb`, else `clflushopt`, else `clflush`) and an `sfence` per block: the
//! persist step of PMDK's `pmem_persist`, whose cost this shows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bytes in a cache line, the smallest block.
pub const LINE: usize = 64;

/// What a visit does to its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Access {
    /// Reads every 64-bit word of the block.
    Read,
    /// Writes every word with ordinary stores.
    Write,
    /// Writes every word with non-temporal stores (x86_64).
    WriteNt,
    /// Writes every word, then writes each line back (clwb/clflushopt/clflush) and fences.
    WritePersist,
}

impl Access {
    /// All accesses, in report order.
    pub const ALL: [Access; 4] = [
        Access::Read,
        Access::Write,
        Access::WriteNt,
        Access::WritePersist,
    ];

    /// Name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::WriteNt => "write-nt",
            Access::WritePersist => "write-persist",
        }
    }

    /// Whether this CPU can run it, or why not.
    pub fn supported(self) -> Result<(), String> {
        match self {
            Access::WriteNt | Access::WritePersist if !cfg!(target_arch = "x86_64") => {
                Err(format!("{} is implemented for x86_64 only", self.name()))
            }
            _ => Ok(()),
        }
    }
}

/// The cache-line write-back instruction this CPU has, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Flush {
    /// Writes the line back and may keep it cached.
    Clwb,
    /// Writes back and invalidates, weakly ordered.
    Clflushopt,
    /// Writes back and invalidates, ordered with other flushes (slowest).
    Clflush,
    /// No flush instruction (not x86_64).
    None,
}

impl Flush {
    /// What this CPU offers (CPUID leaf 7: EBX bit 24 clwb, bit 23 clflushopt), asked once per
    /// process: every pass of a measurement calls [`visit`], and CPUID traps to the hypervisor
    /// in a VM.
    pub fn detect() -> Flush {
        static FLUSH: std::sync::OnceLock<Flush> = std::sync::OnceLock::new();
        *FLUSH.get_or_init(Flush::probe)
    }

    fn probe() -> Flush {
        #[cfg(target_arch = "x86_64")]
        {
            let ebx = std::arch::x86_64::__cpuid_count(7, 0).ebx;
            if ebx & (1 << 24) != 0 {
                return Flush::Clwb;
            }
            if ebx & (1 << 23) != 0 {
                return Flush::Clflushopt;
            }
            Flush::Clflush
        }
        #[cfg(not(target_arch = "x86_64"))]
        Flush::None
    }
}

/// The visiting order over `2^bits` blocks: a bijection of `i mod 2^bits`.
#[derive(Debug, Clone, Copy)]
pub struct Order {
    bits: u32,
    mask: u64,
    seed: u64,
}

impl Order {
    /// An order over `blocks` blocks, which must be a power of two.
    pub fn new(blocks: usize, seed: u64) -> Order {
        assert!(
            blocks.is_power_of_two(),
            "block count must be a power of two"
        );
        let bits = blocks.trailing_zeros();
        Order {
            bits,
            mask: (blocks as u64).wrapping_sub(1),
            seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    }

    /// The block visited at step `i`.
    #[inline(always)]
    pub fn at(&self, i: u64) -> usize {
        let m = self.mask;
        let s = self.bits / 2 + 1;
        let mut x = (i.wrapping_add(self.seed)) & m;
        // Multiplying by an odd number and x ^= x >> s are both invertible modulo 2^bits.
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9) & m;
        x ^= x >> s;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb) & m;
        x ^= x >> s;
        x = x.wrapping_mul(0xd6e8_feb8_6659_fd93) & m;
        x ^= x >> s;
        x as usize
    }
}

/// Visits `count` blocks of `block` bytes in `buf`, steps `start .. start + count` of `order`,
/// doing `access` (writes store `pattern`). Returns the wrapping sum of what reads saw (0 for
/// writes). `buf` holds exactly the order's blocks; `block` is a multiple of 64 and `buf`
/// 64-byte aligned.
pub fn visit(
    access: Access,
    buf: &mut [u8],
    block: usize,
    order: &Order,
    start: u64,
    count: u64,
    pattern: u64,
) -> u64 {
    assert!(
        block >= LINE && block.is_multiple_of(LINE),
        "block must be a multiple of 64 B"
    );
    assert_eq!(
        buf.as_ptr() as usize % LINE,
        0,
        "buffer must be 64-byte aligned"
    );
    assert_eq!(
        buf.len() as u64,
        (order.mask + 1) * block as u64,
        "buffer must hold exactly the order's blocks"
    );
    if let Err(e) = access.supported() {
        panic!("{e}");
    }
    let base = std::hint::black_box(buf.as_mut_ptr());
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = std::arch::is_x86_feature_detected!("avx512f");
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        let flush = Flush::detect();
        // SAFETY: order.at(i) < blocks, so every block visited lies inside `buf` (borrowed
        // mutably, 64-byte aligned); the AVX2 variant runs only where the CPU has AVX2.
        unsafe {
            if avx512 {
                x86::avx512::visit(access, base, block, order, start, count, pattern, flush)
            } else if avx2 {
                x86::avx2::visit(access, base, block, order, start, count, pattern, flush)
            } else {
                x86::sse2::visit(access, base, block, order, start, count, pattern, flush)
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut sum = 0u64;
        for i in start..start + count {
            let p = base.wrapping_add(order.at(i) * block);
            match access {
                // SAFETY: as above; the block lies inside `buf`.
                Access::Read => sum = sum.wrapping_add(unsafe { read_block(p, block) }),
                // SAFETY: as above.
                _ => unsafe { write_block(p, block, pattern) },
            }
        }
        sum
    }
}

/// Sums the block's words, four independent accumulators (portable path).
///
/// # Safety
/// `p .. p + block` is readable and 8-byte aligned; `block` is a multiple of 64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn read_block(p: *const u8, block: usize) -> u64 {
    let w = p as *const u64;
    let (mut a, mut b) = (0u64, 0u64);
    let mut j = 0;
    while j < block / 8 {
        // SAFETY: j + 1 < block / 8, inside the block.
        unsafe {
            a = a.wrapping_add(w.add(j).read_volatile());
            b = b.wrapping_add(w.add(j + 1).read_volatile());
        }
        j += 2;
    }
    a.wrapping_add(b)
}

/// Stores `pattern` into every word of the block (portable path).
///
/// # Safety
/// `p .. p + block` is writable, exclusively ours, 8-byte aligned; `block` a multiple of 64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn write_block(p: *mut u8, block: usize, pattern: u64) {
    let w = p as *mut u64;
    for j in 0..block / 8 {
        // SAFETY: j < block / 8, inside the block. Volatile so the stores are not merged away.
        unsafe { w.add(j).write_volatile(pattern) };
    }
}

/// x86_64: the visit loop per vector width, so a line is read or written in as few instructions
/// as the CPU allows (scalar loads would fill the load queue with eight entries per line and cap
/// the misses in flight: measured 1.7 GB/s against 6.9 GB/s for one load per line on Zen 4).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Access, Flush, LINE, Order};

    /// Block offsets computed ahead of the access loop.
    const BATCH: usize = 256;
    use std::arch::x86_64::*;

    /// Writes every line of the block back (`clwb`, else `clflushopt`, else `clflush`).
    ///
    /// # Safety
    /// `p .. p + block` is mapped.
    #[inline(always)]
    unsafe fn write_back(p: *mut u8, block: usize, flush: Flush) {
        let mut j = 0;
        while j < block {
            let line = p.wrapping_add(j);
            // SAFETY: the line is mapped (caller); these instructions only write back a line.
            unsafe {
                match flush {
                    Flush::Clwb => {
                        std::arch::asm!("clwb [{0}]", in(reg) line, options(nostack, preserves_flags))
                    }
                    Flush::Clflushopt => {
                        std::arch::asm!("clflushopt [{0}]", in(reg) line, options(nostack, preserves_flags))
                    }
                    _ => _mm_clflush(line),
                }
            }
            j += LINE;
        }
    }

    macro_rules! visit_fn {
        ($feature:literal, $modname:ident, $V:ty, $VB:expr, $set1:ident, $zero:ident, $load:ident, $store:ident, $stream:ident, $add:ident, $fold:expr) => {
            pub mod $modname {
                use super::*;

                /// The visit loop for this width.
                ///
                /// # Safety
                /// The CPU has the feature; every block `order.at(i)` of `block` bytes from `base`
                /// is inside one writable, 64-byte aligned buffer the caller borrows mutably.
                #[target_feature(enable = $feature)]
                #[allow(clippy::too_many_arguments)]
                pub unsafe fn visit(
                    access: Access,
                    base: *mut u8,
                    block: usize,
                    order: &Order,
                    start: u64,
                    count: u64,
                    pattern: u64,
                    flush: Flush,
                ) -> u64 {
                    let v = $set1(pattern as i64);
                    let mut acc: $V = $zero();
                    // Block offsets are computed a batch ahead into an L1-resident array, so
                    // the access loop is a few instructions per block and the core's window
                    // holds many blocks' misses at once.
                    let mut offs = [0usize; BATCH];
                    let mut i = start;
                    let end = start + count;
                    while i < end {
                        let n = ((end - i) as usize).min(BATCH);
                        for (k, o) in offs[..n].iter_mut().enumerate() {
                            *o = order.at(i + k as u64) * block;
                        }
                        for &o in &offs[..n] {
                            let p = base.wrapping_add(o);
                            let mut j = 0;
                            while j < block {
                                // SAFETY: j + LINE ≤ block: one line of the block, aligned.
                                unsafe {
                                    let q = p.add(j);
                                    match access {
                                        Access::Read => {
                                            let mut k = 0;
                                            while k < LINE {
                                                acc = $add(acc, $load(q.add(k) as *const $V));
                                                k += $VB;
                                            }
                                        }
                                        Access::Write | Access::WritePersist => {
                                            let mut k = 0;
                                            while k < LINE {
                                                $store(q.add(k) as *mut $V, v);
                                                k += $VB;
                                            }
                                        }
                                        Access::WriteNt => {
                                            let mut k = 0;
                                            while k < LINE {
                                                $stream(q.add(k) as *mut $V, v);
                                                k += $VB;
                                            }
                                        }
                                    }
                                }
                                j += LINE;
                            }
                            if access == Access::WritePersist {
                                // SAFETY: the block was just written, inside the buffer.
                                unsafe {
                                    write_back(p, block, flush);
                                    _mm_sfence();
                                }
                            }
                        }
                        i += n as u64;
                    }
                    if access == Access::WriteNt {
                        _mm_sfence();
                    }
                    let f: fn($V) -> u64 = $fold;
                    f(acc)
                }
            }
        };
    }

    visit_fn!(
        "sse2",
        sse2,
        __m128i,
        16,
        _mm_set1_epi64x,
        _mm_setzero_si128,
        _mm_load_si128,
        _mm_store_si128,
        _mm_stream_si128,
        _mm_add_epi64,
        |v| {
            let mut w = [0u64; 2];
            // SAFETY: an unaligned store into a local array of the vector's size.
            unsafe { _mm_storeu_si128(w.as_mut_ptr() as *mut __m128i, v) };
            w[0].wrapping_add(w[1])
        }
    );
    visit_fn!(
        "avx2",
        avx2,
        __m256i,
        32,
        _mm256_set1_epi64x,
        _mm256_setzero_si256,
        _mm256_load_si256,
        _mm256_store_si256,
        _mm256_stream_si256,
        _mm256_add_epi64,
        |v| {
            let mut w = [0u64; 4];
            // SAFETY: an unaligned store into a local array of the vector's size; the closure
            // only runs inside the AVX2 function.
            unsafe { _mm256_storeu_si256(w.as_mut_ptr() as *mut __m256i, v) };
            w.iter().fold(0u64, |a, &x| a.wrapping_add(x))
        }
    );
    visit_fn!(
        "avx512f",
        avx512,
        __m512i,
        64,
        _mm512_set1_epi64,
        _mm512_setzero_si512,
        _mm512_load_si512,
        _mm512_store_si512,
        _mm512_stream_si512,
        _mm512_add_epi64,
        |v| {
            let mut w = [0u64; 8];
            // SAFETY: an unaligned store into a local array of the vector's size; the closure
            // only runs inside the AVX-512 function.
            unsafe { _mm512_storeu_si512(w.as_mut_ptr() as *mut __m512i, v) };
            w.iter().fold(0u64, |a, &x| a.wrapping_add(x))
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(bytes: usize) -> Vec<u64> {
        vec![0u64; bytes / 8]
    }

    fn as_bytes(w: &mut [u64]) -> &mut [u8] {
        // Test-only view; the kernel crate keeps its own helpers free of core.
        let len = std::mem::size_of_val(w);
        // SAFETY: u64 storage viewed as bytes, same length, alignment only loosens.
        unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<u8>(), len) }
    }

    #[test]
    fn the_order_is_a_permutation_and_not_sequential() {
        for blocks in [1usize, 2, 8, 1024, 1 << 16] {
            let o = Order::new(blocks, 7);
            let mut seen = vec![false; blocks];
            for i in 0..blocks as u64 {
                let b = o.at(i);
                assert!(!seen[b], "block {b} visited twice among {blocks}");
                seen[b] = true;
            }
            // Wraps: step blocks + i is step i again.
            assert_eq!(o.at(blocks as u64 + 3), o.at(3));
            if blocks >= 1024 {
                let adjacent = (1..blocks as u64)
                    .filter(|&i| o.at(i).abs_diff(o.at(i - 1)) <= 1)
                    .count();
                assert!(
                    adjacent < blocks / 50,
                    "{adjacent} of {blocks} steps go to a neighbour"
                );
            }
        }
    }

    fn check_write(access: Access, block: usize) {
        if access.supported().is_err() {
            return;
        }
        let blocks = 256;
        let mut w = aligned(blocks * block + LINE);
        let bytes = as_bytes(&mut w);
        let off = bytes.as_ptr().align_offset(LINE);
        let buf = &mut bytes[off..off + blocks * block];
        let order = Order::new(blocks, 3);
        let count = 100;
        visit(access, buf, block, &order, 5, count, 0xa5a5_a5a5_a5a5_a5a5);
        let written: Vec<usize> = (0..blocks)
            .filter(|b| buf[b * block..(b + 1) * block].iter().all(|&x| x == 0xa5))
            .collect();
        let untouched = (0..blocks)
            .filter(|b| buf[b * block..(b + 1) * block].iter().all(|&x| x == 0))
            .count();
        assert_eq!(written.len(), count as usize, "{access:?} {block} B");
        assert_eq!(untouched, blocks - count as usize, "no partial blocks");
        let mut expected: Vec<usize> = (5..5 + count).map(|i| order.at(i)).collect();
        expected.sort_unstable();
        assert_eq!(written, expected, "exactly the order's blocks");
    }

    #[test]
    fn writes_touch_exactly_the_blocks_of_the_order() {
        for access in [Access::Write, Access::WriteNt, Access::WritePersist] {
            for block in [64, 128, 256, 512, 4096] {
                check_write(access, block);
            }
        }
    }

    #[test]
    fn reads_see_exactly_the_blocks_of_the_order() {
        let (blocks, block) = (64usize, 256usize);
        let mut w = aligned(blocks * block + LINE);
        let bytes = as_bytes(&mut w);
        let off = bytes.as_ptr().align_offset(LINE);
        let buf = &mut bytes[off..off + blocks * block];
        // Word 0 of block b holds 1 << (b % 64) so a sum names the blocks read (others zero).
        for b in 0..blocks {
            buf[b * block..b * block + 8].copy_from_slice(&(1u64 << b).to_ne_bytes());
        }
        let order = Order::new(blocks, 11);
        let sum = visit(Access::Read, buf, block, &order, 9, 20, 0);
        let expected = (9..29).fold(0u64, |s, i| s | (1u64 << order.at(i)));
        assert_eq!(sum, expected);
        assert_eq!(sum.count_ones(), 20);
    }
}
