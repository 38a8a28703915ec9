//! Bandwidth kernels: streaming loops over whole buffers, one per memory operation, written with
//! explicit SIMD for each vector width (scalar 64-bit, SSE2, AVX2, AVX-512 on x86_64; NEON on
//! AArch64) and selected at run time.
//!
//! | kernel | per element | program bytes per element |
//! |---|---|---|
//! | `read` | load `a[i]` (x86: pure loads, [`x86load`]; scalar, NEON: `x ^= a[i]`) | 1 × read |
//! | `write` | `a[i] = pattern` | 1 × write |
//! | `copy` | `b[i] = a[i]` | 1 read + 1 write |
//! | `rmw` | `a[i] ^= pattern` | 1 read + 1 write (same line) |
//! | `mix(r, w)` | `sum of r streams → w streams` | r reads + w writes |
//! | STREAM `copy` | `c = a` | 2 × 8 B |
//! | STREAM `scale` | `b = s·c` | 2 × 8 B |
//! | STREAM `add` | `c = a + b` | 3 × 8 B |
//! | STREAM `triad` | `a = b + s·c` | 3 × 8 B |
//!
//! Stores are regular (the line is read for ownership first, so DRAM sees a read and a write),
//! non-temporal (written around the caches, no read-for-ownership; an `sfence` ends the loop), or
//! CLZERO (AMD: a line of zeros allocated without a read; `write` only). Each loop body handles
//! four vectors, so buffers must be multiples of [`GRANULE`] bytes and 64-byte aligned.

#[cfg(target_arch = "aarch64")]
mod neon;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
pub mod x86load;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bytes every buffer length must be a multiple of (4 AVX-512 vectors).
pub const GRANULE: usize = 256;

/// Vector width of the kernels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Isa {
    Scalar,
    Sse2,
    Avx2,
    Avx512,
    Neon,
}

impl Isa {
    /// Bytes per vector register.
    pub fn vector_bytes(self) -> usize {
        match self {
            Isa::Scalar => 8,
            Isa::Sse2 | Isa::Neon => 16,
            Isa::Avx2 => 32,
            Isa::Avx512 => 64,
        }
    }

    /// 64-bit lanes per vector as the read kernel accumulates them (scalar: one).
    pub fn lanes(self) -> usize {
        self.vector_bytes() / 8
    }

    /// Name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Whether this CPU can run kernels of this width (std caches the feature detection, so
    /// this is cheap enough to check on every kernel call).
    pub fn is_available(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => std::arch::is_x86_feature_detected!("sse2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Widths this CPU can run, narrowest first.
    pub fn available() -> Vec<Isa> {
        [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512, Isa::Neon]
            .into_iter()
            .filter(|i| i.is_available())
            .collect()
    }

    /// The widest available width.
    pub fn widest() -> Isa {
        *Isa::available().last().expect("scalar is always there")
    }
}

/// How a kernel stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Store {
    /// Ordinary stores (STREAM's): the line is read for ownership first.
    Regular,
    /// Non-temporal (streaming) stores, fenced at the end.
    Nt,
    /// AMD `clzero`: zeroes whole lines without reading them (fills only, zeros only).
    #[cfg_attr(feature = "clap", value(skip))]
    Clzero,
}

impl Store {
    /// The store kind in words, as tables print it.
    pub fn name(self) -> &'static str {
        match self {
            Store::Regular => "regular",
            Store::Nt => "non-temporal",
            Store::Clzero => "clzero",
        }
    }
}

/// How a read kernel loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    /// Ordinary aligned vector loads.
    #[default]
    Regular,
    /// Ordinary loads with a `prefetchnta` for every line 2 KiB ahead: the non-temporal hint
    /// brings lines close to the core while keeping them out of the outer caches where the core
    /// supports it.
    Prefetchnta,
    /// `movntdqa` loads: a non-temporal hint that matters on write-combining memory; on
    /// ordinary write-back memory most cores treat it as a regular load.
    Movntdqa,
}

/// Whether this CPU can run `isa` read kernels with `load`, or why not (one line).
pub fn supports_load(isa: Isa, load: Load) -> Result<(), String> {
    match (load, isa) {
        (Load::Regular, _) => Ok(()),
        (_, Isa::Scalar | Isa::Neon) => Err(format!(
            "non-temporal-hint reads are x86 vector kernels; --isa {} has none (use sse2, avx2 or avx512)",
            isa.name()
        )),
        #[cfg(target_arch = "x86_64")]
        (Load::Movntdqa, Isa::Sse2) if !std::arch::is_x86_feature_detected!("sse4.1") => {
            Err("movntdqa needs SSE4.1, which this CPU lacks".into())
        }
        _ => Ok(()),
    }
}

/// True when this CPU has `clzero`.
pub fn has_clzero() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID 0x8000_0008 EBX bit 0, when the extended leaf exists.
        let max_ext = std::arch::x86_64::__cpuid(0x8000_0000).eax;
        if max_ext >= 0x8000_0008 {
            return std::arch::x86_64::__cpuid(0x8000_0008).ebx & 1 == 1;
        }
    }
    false
}

/// Whether this CPU can run `isa` kernels with `store`, or why not (one line, naming the fix).
pub fn supports(isa: Isa, store: Store) -> Result<(), String> {
    let avail = Isa::available();
    if !isa.is_available() {
        return Err(format!(
            "this CPU cannot run {} kernels; available: {}",
            isa.name(),
            avail
                .iter()
                .map(|i| i.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match store {
        Store::Nt if isa == Isa::Neon => Err(
            "non-temporal stores are not implemented for NEON kernels yet; use --store regular"
                .into(),
        ),
        Store::Nt if isa == Isa::Scalar && !cfg!(target_arch = "x86_64") => {
            Err("scalar non-temporal stores exist on x86_64 only; use --store regular".into())
        }
        Store::Clzero if !has_clzero() => Err(
            "this CPU has no clzero instruction (AMD Zen and later have it); use --store nt".into(),
        ),
        _ => Ok(()),
    }
}

/// Checks a buffer for the kernels' layout rules.
fn check(buf: &[u8]) {
    assert_eq!(
        buf.as_ptr() as usize % 64,
        0,
        "kernel buffers must be 64-byte aligned"
    );
    assert_eq!(
        buf.len() % GRANULE,
        0,
        "kernel buffers must be a multiple of {GRANULE} bytes"
    );
}

fn check_f64(buf: &[f64]) {
    assert_eq!(
        buf.as_ptr() as usize % 64,
        0,
        "kernel buffers must be 64-byte aligned"
    );
    assert_eq!(
        buf.len() % (GRANULE / 8),
        0,
        "kernel arrays must be a multiple of 32 elements"
    );
}

fn require(isa: Isa) {
    assert!(
        Isa::available().contains(&isa),
        "{} is not available on this CPU",
        isa.name()
    );
}

macro_rules! dispatch {
    ($isa:expr, $f:ident ( $($arg:expr),* )) => {{
        require($isa);
        match $isa {
            Isa::Scalar => scalar::$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `require` checked that the CPU has the feature the function is compiled for.
            Isa::Sse2 => unsafe { x86::sse2::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Isa::Avx2 => unsafe { x86::avx2::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Isa::Avx512 => unsafe { x86::avx512::$f($($arg),*) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: as above.
            Isa::Neon => unsafe { neon::$f($($arg),*) },
            #[allow(unreachable_patterns)]
            other => unreachable!("{} passed `require` but has no kernels here", other.name()),
        }
    }};
}

/// Runs a kernel `passes` times: x86 SIMD kernels loop inside (one call for all passes), the
/// others are called once per pass.
macro_rules! dispatch_passes {
    ($isa:expr, $passes:expr, $f:ident ( $($arg:expr),* ), $fold:expr) => {{
        require($isa);
        match $isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `require` checked that the CPU has the feature the function is compiled for.
            Isa::Sse2 => unsafe { x86::sse2::$f($($arg,)* $passes) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Isa::Avx2 => unsafe { x86::avx2::$f($($arg,)* $passes) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Isa::Avx512 => unsafe { x86::avx512::$f($($arg,)* $passes) },
            Isa::Scalar => (0..$passes).fold(Default::default(), |acc, _| $fold(acc, scalar::$f($($arg),*))),
            #[cfg(target_arch = "aarch64")]
            // SAFETY: as above.
            Isa::Neon => (0..$passes).fold(Default::default(), |acc, _| $fold(acc, unsafe { neon::$f($($arg),*) })),
            #[allow(unreachable_patterns)]
            other => unreachable!("{} passed `require` but has no kernels here", other.name()),
        }
    }};
}

/// Reads every byte of the buffer once per pass, `passes` times. Returns what proves it, added
/// over passes (wrapping), as [`ReadProof`] says for the ISA: for the x86 vector widths (pure
/// loads in assembly) the bytes the loop walked; for scalar and NEON (loads folded by XOR) each
/// pass's checksum: the XOR of the 64-bit words in each lane of the ISA's vector (word `i` in
/// lane `i mod lanes`, [`Isa::lanes`]), lanes added, which changes when any word is skipped or
/// read twice.
pub fn read(isa: Isa, buf: &[u8], passes: u64) -> u64 {
    check(buf);
    dispatch_passes!(isa, passes, read(buf), u64::wrapping_add)
}

/// What [`read`] returns for an ISA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadProof {
    /// The bytes the loop walked (x86 vector widths: pure loads, [`x86load`]).
    BytesWalked,
    /// The per-lane XOR checksum of the words (scalar, NEON).
    Checksum,
}

impl ReadProof {
    /// The proof `read` gives at `isa`.
    pub fn of(isa: Isa) -> ReadProof {
        match isa {
            Isa::Sse2 | Isa::Avx2 | Isa::Avx512 => ReadProof::BytesWalked,
            Isa::Scalar | Isa::Neon => ReadProof::Checksum,
        }
    }
}

/// [`read`], loading as `load` says (x86 vector widths only: [`supports_load`]).
pub fn read_with(isa: Isa, load: Load, buf: &[u8], passes: u64) -> u64 {
    match load {
        Load::Regular => read(isa, buf, passes),
        #[cfg(target_arch = "x86_64")]
        _ => {
            check(buf);
            require(isa);
            assert!(
                supports_load(isa, load).is_ok(),
                "{load:?} reads on {}",
                isa.name()
            );
            // SAFETY: `require` and `supports_load` checked the features these are compiled for.
            unsafe {
                match (isa, load) {
                    (Isa::Sse2, Load::Prefetchnta) => x86::sse2::read_nta(buf, passes),
                    (Isa::Sse2, _) => x86::sse2::read_ntl(buf, passes),
                    (Isa::Avx2, Load::Prefetchnta) => x86::avx2::read_nta(buf, passes),
                    (Isa::Avx2, _) => x86::avx2::read_ntl(buf, passes),
                    (Isa::Avx512, Load::Prefetchnta) => x86::avx512::read_nta(buf, passes),
                    (Isa::Avx512, _) => x86::avx512::read_ntl(buf, passes),
                    _ => unreachable!("supports_load refused {}", isa.name()),
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => panic!("{load:?} reads exist on x86_64 only (supports_load says so)"),
    }
}

/// Fills the buffer with the 64-bit `pattern` (native byte order), using `store`.
/// `Store::Clzero` requires `pattern == 0` and a CPU with `clzero`.
/// `passes` times over the buffer.
pub fn write(isa: Isa, store: Store, buf: &mut [u8], pattern: u64, passes: u64) {
    check(buf);
    let keep = |(), ()| ();
    match store {
        Store::Clzero => {
            assert_eq!(pattern, 0, "clzero writes zeros only");
            assert!(has_clzero(), "this CPU has no clzero");
            #[cfg(target_arch = "x86_64")]
            for _ in 0..passes {
                x86::clzero_fill(buf);
            }
        }
        Store::Regular => dispatch_passes!(isa, passes, write(buf, pattern), keep),
        Store::Nt => dispatch_passes!(isa, passes, write_nt(buf, pattern), keep),
    }
}

/// Copies `src` into `dst` (equal lengths), `passes` times.
pub fn copy(isa: Isa, store: Store, dst: &mut [u8], src: &[u8], passes: u64) {
    check(dst);
    check(src);
    assert_eq!(dst.len(), src.len());
    let keep = |(), ()| ();
    match store {
        Store::Regular => dispatch_passes!(isa, passes, copy(dst, src), keep),
        Store::Nt => dispatch_passes!(isa, passes, copy_nt(dst, src), keep),
        Store::Clzero => panic!("copy cannot use clzero"),
    }
}

/// `a[i] ^= pattern` for every 64-bit word: reads and writes every byte once, same lines.
pub fn rmw(isa: Isa, buf: &mut [u8], pattern: u64) {
    check(buf);
    dispatch!(isa, rmw(buf, pattern))
}

/// A read:write mix: every position `i` reads word `i` of each source and writes, to every
/// destination, the sum of the sources xor `pattern`. With one source and one destination this
/// is a copy that depends on the data; with no destination it is a multi-stream read. Returns the
/// wrapping sum of everything read. All slices have the same length.
pub fn mix(isa: Isa, store: Store, srcs: &[&[u8]], dsts: &mut [&mut [u8]], pattern: u64) -> u64 {
    assert!(!srcs.is_empty(), "a mix reads at least one stream");
    let len = srcs[0].len();
    for s in srcs {
        check(s);
        assert_eq!(s.len(), len);
    }
    for d in dsts.iter() {
        check(d);
        assert_eq!(d.len(), len);
    }
    match store {
        Store::Regular => dispatch!(isa, mix(srcs, dsts, pattern)),
        Store::Nt => dispatch!(isa, mix_nt(srcs, dsts, pattern)),
        Store::Clzero => panic!("a mix cannot use clzero"),
    }
}

/// The four STREAM kernels on f64 arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StreamOp {
    /// `c[i] = a[i]`
    Copy,
    /// `b[i] = s·c[i]`
    Scale,
    /// `c[i] = a[i] + b[i]`
    Add,
    /// `a[i] = b[i] + s·c[i]`
    Triad,
}

impl StreamOp {
    /// All four, in STREAM's order.
    pub const ALL: [StreamOp; 4] = [
        StreamOp::Copy,
        StreamOp::Scale,
        StreamOp::Add,
        StreamOp::Triad,
    ];

    /// Arrays touched per element: 2 for copy/scale, 3 for add/triad (STREAM's byte counting).
    pub fn arrays(self) -> usize {
        match self {
            StreamOp::Copy | StreamOp::Scale => 2,
            StreamOp::Add | StreamOp::Triad => 3,
        }
    }

    /// Name as STREAM prints it.
    pub fn name(self) -> &'static str {
        match self {
            StreamOp::Copy => "Copy",
            StreamOp::Scale => "Scale",
            StreamOp::Add => "Add",
            StreamOp::Triad => "Triad",
        }
    }
}

/// Runs one STREAM kernel over arrays `a`, `b`, `c` (equal lengths) with scalar `s`.
pub fn stream(
    isa: Isa,
    store: Store,
    op: StreamOp,
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
    s: f64,
) {
    check_f64(a);
    check_f64(b);
    check_f64(c);
    assert!(a.len() == b.len() && b.len() == c.len());
    let nt = match store {
        Store::Regular => false,
        Store::Nt => true,
        Store::Clzero => panic!("STREAM kernels cannot use clzero"),
    };
    match (op, nt) {
        (StreamOp::Copy, false) => dispatch!(isa, s_copy(c, a)),
        (StreamOp::Copy, true) => dispatch!(isa, s_copy_nt(c, a)),
        (StreamOp::Scale, false) => dispatch!(isa, s_scale(b, c, s)),
        (StreamOp::Scale, true) => dispatch!(isa, s_scale_nt(b, c, s)),
        (StreamOp::Add, false) => dispatch!(isa, s_add(c, a, b)),
        (StreamOp::Add, true) => dispatch!(isa, s_add_nt(c, a, b)),
        (StreamOp::Triad, false) => dispatch!(isa, s_triad(a, b, c, s)),
        (StreamOp::Triad, true) => dispatch!(isa, s_triad_nt(a, b, c, s)),
    }
}

/// STREAM's four kernels on arrays aligned to 8 bytes only (a STREAM OFFSET that is not a
/// multiple of 64 B): the scalar kernels, one 8-byte load or store per instruction, which need no
/// vector alignment. Regular stores.
pub fn stream_unaligned(op: StreamOp, a: &mut [f64], b: &mut [f64], c: &mut [f64], s: f64) {
    assert!(a.len() == b.len() && b.len() == c.len());
    match op {
        StreamOp::Copy => scalar::s_copy(c, a),
        StreamOp::Scale => scalar::s_scale(b, c, s),
        StreamOp::Add => scalar::s_add(c, a, b),
        StreamOp::Triad => scalar::s_triad(a, b, c, s),
    }
}

#[cfg(test)]
mod tests;
