//! Evicting a buffer from the CPU caches after building a chain in it, so that what the cache holds
//! at the start of a measurement does not depend on the order in which the chain was written.

/// Flushes `buf` from every cache level: `clflush` per line on x86_64, otherwise by reading and
/// writing an eviction buffer of `evict_bytes` (twice the last-level cache is enough).
pub fn flush(buf: &[u8], evict_bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = evict_bytes;
        let base = buf.as_ptr();
        for off in (0..buf.len()).step_by(64) {
            // SAFETY: base+off lies inside `buf`; clflush only evicts the line, it writes nothing
            // visible. SSE2 (which has clflush) is part of the x86_64 baseline.
            unsafe { std::arch::x86_64::_mm_clflush(base.add(off)) };
        }
        // SAFETY: a fence has no memory-safety preconditions.
        unsafe { std::arch::x86_64::_mm_mfence() };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = buf;
        let mut evict = vec![1u8; evict_bytes.max(1)];
        let mut sum = 0u64;
        for i in (0..evict.len()).step_by(64) {
            evict[i] = evict[i].wrapping_add(1);
            sum = sum.wrapping_add(evict[i] as u64);
        }
        std::hint::black_box(sum);
    }
}
