//! A thread's arrays within its buffer: how many, how long, and how far apart.

use memsight_core::buffer::Buffer;
use memsight_kernels::bandwidth::GRANULE;

use super::spec::TestSpec;

/// Bytes between the end of one array and the start of the next, by default. Arrays whose starts
/// differ by a multiple of 4 KiB make loads falsely depend on earlier stores to the other array
/// (4K aliasing) and compete for the same cache sets; 2 KiB + 64 B puts each array at a different
/// offset within a page and a different L1 set (STREAM's OFFSET serves the same purpose).
/// `--array-gap` sets another (0: back to back, every array at the same page offset).
pub const DEFAULT_ARRAY_GAP: usize = 2048 + 64;

pub(crate) fn default_array_gap() -> usize {
    DEFAULT_ARRAY_GAP
}

/// The arrays of one thread, `len` bytes each, `len + gap` apart.
pub(crate) struct Arrays<'a> {
    pub(crate) region: Region<'a>,
    pub(crate) len: usize,
    pub(crate) gap: usize,
}

/// A thread's memory: its own buffer, or its part of one shared buffer (`--shared`).
pub(crate) enum Region<'a> {
    Own(Box<Buffer>),
    Shared(&'a mut [u8]),
}

impl Arrays<'_> {
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        match &mut self.region {
            Region::Own(b) => b.as_mut_slice(),
            Region::Shared(s) => s,
        }
    }

    /// The first `count` arrays.
    pub(crate) fn split(&mut self, count: usize) -> Vec<&mut [u8]> {
        let len = self.len;
        let gap = self.gap;
        let mut rest = self.bytes();
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let (head, tail) = rest.split_at_mut((len + gap).min(rest.len()));
            out.push(&mut head[..len]);
            rest = tail;
        }
        out
    }

    /// The first three arrays as f64 (STREAM triad).
    pub(crate) fn split_f64(&mut self) -> (&mut [f64], &mut [f64], &mut [f64]) {
        let (n, stride) = (self.len / 8, (self.len + self.gap) / 8);
        let f = memsight_core::buffer::bytes_as_f64_mut(self.bytes());
        let (a, rest) = f.split_at_mut(stride);
        let (b, c) = rest.split_at_mut(stride);
        (&mut a[..n], &mut b[..n], &mut c[..n])
    }
}

/// Bytes of one array and of one thread's region for a working set of `bytes` per thread.
pub(crate) fn layout(spec: &TestSpec, bytes: u64, gap: usize) -> (usize, usize) {
    let arrays = spec.arrays();
    let len = ((bytes as usize / arrays) / GRANULE).max(1) * GRANULE;
    (len, arrays * (len + gap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rate::Named;

    #[test]
    fn arrays_lie_the_gap_apart_and_fit_their_region() {
        let copy = Named::Copy.spec();
        for gap in [0, 64, DEFAULT_ARRAY_GAP, 4096] {
            let (len, region) = layout(&copy, 1 << 20, gap);
            assert_eq!(len % GRANULE, 0);
            assert_eq!(region, 2 * (len + gap));
            let mut memory = vec![0u8; region];
            let base = memory.as_ptr() as usize;
            let mut a = Arrays {
                region: Region::Shared(&mut memory),
                len,
                gap,
            };
            let parts = a.split(2);
            assert_eq!(parts[0].as_ptr() as usize - base, 0);
            assert_eq!(parts[1].as_ptr() as usize - base, len + gap);
            assert!(parts.iter().all(|p| p.len() == len));
        }
        // The default puts the second array at another offset within its page.
        let (len, _) = layout(&copy, 1 << 20, DEFAULT_ARRAY_GAP);
        assert_ne!((len + DEFAULT_ARRAY_GAP) % 4096, 0);
    }
}
