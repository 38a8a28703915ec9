//! memsight's measurement kernels: the code that touches memory while the clock runs.
//!
//! - [`chain`]: how a pointer-chase chain is laid out (single cycle, randomised inside TLB windows);
//! - [`chase`]: the dependent-load loops, one chain or k in parallel;
//! - [`flush`]: evicting a buffer from the caches after building it;
//! - [`clock`]: the core's effective clock, from a chain of dependent adds.
//! - [`granular`]: random whole-block reads and writes (access granularity, random bandwidth);
//! - [`rowconflict`]: the DRAMA-style two-address access pattern of the row-buffer probe;
//! - [`loadgen`], [`pingpong`]: the loaded-latency traffic generators and the core-to-core ping-pong;
//! - [`coherence`]: many cores on one line (contended increments, false sharing, a message ring);
//! - [`bandwidth`]: read, write, copy and STREAM kernels per vector width;
//! - [`cg`]: the HPCCG-style conjugate-gradient kernel (27-point stencil in CSR);
//! - [`allocwork`], [`allocstats`]: the allocator study's workload and allocator statistics
//!   (glibc/tcmalloc/jemalloc/mimalloc introspection through `dlsym`);
//! - [`pmemobj`]: PMDK's libpmemobj loaded with `dlopen` for the pool study (memsight builds and
//!   runs without it).
//!
//! The C interfaces of the libraries the studies measure live here, beside the workloads that
//! call them, because they are the other place besides the loops that needs `unsafe`.
//! `unsafe` lives here and in memsight-core (buffer: mmap/mbind; pin: affinity; pagemap;
//! cpuclock: thread CPU time), each block with a `// SAFETY:` comment. memsight-model,
//! memsight-suites and the binary forbid it.

pub mod allocstats;
pub mod allocwork;
pub mod bandwidth;
pub mod cg;
pub mod chain;
pub mod chase;
pub mod clock;
pub mod coherence;
pub mod flush;
pub mod granular;
pub mod loadgen;
pub mod pingpong;
pub mod pmemobj;
pub mod rowconflict;
