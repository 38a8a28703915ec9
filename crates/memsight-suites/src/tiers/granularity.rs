//! Access granularity: bandwidth of random whole-block accesses per block size, access kind and
//! thread count (kernels in [`memsight_kernels::granular`]).
//!
//! Every thread has its own buffer of `2^k` blocks (the same bytes for every block size, so only
//! the block size changes between points) and visits its blocks in a random permutation, a chunk
//! of about 1 MiB per pass, resuming where the previous pass stopped. Figures are GB/s of program
//! bytes (the blocks' bytes), timed over the span the team ran together. With 64-byte blocks and
//! reads this is MLC's random-access bandwidth (`-U`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::buffer::{Buffer, BufferRequest, DaxTarget, PageKind};
use memsight_core::env::Environment;
use memsight_core::stats::{StopRule, Summary};
use memsight_core::team::sample_team;
use memsight_core::{Error, Result};
use memsight_kernels::granular::{Access, Order, visit};

/// Block sizes of the default sweep.
pub const BLOCKS: [usize; 5] = [64, 128, 256, 512, 4096];

/// One measured point.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GranPoint {
    pub access: Access,
    pub block_bytes: usize,
    pub threads: usize,
    /// Bytes of each thread's buffer.
    pub bytes_per_thread: u64,
    /// GB/s of program bytes (10⁹ B/s).
    pub gbs: Summary,
    /// Million block accesses per second (median).
    pub maccesses: f64,
    pub noisy: bool,
}

/// Where and how to measure.
pub struct GranTarget<'a> {
    pub node: Option<usize>,
    pub dax: Option<&'static DaxTarget>,
    pub cpus: &'a [usize],
    /// Working set of all threads together.
    pub total_bytes: u64,
    pub page_kind: PageKind,
    pub rule: StopRule,
    pub sample_ns: f64,
}

struct State {
    buf: Buffer,
    order: Order,
    cursor: u64,
}

/// Bytes per thread: the largest power of two not above an equal share of `total`.
pub fn per_thread_bytes(total: u64, threads: usize) -> u64 {
    let share = (total / threads.max(1) as u64).max(1 << 20);
    1u64 << (63 - share.leading_zeros())
}

/// Measures one point; `None` when interrupted before the first sample.
pub fn measure(
    t: &GranTarget,
    env: &Environment,
    access: Access,
    block: usize,
    threads: usize,
) -> Result<Option<GranPoint>> {
    access.supported().map_err(Error::input)?;
    let cpus = &t.cpus[..threads];
    let bytes = per_thread_bytes(t.total_bytes, threads);
    let blocks = (bytes / block as u64) as usize;
    let chunk = ((1usize << 20) / block).clamp(1, blocks) as u64;
    let pattern = 0x5a5a_0123_4567_89abu64;
    let out = sample_team(
        cpus,
        &t.rule,
        t.sample_ns,
        |i, _| -> Result<State> {
            let mut buf = Buffer::allocate(
                BufferRequest {
                    bytes,
                    kind: t.page_kind,
                    node: t.node,
                    dax: t.dax,
                },
                env,
            )?;
            // Non-zero data everywhere: reads see real values and every page is present.
            buf.as_mut_slice().fill(0x5a);
            buf.check_thp();
            Ok(State {
                buf,
                order: Order::new(blocks, 0x6a09_e667 ^ i as u64),
                cursor: 0,
            })
        },
        |s, passes| {
            let n = passes * chunk;
            let seen = visit(
                access,
                s.buf.as_mut_slice(),
                block,
                &s.order,
                s.cursor,
                n,
                pattern,
            );
            std::hint::black_box(seen);
            s.cursor = (s.cursor + n) % blocks as u64;
        },
        |passes, ns| (passes * chunk * block as u64 * threads as u64) as f64 / ns,
    )?;
    Ok(out.map(|t| GranPoint {
        access,
        block_bytes: block,
        threads,
        bytes_per_thread: bytes,
        maccesses: t.sampled.summary.median * 1e3 / block as f64,
        noisy: t.sampled.is_noisy(),
        gbs: t.sampled.summary,
    }))
}

/// The effective access granularity of one curve: the largest block whose access costs no more
/// than 1.25 × a 64-byte access (cost = block ÷ bandwidth, time per access). Below a medium's
/// internal unit every access costs a whole unit, so the cost stays flat up to the unit and grows
/// with the block beyond it. On DRAM the adjacent-line prefetcher usually makes it 128 B.
pub fn effective_granule(points: &[&GranPoint]) -> Option<usize> {
    let cost = |p: &GranPoint| p.block_bytes as f64 / p.gbs.median.max(1e-9);
    let mut sorted: Vec<&&GranPoint> = points.iter().filter(|p| p.gbs.median > 0.0).collect();
    sorted.sort_by_key(|p| p.block_bytes);
    let first = sorted.first()?;
    if first.block_bytes != 64 || sorted.len() < 2 {
        return None;
    }
    let base = cost(first);
    let mut granule = 64;
    for p in &sorted[1..] {
        if cost(p) <= 1.25 * base {
            granule = p.block_bytes;
        } else {
            break;
        }
    }
    Some(granule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::summarize;

    fn point(block: usize, gbs: f64) -> GranPoint {
        GranPoint {
            access: Access::Read,
            block_bytes: block,
            threads: 1,
            bytes_per_thread: 1 << 28,
            gbs: summarize(&[gbs, gbs, gbs]),
            maccesses: gbs * 1e3 / block as f64,
            noisy: false,
        }
    }

    fn curve(unit: usize, peak: f64) -> Vec<GranPoint> {
        // Every access costs max(block, unit) bytes of media time at `peak` GB/s.
        BLOCKS
            .iter()
            .map(|&b| point(b, peak * b as f64 / b.max(unit) as f64))
            .collect()
    }

    #[test]
    fn a_256_byte_medium_shows_a_256_byte_granule() {
        let c = curve(256, 10.0);
        let refs: Vec<&GranPoint> = c.iter().collect();
        assert_eq!(effective_granule(&refs), Some(256));
        let c = curve(64, 20.0);
        let refs: Vec<&GranPoint> = c.iter().collect();
        assert_eq!(effective_granule(&refs), Some(64));
        let c = curve(4096, 20.0);
        let refs: Vec<&GranPoint> = c.iter().collect();
        assert_eq!(effective_granule(&refs), Some(4096));
    }

    #[test]
    fn per_thread_buffers_are_powers_of_two() {
        assert_eq!(per_thread_bytes(256 << 20, 1), 256 << 20);
        assert_eq!(per_thread_bytes(256 << 20, 3), 64 << 20);
        assert_eq!(per_thread_bytes(1000, 4), 1 << 20);
    }
}
