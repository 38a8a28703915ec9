//! `memsight rowbuffer`: the flags, and the study as a command and as a step of a thorough
//! `memsight run`.

use std::path::PathBuf;

use memsight_core::env::Environment;
use memsight_model::rowbuffer::{BankHash, Interleave, parse_functions};
use memsight_suites::rowbuffer::counters::CounterSpec;
use memsight_suites::rowbuffer::{self, Kernel, OffsetRange, RowbufferSettings, Stat};

use super::in_run::{Given, InRun};
use super::values::size;
use crate::suite::{Outcome, Suite, Ui};

/// Row-buffer conflicts and physical page mapping: STREAM offset sweeps on contiguous and
/// demand-paged memory, dip detection and period prediction, a row-conflict probe, advice.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// OFFSET range and step, STREAM's padding between arrays: START..END/STEP (multiples of
    /// 8 B; all multiples of 64 B keep the vector kernels). Default: three of the longest dip
    /// periods the DIMM model predicts for the kernels swept, the shortest period in
    /// --points-per-period steps (without a model, a 2 MiB bank cycle is assumed: 0..6M/64K).
    #[arg(long, value_name = "RANGE", value_parser = offsets)]
    pub offsets: Option<OffsetRange>,
    /// Points per shortest predicted period in the default range.
    #[arg(long, value_name = "N", default_value_t = RowbufferSettings::default().points_per_period)]
    pub points_per_period: u64,
    /// Kernels (default: all): copy, scale (two arrays), add, triad (three), hpccg (the
    /// application of the Catamount paper, Ferreira et al., CUG 2008: a CG solve on a 27-point
    /// stencil, its matrix and vectors in one buffer with OFFSET between).
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub kernels: Vec<Kernel>,
    /// Bytes per array (default: max(64 MiB, 2 × the caches the CPUs hold between them,
    /// measured on the latency curve)).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub array_size: Option<u64>,
    /// Repetitions per memory layout, a fresh buffer each.
    #[arg(long, value_name = "N", default_value_t = RowbufferSettings::default().reps)]
    pub reps: usize,
    /// Timed passes per offset (median reported).
    #[arg(long, value_name = "N", default_value_t = RowbufferSettings::default().samples)]
    pub samples: usize,
    /// CPUs running the kernel (default: every allowed CPU); or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Scatter this much free memory first (allocate, then free every other 4 KiB page) and
    /// sweep 4 KiB memory again, as after long uptime.
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub fragment: Option<u64>,
    /// As root: reserve the hugetlb pages the contiguous sweep needs for the run (1 GiB pages
    /// where the kernel can still assemble them, else 2 MiB), and release them afterwards.
    #[arg(long)]
    pub reserve_huge: bool,
    /// Skip the row-conflict latency probe.
    #[arg(long)]
    pub no_probe: bool,
    /// Base addresses per probed bit.
    #[arg(long, value_name = "N", default_value_t = RowbufferSettings::default().probe_bases)]
    pub probe_bases: usize,
    /// DIMM inventory for the period prediction (dmidecode text or --dump-bin; default: this
    /// machine's SMBIOS tables).
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
    /// Interleave model instead of the inventory: banks per rank.
    #[arg(long, value_name = "N", requires_all = ["ranks", "channels", "row_bytes"])]
    pub banks: Option<u32>,
    /// Ranks per channel.
    #[arg(long, value_name = "N")]
    pub ranks: Option<u32>,
    /// Channels interleaved (or ganged) below the row size.
    #[arg(long, value_name = "N")]
    pub channels: Option<u32>,
    /// Bytes one ACTIVATE opens across a rank (device page × data devices).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub row_bytes: Option<u64>,
    /// A memory-controller event to count per offset besides the controllers' named ones, in
    /// perf's syntax, e.g. `act=event=0x01,umask=0x0b` (repeatable; needs uncore_imc or amd_umc
    /// PMUs and root).
    #[arg(long, value_name = "NAME=TERMS", value_parser = counter)]
    pub counter: Vec<CounterSpec>,
    /// A bank mapping as XOR functions of physical address bits, `13,17;14,18` (each group's
    /// parity is one bank-index bit: DRAMA's form, or the probe's bank functions from a bare-metal
    /// run): the study says where it predicts COPY dips and whether they recurred.
    #[arg(long, value_name = "FUNCTIONS", requires = "row_bit", value_parser = functions)]
    pub bank_xor: Option<Functions>,
    /// With --bank-xor: the lowest row bit of the physical address.
    #[arg(long, value_name = "BIT", requires = "bank_xor")]
    pub row_bit: Option<u32>,
    /// Seed of the probe's address choice.
    #[arg(long, value_name = "N", default_value_t = RowbufferSettings::default().seed)]
    pub seed: u64,
    /// Which timed pass stands for an offset: the median, or the best as STREAM reports (and
    /// the Catamount paper plotted).
    #[arg(long, value_enum, default_value_t = Stat::Median)]
    pub stat: Stat,
    /// Also write the study as an HTML page (sweep plots, tables, advice).
    #[arg(long, value_name = "FILE", conflicts_with = "fleet")]
    pub html: Option<PathBuf>,
    /// Across nodes, as the Catamount paper ran HPCCG on 28 (`srun memsight rowbuffer --fleet
    /// DIR`): each rank's study under DIR, rank 0's fleet report comparing them.
    #[command(flatten)]
    pub fleet: crate::cli::FleetRankArgs,
}

/// `START..END/STEP`, sizes with units (START may be empty for 0).
fn offsets(s: &str) -> Result<OffsetRange, String> {
    let bad = || format!("'{s}': write START..END/STEP, e.g. 0..1M/8K (multiples of 8 B)");
    let (range, step) = s.split_once('/').ok_or_else(bad)?;
    let (start, end) = range.split_once("..").ok_or_else(bad)?;
    let start = match start.trim() {
        "" | "0" => 0,
        t => size(t)?,
    };
    Ok(OffsetRange {
        start,
        end: size(end)?,
        step: size(step)?,
    })
}

/// `NAME=TERMS`, e.g. `act=event=0x01,umask=0x0b`.
fn counter(s: &str) -> Result<CounterSpec, String> {
    match s.split_once('=') {
        Some((name, terms)) if !name.is_empty() && terms.contains('=') => Ok(CounterSpec {
            name: name.into(),
            terms: terms.into(),
        }),
        _ => Err(format!(
            "'{s}': write NAME=TERMS, e.g. act=event=0x01,umask=0x0b"
        )),
    }
}

/// XOR functions of physical address bits, each a set of bits.
#[derive(Debug, Clone)]
pub struct Functions(Vec<Vec<u32>>);

/// XOR functions of address bits, `13,17;14,18`.
fn functions(s: &str) -> Result<Functions, String> {
    parse_functions(s)
        .map(Functions)
        .ok_or_else(|| format!("'{s}': write XOR functions of address bits 6..63 as 13,17;14,18"))
}

impl Args {
    /// The suite's settings: its defaults, with the flags given.
    pub fn settings(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<RowbufferSettings> {
        let d = RowbufferSettings::default();
        let interleave = match (self.banks, self.ranks, self.channels, self.row_bytes) {
            (Some(banks), Some(ranks), Some(channels), Some(row)) => Some(Interleave {
                banks_per_rank: banks,
                ranks_per_channel: ranks,
                channels,
                rank_row_bytes: row,
            }),
            _ => None,
        };
        Ok(RowbufferSettings {
            offsets: self.offsets,
            points_per_period: self.points_per_period,
            kernels: if self.kernels.is_empty() {
                d.kernels.clone()
            } else {
                self.kernels.to_vec()
            },
            array_size: self.array_size,
            reps: self.reps,
            samples: self.samples,
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            fragment: self.fragment,
            reserve_huge: self.reserve_huge,
            probe: !self.no_probe,
            probe_bases: self.probe_bases,
            dmidecode: self.dmidecode.clone(),
            interleave,
            counters: self.counter.clone(),
            bank_hash: match (&self.bank_xor, self.row_bit) {
                (Some(Functions(functions)), Some(row_bit)) => Some(BankHash {
                    functions: functions.clone(),
                    row_bit,
                }),
                _ => None,
            },
            seed: self.seed,
            stat: self.stat,
        })
    }
}

impl Suite for Args {
    fn html(&self) -> Option<&std::path::Path> {
        self.html.as_deref()
    }

    fn fleet(&self) -> Option<(&std::path::Path, u64)> {
        let f = &self.fleet;
        f.fleet.as_deref().map(|dir| (dir, f.fleet_timeout))
    }

    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        crate::suite::command::<rowbuffer::Rowbuffer>(self.settings(&env.topology)?, env, ui)
    }
}

impl InRun for Args {
    type Suite = rowbuffer::Rowbuffer;

    /// The run's `--dmidecode`, for the bank model.
    fn settings(given: &Given) -> anyhow::Result<RowbufferSettings> {
        Ok(RowbufferSettings {
            dmidecode: given.args.dmidecode.clone(),
            ..Default::default()
        })
    }
}
