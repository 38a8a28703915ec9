//! memsight's measurement kernels: the code that touches memory while the clock runs.
//!
//! - [`chain`]: how a pointer-chase chain is laid out (single cycle, randomised inside TLB windows);
//! - [`chase`]: the dependent-load loops, one chain or k in parallel;
//! - [`flush`]: evicting a buffer from the caches after building it;
//! - [`clock`]: the core's effective clock, from a chain of dependent adds.
//! - [`rowconflict`]: the DRAMA-style two-address access pattern of the row-buffer probe;
//! - [`allocwork`], [`allocstats`]: the allocator study's workload and allocator statistics.
//!
//! `unsafe` lives here (and in memsight-core's buffer and pinning code) and nowhere else.

pub mod allocstats;
pub mod allocwork;
pub mod bandwidth;
pub mod chain;
pub mod chase;
pub mod clock;
pub mod flush;
pub mod loadgen;
pub mod pingpong;
pub mod rowconflict;
