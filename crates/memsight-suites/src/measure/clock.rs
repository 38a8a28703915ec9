//! The core clock of the calling (pinned) thread, measured two or three independent ways, and
//! the cycles figures only when the ways agree.
//!
//! The primary estimate is a chain of register adds (`memsight_kernels::clock`, 1 cycle each).
//! A second chain with a different instruction (x86_64: `imul`, 3 cycles; AArch64: `eor`) is
//! timed in the same rounds, and where the kernel exposes the core PMU, the cycles counter
//! counts over the add chain. A core that ran the add chain faster than one per cycle (Intel's
//! rename-time execution of immediate adds is the known case) would make every cycles figure
//! wrong by the same factor: when any estimate differs from the primary by more than
//! [`AGREEMENT`], the clock is reported as disputed and no cycles are derived from it.

use memsight_core::cpuclock::timed;
use memsight_core::perf::{Counter, Event, Scope};
use memsight_core::stats::{StopRule, Summary, Taken, median, sample_until, summarize};
use memsight_kernels::clock::Chain;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest relative difference between two estimates that still counts as agreement.
pub const AGREEMENT: f64 = 0.05;

/// One sample's length, ns: long against the timer's resolution, short against a time slice.
const SAMPLE_NS: f64 = 2e6;

/// How an estimate of the clock was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClockMethod {
    /// Dependent `add reg, reg` (1 cycle each), timed with CLOCK_MONOTONIC.
    AddRegister,
    /// Dependent `imul reg, reg` (3 cycles each on x86_64), timed likewise.
    Multiply,
    /// Dependent `eor reg, reg` (1 cycle each on AArch64), timed likewise.
    XorRegister,
    /// The core PMU's cycles counter over the add chain (perf_event_open), per wall second.
    PmuCycles,
}

impl ClockMethod {
    fn of(chain: Chain) -> Self {
        match chain {
            Chain::AddRegister => ClockMethod::AddRegister,
            Chain::Multiply => ClockMethod::Multiply,
            Chain::XorRegister => ClockMethod::XorRegister,
        }
    }

    /// A few words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            ClockMethod::AddRegister => "dependent register adds (1 per cycle)",
            ClockMethod::Multiply => "dependent multiplies (3 cycles each)",
            ClockMethod::XorRegister => "dependent register xors (1 per cycle)",
            ClockMethod::PmuCycles => "the PMU's cycles counter",
        }
    }
}

/// One way's estimate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ClockEstimate {
    pub method: ClockMethod,
    /// Median over the samples, GHz.
    pub ghz: f64,
    pub samples: usize,
}

/// The effective core clock of one CPU.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CoreClock {
    /// The clock cycles figures are computed from (the add chain's samples); absent when the
    /// estimates disagree, so that no wrong cycles are printed.
    pub ghz: Option<Summary>,
    pub method: String,
    /// Every estimate, the primary first.
    #[serde(default)]
    pub estimates: Vec<ClockEstimate>,
    /// Why the clock is not trusted, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disputed: Option<String>,
    /// The core type on a hybrid CPU (`performance` or `efficiency`), from the kernel's PMU
    /// devices (`/sys/devices/cpu_core`, `cpu_atom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_type: Option<String>,
}

impl CoreClock {
    /// The trusted clock's median, GHz.
    pub fn trusted_ghz(&self) -> Option<f64> {
        self.ghz.as_ref().map(|s| s.median)
    }
}

/// The core PMU's cycles counter for this thread, where the kernel exposes one.
fn cycles_counter() -> Option<Counter> {
    // PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES.
    let ev = Event {
        pmu_type: 0,
        config: 0,
        config1: 0,
    };
    Counter::open(ev, Scope::ThisThread).ok()
}

/// Runs the primary chain until the clock holds still: two consecutive 10 ms estimates within
/// 1%, at most `budget_s`. A core leaves its idle clock over milliseconds to seconds (Sapphire
/// Rapids took more than a second to reach full turbo in Chips and Cheese's test); measuring
/// before that would report a clock the measurement itself did not run at.
pub fn settle(budget_s: f64) {
    let start = std::time::Instant::now();
    let mut last = Chain::AddRegister.sample_ghz(10e6);
    while start.elapsed().as_secs_f64() < budget_s {
        let now = Chain::AddRegister.sample_ghz(10e6);
        if (now / last - 1.0).abs() < 0.01 {
            return;
        }
        last = now;
    }
}

/// Measures the clock on the calling thread, which must be pinned to the CPU in question.
pub fn measure(cpu: usize) -> CoreClock {
    settle(0.5);
    let chains = Chain::available();
    let mut counter = cycles_counter();
    let mut others: Vec<Vec<f64>> = vec![Vec::new(); chains.len() - 1];
    let mut pmu: Vec<f64> = Vec::new();
    let iters: Vec<u64> = chains.iter().map(|c| c.iterations_for(SAMPLE_NS)).collect();
    let rule = StopRule {
        warmup: 2,
        min_samples: 7,
        max_samples: 51,
        target_rel_ci: 0.005,
        budget_s: 0.3,
    };
    // Each round times the primary chain (the sample the stop rule sees) and then every other
    // way, so that a clock change or a stolen CPU hits all of them alike.
    let primary = sample_until(&rule, || {
        let before = counter.as_mut().and_then(|c| c.read().ok());
        let (ns, lap) = timed(|| chains[0].run_ns(iters[0]));
        let after = counter.as_mut().and_then(|c| c.read().ok());
        let taken = Taken::timed(chains[0].ghz(iters[0], ns), &lap);
        if taken.disturbed.is_none() {
            if let (Some(b), Some(a)) = (before, after)
                && a > b
            {
                pmu.push((a - b) as f64 / ns);
            }
            for (k, c) in chains.iter().enumerate().skip(1) {
                let (ns, lap) = timed(|| c.run_ns(iters[k]));
                let t = Taken::timed(c.ghz(iters[k], ns), &lap);
                if t.disturbed.is_none() {
                    others[k - 1].push(t.value);
                }
            }
        }
        taken
    })
    .map_or_else(|| summarize(&[chains[0].sample_ghz(1e6)]), |s| s.summary);
    let mut estimates = vec![ClockEstimate {
        method: ClockMethod::AddRegister,
        ghz: primary.median,
        samples: primary.n,
    }];
    for (c, v) in chains.iter().skip(1).zip(&others) {
        if !v.is_empty() {
            estimates.push(ClockEstimate {
                method: ClockMethod::of(*c),
                ghz: median(v),
                samples: v.len(),
            });
        }
    }
    if !pmu.is_empty() {
        estimates.push(ClockEstimate {
            method: ClockMethod::PmuCycles,
            ghz: median(&pmu),
            samples: pmu.len(),
        });
    }
    judge(primary, estimates, core_type(cpu))
}

/// The clock from its estimates: trusted when every one is within [`AGREEMENT`] of the primary.
pub fn judge(
    primary: Summary,
    estimates: Vec<ClockEstimate>,
    core_type: Option<String>,
) -> CoreClock {
    let p = primary.median;
    let off: Vec<&ClockEstimate> = estimates
        .iter()
        .skip(1)
        .filter(|e| (e.ghz / p - 1.0).abs() > AGREEMENT)
        .collect();
    let list = |es: &[&ClockEstimate]| {
        es.iter()
            .map(|e| format!("{} {:.2} GHz", e.method.describe(), e.ghz))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let disputed = (!off.is_empty()).then(|| {
        format!(
            "the core clock is disputed: {} give {:.2} GHz but {}; more than {:.0}% apart, so no cycles figures are given (a core that executes a chain faster than its documented latency, or a clock that changed between the chains)",
            ClockMethod::AddRegister.describe(),
            p,
            list(&off),
            100.0 * AGREEMENT
        )
    });
    let checks: Vec<&ClockEstimate> = estimates.iter().skip(1).collect();
    let method = if checks.is_empty() {
        format!(
            "{}, timed with CLOCK_MONOTONIC (no second method could run)",
            ClockMethod::AddRegister.describe()
        )
    } else {
        format!(
            "{}, timed with CLOCK_MONOTONIC; checked against {}",
            ClockMethod::AddRegister.describe(),
            list(&checks)
        )
    };
    CoreClock {
        ghz: disputed.is_none().then_some(primary),
        method,
        estimates,
        disputed,
        core_type,
    }
}

/// `performance` or `efficiency` on a hybrid Intel CPU, from the PMU device whose CPU list holds
/// `cpu`; `None` elsewhere.
pub fn core_type(cpu: usize) -> Option<String> {
    let fs = memsight_core::sysfs::FsRoot::live();
    [("cpu_core", "performance"), ("cpu_atom", "efficiency")]
        .into_iter()
        .find(|(dev, _)| {
            fs.read(&format!("/sys/devices/{dev}/cpus"))
                .and_then(|l| memsight_core::units::parse_cpu_list(&l).ok())
                .is_some_and(|cpus| cpus.contains(&cpu))
        })
        .map(|(_, name)| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(method: ClockMethod, ghz: f64) -> ClockEstimate {
        ClockEstimate {
            method,
            ghz,
            samples: 9,
        }
    }

    #[test]
    fn agreeing_estimates_give_a_trusted_clock() {
        let c = judge(
            summarize(&[3.6, 3.61, 3.59]),
            vec![
                est(ClockMethod::AddRegister, 3.6),
                est(ClockMethod::Multiply, 3.65),
                est(ClockMethod::PmuCycles, 3.55),
            ],
            None,
        );
        assert_eq!(c.trusted_ghz(), Some(3.6));
        assert!(c.disputed.is_none());
        assert!(c.method.contains("checked against"), "{}", c.method);
    }

    /// A collapsed add chain (23 GHz where the multiply chain says 4): no clock, and why.
    #[test]
    fn a_collapsed_chain_gives_no_clock() {
        let c = judge(
            summarize(&[23.1, 23.0, 23.2]),
            vec![
                est(ClockMethod::AddRegister, 23.1),
                est(ClockMethod::Multiply, 4.1),
            ],
            None,
        );
        assert_eq!(c.trusted_ghz(), None);
        let why = c.disputed.unwrap();
        assert!(
            why.contains("23.10 GHz") && why.contains("4.10 GHz"),
            "{why}"
        );
    }

    #[test]
    fn measured_here_the_estimates_agree() {
        let c = memsight_core::pin::run_team(&[0], |_, cpu, _| measure(cpu))
            .unwrap()
            .remove(0);
        assert!(c.estimates.len() >= 2, "{:?}", c.estimates);
        // A wide band: a shared machine may slow one chain's rounds more than the other's.
        let p = c.estimates[0].ghz;
        for e in &c.estimates {
            assert!((e.ghz / p - 1.0).abs() < 0.15, "{:?}", c.estimates);
        }
    }
}
