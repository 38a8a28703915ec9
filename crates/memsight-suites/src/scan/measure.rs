//! Measuring one range: its pages as slices of the scan's buffer, streamed by a team of
//! threads, and a chase confined to them.

use std::sync::Mutex;

use memsight_core::Result;
use memsight_core::buffer::Buffer;
use memsight_core::stats::{StopRule, Summary};
use memsight_core::team::sample_team;
use memsight_kernels::bandwidth::{self, Isa};
use memsight_kernels::chase::Chains;

use super::{MAX_CHASE_ELEMENTS, PAGE};

/// Consecutive page indices as (first page, pages) runs, each at most `max_pages` long.
pub fn runs(pages: &[usize], max_pages: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &p in pages {
        match out.last_mut() {
            Some((first, n)) if *first + *n == p && *n < max_pages => *n += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

/// The runs dealt to `threads` threads so each gets about the same bytes (largest first).
pub fn deal(mut runs: Vec<(usize, usize)>, threads: usize) -> Vec<Vec<(usize, usize)>> {
    runs.sort_by_key(|r| std::cmp::Reverse(r.1));
    let mut out = vec![Vec::new(); threads.max(1)];
    let mut load = vec![0usize; threads.max(1)];
    for r in runs {
        let i = (0..load.len()).min_by_key(|&i| load[i]).unwrap_or(0);
        load[i] += r.1;
        out[i].push(r);
    }
    out
}

/// Read bandwidth over the range's pages, every CPU of `cpus` reading its share.
pub fn bandwidth(
    buf: &Buffer,
    pages: &[usize],
    cpus: &[usize],
    rule: &StopRule,
    sample_ns: f64,
) -> Result<Option<Summary>> {
    let threads = cpus.len().min(pages.len()).max(1);
    let shares = deal(runs(pages, 512), threads);
    let total: usize = pages.len() * PAGE;
    let all = buf.as_slice();
    let isa = Isa::widest();
    let s = sample_team(
        &cpus[..threads],
        rule,
        sample_ns,
        |i, _cpu| {
            Ok(shares[i]
                .iter()
                .map(|&(p, n)| &all[p * PAGE..(p + n) * PAGE])
                .collect::<Vec<&[u8]>>())
        },
        |slices, passes| {
            for s in slices.iter() {
                std::hint::black_box(bandwidth::read(isa, s, passes));
            }
        },
        |passes, span_ns| (total as f64 * passes as f64) / span_ns,
    )?;
    Ok(s.map(|t| t.sampled.summary))
}

/// Idle latency of a chase over (up to [`MAX_CHASE_ELEMENTS`] lines of) the range's pages.
pub fn latency(
    buf: &mut Buffer,
    pages: &[usize],
    cpu: usize,
    rule: &StopRule,
    seed: u64,
) -> Result<Option<Summary>> {
    const STRIDE: usize = 128;
    let per_page = PAGE / STRIDE;
    // Spread the elements over the whole range: every k-th page when there are too many.
    let step = (pages.len() * per_page).div_ceil(MAX_CHASE_ELEMENTS).max(1);
    let elements: Vec<usize> = pages
        .iter()
        .step_by(step)
        .flat_map(|&p| (0..per_page).map(move |j| p * per_page + j))
        .collect();
    let steps = elements.len() as u64;
    let slot = Mutex::new(Some((buf.as_mut_slice(), elements)));
    let s = sample_team(
        &[cpu],
        rule,
        2e6,
        |_, _| {
            let (bytes, elements) = slot
                .lock()
                .expect("chase slot")
                .take()
                .expect("one thread builds the chase");
            let mut c = Chains::over(bytes, STRIDE, elements, seed);
            // One lap first: the chase then starts from a warm TLB and no cold page faults.
            c.run(steps);
            Ok(c)
        },
        |c, passes| c.run(passes * 1024),
        |passes, span_ns| span_ns / (passes as f64 * 1024.0),
    )?;
    Ok(s.map(|t| t.sampled.summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_become_runs_dealt_evenly() {
        let r = runs(&[0, 1, 2, 5, 6, 9], 2);
        assert_eq!(r, [(0, 2), (2, 1), (5, 2), (9, 1)]);
        let d = deal(r, 2);
        let load = |v: &Vec<(usize, usize)>| v.iter().map(|r| r.1).sum::<usize>();
        assert_eq!(load(&d[0]) + load(&d[1]), 6);
        assert!(load(&d[0]).abs_diff(load(&d[1])) <= 1);
        assert_eq!(deal(Vec::new(), 0).len(), 1);
    }
}
