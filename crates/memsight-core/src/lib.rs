//! memsight's engine: what every measurement needs and none of them should write twice.
//!
//! - [`topology`] and [`env`]: the machine and its state, with warnings for what distorts results;
//! - [`buffer`]: memory of a chosen page kind, optionally bound to a NUMA node, verified;
//! - [`pin`]: pinned threads and a barrier-started team;
//! - [`cpuclock`]: whether a measuring thread kept its CPU, and team spans;
//! - [`timer`] and [`stats`]: one timing and statistics scheme for every mode;
//! - [`report`]: the versioned JSON envelope every command writes;
//! - [`finding`]: a finding with the figures it cites and what they rest on;
//! - [`perf`]: event counters through perf_event_open, and PMUs as sysfs describes them.
//!
//! `unsafe` here: buffer (mmap, mbind, madvise), pin (sched_setaffinity), pagemap, cpuclock
//! (clock_gettime), perf (perf_event_open), cancel (SIGPIPE's default action, SIGHUP left
//! ignored under `nohup`, the parent's pid); each block has a `// SAFETY:` comment.

pub mod buffer;
pub mod cancel;
pub mod cgroup;
pub mod cpu;
pub mod cpuclock;
pub mod cpuset;
pub mod edac;
pub mod env;
pub mod error;
pub mod files;
pub mod finding;
pub mod groupjoin;
pub mod hugepool;
pub mod input;
pub mod memblocks;
pub mod memcg;
pub mod nvdimm;
pub mod pagemap;
pub mod perf;
pub mod pin;
pub mod ratio;
pub mod report;
pub mod resctrl;
pub mod stats;
pub mod sysfs;
pub mod team;
pub mod teambarrier;
pub mod timer;
pub mod topology;
pub mod units;

pub use error::{Error, Result};
