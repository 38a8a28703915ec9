//! The measuring layer: what every suite measures with, and what they learn about the machine
//! before they measure what they were asked.
//!
//! A suite (a sibling folder of this one) imports from here and from the lower crates, never
//! from another suite, so that following one suite's figures means reading that suite and this
//! layer only. The composite studies that run other suites' measurements as parts of theirs
//! (`tiers`, `profile`) are the declared exceptions; `scripts/check-layers.py` enforces the rule
//! and names the exceptions.
//!
//! - [`chase`]: the pointer chase: one chain's point, a ladder's climb, short samples beside a load;
//! - [`rate`]: a team's bandwidth over a test's arrays: test specs, teams, ISA support, rounds;
//! - [`sizes`]: log-spaced working-set sizes;
//! - [`sampling`]: the sampling settings and stop rules every measuring suite takes;
//! - [`machine`]: the machine facts working sets are sized from, found once and passed;
//! - [`reach`]: where memory begins on a core's latency curve, and the streaming check;
//! - [`inventory`]: the DIMM inventory from SMBIOS or a dmidecode dump;
//! - [`clock`]: the core clock, measured and cross-checked, that cycle figures come from;
//! - [`counters`]: memory-controller counters (activates, precharges, CAS commands);
//! - [`timing`]: each suite's predicted time in a run, and a run fitted to a time budget;
//! - [`level`]: how much `memsight run` measures, which each suite's settings follow;
//! - [`memlevel`]: cache levels and memory, as results name them;
//! - [`progress`]: the progress callback every suite ticks and the completion it returns.

pub mod chase;
pub mod clock;
pub mod counters;
pub mod inventory;
pub mod level;
pub mod machine;
pub mod memlevel;
pub(crate) mod nan_as_null;
pub mod progress;
pub mod rate;
pub mod reach;
pub mod sampling;
pub mod sizes;
pub mod timing;

/// The finding every command measuring on `--dax` memory adds when the memory is emulated.
pub fn dax_finding(m: &memsight_core::buffer::FileBacking) -> Option<String> {
    (m.kind == memsight_core::buffer::DaxKind::Emulated).then(|| {
        format!(
            "every figure is EMULATED DAX: {} is {}, so these are DRAM figures through a shared file mapping, not persistent or CXL memory",
            m.path, m.filesystem
        )
    })
}
