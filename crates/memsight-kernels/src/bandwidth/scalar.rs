//! 64-bit scalar kernels. Volatile accesses keep the compiler from vectorising them, so "scalar"
//! really means one 8-byte load or store per instruction. Non-temporal scalar stores use `movnti`
//! on x86_64; elsewhere they are unavailable (see [`super::supports`]).

use super::GRANULE;

const W: usize = 8;

fn words(buf: &[u8]) -> usize {
    debug_assert_eq!(buf.len() % GRANULE, 0);
    buf.len() / W
}

pub fn read(buf: &[u8]) -> u64 {
    let p = buf.as_ptr().cast::<u64>();
    let (mut s0, mut s1, mut s2, mut s3) = (0u64, 0u64, 0u64, 0u64);
    let mut i = 0;
    let n = words(buf);
    while i < n {
        // SAFETY: i + 3 < n because n is a multiple of 32 words; p is 8-byte aligned.
        unsafe {
            s0 ^= p.add(i).read_volatile();
            s1 ^= p.add(i + 1).read_volatile();
            s2 ^= p.add(i + 2).read_volatile();
            s3 ^= p.add(i + 3).read_volatile();
        }
        i += 4;
    }
    s0 ^ s1 ^ s2 ^ s3
}

pub fn write(buf: &mut [u8], pattern: u64) {
    let p = buf.as_mut_ptr().cast::<u64>();
    for i in 0..words(buf) {
        // SAFETY: i < number of words in the buffer; p is 8-byte aligned.
        unsafe { p.add(i).write_volatile(pattern) };
    }
}

pub fn copy(dst: &mut [u8], src: &[u8]) {
    let (d, s) = (dst.as_mut_ptr().cast::<u64>(), src.as_ptr().cast::<u64>());
    for i in 0..words(src) {
        // SAFETY: both slices hold this many words (equal lengths checked by the caller).
        unsafe { d.add(i).write_volatile(s.add(i).read_volatile()) };
    }
}

pub fn rmw(buf: &mut [u8], pattern: u64) {
    let p = buf.as_mut_ptr().cast::<u64>();
    for i in 0..words(buf) {
        // SAFETY: i < number of words in the buffer.
        unsafe { p.add(i).write_volatile(p.add(i).read_volatile() ^ pattern) };
    }
}

pub fn mix(srcs: &[&[u8]], dsts: &mut [&mut [u8]], pattern: u64) -> u64 {
    let mut total = 0u64;
    for i in 0..words(srcs[0]) {
        let mut sum = 0u64;
        for s in srcs {
            // SAFETY: every source has the same number of words (checked by the caller).
            sum = sum.wrapping_add(unsafe { s.as_ptr().cast::<u64>().add(i).read_volatile() });
        }
        for d in dsts.iter_mut() {
            // SAFETY: every destination has the same number of words.
            unsafe {
                d.as_mut_ptr()
                    .cast::<u64>()
                    .add(i)
                    .write_volatile(sum ^ pattern)
            };
        }
        total = total.wrapping_add(sum);
    }
    total
}

#[cfg(target_arch = "x86_64")]
mod nt {
    use std::arch::x86_64::{_mm_sfence, _mm_stream_si64};

    pub fn store(p: *mut u64, v: u64) {
        // SAFETY: callers pass an 8-byte aligned pointer inside their buffer; movnti is SSE2,
        // part of the x86_64 baseline.
        unsafe { _mm_stream_si64(p.cast::<i64>(), v as i64) }
    }

    pub fn fence() {
        // SAFETY: sfence has no preconditions.
        unsafe { _mm_sfence() }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod nt {
    pub fn store(_p: *mut u64, _v: u64) {
        unreachable!("scalar non-temporal stores exist on x86_64 only (checked by supports)")
    }
    pub fn fence() {}
}

pub fn write_nt(buf: &mut [u8], pattern: u64) {
    let p = buf.as_mut_ptr().cast::<u64>();
    for i in 0..words(buf) {
        // SAFETY: i < number of words in the buffer.
        nt::store(unsafe { p.add(i) }, pattern);
    }
    nt::fence();
}

pub fn copy_nt(dst: &mut [u8], src: &[u8]) {
    let (d, s) = (dst.as_mut_ptr().cast::<u64>(), src.as_ptr().cast::<u64>());
    for i in 0..words(src) {
        // SAFETY: both slices hold this many words.
        unsafe { nt::store(d.add(i), s.add(i).read_volatile()) };
    }
    nt::fence();
}

pub fn mix_nt(srcs: &[&[u8]], dsts: &mut [&mut [u8]], pattern: u64) -> u64 {
    let mut total = 0u64;
    for i in 0..words(srcs[0]) {
        let mut sum = 0u64;
        for s in srcs {
            // SAFETY: every source has the same number of words.
            sum = sum.wrapping_add(unsafe { s.as_ptr().cast::<u64>().add(i).read_volatile() });
        }
        for d in dsts.iter_mut() {
            // SAFETY: every destination has the same number of words.
            nt::store(
                unsafe { d.as_mut_ptr().cast::<u64>().add(i) },
                sum ^ pattern,
            );
        }
        total = total.wrapping_add(sum);
    }
    nt::fence();
    total
}

macro_rules! stream_scalar {
    ($name:ident, $nt:expr, |$i:ident, $out:ident, $($x:ident),*| ($s:ident) $body:expr) => {
        pub fn $name($out: &mut [f64], $($x: &[f64],)* $s: f64) {
            let _ = $s;
            let o = $out.as_mut_ptr();
            for $i in 0..$out.len() {
                // SAFETY: all arrays have the same length (checked by the caller).
                let v: f64 = unsafe { $body };
                // SAFETY: as above.
                unsafe {
                    if $nt {
                        nt::store(o.add($i).cast::<u64>(), v.to_bits());
                    } else {
                        o.add($i).write_volatile(v);
                    }
                }
            }
            if $nt {
                nt::fence();
            }
        }
    };
}

/// Element `i` of `x`, read volatile so the loop stays scalar.
///
/// # Safety
/// `i < x.len()`.
unsafe fn at(x: &[f64], i: usize) -> f64 {
    debug_assert!(i < x.len());
    // SAFETY: guaranteed by the caller.
    unsafe { x.as_ptr().add(i).read_volatile() }
}

stream_scalar!(s_copy_impl, false, |i, c, a| (s) at(a, i));
stream_scalar!(s_copy_nt_impl, true, |i, c, a| (s) at(a, i));
stream_scalar!(s_scale_impl, false, |i, b, c| (s) s * at(c, i));
stream_scalar!(s_scale_nt_impl, true, |i, b, c| (s) s * at(c, i));
stream_scalar!(s_add_impl, false, |i, c, a, b| (s) at(a, i) + at(b, i));
stream_scalar!(s_add_nt_impl, true, |i, c, a, b| (s) at(a, i) + at(b, i));
stream_scalar!(s_triad_impl, false, |i, a, b, c| (s) at(b, i) + s * at(c, i));
stream_scalar!(s_triad_nt_impl, true, |i, a, b, c| (s) at(b, i) + s * at(c, i));

pub fn s_copy(c: &mut [f64], a: &[f64]) {
    s_copy_impl(c, a, 0.0)
}
pub fn s_copy_nt(c: &mut [f64], a: &[f64]) {
    s_copy_nt_impl(c, a, 0.0)
}
pub fn s_scale(b: &mut [f64], c: &[f64], s: f64) {
    s_scale_impl(b, c, s)
}
pub fn s_scale_nt(b: &mut [f64], c: &[f64], s: f64) {
    s_scale_nt_impl(b, c, s)
}
pub fn s_add(c: &mut [f64], a: &[f64], b: &[f64]) {
    s_add_impl(c, a, b, 0.0)
}
pub fn s_add_nt(c: &mut [f64], a: &[f64], b: &[f64]) {
    s_add_nt_impl(c, a, b, 0.0)
}
pub fn s_triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    s_triad_impl(a, b, c, s)
}
pub fn s_triad_nt(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    s_triad_nt_impl(a, b, c, s)
}
