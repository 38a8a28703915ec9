//! What `memsight rowbuffer` can be asked, with its defaults, and their resolution against the
//! machine and its DIMMs ([`RowbufferSettings::resolve`] → the study's [`RowbufferConfig`]): the interleave
//! model (given, or from the inventory), the OFFSET range (given, or three predicted periods), the
//! array size (from the caches the CPUs hold, measured), the memory-controller events.

use crate::measure::level::Level;
use std::path::PathBuf;

use memsight_core::env::Environment;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::Isa;
use memsight_model::rowbuffer::{BankHash, Interleave};

use super::counters::CounterSpec;
use super::model::{self, ModelInfo, ModelSource, OffsetRange};
use super::{Kernel, RowbufferConfig};

/// The study as asked for; `None` where the machine decides.
#[derive(Debug, Clone)]
pub struct RowbufferSettings {
    /// The OFFSET range; `None`: three of the longest periods the DIMM model predicts, in
    /// `points_per_period` steps of the shortest.
    pub offsets: Option<OffsetRange>,
    pub points_per_period: u64,
    pub kernels: Vec<Kernel>,
    /// Bytes per array; `None`: twice what the CPUs hold in caches (measured), at least 64 MiB.
    pub array_size: Option<u64>,
    /// Repetitions per memory layout, a fresh buffer each.
    pub reps: usize,
    /// Timed passes per offset.
    pub samples: usize,
    /// CPUs running the kernel; `None`: every allowed CPU.
    pub cpus: Option<Vec<usize>>,
    /// Scatter this much free memory first and sweep 4 KiB memory again.
    pub fragment: Option<u64>,
    /// Reserve (as root) the hugetlb pages the contiguous sweep needs, and release them after.
    pub reserve_huge: bool,
    /// The row-conflict latency probe.
    pub probe: bool,
    /// Base addresses per probed bit.
    pub probe_bases: usize,
    /// DIMM inventory for the period prediction; `None`: this machine's SMBIOS tables.
    pub dmidecode: Option<PathBuf>,
    /// An interleave model given in full instead of the inventory.
    pub interleave: Option<Interleave>,
    /// Memory-controller events besides the controllers' named ones.
    pub counters: Vec<CounterSpec>,
    /// A bank mapping as XOR functions, for the dips it predicts.
    pub bank_hash: Option<BankHash>,
    /// Seed of the probe's address choice.
    pub seed: u64,
    /// Which pass stands for a point: the median, or the best as STREAM reports.
    pub stat: super::Stat,
}

impl Default for RowbufferSettings {
    fn default() -> Self {
        RowbufferSettings {
            offsets: None,
            points_per_period: 16,
            kernels: Kernel::ALL.to_vec(),
            array_size: None,
            reps: 3,
            samples: 3,
            cpus: None,
            fragment: None,
            reserve_huge: false,
            probe: true,
            probe_bases: 16,
            dmidecode: None,
            interleave: None,
            counters: Vec::new(),
            bank_hash: None,
            seed: 1,
            stat: super::Stat::Median,
        }
    }
}

impl RowbufferSettings {
    /// What `memsight run` measures at `level`, over the settings given (the command's
    /// defaults and the run's `--dmidecode`): a short study in thorough runs only (the command
    /// measures the full one).
    pub fn at_level(self, level: Level) -> Option<Self> {
        (level == Level::Thorough).then(|| self.thorough())
    }

    /// `memsight run --thorough`: the default range (three predicted periods) with fewer
    /// points, COPY only, and two repetitions so that advice can flag an offset: fewer points,
    /// not fewer repetitions.
    fn thorough(self) -> Self {
        RowbufferSettings {
            points_per_period: 6,
            kernels: vec![Kernel::Copy],
            reps: 2,
            samples: 3,
            ..self
        }
    }

    /// The validated plan.
    pub fn resolve(
        &self,
        env: &Environment,
        machine: &crate::measure::machine::Machine,
    ) -> Result<RowbufferConfig> {
        if self.kernels.is_empty() {
            return Err(Error::input("--kernels: name at least one kernel"));
        }
        let source = match self.interleave {
            Some(i) => ModelSource::Given(i),
            None => ModelSource::Inventory(self.dmidecode.clone()),
        };
        let model = ModelInfo::resolve(&source);
        let (offsets, range) = self.offsets(model.as_ref())?;
        let cpus = match &self.cpus {
            Some(list) => {
                memsight_core::pin::validate_cpus(list, &env.allowed_cpus)?;
                list.clone()
            }
            None => env.allowed_cpus.clone(),
        };
        // Each CPU's share of an array is whole 256 B kernel steps.
        let unit = 256 * cpus.len() as u64;
        // Every flag is checked before anything is measured (the streaming check below).
        self.check_flags(unit)?;
        // Each array at least twice the caches every CPU holds between them (from the core's
        // latency curve, not the OS's claim) and 64 MiB, so that the sweep runs from DRAM. The
        // streaming check is made and reported, not imposed: where a stream still finds part
        // of these arrays in a cache the dips flatten but stay where they are, and arrays
        // grown to its size can double a study that already takes minutes.
        let (array_bytes, streaming) = match self.array_size {
            Some(b) => (b, None),
            None => {
                let r = machine.streaming(env)?;
                let b = (2 * r.team_cache(cpus.len(), env))
                    .max(64 << 20)
                    .next_multiple_of(unit);
                (b, r.stream)
            }
        };
        let cfg = RowbufferConfig {
            kernels: self.kernels.clone(),
            offsets,
            array_bytes,
            reps: self.reps,
            samples: self.samples,
            cpus,
            isa: Isa::widest(),
            fragment_bytes: self.fragment,
            probe: self.probe,
            probe_bases: self.probe_bases,
            reserve_huge: self.reserve_huge,
            seed: self.seed,
            model,
            range,
            counters: self.counters.clone(),
            bank_hash: self.bank_hash.clone(),
            stat: self.stat,
            streaming,
        };
        memsight_core::buffer::check_size(cfg.buffer_bytes() + self.fragment.unwrap_or(0), env)?;
        Ok(cfg)
    }

    /// Refuses repetitions, a row bit or an array size that cannot be measured; `unit` is what
    /// every array size must be a multiple of.
    fn check_flags(&self, unit: u64) -> Result<()> {
        if self.reps == 0 || self.samples == 0 {
            return Err(Error::input("--reps and --samples must be at least 1"));
        }
        if let Some(h) = &self.bank_hash
            && !(6..64).contains(&h.row_bit)
        {
            return Err(Error::input(format!(
                "--row-bit {}: a bit between 6 and 63",
                h.row_bit
            )));
        }
        if let Some(b) = self.array_size
            && (b < (1 << 20) || !b.is_multiple_of(unit))
        {
            return Err(Error::input(format!(
                "--array-size {}: at least 1 MiB and a multiple of {unit} B (256 B per CPU, so that every CPU's share is whole vectors; and larger than the caches to reach DRAM), e.g. {}",
                format_bytes(b),
                b.max(1 << 20).next_multiple_of(unit)
            )));
        }
        Ok(())
    }

    /// The OFFSET range: as given, or the default from the model's periods (or the assumed
    /// cycle), with why, in words.
    fn offsets(&self, model: Option<&ModelInfo>) -> Result<(Vec<u64>, String)> {
        if let Some(r) = &self.offsets {
            return Ok((r.offsets()?, format!("--offsets {r}")));
        }
        if self.points_per_period == 0 {
            return Err(Error::input("--points-per-period must be at least 1"));
        }
        let (periods, whose) = match model.and_then(|m| m.periods(&self.kernels)) {
            Some(p) => (p, "predicted by the DIMM model"),
            None => (
                model::assumed_periods(&self.kernels),
                "assumed (no DIMM model: a 2 MiB bank cycle, common on 2-socket DDR4 servers)",
            ),
        };
        let o = model::default_offsets(periods, self.points_per_period);
        let words = format!(
            "default: {} longest periods ({}) in steps of {} ({} per shortest period, {}), periods {whose}",
            model::PERIODS_IN_RANGE,
            format_bytes(periods.longest),
            format_bytes(o.get(1).copied().unwrap_or(0)),
            self.points_per_period,
            format_bytes(periods.shortest)
        );
        Ok((o, words))
    }
}
