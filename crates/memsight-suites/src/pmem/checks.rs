//! The study's flags, checked before any pool is made or filled.

use memsight_core::units::format_bytes;
use memsight_core::{Error, Result};
use memsight_kernels::pmemobj::MIN_POOL;

use super::{PmemSettings, volume};

/// Refuses a config PMDK or the study cannot work with, in one line naming the option.
pub(super) fn check(a: &PmemSettings) -> Result<()> {
    let pool = a.pool_bytes;
    if pool < MIN_POOL {
        return Err(Error::input(format!(
            "--pool-size {}: PMDK's minimum pool is {}",
            format_bytes(pool),
            format_bytes(MIN_POOL)
        )));
    }
    let sizes = &a.sizes;
    if let Some(bad) = sizes.iter().find(|&&s| s == 0 || s > pool / 2) {
        return Err(Error::input(format!(
            "--sizes: {} is not a usable object size for a {} pool (1 B … half the pool)",
            format_bytes(*bad),
            format_bytes(pool)
        )));
    }
    if sizes.is_empty() || a.mixed_sizes.is_empty() {
        return Err(Error::input(
            "--sizes and --mixed-sizes need at least one size",
        ));
    }
    check_concurrency(a)?;
    if a.alloc_threads == 0 || a.alloc_threads > 1024 || a.free_threads > 1024 {
        return Err(Error::input(
            "--alloc-threads must be 1 … 1024, --free-threads 0 … 1024",
        ));
    }
    if !(0.05..=0.95).contains(&a.live_fraction) {
        return Err(Error::input("--live-fraction must be within 0.05 … 0.95"));
    }
    if a.class_runs() > pool / 2 {
        return Err(Error::input(format!(
            "--class-runs {}: a run may hold at most half the {} pool",
            format_bytes(a.class_runs()),
            format_bytes(pool)
        )));
    }
    if a.volume {
        if volume::sizes(a.volume_min, a.volume_max, pool).is_empty() {
            return Err(Error::input(format!(
                "--volume-min {} … --volume-max {}: no power of two between them fits a sixteenth of a {} pool",
                format_bytes(a.volume_min),
                format_bytes(a.volume_max),
                format_bytes(pool)
            )));
        }
        if a.batch == 0
            || a.free_threads == 0
            || a.volume_rounds == 0
            || !duration(a.volume_seconds)
        {
            return Err(Error::input(
                "--volume needs --batch ≥ 1, --free-threads ≥ 1, --volume-rounds ≥ 1 and --volume-seconds within 0 … 86400",
            ));
        }
    }
    if let Some(c) = &a.custom
        && c.alignment != 0
        && !c.alignment.is_power_of_two()
    {
        return Err(Error::input(format!(
            "--class align={}: a power of two",
            c.alignment
        )));
    }
    Ok(())
}

/// The concurrency study's flags: its object sizes fit the pool, its time per strategy is finite.
fn check_concurrency(a: &PmemSettings) -> Result<()> {
    if !a.concurrency {
        return Ok(());
    }
    let pool = a.pool_bytes;
    if let Some(bad) = a.mixed_sizes.iter().find(|&&s| s == 0 || s > pool / 2) {
        return Err(Error::input(format!(
            "--mixed-sizes: {} is not a usable object size for a {} pool (1 B … half the pool)",
            format_bytes(*bad),
            format_bytes(pool)
        )));
    }
    if !duration(a.seconds) {
        return Err(Error::input(
            "--seconds must be positive and at most a day (86400)",
        ));
    }
    Ok(())
}

/// Durations become `Duration`s in the workers: finite, positive, at most a day a strategy.
fn duration(s: f64) -> bool {
    s > 0.0 && s <= 86400.0
}
