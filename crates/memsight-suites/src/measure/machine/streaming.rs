//! The streaming check of where memory begins ([`crate::measure::reach::stream`] holds the rule): one
//! core reads doubling sizes from the latency curve's memory working set up, against a reference
//! past every cache the OS reports, until a size reads within the tolerance of the
//! reference. Typically 0.5–1 s (the reference is faulted in once, on transparent huge pages).

use std::time::Instant;

use memsight_core::Result;
use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_kernels::bandwidth::{self as k, Isa};

use crate::measure::reach::stream::{STREAM_TOLERANCE, StreamCheck, stream_start};
use crate::measure::reach::{MemoryReach, largest_reported};

/// Timed passes per size; the best counts, since a disturbance only slows a pass.
const PASSES: usize = 3;

/// The streaming check from `r`'s memory working set up, on `r`'s CPU. Called once per
/// [`super::Machine`].
pub(crate) fn check(env: &Environment, r: &MemoryReach) -> Result<StreamCheck> {
    let (start, reference) = sizes(env, r.working_set());
    memsight_core::pin::run_team(&[r.cpu], |_, _, _| measure(env, start, reference))?.remove(0)
}

/// What the check would find, predicted without measuring (memory from the reference on: the
/// largest size it can give), and the seconds it would take: the reference faulted in and read
/// twice, then every doubling size read 4 times (the most it reads).
pub(crate) fn predicted(env: &Environment, r: &MemoryReach) -> (StreamCheck, f64) {
    use crate::measure::timing::{fill_s, read_s};
    let (start, reference) = sizes(env, r.working_set());
    let mut seconds = fill_s(reference, 1, 1) + 2.0 * read_s(reference);
    let mut size = start;
    while size < reference {
        seconds += (1 + PASSES) as f64 * read_s(size);
        size *= 2;
    }
    (stream_start(&[], (reference, f64::NAN)), seconds)
}

/// The reference and the first size tried. The reference: four times the start and twice the
/// largest reported cache (past any cache, yet not the 4 × claim that makes a hypervisor's
/// 480 MiB L3 cost 2 GiB), at least twice the start; but no more than half of what this process
/// may allocate (it is the only buffer at that moment), so that in a small cgroup the check is
/// made with what fits rather than refused, the start shrinking to half the reference.
fn sizes(env: &Environment, start: u64) -> (u64, u64) {
    let want = (2 * largest_reported(env)).max(4 * start);
    let room = env
        .memory
        .usable_bytes()
        .map_or(u64::MAX, |u| u / 10 * 9 / 2);
    let g = k::GRANULE as u64;
    let reference = want.max(2 * start).min(room).next_multiple_of(g);
    let start = start.min(reference / 2 / g * g).max(g);
    (start, reference)
}

/// Reads the reference, then doubling sizes from `start` until one settles, on this thread.
fn measure(env: &Environment, start: u64, reference: u64) -> Result<StreamCheck> {
    let req = BufferRequest {
        bytes: reference,
        kind: PageKind::Thp,
        node: None,
        dax: None,
    };
    let mut b = Buffer::allocate_preferring(req, env)?;
    b.touch();
    let buf = b.as_slice();
    let isa = Isa::widest();
    // The reference lies past every cache: no warming pass, two timed ones.
    let reference_gbs = best_rate(isa, buf, false, 2);
    let limit = reference_gbs * (1.0 + STREAM_TOLERANCE);
    let mut tried = Vec::new();
    let mut size = start;
    while size < reference {
        let gbs = best_rate(isa, &buf[..size as usize], true, PASSES);
        tried.push((size, gbs));
        if gbs <= limit {
            break;
        }
        size *= 2;
    }
    Ok(stream_start(&tried, (reference, reference_gbs)))
}

/// The best of `passes` timed read passes over `buf`, after an untimed one with `warm`, GB/s.
fn best_rate(isa: Isa, buf: &[u8], warm: bool, passes: usize) -> f64 {
    if warm {
        std::hint::black_box(k::read(isa, buf, 1));
    }
    (0..passes)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(k::read(isa, buf, 1));
            buf.len() as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e9
        })
        .fold(0.0, f64::max)
}
