//! AArch64 NEON kernels (128-bit). Non-temporal stores are not implemented for NEON yet: they are
//! refused by [`super::supports`].

use std::arch::aarch64::*;

/// Eight accumulators, sixteen vectors per iteration: Neoverse V2 loads three 16-byte vectors
/// per cycle and its vector xor takes two cycles, so four accumulators would cap the loop below
/// the load ports. Returns the lane-wise XOR of the words, lanes added (see
/// [`super::read`]).
///
/// # Safety
/// NEON present; buffer 64-byte aligned, a multiple of 256 bytes.
#[target_feature(enable = "neon")]
pub unsafe fn read(buf: &[u8]) -> u64 {
    let p = buf.as_ptr().cast::<u64>();
    let n = buf.len() / 8;
    let mut s = [vdupq_n_u64(0); 8];
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 words ≤ len.
        unsafe {
            for (k, acc) in s.iter_mut().enumerate() {
                let a = vld1q_u64(p.add(i + 4 * k));
                let b = vld1q_u64(p.add(i + 4 * k + 2));
                *acc = veorq_u64(*acc, veorq_u64(a, b));
            }
        }
        i += 32;
    }
    // Unreachable for lengths that are multiples of 256 bytes (32 words), kept for clarity.
    while i < n {
        // SAFETY: i + 2 ≤ n since n is even.
        s[0] = veorq_u64(s[0], unsafe { vld1q_u64(p.add(i)) });
        i += 2;
    }
    let x = veorq_u64(
        veorq_u64(veorq_u64(s[0], s[1]), veorq_u64(s[2], s[3])),
        veorq_u64(veorq_u64(s[4], s[5]), veorq_u64(s[6], s[7])),
    );
    vaddvq_u64(x)
}

/// Four vectors (one `st1 {v0.2d-v3.2d}`, 64 B) per iteration, so the loop's own instructions
/// do not share the store port's cycles one for one.
///
/// # Safety
/// As for `read`.
#[target_feature(enable = "neon")]
pub unsafe fn write(buf: &mut [u8], pattern: u64) {
    let v = vdupq_n_u64(pattern);
    let v4 = uint64x2x4_t(v, v, v, v);
    let p = buf.as_mut_ptr().cast::<u64>();
    let mut i = 0;
    while i < buf.len() / 8 {
        // SAFETY: i + 8 words ≤ len (a multiple of 32 words).
        unsafe { vst1q_u64_x4(p.add(i), v4) };
        i += 8;
    }
}

/// Four vectors per iteration (`ld1`/`st1` of four registers).
///
/// # Safety
/// As for `read`, both buffers.
#[target_feature(enable = "neon")]
pub unsafe fn copy(dst: &mut [u8], src: &[u8]) {
    let (d, s) = (dst.as_mut_ptr().cast::<u64>(), src.as_ptr().cast::<u64>());
    let mut i = 0;
    while i < src.len() / 8 {
        // SAFETY: i + 8 words ≤ len (a multiple of 32 words).
        unsafe { vst1q_u64_x4(d.add(i), vld1q_u64_x4(s.add(i))) };
        i += 8;
    }
}

/// # Safety
/// As for `read`.
#[target_feature(enable = "neon")]
pub unsafe fn rmw(buf: &mut [u8], pattern: u64) {
    let x = vdupq_n_u64(pattern);
    let p = buf.as_mut_ptr().cast::<u64>();
    let mut i = 0;
    while i < buf.len() / 8 {
        // SAFETY: as for `read`.
        unsafe { vst1q_u64(p.add(i), veorq_u64(vld1q_u64(p.add(i)), x)) };
        i += 2;
    }
}

/// # Safety
/// As for `read`, every buffer.
#[target_feature(enable = "neon")]
pub unsafe fn mix(srcs: &[&[u8]], dsts: &mut [&mut [u8]], pattern: u64) -> u64 {
    let x = vdupq_n_u64(pattern);
    let mut total = vdupq_n_u64(0);
    let mut i = 0;
    while i < srcs[0].len() / 8 {
        let mut sum = vdupq_n_u64(0);
        for s in srcs {
            // SAFETY: as for `read`.
            sum = vaddq_u64(sum, unsafe { vld1q_u64(s.as_ptr().cast::<u64>().add(i)) });
        }
        for d in dsts.iter_mut() {
            // SAFETY: as for `read`.
            unsafe { vst1q_u64(d.as_mut_ptr().cast::<u64>().add(i), veorq_u64(sum, x)) };
        }
        total = vaddq_u64(total, sum);
        i += 2;
    }
    vaddvq_u64(total)
}

macro_rules! stream_neon {
    ($name:ident, |$o:ident $(, $x:ident)*| ($s:ident) $body:expr) => {
        /// # Safety
        /// As for `read`, every array.
        #[target_feature(enable = "neon")]
        #[allow(unused_variables)]
        pub unsafe fn $name($o: &mut [f64], $($x: &[f64],)* $s: f64) {
            let $s = vdupq_n_f64($s);
            let po = $o.as_mut_ptr();
            $(let $x = $x.as_ptr();)*
            let mut i = 0;
            while i < $o.len() {
                // SAFETY: i + 2 ≤ len.
                unsafe {
                    $(let $x = vld1q_f64($x.add(i));)*
                    vst1q_f64(po.add(i), $body);
                }
                i += 2;
            }
        }
    };
}
stream_neon!(s_copy_s, |c, a| (s) a);
stream_neon!(s_scale, |b, c| (s) vmulq_f64(s, c));
stream_neon!(s_add_s, |c, a, b| (s) vaddq_f64(a, b));
stream_neon!(s_triad, |a, b, c| (s) vfmaq_f64(b, s, c));

/// # Safety
/// As for `read`.
#[target_feature(enable = "neon")]
pub unsafe fn s_copy(c: &mut [f64], a: &[f64]) {
    // SAFETY: forwarded.
    unsafe { s_copy_s(c, a, 0.0) }
}
/// # Safety
/// As for `read`.
#[target_feature(enable = "neon")]
pub unsafe fn s_add(c: &mut [f64], a: &[f64], b: &[f64]) {
    // SAFETY: forwarded.
    unsafe { s_add_s(c, a, b, 0.0) }
}

macro_rules! no_nt {
    ($($name:ident($($a:ident: $t:ty),*) $(-> $r:ty)?;)*) => {$(
        /// Not implemented for NEON; refused by `supports` before it can be called.
        ///
        /// # Safety
        /// Never called.
        pub unsafe fn $name($(_: $t),*) $(-> $r)? {
            unreachable!("non-temporal NEON stores are refused by supports()")
        }
    )*};
}
no_nt! {
    write_nt(b: &mut [u8], p: u64);
    copy_nt(d: &mut [u8], s: &[u8]);
    mix_nt(s: &[&[u8]], d: &mut [&mut [u8]], p: u64) -> u64;
    s_copy_nt(c: &mut [f64], a: &[f64]);
    s_scale_nt(b: &mut [f64], c: &[f64], s: f64);
    s_add_nt(c: &mut [f64], a: &[f64], b: &[f64]);
    s_triad_nt(a: &mut [f64], b: &[f64], c: &[f64], s: f64);
}
