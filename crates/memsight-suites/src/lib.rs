//! memsight's measurement suites. Each takes a typed config and returns typed results; none
//! knows the command line, the terminal or HTML (the `memsight` binary owns those).
//!
//! - [`clock`]: the core clock, measured and cross-checked, that cycles figures come from;
//! - [`counters`]: memory-controller counters (activates, precharges, CAS commands) where the
//!   kernel exposes the controllers;
//! - [`latency`]: the latency ladder L1 → DRAM, TLB cost, memory-level parallelism;
//! - [`bandwidth`]: bandwidth by read/write mix and store kind, thread scaling, working-set sweep;
//! - [`stream`]: STREAM 5.10's four kernels, counted as STREAM counts;
//! - [`loaded`]: latency under load, one curve per traffic mix;
//! - [`numa`]: latency and bandwidth matrices over NUMA nodes and memory tiers;
//! - [`c2c`]: core-to-core cache-line transfer latency;
//! - [`dimms`]: the DIMM inventory, its ceilings and the what-if planner;
//! - [`rowbuffer`]: STREAM offset sweeps, page contiguity and the row-conflict probe;
//! - [`alloc`]: allocator fragmentation (RSS against live heap) per allocator;
//! - [`pmem`]: PMDK pool utilisation, allocation classes and arena strategies;
//! - [`tiers`]: memory tiers (CXL, persistent memory, HBM): latency, bandwidth, granularity,
//!   near-memory sweep and weighted interleave;
//! - [`drift`]: how the memory available to the machine moved during a run (reference probes);
//! - [`machine`]: the machine facts the suites size working sets from, found once and passed;
//! - [`reach`]: where memory begins on a core's latency curve, and the memory working sets
//!   sized from it;
//! - [`plan`]: which CPUs and nodes the c2c, NUMA and loaded-latency suites use, from the topology;
//! - [`sampling`]: the sampling settings every measuring suite takes;
//! - [`memlevel`]: cache levels and memory, as results name them.

#![forbid(unsafe_code)]

pub mod alloc;
pub mod bandwidth;
pub mod c2c;
pub mod clock;
pub mod counters;
pub mod dimms;
pub mod drift;
pub mod latency;
pub mod loaded;
pub mod machine;
pub mod memlevel;
mod nan_as_null;
pub mod numa;
pub mod plan;
pub mod pmem;
pub mod profile;
pub mod reach;
pub mod rowbuffer;
pub mod sampling;
pub mod scan;
pub mod stream;
#[cfg(test)]
mod testdata;
pub mod tiers;

/// The finding every command measuring on `--dax` memory adds when the memory is emulated.
pub fn dax_finding(m: &memsight_core::buffer::FileBacking) -> Option<String> {
    (m.kind == memsight_core::buffer::DaxKind::Emulated).then(|| {
        format!(
            "every figure is EMULATED DAX: {} is {}, so these are DRAM figures through a shared file mapping, not persistent or CXL memory",
            m.path, m.filesystem
        )
    })
}
