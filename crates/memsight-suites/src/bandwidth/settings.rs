//! What `memsight bandwidth` can be asked, with its defaults, and their check against the machine
//! ([`BandwidthSettings::resolve`] → the [`BandwidthConfig`] the suite runs).

use crate::measure::level::Level;
use memsight_core::buffer::{DaxTarget, PageKind};
use memsight_core::env::Environment;
use memsight_core::units::MIB;
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{GRANULE, Isa};

use crate::measure::machine::Machine;
use crate::measure::rate::{
    BandwidthConfig, NONZERO, Named, TestSpec, Threads, spec, supported_isa, team,
};
use crate::measure::sampling::Sampling;

/// What writes write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Data {
    /// 0xef bytes: real data never travels compressed.
    Nonzero,
    /// Zero bytes.
    Zero,
    /// Both, to show whether zero lines are cheaper (a finding).
    Both,
}

/// The bandwidth study as asked for; `None` where the machine decides.
#[derive(Debug, Clone)]
pub struct BandwidthSettings {
    /// Tests; `None`: [`spec::defaults`], less those this CPU cannot run.
    pub tests: Option<Vec<TestSpec>>,
    /// Leave out (and say so) the given tests this CPU cannot run, instead of refusing them: for
    /// the lists `memsight run` picks, not for the user's `--test`.
    pub skip_unsupported: bool,
    /// Vector width; `None`: the widest this CPU has.
    pub isa: Option<Isa>,
    pub threads: Threads,
    /// Exactly these CPUs (overrides `threads`).
    pub cpus: Option<Vec<usize>>,
    /// Every test at 1, 2, 4 … threads too.
    pub scaling: bool,
    /// Working set per thread; `None`: four times what the team holds in caches (from the
    /// core's latency curve), at least 128 MiB.
    pub size: Option<u64>,
    /// One buffer for the team, first-touched by the first thread.
    pub shared: bool,
    /// The working-set sweep from L1 to memory (read, write, copy on one thread).
    pub sweep: bool,
    pub node: Option<usize>,
    pub page_kind: PageKind,
    pub data: Data,
    pub sampling: Sampling,
    pub dax: Option<&'static DaxTarget>,
    /// Bytes between a thread's arrays; `None`: [`DEFAULT_ARRAY_GAP`] (each array at its
    /// own page offset). A multiple of 64 B, at most 64 MiB.
    pub array_gap: Option<u64>,
    /// Alternating rounds ([`super::BandwidthConfig::rounds`]); at least 1.
    pub rounds: usize,
}

impl Default for BandwidthSettings {
    fn default() -> Self {
        BandwidthSettings {
            tests: None,
            skip_unsupported: false,
            isa: None,
            threads: Threads::All,
            cpus: None,
            scaling: false,
            size: None,
            shared: false,
            sweep: false,
            node: None,
            page_kind: PageKind::Thp,
            data: Data::Nonzero,
            sampling: Sampling {
                target_ci: 0.01,
                min_samples: 7,
                point_budget: 1.0,
                sample_ms: 20.0,
            },
            dax: None,
            array_gap: None,
            rounds: 3,
        }
    }
}

impl BandwidthSettings {
    /// What `memsight run` measures at `level`, over the settings given (the command's
    /// defaults in a run): the main tests (read, write and NT copy when quick; everything when
    /// thorough). Every level measures bandwidth.
    pub fn at_level(self, level: Level) -> Option<Self> {
        Some(match level {
            Level::Quick => self.quick(),
            Level::Thorough => self.thorough(),
            _ => self.run_default(),
        })
    }

    /// `memsight run --quick`: read, write and NT copy, short points.
    fn quick(self) -> Self {
        BandwidthSettings {
            tests: Some(named(&[Named::Read, Named::Write, Named::CopyNt])),
            skip_unsupported: true,
            sampling: Sampling {
                min_samples: 3,
                point_budget: 0.3,
                ..self.sampling
            },
            // A few samples per test: alternating them would take longer than it tells.
            rounds: 1,
            ..self
        }
    }

    /// `memsight run`: the main kernels, store kinds and two of MLC's mixes.
    fn run_default(self) -> Self {
        let mut tests = named(&[
            Named::Read,
            Named::Write,
            Named::WriteNt,
            Named::Copy,
            Named::CopyNt,
        ]);
        for (r, w) in [(3, 1), (2, 1)] {
            tests.push(spec::ratio(r, w, false).expect("MLC's mixes are valid"));
        }
        tests.push(Named::StreamTriadLike.spec());
        BandwidthSettings {
            tests: Some(tests),
            skip_unsupported: true,
            sampling: Sampling {
                min_samples: 5,
                point_budget: 0.5,
                ..self.sampling
            },
            ..self
        }
    }

    /// `memsight run --thorough`: every test with thread scaling, zeros against data, and the
    /// working-set sweep.
    fn thorough(self) -> Self {
        BandwidthSettings {
            scaling: true,
            data: Data::Both,
            sweep: true,
            ..self
        }
    }

    /// The validated plan: every flag is checked against the machine before anything is
    /// measured; then default sizes are found from `machine` (which may run the latency probe
    /// and the streaming check) and tests whose arrays cannot fit are left out with the reason.
    pub fn resolve(&self, env: &Environment, machine: &Machine) -> Result<BandwidthConfig> {
        let v = self.validate(env)?;
        let n = v.cpus.len();
        // Sizes that could be memory are sized and labelled from the core's latency curve;
        // sizes within the L2 (per core, reported truthfully even in VMs) need no probe.
        let l2 = env.topology.cache(2).map_or(0, |c| c.size_bytes);
        // A default size is also checked by streaming (a latency curve alone can call memory
        // what a stream still finds in a cache: `crate::measure::reach::stream`).
        let reach = match self.size {
            None => Some(machine.streaming(env)?),
            Some(b) if b <= l2 && !self.sweep => None,
            Some(_) => Some(machine.memory(env)?),
        };
        // Together the threads hold what each core reaches, up to every reported LLC.
        let team_cache = reach.map_or(env.llc_total_bytes(), |r| r.team_cache(n, env));
        let bytes_per_thread = self
            .size
            .unwrap_or_else(|| (128 * MIB).max((4 * team_cache).div_ceil(n as u64)));
        // Default sizes grow per test until each array of the team reaches the streaming
        // check's size (a read needs one such array, a 3:1 mix four).
        let team_array_floor = match (self.size, reach.and_then(|r| r.stream)) {
            (None, Some(s)) => s.from_bytes,
            _ => 0,
        };
        let max_arrays = v.tests.iter().map(|t| t.arrays() as u64).max().unwrap_or(1);
        if bytes_per_thread < max_arrays * GRANULE as u64 {
            return Err(Error::input(format!(
                "--size {bytes_per_thread} B is too small: each thread needs at least {} for its {max_arrays} arrays",
                max_arrays * GRANULE as u64
            )));
        }
        let (tests, mut skipped) = if self.dax.is_some() {
            (v.tests, v.skipped)
        } else {
            fitting(v.tests, v.skipped, env, |t| {
                let floor = t.arrays() as u64 * team_array_floor.div_ceil(n as u64);
                bytes_per_thread.max(floor) * n as u64
            })?
        };
        let sweep_sizes = if self.sweep {
            // Past the caches the team holds and past where the curve puts memory.
            let memory = reach.map_or(0, |r| 2 * r.memory.from_bytes);
            let top = (4 * team_cache).max(256 * MIB).max(memory);
            crate::measure::sizes::log_sizes(16 * 1024, top, 2, 4096)
        } else {
            Vec::new()
        };
        if let Some(&max) = sweep_sizes.last()
            && let Err(e) = memsight_core::buffer::check_size(max, env)
        {
            // Only a default sweep is shortened; the sizes were not asked for one by one.
            skipped.push(format!("working-set sweep: {e}"));
        }
        let sweep_sizes = sweep_sizes
            .into_iter()
            .filter(|&b| memsight_core::buffer::check_size(b, env).is_ok())
            .collect();
        Ok(BandwidthConfig {
            tests,
            isa: v.isa,
            cpus: v.cpus,
            thread_counts: v.thread_counts,
            bytes_per_thread,
            team_array_floor,
            rounds: self.rounds,
            shared: self.shared,
            interleave: false,
            sweep_sizes,
            node: self.node,
            page_kind: self.page_kind,
            patterns: v.patterns,
            rule: v.rule,
            sample_ns: v.sample_ns,
            skipped,
            weighted: None,
            dax: self.dax,
            reach,
            array_gap: v.array_gap,
        })
    }

    /// Every check that needs no measurement: tests this CPU runs, the team, the flags that
    /// exclude each other, the node, the sampling rule.
    fn validate(&self, env: &Environment) -> Result<Validated> {
        let isa = supported_isa(self.isa)?;
        let (tests, skipped) = self.supported_tests(isa)?;
        let cpus = team(self.threads, self.cpus.as_deref(), env)?;
        let array_gap = array_gap(self.array_gap)?;
        crate::measure::sampling::check_rounds(self.rounds)?;
        if self.dax.is_some() && self.node.is_some() {
            return Err(Error::input(
                "--dax and --node exclude each other: DAX memory is where its device is",
            ));
        }
        if let (Some(b), None) = (self.size, &self.dax) {
            memsight_core::buffer::check_size(b * cpus.len() as u64, env)?;
        }
        env.check_node(self.node)?;
        let (rule, sample_ns) = self.sampling.rule()?;
        let thread_counts = if self.scaling {
            let mut v: Vec<usize> = std::iter::successors(Some(1usize), |x| Some(x * 2))
                .take_while(|&x| x < cpus.len())
                .collect();
            v.push(cpus.len());
            v
        } else {
            vec![cpus.len()]
        };
        let patterns = match self.data {
            Data::Nonzero => vec![NONZERO],
            Data::Zero => vec![0],
            Data::Both => vec![NONZERO, 0],
        };
        Ok(Validated {
            isa,
            tests,
            skipped,
            cpus,
            thread_counts,
            array_gap,
            rule,
            sample_ns,
            patterns,
        })
    }

    /// The tests asked for that this CPU runs, and why the others do not.
    fn supported_tests(&self, isa: Isa) -> Result<(Vec<TestSpec>, Vec<String>)> {
        let mut skipped = Vec::new();
        let Some(tests) = &self.tests else {
            let mut v = Vec::new();
            for t in spec::defaults() {
                match t.supported(isa) {
                    Ok(()) => v.push(t),
                    Err(why) => skipped.push(format!("{}: {why}", t.name)),
                }
            }
            return Ok((v, skipped));
        };
        let mut v = Vec::new();
        for t in tests {
            match t.supported(isa) {
                Ok(()) => v.push(t.clone()),
                Err(why) if self.skip_unsupported => skipped.push(format!("{}: {why}", t.name)),
                Err(why) => return Err(Error::input(format!("test '{}': {why}", t.name))),
            }
        }
        if v.is_empty() {
            return Err(Error::input(format!(
                "none of the tests asked for runs on this CPU ({})",
                skipped.join("; ")
            )));
        }
        Ok((v, skipped))
    }
}

/// What [`BandwidthSettings::validate`] checked.
struct Validated {
    isa: Isa,
    tests: Vec<TestSpec>,
    skipped: Vec<String>,
    cpus: Vec<usize>,
    thread_counts: Vec<usize>,
    array_gap: usize,
    rule: memsight_core::stats::StopRule,
    sample_ns: f64,
    patterns: Vec<u64>,
}

/// The tests whose team working set (`bytes`) fits what this process may have; the others are
/// skipped with the reason. None fitting is refused with the first one's reason
/// ([`Error::DoesNotFit`]: `memsight run` then skips the suite).
fn fitting(
    tests: Vec<TestSpec>,
    mut skipped: Vec<String>,
    env: &Environment,
    bytes: impl Fn(&TestSpec) -> u64,
) -> Result<(Vec<TestSpec>, Vec<String>)> {
    let mut kept = Vec::new();
    let mut first_refusal = None;
    for t in tests {
        match memsight_core::buffer::check_size(bytes(&t), env) {
            Ok(()) => kept.push(t),
            Err(e) => {
                skipped.push(format!("{}: {e}", t.name));
                first_refusal.get_or_insert(e);
            }
        }
    }
    match first_refusal {
        Some(e) if kept.is_empty() => Err(e),
        _ => Ok((kept, skipped)),
    }
}

/// The gap between a thread's arrays, checked: vector kernels need every array 64-byte aligned.
fn array_gap(asked: Option<u64>) -> Result<usize> {
    let Some(gap) = asked else {
        return Ok(super::DEFAULT_ARRAY_GAP);
    };
    if !gap.is_multiple_of(64) || gap > 64 * MIB {
        return Err(Error::input(format!(
            "--array-gap {gap} B: give a multiple of 64 B (the vector kernels need aligned arrays) up to 64 MiB"
        )));
    }
    Ok(gap as usize)
}

fn named(tests: &[Named]) -> Vec<TestSpec> {
    tests.iter().map(|t| t.spec()).collect()
}
