//! The x86_64 read kernels: pure loads in assembly, as likwid-bench's `load_*` and Intel MLC's
//! read kernels run them.
//!
//! A read that folds every loaded vector into an accumulator (an XOR per load, or one
//! `vpternlogq` per two) spends vector-ALU µops the loads do not need. Golden Cove-class cores
//! (Sapphire Rapids and later) run 512-bit integer ops on two ports and issue six µops per cycle,
//! so folding held a 16 KiB AVX-512 read to ~82% of the two 64-byte loads per cycle the load
//! ports carry, and an AVX2 one to 0.7 of likwid-bench's `load_avx`; loads alone reach ~92%.
//! Loads into registers nothing reads would be deleted by the compiler, so the loop is
//! assembly, which it never removes. What each kernel loads is proven instead of checksummed:
//! it returns the bytes its pointer walked (tested to equal the buffer times the passes), and
//! a test reads the loop's load offsets back from the compiled code.
//!
//! Each iteration loads sixteen vectors (256 B with SSE2, 512 B with AVX2, 1 KiB with
//! AVX-512: fewer made the loop's own µops cost bandwidth), and a tail loop loads the rest 256 B
//! ([`super::GRANULE`]) at a time.

/// One load per (offset, register) pair, Intel syntax, from the pointer `{p}`.
macro_rules! loads {
    ($ld:literal; $($off:literal $reg:literal),* $(,)?) => {
        concat!($($ld, " ", $reg, ", [{p} + ", $off, "]\n"),*)
    };
}

/// A read kernel for one ISA: `$main` loads `$big` bytes, `$tail` loads 256.
macro_rules! read_kernel {
    ($modname:ident, $feature:literal, $big:literal, $main:expr, $tail:expr, $($reg:tt),*) => {
        pub mod $modname {
            /// Loads every vector of `buf` once per pass, `passes` times; returns the bytes its
            /// loop walked over all passes (`buf.len() × passes`).
            ///
            /// # Safety
            /// The CPU has the feature; the buffer is 64-byte aligned, a multiple of 256 bytes.
            // Never inlined: SSE2 is baseline on x86_64, so its kernel would otherwise vanish
            // into the dispatcher, and the offsets test reads each kernel by its name.
            #[inline(never)]
            #[target_feature(enable = $feature)]
            pub unsafe fn read(buf: &[u8], passes: u64) -> u64 {
                let n = buf.len();
                let mut walked = 0u64;
                for _ in 0..passes {
                    let start = std::hint::black_box(buf.as_ptr());
                    let big_end = start.wrapping_add(n - n % $big);
                    let end = start.wrapping_add(n);
                    let mut p = start;
                    // SAFETY: the main loop loads [p, p + $big) only while p < big_end, and
                    // big_end - start is a multiple of $big; the tail loads [p, p + 256) while
                    // p < end, and n is a multiple of 256: every load lies in the buffer, at
                    // the alignment of the buffer (64 B). Nothing is stored; the clobbered
                    // vector registers are declared.
                    unsafe {
                        std::arch::asm!(
                            "cmp {p}, {big}",
                            "jae 3f",
                            // Loop heads on a 64-byte boundary: fetch and the µop cache see
                            // the same lines every iteration, wherever the function lands.
                            ".p2align 6",
                            "2:",
                            $main,
                            concat!("add {p}, ", $big),
                            "cmp {p}, {big}",
                            "jb 2b",
                            "3:",
                            "cmp {p}, {end}",
                            "jae 5f",
                            ".p2align 6",
                            "4:",
                            $tail,
                            "add {p}, 256",
                            "cmp {p}, {end}",
                            "jb 4b",
                            "5:",
                            p = inout(reg) p,
                            big = in(reg) big_end,
                            end = in(reg) end,
                            $(out($reg) _,)*
                            options(nostack, readonly),
                        );
                    }
                    walked += p as u64 - start as u64;
                }
                walked
            }
        }
    };
}

/// SSE2's sixteen vectors are 256 B: its main and tail loops load the same step.
macro_rules! sse2_step {
    () => {
        loads!("movdqa";
            0 "xmm0", 16 "xmm1", 32 "xmm2", 48 "xmm3", 64 "xmm0", 80 "xmm1", 96 "xmm2", 112 "xmm3",
            128 "xmm0", 144 "xmm1", 160 "xmm2", 176 "xmm3", 192 "xmm0", 208 "xmm1", 224 "xmm2", 240 "xmm3")
    };
}

read_kernel!(
    sse2,
    "sse2",
    256,
    sse2_step!(),
    sse2_step!(),
    "xmm0",
    "xmm1",
    "xmm2",
    "xmm3"
);

read_kernel!(
    avx2,
    "avx2",
    512,
    loads!("vmovdqa";
        0 "ymm0", 32 "ymm1", 64 "ymm2", 96 "ymm3", 128 "ymm0", 160 "ymm1", 192 "ymm2", 224 "ymm3",
        256 "ymm0", 288 "ymm1", 320 "ymm2", 352 "ymm3", 384 "ymm0", 416 "ymm1", 448 "ymm2", 480 "ymm3"),
    loads!("vmovdqa";
        0 "ymm0", 32 "ymm1", 64 "ymm2", 96 "ymm3", 128 "ymm0", 160 "ymm1", 192 "ymm2", 224 "ymm3"),
    "ymm0",
    "ymm1",
    "ymm2",
    "ymm3"
);

read_kernel!(
    avx512,
    "avx512f",
    1024,
    loads!("vmovdqa64";
        0 "zmm0", 64 "zmm1", 128 "zmm2", 192 "zmm3", 256 "zmm0", 320 "zmm1", 384 "zmm2", 448 "zmm3",
        512 "zmm0", 576 "zmm1", 640 "zmm2", 704 "zmm3", 768 "zmm0", 832 "zmm1", 896 "zmm2", 960 "zmm3"),
    loads!("vmovdqa64"; 0 "zmm0", 64 "zmm1", 128 "zmm2", 192 "zmm3"),
    "zmm0",
    "zmm1",
    "zmm2",
    "zmm3"
);
