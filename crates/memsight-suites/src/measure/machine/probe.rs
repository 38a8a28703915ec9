//! Where memory begins, measured: the short probe suites run when no ladder ran, and the
//! reported caches' answer where nothing can be measured ([`crate::measure::reach`] holds the rules,
//! [`crate::measure::machine::Machine`] the facts found).

use memsight_core::Result;
use memsight_core::buffer::PageKind;
use memsight_core::env::Environment;
use memsight_core::stats::StopRule;
use memsight_core::units::MIB;

use crate::measure::chase::{LadderConfig, climb, curve};
use crate::measure::reach::{
    MemoryCheck, MemoryReach, MemoryStart, ReachSource, ladder_cap, largest_reported, memory_start,
};
use crate::measure::sizes::log_sizes;

/// What the reported caches alone say: memory from twice the largest.
pub fn reported(env: &Environment, cpu: usize) -> MemoryReach {
    let largest = largest_reported(env).max(MIB);
    MemoryReach {
        cpu,
        memory: MemoryStart {
            from_bytes: 2 * largest,
            ns: f64::NAN,
            check: MemoryCheck::PastReportedCaches,
            cache_bytes: largest,
        },
        source: ReachSource::Reported,
        stream: None,
    }
}

/// Tries of the probe before the reported caches are taken: a curve that other work made too
/// noisy to call is measured again, each time with more samples per size, since falling back
/// on the claim changes every default size (a 260 MiB L3 claimed asks for 1 GiB working sets
/// where the curve would ask for 256 MiB) and two runs would then measure different sizes.
const TRIES: u32 = 3;

/// A short ladder on `cpu`: one size in L2, then two per octave from twice the L2 to the cap,
/// five to nine samples of 1 ms each (more on a retry), ending once memory has held. Typically
/// 0.2–1 s; up to [`TRIES`] times on a noisy machine.
pub fn probe(env: &Environment, cpu: usize) -> Result<MemoryReach> {
    let l2 = env.topology.cache(2).map_or(MIB, |c| c.size_bytes);
    let cap = ladder_cap(env);
    let mut sizes = vec![(l2 / 4).max(64 * 1024)];
    sizes.extend(log_sizes((2 * l2).min(cap), cap, 2, 128));
    let mut found = None;
    for attempt in 0..TRIES {
        let rule = StopRule {
            warmup: 1,
            min_samples: 5 + 2 * attempt as usize,
            max_samples: 9 << attempt,
            target_rel_ci: 0.03,
            budget_s: 0.05 * f64::from(1 << attempt),
        };
        let mut cfg = LadderConfig::chase_point(&sizes, cpu, PageKind::Thp, rule);
        cfg.sample_ns = 1e6;
        cfg.stop_at_memory = true;
        let points =
            memsight_core::pin::run_team(&[cpu], |_, _, _| climb(&cfg, env, 1e6))?.remove(0)?;
        found = memory_start(&curve(&points), largest_reported(env));
        if found.is_some() || memsight_core::cancel::requested() {
            break;
        }
    }
    // A curve still too noisy to call falls back on the reported caches (and says so) rather
    // than failing the command that asked.
    let Some(memory) = found else {
        return Ok(MemoryReach {
            source: ReachSource::Unsettled,
            ..reported(env, cpu)
        });
    };
    Ok(MemoryReach {
        cpu,
        memory,
        source: ReachSource::Probe,
        stream: None,
    })
}
