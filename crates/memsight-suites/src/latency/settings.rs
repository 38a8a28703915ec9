//! What `memsight latency` can be asked, with its defaults, and their check against the machine
//! ([`LatencySettings::resolve`] → the ladder's [`LadderConfig`]).

use crate::measure::level::Level;
use memsight_core::buffer::{DaxTarget, PageKind};
use memsight_core::env::Environment;
use memsight_core::{Error, Result};
use memsight_kernels::chain::Pattern;

use super::LadderConfig;
use crate::measure::sampling::Sampling;
use crate::measure::sizes::log_sizes;

/// The order in which the chase visits lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Order {
    /// Random inside a window of pages, windows in random order (multichase; the default).
    Window,
    /// Random over the whole working set (includes TLB misses with small pages).
    Random,
    /// Fixed stride, increasing addresses (lmbench lat_mem_rd; prefetchers hide latency).
    Stride,
}

/// Points per octave above the cache below the last level, whatever the ladder's own
/// density ([`LatencySettings::sizes`]).
pub const DENSE_PER_OCTAVE: u32 = 4;

/// The ladder as asked for; `None` where the machine decides.
#[derive(Debug, Clone)]
pub struct LatencySettings {
    /// Smallest working set.
    pub min_size: u64,
    /// Largest working set; `None`: until the memory plateau has held (crate::measure::reach), at most
    /// 4 × the largest reported cache.
    pub max_size: Option<u64>,
    pub points_per_octave: u32,
    /// Distance between chased elements, bytes (a power of two ≥ 64).
    pub stride: u64,
    pub order: Order,
    /// Window of the window order, in 4 KiB pages.
    pub window_pages: u32,
    pub page_kind: PageKind,
    /// The second ladder on huge pages, for the TLB cost.
    pub tlb: bool,
    /// Largest number of parallel chases of the MLP sweep (1: none).
    pub parallel: u32,
    /// CPUs to measure from, one ladder each; `None`: the first allowed CPU.
    pub cpus: Option<Vec<usize>>,
    pub node: Option<usize>,
    pub sampling: Sampling,
    pub seed: u64,
    /// Every step also writes its line (the write chase).
    pub write: bool,
    pub dax: Option<&'static DaxTarget>,
    /// At least [`DENSE_PER_OCTAVE`] points over the three octaves above the cache below the
    /// last level ([`LatencySettings::sizes`]): set by [`LatencySettings::quick`], whose two
    /// points an octave elsewhere would miss a shared last-level cache's small usable part.
    pub dense_below_llc: bool,
}

impl Default for LatencySettings {
    fn default() -> Self {
        LatencySettings {
            min_size: 4096,
            max_size: None,
            points_per_octave: 4,
            stride: 128,
            order: Order::Window,
            window_pages: 64,
            page_kind: PageKind::Base4K,
            tlb: true,
            parallel: 10,
            cpus: None,
            node: None,
            sampling: Sampling {
                target_ci: 0.01,
                min_samples: 7,
                point_budget: 0.3,
                sample_ms: 2.0,
            },
            seed: 0x5eed,
            write: false,
            dax: None,
            dense_below_llc: false,
        }
    }
}

impl LatencySettings {
    /// What `memsight run` measures at `level`, from the run's latency flags: coarser when
    /// quick, as given otherwise.
    pub fn at_level(self, level: Level) -> Option<Self> {
        Some(if level == Level::Quick {
            self.quick()
        } else {
            self
        })
    }

    /// `memsight run --quick`: two sizes per octave, no huge-page twin, no MLP sweep, shorter
    /// points.
    fn quick(self) -> Self {
        LatencySettings {
            points_per_octave: self.points_per_octave.min(2),
            dense_below_llc: true,
            parallel: 1,
            tlb: false,
            sampling: Sampling {
                point_budget: self.sampling.point_budget.min(0.15),
                ..self.sampling
            },
            ..self
        }
    }

    /// The ladder's working sets: `points_per_octave` from `min` to `max`, and at least
    /// [`DENSE_PER_OCTAVE`] over the three octaves above the cache below the last level. A
    /// level is a plateau of three points or more, and the part of a shared last-level cache
    /// one guest can hold may be a single octave there (measured on an AMD EPYC Zen 4 guest:
    /// from 2 to about 3.5 MiB of a 32 MiB L3, and the quick ladder's two points an octave
    /// found that L3 in some runs and not in others). Dedicated caches span several octaves
    /// and keep their points either way.
    fn sizes(&self, min: u64, max: u64, env: &Environment) -> Vec<u64> {
        let stride = self.stride;
        let mut sizes = log_sizes(min, max, self.points_per_octave, stride);
        let topo = &env.topology;
        let below_last = topo
            .last_level_cache()
            .and_then(|llc| llc.level.checked_sub(1))
            .and_then(|l| topo.cache(l));
        let denser = self.dense_below_llc && self.points_per_octave < DENSE_PER_OCTAVE;
        if let (true, Some(c)) = (denser, below_last) {
            let lo = c.size_bytes.max(min);
            let hi = (8 * c.size_bytes).min(max);
            if lo < hi {
                sizes.extend(log_sizes(lo, hi, DENSE_PER_OCTAVE, stride));
                sizes.sort_unstable();
                sizes.dedup();
            }
        }
        sizes
    }

    /// The validated plan. Errors are input errors naming the fix.
    pub fn resolve(&self, env: &Environment) -> Result<LadderConfig> {
        let min = self.min_size;
        let max = self
            .max_size
            .unwrap_or_else(|| crate::measure::reach::ladder_cap(env));
        let stride = self.stride;
        if stride < 64 || !stride.is_power_of_two() {
            return Err(Error::input(format!(
                "stride {stride} B is not supported: use a power of two of at least 64 (a cache line), e.g. 128"
            )));
        }
        if min < stride {
            return Err(Error::input(format!(
                "--min-size {min} B is smaller than the stride ({stride} B): use at least {stride}"
            )));
        }
        if max < min {
            return Err(Error::input(format!(
                "--max-size ({max} B) is smaller than --min-size ({min} B): swap them or raise --max-size"
            )));
        }
        if self.dax.is_some() && self.node.is_some() {
            return Err(Error::input(
                "--dax and --node exclude each other: DAX memory is where its device is",
            ));
        }
        // DAX memory comes in its own pages: no huge-page twin for the TLB cost.
        let tlb_compare = self.tlb && self.page_kind == PageKind::Base4K && self.dax.is_none();
        // Both ladders' buffers exist at once: check the total before allocating anything.
        let buffers = if tlb_compare { 2 } else { 1 };
        if self.dax.is_none() {
            memsight_core::buffer::check_size(max * buffers, env)?;
        }
        let cpus = match &self.cpus {
            Some(list) => list.clone(),
            None => vec![*env.allowed_cpus.first().ok_or_else(|| {
                Error::input("this process may not run on any CPU (empty cpuset)")
            })?],
        };
        memsight_core::pin::validate_cpus(&cpus, &env.allowed_cpus)?;
        env.check_node(self.node)?;
        let (rule, sample_ns) = self.sampling.rule()?;
        let pattern = match self.order {
            Order::Window => Pattern::Window {
                window_bytes: self.window_pages as usize * 4096,
            },
            Order::Random => Pattern::Random,
            Order::Stride => Pattern::Stride,
        };
        Ok(LadderConfig {
            sizes: self.sizes(min, max, env),
            stride: stride as usize,
            pattern,
            page_kind: self.page_kind,
            tlb_compare,
            max_parallel: self.parallel as usize,
            cpus,
            node: self.node,
            interleave: false,
            rule,
            sample_ns,
            seed: self.seed,
            write: self.write,
            dax: self.dax,
            stop_at_memory: self.max_size.is_none(),
            block: 0,
        })
    }
}
