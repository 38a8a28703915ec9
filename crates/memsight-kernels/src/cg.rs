//! The application kernel of the Catamount paper (Ferreira et al., CUG 2008), in the style of HPCCG (Mantevo): conjugate
//! gradients on the 27-point stencil of an `nx × ny × nz` grid, the matrix in compressed sparse
//! rows. Diagonal 27, every neighbour −1, the right-hand side made so that the exact solution is
//! all ones (HPCCG's `generate_matrix`). The arrays are slices the caller lays out, so a study can
//! place them in one buffer with any padding between them.
//!
//! Safe Rust: the loops are plain indexing; the compiler keeps them (their results are checked:
//! the residual must fall as CG's theory says).

/// A 27-point stencil matrix in CSR form.
pub struct Csr<'a> {
    /// Row `i` holds entries `row_ptr[i] .. row_ptr[i + 1]`.
    pub row_ptr: &'a [u32],
    pub cols: &'a [u32],
    pub values: &'a [f64],
}

/// Rows and nonzeros of the stencil matrix of an `nx × ny × nz` grid.
pub fn shape(nx: usize, ny: usize, nz: usize) -> (usize, usize) {
    let line = |n: usize| 3 * n - 2; // neighbours within one axis, summed over the line
    (nx * ny * nz, line(nx) * line(ny) * line(nz))
}

/// Fills the CSR arrays (sized by [`shape`]) and the right-hand side `b`.
pub fn generate(
    (nx, ny, nz): (usize, usize, usize),
    row_ptr: &mut [u32],
    cols: &mut [u32],
    values: &mut [f64],
    b: &mut [f64],
) {
    let mut k = 0usize;
    row_ptr[0] = 0;
    for iz in 0..nz {
        for iy in 0..ny {
            for ix in 0..nx {
                let row = (iz * ny + iy) * nx + ix;
                let mut sum = 0.0;
                for dz in -1i64..=1 {
                    for dy in -1i64..=1 {
                        for dx in -1i64..=1 {
                            let (x, y, z) = (ix as i64 + dx, iy as i64 + dy, iz as i64 + dz);
                            if x < 0 || y < 0 || z < 0 {
                                continue;
                            }
                            let (x, y, z) = (x as usize, y as usize, z as usize);
                            if x >= nx || y >= ny || z >= nz {
                                continue;
                            }
                            let col = (z * ny + y) * nx + x;
                            let v = if col == row { 27.0 } else { -1.0 };
                            cols[k] = col as u32;
                            values[k] = v;
                            sum += v;
                            k += 1;
                        }
                    }
                }
                row_ptr[row + 1] = k as u32;
                b[row] = sum;
            }
        }
    }
}

/// `y = A x`.
pub fn spmv(a: &Csr, x: &[f64], y: &mut [f64]) {
    for (i, yi) in y.iter_mut().enumerate() {
        let (lo, hi) = (a.row_ptr[i] as usize, a.row_ptr[i + 1] as usize);
        let mut s = 0.0;
        for (v, &c) in a.values[lo..hi].iter().zip(&a.cols[lo..hi]) {
            s += v * x[c as usize];
        }
        *yi = s;
    }
}

/// `x · y`.
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// The vectors of one solve.
pub struct Vectors<'a> {
    pub x: &'a mut [f64],
    pub r: &'a mut [f64],
    pub p: &'a mut [f64],
    pub ap: &'a mut [f64],
    pub b: &'a [f64],
}

/// What one solve did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solve {
    pub iterations: usize,
    /// ‖r₀‖ and ‖r‖ after the last iteration (r₀ = b, from x = 0).
    pub initial_residual: f64,
    pub final_residual: f64,
}

/// Program bytes CG moves per iteration: the matrix once (values, columns, row pointers), the
/// gathered `x` counted once, `Ap` written; two dot products; three vector updates.
pub fn bytes_per_iteration(rows: usize, nnz: usize) -> u64 {
    let spmv = nnz * (8 + 4) + (rows + 1) * 4 + rows * 8 + rows * 8;
    let dots = 3 * rows * 8;
    let updates = 3 * 3 * rows * 8;
    (spmv + dots + updates) as u64
}

/// Floating-point operations per iteration: 2 per nonzero, 2 per element of each dot product
/// and of each of the three updates.
pub fn flops_per_iteration(rows: usize, nnz: usize) -> u64 {
    (2 * nnz + 2 * 2 * rows + 3 * 2 * rows) as u64
}

/// Runs `iterations` CG steps from x = 0 (HPCCG's loop: `p = r + β p`, `α = r·r ÷ p·Ap`).
pub fn solve(a: &Csr, v: Vectors, iterations: usize) -> Solve {
    v.x.fill(0.0);
    v.r.copy_from_slice(v.b);
    v.p.copy_from_slice(v.b);
    let mut rtrans = dot(v.r, v.r);
    let initial = rtrans.sqrt();
    for _ in 0..iterations {
        spmv(a, v.p, v.ap);
        let alpha = rtrans / dot(v.p, v.ap);
        for ((x, r), (p, ap)) in
            v.x.iter_mut()
                .zip(v.r.iter_mut())
                .zip(v.p.iter().zip(v.ap.iter()))
        {
            *x += alpha * p;
            *r -= alpha * ap;
        }
        let old = rtrans;
        rtrans = dot(v.r, v.r);
        let beta = rtrans / old;
        for (p, r) in v.p.iter_mut().zip(v.r.iter()) {
            *p = r + beta * *p;
        }
    }
    Solve {
        iterations,
        initial_residual: initial,
        final_residual: rtrans.sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system(n: usize) -> (Vec<u32>, Vec<u32>, Vec<f64>, Vec<f64>) {
        let (rows, nnz) = shape(n, n, n);
        let (mut rp, mut cols, mut vals, mut b) = (
            vec![0; rows + 1],
            vec![0; nnz],
            vec![0.0; nnz],
            vec![0.0; rows],
        );
        generate((n, n, n), &mut rp, &mut cols, &mut vals, &mut b);
        (rp, cols, vals, b)
    }

    #[test]
    fn the_stencil_has_the_counted_nonzeros_and_a_ones_solution() {
        let (rp, cols, vals, b) = system(5);
        let (rows, nnz) = shape(5, 5, 5);
        assert_eq!(rp[rows] as usize, nnz);
        // An interior row has 27 entries, a corner 8.
        let interior = (2 * 5 + 2) * 5 + 2;
        assert_eq!(rp[interior + 1] - rp[interior], 27);
        assert_eq!(rp[1] - rp[0], 8);
        // A · ones = b.
        let a = Csr {
            row_ptr: &rp,
            cols: &cols,
            values: &vals,
        };
        let mut y = vec![0.0; rows];
        spmv(&a, &vec![1.0; rows], &mut y);
        assert_eq!(y, b);
    }

    #[test]
    fn cg_converges_to_the_ones_solution() {
        let (rp, cols, vals, b) = system(12);
        let rows = b.len();
        let a = Csr {
            row_ptr: &rp,
            cols: &cols,
            values: &vals,
        };
        let (mut x, mut r, mut p, mut ap) = (
            vec![0.0; rows],
            vec![0.0; rows],
            vec![0.0; rows],
            vec![0.0; rows],
        );
        let mut last = f64::INFINITY;
        for iters in [5, 10, 20] {
            let s = solve(
                &a,
                Vectors {
                    x: &mut x,
                    r: &mut r,
                    p: &mut p,
                    ap: &mut ap,
                    b: &b,
                },
                iters,
            );
            assert!(
                s.final_residual < last,
                "the residual falls with iterations"
            );
            last = s.final_residual;
        }
        assert!(last / dot(&b, &b).sqrt() < 1e-8, "relative residual {last}");
        assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-6));
        assert_eq!(
            bytes_per_iteration(10, 100),
            (1200 + 44 + 80 + 80 + 240 + 720) as u64
        );
    }
}
