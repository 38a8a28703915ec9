//! Typed values of the flags: sizes, CPU lists and thread counts parsed by clap; the closed sets
//! (page kinds, vector widths, store kinds) are the lower crates' own enums, `ValueEnum`s behind
//! their `clap` feature, so that `--help` lists them and a wrong value is refused by clap in one
//! line.

pub use memsight_core::buffer::PageKind;
pub use memsight_kernels::bandwidth::{Isa, Store};
use memsight_suites::bandwidth::Threads;

/// A byte count with an optional binary suffix (`64K`, `1.5GiB`).
pub fn size(s: &str) -> Result<u64, String> {
    memsight_core::units::parse_size(s).map_err(|e| e.to_string())
}

/// A duration: seconds (`90`) or with units (`30s`, `10m`, `2h`, `1d 6h`), as humantime reads it.
pub fn duration(s: &str) -> Result<f64, String> {
    if let Ok(secs) = s.trim().parse::<f64>() {
        return Ok(secs);
    }
    humantime::parse_duration(s)
        .map(|d| d.as_secs_f64())
        .map_err(|e| format!("{e} (e.g. 90, 30s, 10m, 2h, 1d)"))
}

/// A bandwidth in GB/s: `10`, `10GB/s`, or MB/s as `500MB/s` ([`memsight_core::units::parse_rate`]).
pub fn rate(s: &str) -> Result<f64, String> {
    memsight_core::units::parse_rate(s).map_err(|e| e.to_string())
}

/// A list of CPUs or nodes, as `0-3,8` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List(pub Vec<usize>);

/// A CPU (or node) list: numbers and ranges, `0-3,8`.
pub fn list(s: &str) -> Result<List, String> {
    memsight_core::units::parse_cpu_list(s)
        .map(List)
        .map_err(|e| e.to_string())
}

/// CPUs as users name them: a list, `one-per-core`, `node:N`, `socket:N`, `llc:N`.
pub fn cpus(s: &str) -> Result<memsight_core::cpuset::CpuSet, String> {
    memsight_core::cpuset::CpuSet::parse(s).map_err(|e| e.to_string())
}

/// The CPUs a `--cpus` choice names on this machine, when one was given.
pub fn resolve_cpus(
    c: &Option<memsight_core::cpuset::CpuSet>,
    topo: &memsight_core::topology::Topology,
) -> memsight_core::Result<Option<Vec<usize>>> {
    c.as_ref().map(|c| c.resolve(topo)).transpose()
}

/// The list's numbers, when one was given.
pub fn numbers(l: &Option<List>) -> Option<Vec<usize>> {
    l.as_ref().map(|l| l.0.clone())
}

/// `all` or a thread count of at least 1.
pub fn threads(s: &str) -> Result<Threads, String> {
    match s.trim() {
        "all" => Ok(Threads::All),
        n => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .map(Threads::Count)
            .ok_or_else(|| format!("'{s}': use a count of at least 1 or 'all'")),
    }
}

/// A size default as `--help` shows it and the size parser reads it back: `4KiB`, not `4096`.
pub fn size_text(bytes: u64) -> String {
    let short = memsight_core::units::format_bytes(bytes).replace(' ', "");
    // Exact only: a rounded default would parse back to another size.
    if memsight_core::units::parse_size(&short).ok() == Some(bytes) {
        short
    } else {
        bytes.to_string()
    }
}

/// A list of size defaults, each as [`size_text`].
pub fn sizes_text(sizes: &[u64]) -> Vec<String> {
    sizes.iter().map(|b| size_text(*b)).collect()
}
