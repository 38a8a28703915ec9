//! `memsight rowbuffer` flags, and their conversion into the suite's config.

use std::path::PathBuf;

use clap::Args;
use memsight_core::env::Environment;
use memsight_core::units::{format_bytes, parse_size};
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::Isa;
use memsight_model::rowbuffer::{BankHash, Interleave, parse_functions};

use crate::rowbuffer::counters::CounterSpec;
use crate::rowbuffer::{Config, Kernel, ModelInfo, ModelSource, model, parse_offsets};

#[derive(Debug, Clone, Args)]
pub struct RowbufferArgs {
    /// OFFSET range and step, STREAM's padding between arrays: START..END/STEP (multiples of
    /// 8 B; all multiples of 64 B keep the vector kernels). Default: three of the longest dip
    /// periods the DIMM model predicts for the kernels swept, the shortest period in
    /// --points-per-period steps (without a model, a 2 MiB bank cycle is assumed: 0..6M/64K).
    #[arg(long, value_name = "RANGE")]
    pub offsets: Option<String>,
    /// Points per shortest predicted period in the default range.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub points_per_period: u64,
    /// Kernels: copy, scale (two arrays), add, triad (three), hpccg (the application of the Catamount paper, Ferreira et al., CUG 2008: a
    /// CG solve on a 27-point stencil, its matrix and vectors in one buffer with OFFSET between).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "copy,scale,add,triad,hpccg"
    )]
    pub kernels: String,
    /// Bytes per array (default: max(64 MiB, 2 × the last-level cache)).
    #[arg(long, value_name = "SIZE")]
    pub array_size: Option<String>,
    /// Repetitions per memory layout, a fresh buffer each.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub reps: usize,
    /// Timed passes per offset (median reported).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub samples: usize,
    /// CPUs running the kernel (default: every allowed CPU).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Scatter this much free memory first (allocate, then free every other 4 KiB page) and
    /// sweep 4 KiB memory again, as after long uptime.
    #[arg(long, value_name = "SIZE")]
    pub fragment: Option<String>,
    /// As root: reserve the hugetlb pages the contiguous sweep needs for the run (1 GiB pages
    /// where the kernel can still assemble them, else 2 MiB), and release them afterwards.
    #[arg(long)]
    pub reserve_huge: bool,
    /// Skip the row-conflict latency probe.
    #[arg(long)]
    pub no_probe: bool,
    /// Base addresses per probed bit.
    #[arg(long, value_name = "N", default_value_t = 16)]
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
    #[arg(long, value_name = "SIZE")]
    pub row_bytes: Option<String>,
    /// A memory-controller event to count per offset besides the controllers' named ones, in
    /// perf's syntax, e.g. `act=event=0x01,umask=0x0b` (repeatable; needs uncore_imc or amd_umc
    /// PMUs and root).
    #[arg(long, value_name = "NAME=TERMS")]
    pub counter: Vec<String>,
    /// A bank mapping as XOR functions of physical address bits, `13,17;14,18` (each group's
    /// parity is one bank-index bit: DRAMA's form, or the probe's bank functions from a bare-metal
    /// run): the study says where it predicts COPY dips and whether they recurred.
    #[arg(long, value_name = "FUNCTIONS", requires = "row_bit")]
    pub bank_xor: Option<String>,
    /// With --bank-xor: the lowest row bit of the physical address.
    #[arg(long, value_name = "BIT", requires = "bank_xor")]
    pub row_bit: Option<u32>,
    /// Seed of the probe's address choice.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Also write the study as an HTML page (sweep plots, tables, advice).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

impl RowbufferArgs {
    pub fn config(&self, env: &Environment) -> Result<Config> {
        let a = self;
        let kernels = parse_kernels(&a.kernels)?;
        let model = ModelInfo::resolve(&a.model_source()?);
        let (offsets, range) = offsets(a, model.as_ref(), &kernels)?;
        let cpus = match &a.cpus {
            Some(list) => memsight_core::pin::parse_cpus(list, &env.allowed_cpus)?,
            None => env.allowed_cpus.clone(),
        };
        // Each array at least twice the caches every CPU holds between them (from the core's
        // latency curve, not the OS's claim) and 64 MiB, so that the sweep runs from DRAM.
        let array_bytes = match &a.array_size {
            Some(s) => parse_size(s)?,
            None => {
                let team = memsight_suites::latency::memory::known_or_probe(env)?
                    .team_cache(cpus.len(), env);
                (2 * team).max(64 << 20)
            }
        };
        if array_bytes < (1 << 20) || array_bytes % 64 != 0 {
            return Err(Error::input(format!(
                "--array-size {}: at least 1 MiB and a multiple of 64 B (and larger than the caches to reach DRAM)",
                format_bytes(array_bytes)
            )));
        }
        let fragment_bytes = a.fragment.as_deref().map(parse_size).transpose()?;
        let counters = a
            .counter
            .iter()
            .map(|c| match c.split_once('=') {
                Some((name, terms)) if !name.is_empty() && terms.contains('=') => Ok(CounterSpec {
                    name: name.into(),
                    terms: terms.into(),
                }),
                _ => Err(Error::input(format!(
                    "--counter '{c}': write NAME=TERMS, e.g. act=event=0x01,umask=0x0b"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        if a.reps == 0 || a.samples == 0 {
            return Err(Error::input("--reps and --samples must be at least 1"));
        }
        let cfg = Config {
            kernels,
            offsets,
            array_bytes,
            reps: a.reps,
            samples: a.samples,
            cpus,
            isa: Isa::widest(),
            fragment_bytes,
            probe: !a.no_probe,
            probe_bases: a.probe_bases,
            reserve_huge: a.reserve_huge,
            seed: a.seed,
            model,
            range,
            counters,
            bank_hash: bank_hash(a)?,
        };
        memsight_core::buffer::check_size(cfg.buffer_bytes() + fragment_bytes.unwrap_or(0), env)?;
        Ok(cfg)
    }
}

/// `--bank-xor` and `--row-bit`.
fn bank_hash(a: &RowbufferArgs) -> Result<Option<BankHash>> {
    let (Some(text), Some(row_bit)) = (&a.bank_xor, a.row_bit) else {
        return Ok(None);
    };
    let functions = parse_functions(text).ok_or_else(|| {
        Error::input(format!(
            "--bank-xor '{text}': write XOR functions of address bits 6..63 as 13,17;14,18"
        ))
    })?;
    if !(6..64).contains(&row_bit) {
        return Err(Error::input(format!(
            "--row-bit {row_bit}: a bit between 6 and 63"
        )));
    }
    Ok(Some(BankHash { functions, row_bit }))
}

/// `--kernels`: any of STREAM's four and HPCCG.
fn parse_kernels(list: &str) -> Result<Vec<Kernel>> {
    list.split(',')
        .map(|k| {
            Kernel::ALL
                .into_iter()
                .find(|op| op.name().eq_ignore_ascii_case(k.trim()))
                .ok_or_else(|| {
                    Error::input(format!(
                        "unknown kernel '{}' in --kernels: copy, scale, add, triad, hpccg",
                        k.trim()
                    ))
                })
        })
        .collect()
}

/// The OFFSET range: `--offsets`, or the default from the model's periods (or the assumed
/// cycle), with why, in words.
fn offsets(
    a: &RowbufferArgs,
    model: Option<&ModelInfo>,
    kernels: &[Kernel],
) -> Result<(Vec<u64>, String)> {
    if let Some(text) = &a.offsets {
        return Ok((parse_offsets(text)?, format!("--offsets {text}")));
    }
    if a.points_per_period == 0 {
        return Err(Error::input("--points-per-period must be at least 1"));
    }
    let (periods, whose) = match model.and_then(|m| m.periods(kernels)) {
        Some(p) => (p, "predicted by the DIMM model"),
        None => (
            model::assumed_periods(kernels),
            "assumed (no DIMM model: a 2 MiB bank cycle, common on 2-socket DDR4 servers)",
        ),
    };
    let o = model::default_offsets(periods, a.points_per_period);
    let words = format!(
        "default: {} longest periods ({}) in steps of {} ({} per shortest period, {}), periods {whose}",
        model::PERIODS_IN_RANGE,
        format_bytes(periods.longest),
        format_bytes(o.get(1).copied().unwrap_or(0)),
        a.points_per_period,
        format_bytes(periods.shortest)
    );
    Ok((o, words))
}

impl RowbufferArgs {
    /// Where the interleave model comes from: all four model flags, or the DIMM inventory.
    pub fn model_source(&self) -> Result<ModelSource> {
        match (
            self.banks,
            self.ranks,
            self.channels,
            self.row_bytes.as_deref(),
        ) {
            (Some(banks), Some(ranks), Some(channels), Some(row)) => {
                Ok(ModelSource::Given(Interleave {
                    banks_per_rank: banks,
                    ranks_per_channel: ranks,
                    channels,
                    rank_row_bytes: parse_size(row)?,
                }))
            }
            _ => Ok(ModelSource::Inventory(self.dmidecode.clone())),
        }
    }
}
