//! Every kernel, at every width this CPU has and with every store kind it supports, must touch
//! exactly the bytes it claims: fills leave every byte equal to the pattern, reads return the
//! sum of every word, copies reproduce every byte, and the STREAM kernels compute every element.

use super::*;

/// A 64-byte aligned window of `len` bytes inside an owned vector.
fn aligned(len: usize, fill: u8) -> Vec<u8> {
    vec![fill; len + 64]
}

fn window(v: &mut [u8], len: usize) -> &mut [u8] {
    let off = v.as_ptr().align_offset(64);
    &mut v[off..off + len]
}

fn window_f64(v: &mut [f64], len: usize) -> &mut [f64] {
    let off = v.as_ptr().align_offset(64);
    &mut v[off..off + len]
}

/// 37 granules: not a power of two, so no loop can get away with a wrong trip count.
const LEN: usize = 37 * GRANULE;

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn fill_words(b: &mut [u8], f: impl Fn(usize) -> u64) {
    for (i, c) in b.chunks_exact_mut(8).enumerate() {
        c.copy_from_slice(&f(i).to_ne_bytes());
    }
}

fn stores(isa: Isa) -> Vec<Store> {
    [Store::Regular, Store::Nt]
        .into_iter()
        .filter(|&s| supports(isa, s).is_ok())
        .collect()
}

#[test]
fn fills_write_every_byte() {
    for isa in Isa::available() {
        for store in stores(isa) {
            let mut v = aligned(LEN, 0x11);
            let b = window(&mut v, LEN);
            write(isa, store, b, 0xefef_efef_efef_efef, 2);
            assert!(b.iter().all(|&x| x == 0xef), "{isa:?} {store:?}");
        }
    }
    if has_clzero() {
        let mut v = aligned(LEN, 0xff);
        let b = window(&mut v, LEN);
        write(Isa::Scalar, Store::Clzero, b, 0, 1);
        assert!(b.iter().all(|&x| x == 0));
    }
}

#[test]
fn fills_stay_inside_their_buffer() {
    for isa in Isa::available() {
        let mut v = vec![0x55u8; LEN + 256];
        let off = v.as_ptr().align_offset(64);
        let start = off + 64;
        write(isa, Store::Regular, &mut v[start..start + LEN - 256], 0, 3);
        assert!(
            v[..start].iter().all(|&x| x == 0x55),
            "{isa:?} wrote before"
        );
        assert!(
            v[start + LEN - 256..].iter().all(|&x| x == 0x55),
            "{isa:?} wrote after"
        );
    }
}

/// The read kernels' checksum: per lane, the XOR of the words in it; lanes added.
fn read_checksum(b: &[u8], lanes: usize) -> u64 {
    let mut x = vec![0u64; lanes];
    for (i, w) in words(b).iter().enumerate() {
        x[i % lanes] ^= w;
    }
    x.iter().fold(0u64, |a, &w| a.wrapping_add(w))
}

/// What `read` must return for one pass over `b` at `isa` ([`ReadProof`]).
fn read_proof(isa: Isa, b: &[u8]) -> u64 {
    match ReadProof::of(isa) {
        ReadProof::BytesWalked => b.len() as u64,
        ReadProof::Checksum => read_checksum(b, isa.lanes()),
    }
}

#[test]
fn reads_see_every_word_once_per_pass() {
    let mut v = aligned(LEN, 0);
    let b = window(&mut v, LEN);
    fill_words(b, |i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    for isa in Isa::available() {
        let want = read_proof(isa, b);
        assert_eq!(read(isa, b, 1), want, "{isa:?}");
        // Several passes inside one call read every word once per pass (even counts do not
        // cancel: each pass's XOR is added).
        assert_eq!(read(isa, b, 3), want.wrapping_mul(3), "{isa:?}");
        assert_eq!(read(isa, b, 2), want.wrapping_mul(2), "{isa:?}");
    }
    // A word read twice or skipped changes the checksum of the folding kernels.
    for isa in Isa::available() {
        if ReadProof::of(isa) == ReadProof::Checksum {
            let before = read(isa, b, 1);
            b[8 * 37] ^= 1;
            assert_ne!(read(isa, b, 1), before, "{isa:?}");
        }
    }
    // Lengths that are not multiples of the main loop's 16 vectors exercise the tail.
    for len in [LEN - 256, 256, 768, 1024 + 256] {
        let short = &b[..len];
        for isa in Isa::available() {
            let want = read_proof(isa, short);
            assert_eq!(read(isa, short, 2), want.wrapping_mul(2), "{isa:?} {len} B");
        }
    }
}

/// The pure-load read kernels load every vector of their step exactly once: the offsets of the
/// loads in the compiled main loop are 0, VB, …, 15·VB, and in the tail loop those of 256 B.
/// With the bytes walked that `reads_see_every_word_once_per_pass` checks, that is every byte.
#[cfg(target_arch = "x86_64")]
#[test]
fn pure_reads_load_every_vector_of_their_step() {
    let Some(text) = disassembly() else {
        eprintln!("skipped: objdump not found");
        return;
    };
    for (isa, mnemonic, vb) in [
        ("sse2", "movdqa ", 16u64),
        ("avx2", "vmovdqa ", 32),
        ("avx512", "vmovdqa64 ", 64),
    ] {
        let body = body_of(
            &text,
            &format!("memsight_kernels::bandwidth::x86load::{isa}::read"),
        );
        assert!(!body.is_empty(), "{isa}::read not found");
        let offsets: Vec<u64> = body
            .lines()
            .filter_map(|l| l.split_once(mnemonic).map(|(_, ops)| ops))
            .map(|ops| {
                let disp = ops.split('(').next().unwrap_or("");
                u64::from_str_radix(disp.trim_start_matches("0x"), 16).unwrap_or(0)
            })
            .collect();
        let main: Vec<u64> = (0..16).map(|k| k * vb).collect();
        let tail: Vec<u64> = (0..256 / vb).map(|k| k * vb).collect();
        let want: Vec<u64> = main.into_iter().chain(tail).collect();
        assert_eq!(offsets, want, "{isa}::read loads");
    }
}

/// The non-temporal-hint reads load exactly what the plain read loads, pass for pass, and are
/// refused where they do not exist; the loops really contain the hint instructions.
#[test]
fn hinted_reads_see_every_word_once_per_pass() {
    let mut v = aligned(LEN, 0);
    let b = window(&mut v, LEN);
    fill_words(b, |i| (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    for isa in Isa::available() {
        for load in [Load::Prefetchnta, Load::Movntdqa] {
            if let Err(why) = supports_load(isa, load) {
                assert!(matches!(isa, Isa::Scalar | Isa::Neon) || why.contains("SSE4.1"));
                continue;
            }
            let want = read_checksum(b, isa.lanes());
            assert_eq!(
                read_with(isa, load, b, 2),
                want.wrapping_mul(2),
                "{isa:?} {load:?}"
            );
            let short = &b[..768];
            let want = read_checksum(short, isa.lanes());
            assert_eq!(
                read_with(isa, load, short, 1),
                want,
                "{isa:?} {load:?} tail"
            );
        }
    }
}

/// This test binary disassembled (demangled), or `None` without objdump.
#[cfg(target_arch = "x86_64")]
fn disassembly() -> Option<String> {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-C"])
        .arg(&exe)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The disassembled body of the function named `name` (demangled), empty when absent.
#[cfg(target_arch = "x86_64")]
fn body_of(text: &str, name: &str) -> String {
    text.split(&format!("<{name}>:"))
        .nth(1)
        .map(|rest| rest.split("\n\n").next().unwrap_or("").to_string())
        .unwrap_or_default()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn hinted_reads_use_their_instructions() {
    let Some(text) = disassembly() else {
        eprintln!("skipped: objdump not found");
        return;
    };
    let body = |name: &str| body_of(&text, &format!("memsight_kernels::bandwidth::x86::{name}"));
    for isa in ["sse2", "avx2", "avx512"] {
        let nta = body(&format!("{isa}::read_nta"));
        assert!(
            nta.contains("prefetchnta"),
            "{isa}::read_nta has no prefetchnta"
        );
        let ntl = body(&format!("{isa}::read_ntl"));
        assert!(ntl.contains("movntdqa"), "{isa}::read_ntl has no movntdqa");
    }
}

#[test]
fn copies_reproduce_every_byte() {
    for isa in Isa::available() {
        for store in stores(isa) {
            let (mut vs, mut vd) = (aligned(LEN, 0), aligned(LEN, 0));
            let s = window(&mut vs, LEN);
            fill_words(s, |i| i as u64 ^ 0xdead_beef);
            let d = window(&mut vd, LEN);
            copy(isa, store, d, s, 2);
            assert_eq!(d, s, "{isa:?} {store:?}");
        }
    }
}

#[test]
fn rmw_transforms_every_word() {
    for isa in Isa::available() {
        let mut v = aligned(LEN, 0);
        let b = window(&mut v, LEN);
        fill_words(b, |i| i as u64);
        rmw(isa, b, 0xff00);
        assert!(
            words(b)
                .iter()
                .enumerate()
                .all(|(i, &w)| w == i as u64 ^ 0xff00),
            "{isa:?}"
        );
    }
}

#[test]
fn mixes_read_every_source_and_write_every_destination() {
    for isa in Isa::available() {
        for store in stores(isa) {
            for (r, w) in [(1, 0), (1, 1), (2, 1), (3, 1), (1, 2)] {
                let mut srcv: Vec<Vec<u8>> = (0..r).map(|_| aligned(LEN, 0)).collect();
                let mut dstv: Vec<Vec<u8>> = (0..w).map(|_| aligned(LEN, 0x77)).collect();
                let mut srcs: Vec<&mut [u8]> = srcv.iter_mut().map(|v| window(v, LEN)).collect();
                for (k, s) in srcs.iter_mut().enumerate() {
                    fill_words(s, |i| (i * (k + 1)) as u64);
                }
                let srcs: Vec<&[u8]> = srcs.into_iter().map(|s| &*s).collect();
                let mut dsts: Vec<&mut [u8]> = dstv.iter_mut().map(|v| window(v, LEN)).collect();
                let total = mix(isa, store, &srcs, &mut dsts, 0x5a5a);
                let sums: Vec<u64> = (0..LEN / 8)
                    .map(|i| {
                        srcs.iter()
                            .map(|s| words(s)[i])
                            .fold(0u64, u64::wrapping_add)
                    })
                    .collect();
                assert_eq!(
                    total,
                    sums.iter().fold(0u64, |a, &x| a.wrapping_add(x)),
                    "{isa:?} {r}:{w}"
                );
                for d in &dsts {
                    assert!(
                        words(d).iter().zip(&sums).all(|(&x, &s)| x == s ^ 0x5a5a),
                        "{isa:?} {store:?} {r}:{w}"
                    );
                }
            }
        }
    }
}

#[test]
fn stream_kernels_compute_every_element() {
    let n = LEN / 8;
    let s = 3.0;
    for isa in Isa::available() {
        for store in stores(isa) {
            let (mut va, mut vb, mut vc) = (vec![0.0; n + 8], vec![0.0; n + 8], vec![0.0; n + 8]);
            let a = window_f64(&mut va, n);
            let b = window_f64(&mut vb, n);
            let c = window_f64(&mut vc, n);
            for i in 0..n {
                a[i] = 1.0 + i as f64;
                b[i] = 2.0 - i as f64 * 0.5;
                c[i] = 0.25 * i as f64;
            }
            let (a0, b0, c0) = (a.to_vec(), b.to_vec(), c.to_vec());
            stream(isa, store, StreamOp::Copy, a, b, c, s);
            assert_eq!(c, &a0[..], "{isa:?} {store:?} copy");
            stream(isa, store, StreamOp::Scale, a, b, c, s);
            assert!(
                b.iter().zip(&a0).all(|(x, y)| *x == s * y),
                "{isa:?} {store:?} scale"
            );
            stream(isa, store, StreamOp::Add, a, b, c, s);
            assert!(
                (0..n).all(|i| c[i] == a0[i] + s * a0[i]),
                "{isa:?} {store:?} add"
            );
            stream(isa, store, StreamOp::Triad, a, b, c, s);
            for i in 0..n {
                let want = s * a0[i] + s * (a0[i] + s * a0[i]);
                assert!(
                    (a[i] - want).abs() <= 1e-14 * want.abs().max(1.0),
                    "{isa:?} {store:?} triad {i}"
                );
            }
            let _ = (b0, c0);
        }
    }
}

#[test]
fn widest_is_available_and_support_checks_explain() {
    let w = Isa::widest();
    assert!(Isa::available().contains(&w));
    #[cfg(target_arch = "x86_64")]
    assert!(
        supports(Isa::Neon, Store::Regular)
            .unwrap_err()
            .contains("cannot run neon")
    );
    if !has_clzero() {
        assert!(supports(w, Store::Clzero).unwrap_err().contains("clzero"));
    }
}

/// No kernel may hand its work to libc: LLVM recognises a plain copy loop as a memcpy idiom (and
/// a fill as memset), and glibc's versions switch to non-temporal stores for large buffers, so a
/// "regular store" figure would silently measure NT stores. Reads this test binary's own code
/// (built with the kernels' optimisation level) with objdump; skipped where objdump is missing.
/// x86_64 only: the host's objdump cannot read the aarch64 build run under qemu.
/// A measuring loop or its dispatcher, by its demangled name (not the support checks, which
/// format messages and may call libc).
#[cfg(target_arch = "x86_64")]
fn is_kernel(function: &str) -> bool {
    let Some(rest) = function.strip_prefix("memsight_kernels::bandwidth::") else {
        return false;
    };
    let name = rest.trim_end_matches(">:");
    ["x86::", "x86load::", "scalar::", "neon::"]
        .iter()
        .any(|m| name.starts_with(m))
        || [
            "read",
            "write",
            "copy",
            "rmw",
            "mix",
            "stream",
            "stream_unaligned",
        ]
        .contains(&name)
}

#[cfg(target_arch = "x86_64")]
#[test]
fn no_kernel_calls_libc_mem_functions() {
    let Some(text) = disassembly() else {
        eprintln!("skipped: objdump not found");
        return;
    };
    let mut function = "";
    let mut offenders = std::collections::BTreeSet::new();
    let mut kernels = 0;
    for line in text.lines() {
        if line.ends_with(">:") {
            function = line.split_once('<').map_or("", |(_, f)| f);
            if is_kernel(function) {
                kernels += 1;
            }
            continue;
        }
        let kernel = is_kernel(function);
        if kernel
            && ["<memcpy", "<memset", "<memmove"]
                .iter()
                .any(|m| line.contains(m))
        {
            offenders.insert(function.to_string());
        }
    }
    assert!(
        kernels > 10,
        "no kernel functions found in {}",
        std::env::current_exe().unwrap().display()
    );
    assert!(offenders.is_empty(), "kernels calling libc: {offenders:?}");
}
