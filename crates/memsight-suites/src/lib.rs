//! memsight's measurement suites, as siblings over one measuring layer ([`measure`]). Each
//! suite is its folder: it takes typed settings, checks them before anything is measured,
//! resolves them against the machine and returns typed results; none knows the command line,
//! the terminal or HTML (the `memsight` binary owns those). A suite imports [`measure`] and the
//! lower crates, never another suite, except the composite studies (`tiers`, `profile`), which
//! say so in their opening comment.
//!
//! - [`latency`]: the latency ladder L1 → DRAM, TLB cost, memory-level parallelism;
//! - [`bandwidth`]: bandwidth by read/write mix and store kind, thread scaling, working-set sweep;
//! - [`stream`]: STREAM 5.10's four kernels, counted as STREAM counts;
//! - [`loaded`]: latency under load, one curve per traffic mix;
//! - [`numa`]: latency and bandwidth matrices over NUMA nodes and memory tiers;
//! - [`c2c`]: core-to-core cache-line transfer latency;
//! - [`coherence`]: cache-line contention: one counter from 1 to N cores, false sharing, a message
//!   ring;
//! - [`dimms`]: the DIMM inventory, its ceilings and the what-if planner;
//! - [`rowbuffer`]: STREAM offset sweeps, page contiguity and the row-conflict probe;
//! - [`alloc`]: allocator fragmentation (RSS against live heap) per allocator;
//! - [`pmem`]: PMDK pool utilisation, allocation classes and arena strategies;
//! - [`scan`]: which physical ranges of memory are slow, range by range;
//! - [`tiers`] (composite): memory tiers (CXL, persistent memory, HBM): latency, bandwidth,
//!   granularity, near-memory sweep and weighted interleave;
//! - [`profile`] (composite): where a program sits on the machine's memory curves.
//!
//! Every suite keeps one contract, [`contract::SuiteContract`]: settings, the level that decides
//! whether a run measures it, a plan that checks and predicts, the measurement.
//!
//! Beside the suites, one module is `memsight run`'s own and no suite's: [`probes`], the run's
//! reference probes and the rule that reads their series as the machine moving (drift); and
//! [`suite_id`] names every suite, with what the layers around them decide about each. Like a
//! suite, each names only [`measure`] ([`contract`] also names [`suite_id`]).

#![forbid(unsafe_code)]

pub mod alloc;
pub mod bandwidth;
pub mod c2c;
pub mod coherence;
pub mod contract;
pub mod dimms;
pub mod latency;
pub mod loaded;
pub mod measure;
pub mod numa;
#[cfg(test)]
mod placement_tests;
pub mod pmem;
pub mod probes;
pub mod profile;
pub mod rowbuffer;
pub mod scan;
pub mod stream;
pub mod suite_id;
#[cfg(test)]
mod testdata;
pub mod tiers;
