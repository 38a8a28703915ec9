//! Working-set sizes: log-spaced between two ends, powers of two always among them.

/// Log-spaced sizes from `min` to `max` with `per_octave` points per doubling, each rounded to a
/// multiple of `align`; powers of two between the ends are always included, and so is `max`.
pub fn log_sizes(min: u64, max: u64, per_octave: u32, align: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let start = (min as f64).log2();
    let end = (max as f64).log2();
    let steps = ((end - start) * per_octave as f64).floor() as u64;
    for i in 0..=steps {
        let x = 2f64.powf(start + i as f64 / per_octave as f64);
        out.push(((x / align as f64).round() as u64).max(1) * align);
    }
    let mut p = min.next_power_of_two();
    while p <= max {
        out.push(p);
        p *= 2;
    }
    out.push(max / align * align);
    let lo = (min / align).max(1) * align;
    out.retain(|&s| s >= lo && s <= max);
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_log_spaced_with_powers_of_two() {
        let s = log_sizes(4096, 1 << 20, 4, 128);
        assert_eq!(*s.first().unwrap(), 4096);
        assert_eq!(*s.last().unwrap(), 1 << 20);
        for p in 12..=20 {
            assert!(s.contains(&(1 << p)), "missing 2^{p}");
        }
        // 8 octaves × 4 points + 1.
        assert_eq!(s.len(), 33);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.iter().all(|x| x % 128 == 0));
    }

    #[test]
    fn odd_ends_are_kept() {
        let s = log_sizes(5000, 100_000, 2, 64);
        assert!(s.iter().all(|&x| (4992..=100_000).contains(&x)));
        assert_eq!(*s.last().unwrap(), 100_000 / 64 * 64);
    }
}
