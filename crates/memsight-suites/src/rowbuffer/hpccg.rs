//! The application case of the Catamount paper (Ferreira et al., CUG 2008): an HPCCG-style conjugate-gradient solve swept over OFFSET like
//! STREAM. Each thread solves its own 27-point-stencil problem (as each MPI rank of HPCCG owns
//! its subdomain), with all of its arrays in its own region of one buffer, in HPCCG's order:
//! matrix values, column indices, row pointers, then the vectors x, r, p, Ap and b, each array
//! followed by OFFSET bytes of padding. Moving OFFSET moves every array against the others
//! while the physical pages stay put, so the row-buffer conflicts of the matrix and vector
//! streams come and go as in that paper's HPCCG runs.
//!
//! Per offset: the matrix is generated in place (first touch by its thread), one warm-up solve,
//! then `samples` timed solves of [`ITERATIONS`] iterations from x = 0, each timed over the team's
//! span; a solve whose residual did not fall as CG's must fails the study (the kernel is broken).
//! GB/s are program bytes (`cg::bytes_per_iteration`: the matrix once per iteration, each vector
//! as the loops touch it).

use crate::measure::progress::Tick;
use std::sync::Mutex;

use memsight_core::buffer::{Buffer, bytes_as_f64_mut, bytes_as_u32_mut};
use memsight_core::cpuclock::{SpinBarrier, TeamClock};
use memsight_core::{Error, Result, cancel};
use memsight_kernels::cg::{self, Csr, Vectors};

use super::sweep::Point;

/// CG iterations per timed solve: six, enough for the residual check and for a solve to read the
/// matrix six times over (eight made the default study run past three minutes on a 2-vCPU guest,
/// most of it in HPCCG).
pub const ITERATIONS: usize = 6;
/// After [`ITERATIONS`] steps from x = 0 the residual has fallen (to about a fifth on a 56³ grid;
/// the unit tests check convergence to 10⁻⁸ on small grids). It must, and every solve of the
/// same grid must reach the same value, whatever the offset, thread or sample: CG's arithmetic is
/// deterministic, so a solve that differs read or wrote the wrong memory.
const MAX_RELATIVE_RESIDUAL: f64 = 0.5;

/// One thread's problem: a cube grid of `n³` points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub n: usize,
}

impl Grid {
    /// The largest cube whose arrays fit in `bytes` (at least 8³).
    pub fn for_bytes(bytes: u64) -> Grid {
        let mut n = 8;
        while (Grid { n: n + 1 }).bytes() <= bytes {
            n += 1;
        }
        Grid { n }
    }

    fn shape(self) -> (usize, usize) {
        cg::shape(self.n, self.n, self.n)
    }

    /// Bytes of each array in HPCCG's order, rounded up to 8 B so every array stays aligned.
    fn arrays(self) -> [u64; 8] {
        let (rows, nnz) = self.shape();
        let r8 = |b: usize| (b as u64).div_ceil(8) * 8;
        let v = r8(rows * 8);
        [r8(nnz * 8), r8(nnz * 4), r8((rows + 1) * 4), v, v, v, v, v]
    }

    /// Bytes of the arrays without padding.
    pub fn bytes(self) -> u64 {
        self.arrays().iter().sum()
    }

    /// One thread's region at the largest offset: arrays, eight paddings, a cache line spare.
    pub fn region_bytes(self, max_offset: u64) -> u64 {
        (self.bytes() + 8 * max_offset + 64).div_ceil(64) * 64
    }

    /// Program bytes of one timed solve.
    pub fn solve_bytes(self) -> u64 {
        let (rows, nnz) = self.shape();
        cg::bytes_per_iteration(rows, nnz) * ITERATIONS as u64
    }
}

/// What one sweep needs.
pub struct Plan<'a> {
    pub grid: Grid,
    pub cpus: &'a [usize],
    pub offsets: &'a [u64],
    pub samples: usize,
    /// Memory-controller counters to read around each point.
    pub counters: Option<&'a crate::measure::counters::Controllers>,
}

/// Buffer bytes the sweep needs: one region per thread.
pub fn buffer_bytes(grid: Grid, threads: usize, max_offset: u64) -> u64 {
    grid.region_bytes(max_offset) * threads as u64 + 4096
}

/// One thread's arrays, carved from its region with `offset` bytes after each.
fn carve(region: &mut [u8], grid: Grid, offset: u64) -> (Csr<'_>, Vectors<'_>) {
    let mut rest = region;
    let mut take = |bytes: u64| {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(bytes as usize);
        let (_, after) = b.split_at_mut(offset as usize);
        rest = after;
        a
    };
    let [values, cols, ptr, x, r, p, ap, b] = grid.arrays().map(&mut take);
    let (rows, nnz) = grid.shape();
    let values = &mut bytes_as_f64_mut(values)[..nnz];
    let cols = &mut bytes_as_u32_mut(cols)[..nnz];
    let row_ptr = &mut bytes_as_u32_mut(ptr)[..rows + 1];
    let b = &mut bytes_as_f64_mut(b)[..rows];
    let n = grid.n;
    cg::generate((n, n, n), row_ptr, cols, values, b);
    (
        Csr {
            row_ptr,
            cols,
            values,
        },
        Vectors {
            x: &mut bytes_as_f64_mut(x)[..rows],
            r: &mut bytes_as_f64_mut(r)[..rows],
            p: &mut bytes_as_f64_mut(p)[..rows],
            ap: &mut bytes_as_f64_mut(ap)[..rows],
            b,
        },
    )
}

/// Runs the sweep in `buf`; `tick` after each offset. Returns the points measured (fewer when
/// interrupted).
pub fn run(plan: &Plan, buf: &mut Buffer, tick: Tick<'_>) -> Result<Vec<Point>> {
    let threads = plan.cpus.len();
    let nsamples = plan.samples.max(1);
    let region = plan
        .grid
        .region_bytes(*plan.offsets.last().expect("offsets")) as usize;
    let bytes = (plan.grid.solve_bytes() * threads as u64) as f64;
    let mut points = Vec::new();
    for &off in plan.offsets {
        if cancel::requested() {
            break;
        }
        let regions: Vec<Option<&mut [u8]>> = buf
            .as_mut_slice()
            .chunks_mut(region)
            .take(threads)
            .map(Some)
            .collect();
        assert_eq!(
            regions.len(),
            threads,
            "the buffer holds a region per thread"
        );
        let regions = Mutex::new(regions);
        let running = plan.counters.and_then(|c| c.start().ok());
        let clocks: Vec<TeamClock> = (0..nsamples).map(|_| TeamClock::new(threads)).collect();
        let start = SpinBarrier::new(threads);
        let seen = Mutex::new((f64::INFINITY, 0.0f64));
        memsight_core::pin::run_team(plan.cpus, |i, _, barrier| {
            let mine = regions.lock().expect("regions")[i]
                .take()
                .expect("one region per thread");
            let (a, mut v) = carve(mine, plan.grid, off);
            barrier.wait();
            let solve = |v: &mut Vectors| {
                let s = cg::solve(
                    &a,
                    Vectors {
                        x: v.x,
                        r: v.r,
                        p: v.p,
                        ap: v.ap,
                        b: v.b,
                    },
                    ITERATIONS,
                );
                let ratio = s.final_residual / s.initial_residual;
                let mut seen = seen.lock().expect("residuals");
                *seen = (seen.0.min(ratio), seen.1.max(ratio));
            };
            solve(&mut v);
            for clock in &clocks {
                start.wait();
                clock.time(i, || solve(&mut v));
            }
        })?;
        let (low, high) = *seen.lock().expect("residuals");
        if high.is_nan() || high >= MAX_RELATIVE_RESIDUAL || high - low > 1e-9 * high {
            return Err(Error::system(format!(
                "HPCCG at offset {off} B: after {ITERATIONS} CG iterations the residual is {low:.6e} to {high:.6e} of its start (it must fall below {MAX_RELATIVE_RESIDUAL} and be the same in every solve): the kernel is broken"
            )));
        }
        let mut point = Point::timed(off, bytes, &clocks, nsamples);
        point.counts = running.map(|r| r.finish()).unwrap_or_default();
        points.push(point);
        tick(&format!("HPCCG offset {off} B"));
    }
    Ok(points)
}

/// The Catamount paper's Fig. 10 in words: per memory layout, the fastest and slowest time per
/// solve over the offsets (all repetitions), at the statistic the study uses.
pub fn time_findings(
    curves: &[super::Curve],
    stat: super::Stat,
) -> Vec<memsight_core::finding::Finding> {
    use memsight_core::finding::{Cited, Finding};
    use memsight_core::units::format_bytes;
    let mut out = Vec::new();
    for memory in [
        super::Memory::Contiguous,
        super::Memory::Paged4k,
        super::Memory::Fragmented4k,
    ] {
        let all: Vec<&super::sweep::Point> = curves
            .iter()
            .filter(|c| c.kernel == super::Kernel::Hpccg && c.memory == memory)
            .flat_map(|c| c.points.iter())
            .collect();
        // A disturbed solve is slower than the machine: the spread is read over clean solves
        // while there are any.
        let clean = all.iter().any(|p| !p.gbs.rests_on_disturbed());
        let times: Vec<(&super::sweep::Point, f64)> = all
            .iter()
            .filter(|p| !clean || !p.gbs.rests_on_disturbed())
            .filter_map(|p| p.pass_ms(stat).map(|ms| (*p, ms)))
            .collect();
        let fast = times.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let slow = times.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(f), Some(s)) = (fast, slow) {
            let left = all.len() - times.len();
            let cite = |p: &super::sweep::Point| {
                Cited::of(
                    format!("HPCCG at OFFSET {}", format_bytes(p.offset_bytes)),
                    "GB/s",
                    &p.gbs,
                )
            };
            out.push(Finding::citing(
                format!(
                    "HPCCG on {} memory: {:.2} ms per solve ({ITERATIONS} CG iterations, {} pass) at OFFSET {}, {:.2} ms at OFFSET {} ({:.0}% longer){}",
                    memory.name(),
                    f.1,
                    stat.name(),
                    format_bytes(f.0.offset_bytes),
                    s.1,
                    format_bytes(s.0.offset_bytes),
                    100.0 * (s.1 / f.1 - 1.0),
                    if left > 0 {
                        format!("; {left} solve point(s) resting on disturbed samples left out")
                    } else {
                        String::new()
                    }
                ),
                vec![cite(f.0), cite(s.0)],
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_fit_their_budget_and_regions_hold_every_offset() {
        let g = Grid::for_bytes(64 << 20);
        assert!(g.bytes() <= 64 << 20 && Grid { n: g.n + 1 }.bytes() > 64 << 20);
        assert!(g.n > 40, "a 64 MiB problem is about 50³ points: {}", g.n);
        let region = g.region_bytes(1 << 20);
        assert!(region >= g.bytes() + 8 * (1 << 20));
        assert_eq!(region % 64, 0);
        assert_eq!(Grid::for_bytes(1).n, 8);
    }

    #[test]
    fn carved_arrays_solve_the_system_at_an_odd_offset() {
        let g = Grid { n: 10 };
        let off = 8 * 13;
        // A Vec<u64> is 8-byte aligned, as a buffer is.
        let mut words = vec![0u64; (g.region_bytes(off) / 8) as usize];
        let (a, v) = carve(memsight_core::buffer::u64_as_bytes_mut(&mut words), g, off);
        let s = cg::solve(&a, v, 30);
        assert!(s.final_residual / s.initial_residual < 1e-8);
    }
}
