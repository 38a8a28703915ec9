//! The streaming check of where memory begins ([`crate::reach::stream`] holds the rule): one
//! core reads doubling sizes from the latency curve's memory working set up, against a reference
//! past every cache the OS reports, until a size reads within the tolerance of the
//! reference. Typically 0.5–1 s (the reference is faulted in once, on transparent huge pages).

use std::time::Instant;

use memsight_core::Result;
use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_kernels::bandwidth::{self as k, Isa};

use crate::reach::stream::{STREAM_TOLERANCE, StreamCheck, stream_start};
use crate::reach::{MemoryReach, ReachSource, largest_reported, remember};

/// Timed passes per size; the best counts, since a disturbance only slows a pass.
const PASSES: usize = 3;

/// This process's reach with the streaming check made (measured once per process; a reach
/// taken from the reported caches of a recorded machine is returned unchecked).
pub fn streaming_reach(env: &Environment) -> Result<MemoryReach> {
    let r = crate::latency::memory::known_or_probe(env)?;
    if r.stream.is_some() || matches!(r.source, ReachSource::Reported) {
        return Ok(r);
    }
    let start = r.working_set();
    let reference = reference_bytes(env, start);
    let check = memsight_core::pin::run_team(&[r.cpu], |_, _, _| measure(env, start, reference))?
        .remove(0)?;
    let r = MemoryReach {
        stream: Some(check),
        ..r
    };
    remember(r);
    Ok(r)
}

/// Working set per thread of a bandwidth cell on `threads` CPUs when none was given (`numa`,
/// `tiers`): 128 MiB, and the threads together at least the streaming check's size.
pub fn cell_bytes(env: &Environment, threads: usize) -> Result<u64> {
    let share = streaming_reach(env)?.stream.map_or(0, |s| s.share(threads));
    Ok(share.max(128 * memsight_core::units::MIB))
}

/// Four times the start and twice the largest reported cache (past any cache, yet not the
/// 4 × claim that makes a hypervisor's 480 MiB L3 cost 2 GiB), no more than a quarter of what
/// this process may allocate, at least twice the start.
fn reference_bytes(env: &Environment, start: u64) -> u64 {
    let want = (2 * largest_reported(env)).max(4 * start);
    let room = env.memory.usable_bytes().map_or(want, |u| u / 4);
    want.min(room)
        .max(2 * start)
        .next_multiple_of(k::GRANULE as u64)
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
