//! `memsight stream` flags, and their conversion into the suite's config.

use clap::Args;
use memsight_core::env::Environment;
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{self as k, Store};

use crate::bandwidth::{choose_threads, parse_isa};
use crate::stream::StreamConfig;

#[derive(Debug, Clone, Args)]
pub struct StreamArgs {
    /// Elements per array (default: max(10 M, 4 × the sum of last-level caches ÷ 8 B)).
    #[arg(long, value_name = "N")]
    pub elements: Option<usize>,
    /// Times each kernel runs; the first is excluded from the statistics (STREAM's NTIMES).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(2..=100000))]
    pub ntimes: u32,
    /// Padding between the arrays in elements (STREAM's OFFSET); a multiple of 8 (64 bytes).
    #[arg(long, value_name = "ELEMENTS", default_value_t = 0)]
    pub offset: usize,
    /// Threads: a count or `all`.
    #[arg(long, value_name = "N|all", default_value = "all")]
    pub threads: String,
    /// Run on exactly these CPUs (overrides --threads).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Vector width: scalar, sse2, avx2, avx512, neon (default: the widest).
    #[arg(long, value_name = "ISA")]
    pub isa: Option<String>,
    /// Store kind: regular (STREAM's) or nt.
    #[arg(long, value_name = "KIND", default_value = "regular")]
    pub store: String,
    /// Page kind of the arrays: 4k, thp, 2m or 1g.
    #[arg(long, value_name = "KIND", default_value = "4k")]
    pub page_kind: String,
    /// Bind the arrays to this NUMA node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
}

impl StreamArgs {
    pub fn config(&self, env: &Environment) -> Result<StreamConfig> {
        let a = self;
        let isa = parse_isa(a.isa.as_deref())?;
        let store = match a.store.as_str() {
            "regular" => Store::Regular,
            "nt" => Store::Nt,
            other => {
                return Err(Error::input(format!(
                    "unknown store kind '{other}': use regular or nt"
                )));
            }
        };
        k::supports(isa, store).map_err(Error::input)?;
        let cpus = choose_threads(&a.threads, a.cpus.as_deref(), env)?;
        // Each thread's chunk is a multiple of 32 elements (4 AVX-512 vectors).
        let unit = 32 * cpus.len();
        // STREAM's rule: each array at least 4 × the caches the threads hold between them (from
        // the core's latency curve, not the OS's claim), and 10 million elements.
        let want = match a.elements {
            Some(e) => e,
            None => {
                let team = memsight_suites::latency::memory::known_or_probe(env)?
                    .team_cache(cpus.len(), env);
                10_000_000usize.max((4 * team / 8) as usize)
            }
        };
        if want == 0 {
            return Err(Error::input("--elements must be at least 1"));
        }
        let elements = want.div_ceil(unit) * unit;
        if !a.offset.is_multiple_of(8) {
            return Err(Error::input(format!(
                "--offset {} is not a multiple of 8 elements (64 bytes): the kernels use aligned vector loads; use {} or {}",
                a.offset,
                a.offset / 8 * 8,
                a.offset.div_ceil(8) * 8
            )));
        }
        let bytes = 3 * (elements + a.offset) as u64 * 8;
        memsight_core::buffer::check_size(bytes, env)?;
        env.check_node(a.node)?;
        Ok(StreamConfig {
            elements,
            ntimes: a.ntimes as usize,
            offset: a.offset,
            cpus,
            isa,
            store,
            page_kind: a.page_kind.parse()?,
            node: a.node,
        })
    }
}
