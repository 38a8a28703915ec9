//! Searching custom allocation classes for one object size: enumerate unit sizes, header types
//! and run lengths, rank them by the utilisation their arithmetic promises, then fill a real pool
//! with the best few, because PMDK's run layout has quirks arithmetic does not know (bitmap words,
//! run headers, classes it rejects): the measurement decides.

use std::path::Path;
use std::time::Duration;

use memsight_kernels::pmemobj::{
    ClassDesc, HEADER_COMPACT, HEADER_NONE, header_bytes, header_name,
};

use super::layout::CHUNK;
use super::{Class, Fill, SearchResult, fill};

/// Bytes a run spends on its header and bitmap before the slots (PMDK 1.12: a 16-byte run
/// header plus the bitmap rounded to 64-byte words, within the first cache lines).
fn run_overhead(units: u64) -> u64 {
    16 + units.div_ceil(64) * 8
}

/// Chunks a pool's heap offers: the pool less PMDK's lanes and headers (3 MiB + 8 KiB in front
/// of the heap, as `pmempool info` shows), less a few chunks of zone metadata.
pub fn heap_chunks(pool: u64) -> u64 {
    (pool.saturating_sub(0x30_2000) / CHUNK).saturating_sub(3)
}

/// The utilisation a class promises for `size`-byte objects in a pool of `pool` bytes if the
/// whole heap were runs of this class (whole runs only: a run never spans what is left).
pub fn predicted(c: &ClassDesc, size: u64, pool: u64) -> f64 {
    let h = header_bytes(c.header_type);
    let unit = c.unit_size as u64;
    let units_per_obj = (size + h).div_ceil(unit);
    let upb = u64::from(c.units_per_block).max(1);
    let run_chunks = (upb * unit + run_overhead(upb)).div_ceil(CHUNK);
    let objs_per_run = upb / units_per_obj;
    let runs = heap_chunks(pool) / run_chunks.max(1);
    (runs * objs_per_run * size) as f64 / pool as f64
}

/// Candidate classes for `size`: unit = the object (with its header) rounded to 8 B … 4 KiB,
/// header none or compact, runs of 1 … 64 chunks filled with as many units as fit.
pub fn candidates(size: u64) -> Vec<ClassDesc> {
    let mut out = Vec::new();
    for header in [HEADER_NONE, HEADER_COMPACT] {
        let h = header_bytes(header);
        for round in [8u64, 64, 256, 4096] {
            let unit = (size + h).div_ceil(round) * round;
            // Large units: every run length of 1 … 64 units (what divides the heap best depends
            // on the pool size); small units: the most that fit in 1 … 64 chunks.
            let mut upbs: Vec<u64> = if unit >= 16 << 10 {
                (1..=64).collect()
            } else {
                Vec::new()
            };
            for chunks in [1u64, 2, 4, 8, 16, 32, 64] {
                let space = chunks * CHUNK;
                let mut upb = space / unit;
                while upb > 0 && upb * unit + run_overhead(upb) > space {
                    upb -= 1;
                }
                upbs.push(upb);
            }
            for upb in upbs {
                if upb == 0 || upb > u32::MAX as u64 || upb * unit > 64 * CHUNK * 64 {
                    continue;
                }
                out.push(ClassDesc {
                    unit_size: unit as usize,
                    alignment: 0,
                    units_per_block: upb as u32,
                    header_type: header,
                    class_id: 0,
                });
            }
        }
    }
    out.sort_by_key(|c| (c.unit_size, c.units_per_block, c.header_type));
    out.dedup();
    out
}

/// Searches, then verifies the `verify` best by filling pools.
pub fn search(
    path: &Path,
    pool: u64,
    default: &Fill,
    verify: usize,
    timeout: Duration,
) -> SearchResult {
    let size = default.object_bytes;
    let mut ranked: Vec<(ClassDesc, f64)> = candidates(size)
        .into_iter()
        .map(|c| {
            let p = predicted(&c, size, pool);
            (c, p)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(a.0.units_per_block.cmp(&b.0.units_per_block))
    });
    let mut verified = Vec::new();
    let mut quirks = Vec::new();
    let mut best: Option<(ClassDesc, Fill)> = None;
    for (c, p) in ranked.into_iter().take(verify.max(1)) {
        match fill(path, pool, size, Some(&c), timeout) {
            Ok(f) => {
                if f.utilisation < p - 0.02 {
                    quirks.push(format!(
                        "unit {} B × {} per run, header {}: promised {:.1}%, measured {:.1}%",
                        c.unit_size,
                        c.units_per_block,
                        header_name(c.header_type),
                        p * 100.0,
                        f.utilisation * 100.0
                    ));
                }
                verified.push((Class::of(&c), p, Some(f.utilisation)));
                if best
                    .as_ref()
                    .is_none_or(|(_, b)| f.utilisation > b.utilisation)
                {
                    best = Some((c, f));
                }
            }
            Err(e) => {
                quirks.push(format!(
                    "unit {} B × {} per run, header {}: {e}",
                    c.unit_size,
                    c.units_per_block,
                    header_name(c.header_type)
                ));
                verified.push((Class::of(&c), p, None));
            }
        }
    }
    let ctl_set = best.as_ref().map(|(c, _)| {
        format!(
            "struct pobj_alloc_class_desc d = {{ .unit_size = {}, .alignment = {}, .units_per_block = {}, .header_type = POBJ_HEADER_{}, }}; pmemobj_ctl_set(pop, \"heap.alloc_class.new.desc\", &d); /* then pmemobj_xalloc(pop, &oid, {size}, 0, POBJ_CLASS_ID(d.class_id), NULL, NULL) */",
            c.unit_size,
            c.alignment,
            c.units_per_block,
            header_name(c.header_type).to_uppercase()
        )
    });
    SearchResult {
        object_bytes: size,
        default_utilisation: Some(default.utilisation),
        verified,
        best: best
            .map(|(_, f)| f)
            .filter(|f| f.utilisation > default.utilisation),
        quirks,
        ctl_set,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memverges_custom_class_promises_about_95_percent() {
        // 1 MiB objects, header none, 256 units per run (the custom class of MemVerge's PMDK talk): ~95% measured.
        let c = ClassDesc {
            unit_size: 1 << 20,
            alignment: 0,
            units_per_block: 256,
            header_type: HEADER_NONE,
            class_id: 54,
        };
        let p = predicted(&c, 1 << 20, 4_225_761_280);
        assert!((0.93..0.99).contains(&p), "{p}");
    }

    #[test]
    fn candidates_fit_their_runs() {
        for size in [512u64, 4096, 1 << 20, 2 << 20] {
            let c = candidates(size);
            assert!(!c.is_empty());
            for d in c {
                let h = header_bytes(d.header_type);
                assert!(d.unit_size as u64 >= size + h);
                assert!(d.units_per_block >= 1);
            }
        }
    }
}
