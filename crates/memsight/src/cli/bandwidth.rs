//! `memsight bandwidth`: the flags, and the suite as a command and as a step of `memsight run`.

use memsight_core::env::Environment;
use memsight_suites::bandwidth::spec::{self, Named, TestSpec};
use memsight_suites::bandwidth::{self, BandwidthSettings, Data, Threads};
use memsight_suites::measure::machine::Machine;
use memsight_suites::measure::progress::Completed;

use super::in_run::InRun;
use super::sampling::SamplingArgs;
use super::values::{Isa, PageKind, duration, rate, size, threads};
use crate::suite::{Outcome, Suite, Ui};

/// `--test`'s long help, its default list read from the suite's own defaults (so the help can
/// never say other than what runs).
static TEST_HELP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let defaults: Vec<String> = spec::defaults().into_iter().map(|t| t.name).collect();
    format!(
        "Tests to run, comma-separated: read, read-nta (prefetchnta ahead), read-movntdqa, write, write-nt, write-clzero, copy, copy-nt, rmw, all-reads, stream-triad, stream-triad-like, or DRAM read:write ratios R:W / R:W-nt. Default: {} (tests this CPU cannot run, such as write-clzero on a CPU without CLZERO, are left out and said). Beside write-clzero, write-nt also writes zeros, so that CLZERO is compared with stores of the same data.",
        defaults.join(", ")
    )
});

/// Bandwidth by kernel, read:write mix, store kind and data, with thread scaling and a
/// working-set sweep.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Tests to run, comma-separated: read, read-nta (prefetchnta ahead), read-movntdqa, write,
    /// write-nt, write-clzero, copy, copy-nt, rmw, all-reads, stream-triad, stream-triad-like, or
    /// DRAM read:write ratios R:W / R:W-nt.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = test,
          long_help = TEST_HELP.as_str())]
    pub test: Vec<TestSpec>,
    /// Vector width (default: the widest this CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<Isa>,
    /// Threads: a count, or `all`.
    #[arg(long, value_name = "N|all", value_parser = threads, default_value = "all")]
    pub threads: Threads,
    /// Run on exactly these CPUs (overrides --threads), e.g. 0-3,8; or one-per-core, node:N, socket:N, llc:N.
    #[arg(long, value_name = "CPUS", value_parser = crate::cli::values::cpus)]
    pub cpus: Option<memsight_core::cpuset::CpuSet>,
    /// Also run every test at 1, 2, 4 … threads up to the chosen count.
    #[arg(long)]
    pub scaling: bool,
    /// Working set per thread (default: max(128 MiB, 4 × the caches the threads hold between
    /// them, measured on the latency curve, ÷ threads)).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub size: Option<u64>,
    /// One buffer for all threads, each working on its own part, first-touched by the first
    /// thread (all on its node: a program that initialises its data on one thread).
    #[arg(long)]
    pub shared: bool,
    /// Also sweep the working set from inside L1 to memory for read, write and copy (one thread).
    #[arg(long)]
    pub sweep: bool,
    /// Bind every buffer to this NUMA node (default: first touch by its thread).
    #[arg(long, value_name = "NODE")]
    pub node: Option<usize>,
    /// Page kind of the buffers.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = BandwidthSettings::default().page_kind)]
    pub page_kind: PageKind,
    /// What writes write (default: nonzero, 0xef bytes).
    #[arg(long, value_enum)]
    pub pattern: Option<Data>,
    /// Bytes between the end of one of a thread's arrays and the start of the next (default
    /// 2 KiB + 64 B: every array at its own page offset and L1 set; 0 puts them back to back,
    /// at the same page offset, where loads can wait on stores to another array 4 KiB away).
    /// A multiple of 64.
    #[arg(long, value_name = "BYTES", value_parser = gap)]
    pub array_gap: Option<u64>,
    /// Measure the tests in this many alternating rounds (A B C A B C …), each with its share
    /// of the samples and budget, so that a machine that moves meanwhile moves every test alike;
    /// the spread between rounds is reported beside the CI. 1: one test after another.
    #[arg(long, value_name = "N", default_value_t = BandwidthSettings::default().rounds)]
    pub rounds: usize,
    /// Hold a load at this bandwidth instead of measuring: the test (one; read unless --test
    /// names another) on the chosen threads, paced to this many GB/s of program bytes for the
    /// team, for --seconds; e.g. 10GB/s or 500MB/s. A program of known bandwidth, for
    /// `memsight profile -- memsight bandwidth --rate …` or as a tenant beside other work.
    #[arg(long, value_name = "GB/s", value_parser = rate, conflicts_with_all = ["scaling", "sweep"])]
    pub rate: Option<f64>,
    /// How long --rate holds its load (at least 1 s): seconds, or 30s, 5m.
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "10", requires = "rate")]
    pub seconds: f64,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub dax: super::DaxArg,
}

/// A size that may be zero (`0`, `64`, `2K`).
fn gap(s: &str) -> Result<u64, String> {
    if s.trim() == "0" {
        return Ok(0);
    }
    size(s)
}

/// A test by name, or a DRAM read:write ratio `R:W` / `R:W-nt`.
pub fn test(s: &str) -> Result<TestSpec, String> {
    let s = s.trim();
    if let Some(n) = Named::ALL.into_iter().find(|n| n.name() == s) {
        return Ok(n.spec());
    }
    let unknown = || {
        let names: Vec<&str> = Named::ALL.iter().map(|n| n.name()).collect();
        format!(
            "unknown test '{s}': use {}, or a DRAM read:write ratio R:W or R:W-nt (e.g. 3:1, 2:1-nt)",
            names.join(", ")
        )
    };
    let (ratio, nt) = match s.strip_suffix("-nt") {
        Some(r) => (r, true),
        None => (s, false),
    };
    let (r, w) = ratio.split_once(':').ok_or_else(unknown)?;
    let r: usize = r.trim().parse().map_err(|_| unknown())?;
    let w: usize = w.trim().parse().map_err(|_| unknown())?;
    spec::ratio(r, w, nt).map_err(|e| e.to_string())
}

impl Args {
    /// The suite's settings: its defaults, with the flags given.
    pub fn settings(
        &self,
        topo: &memsight_core::topology::Topology,
    ) -> memsight_core::Result<BandwidthSettings> {
        Ok(BandwidthSettings {
            tests: (!self.test.is_empty()).then(|| self.test.clone()),
            skip_unsupported: false,
            isa: self.isa,
            threads: self.threads,
            cpus: crate::cli::values::resolve_cpus(&self.cpus, topo)?,
            scaling: self.scaling,
            size: self.size,
            shared: self.shared,
            sweep: self.sweep,
            node: self.node,
            page_kind: self.page_kind,
            data: self.pattern.unwrap_or(BandwidthSettings::default().data),
            sampling: self.sampling.over(BandwidthSettings::default().sampling),
            dax: self.dax.target()?,
            array_gap: self.array_gap,
            rounds: self.rounds,
        })
    }
}

impl Args {
    /// `--rate`: the one test held at a set rate for `--seconds`.
    fn hold(&self, rate: f64, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        // The checks of what can be held are the suite's (bandwidth::held::run).
        let mut settings = self.settings(&env.topology)?;
        settings
            .tests
            .get_or_insert_with(|| vec![spec::Named::Read.spec()]);
        let cfg = settings.resolve(env, &Machine::new())?;
        let Completed { results, complete } = ui.progress(None, |tick| {
            bandwidth::held::run(&cfg, rate, self.seconds, env, tick)
        })?;
        Ok(Outcome::of(results, complete))
    }
}

impl Suite for Args {
    fn run(&self, env: &Environment, ui: &Ui) -> anyhow::Result<Outcome> {
        if let Some(rate) = self.rate {
            return self.hold(rate, env, ui);
        }
        crate::suite::command::<bandwidth::Bandwidth>(self.settings(&env.topology)?, env, ui)
    }
}

impl InRun for Args {
    type Suite = bandwidth::Bandwidth;
}

#[cfg(test)]
mod tests {
    use super::test;

    #[test]
    fn tests_by_name_or_ratio() {
        assert_eq!(test("copy-nt").unwrap().name, "copy-nt");
        assert_eq!(test("3:1").unwrap().name, "3:1");
        assert_eq!(test("2:1-nt").unwrap().name, "2:1-nt");
        for bad in ["frob", "1:2", "0:0", "9:1", "0:1-nt", "a:b", "2:2"] {
            assert!(test(bad).is_err(), "{bad}");
        }
        for t in memsight_suites::bandwidth::spec::defaults() {
            assert!(test(&t.name).is_ok(), "{}", t.name);
        }
    }
}
