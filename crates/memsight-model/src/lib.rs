//! memsight's models: pure functions, no I/O.
//!
//! - [`dmidecode`]: SMBIOS type 16/17 records from `dmidecode` text, as people paste it;
//! - [`ddr`]: DDR4/DDR5 device and module organisation (banks, rows, page size, chips per rank,
//!   capacity), activate-window timings per speed bin, and theoretical bandwidth arithmetic;
//! - [`rowbuffer`]: where row-buffer conflicts recur under linear bank interleaving.

#![forbid(unsafe_code)]

pub mod ddr;
pub mod dmidecode;
pub mod partnum;
pub mod plan;
pub mod platform;
pub mod power;
pub mod rowbuffer;
pub mod smbios;
