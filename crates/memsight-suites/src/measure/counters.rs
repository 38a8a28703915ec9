//! Memory-controller counters, where the kernel exposes the controllers as PMUs (Intel
//! `uncore_imc_*`, AMD `amd_umc_*`). An uncore PMU counts for its whole socket on the CPU its
//! `cpumask` names, other processes' traffic included; a count is the sum over the controllers.
//!
//! Two uses:
//! - the row-buffer sweep counts activates, precharges (page misses) and CAS commands per point,
//!   from just before the point's team starts (for HPCCG that includes generating the matrix) to
//!   just after its last timed pass ([`Controllers::plan`]): the controllers' named sysfs events
//!   for those, plus any the user gives (`--counter NAME=TERMS`, perf's syntax:
//!   `act=event=0x01,umask=0x0b`), encoded through each PMU's format fields;
//! - the bandwidth suite counts read and write CAS commands (64 bytes each) over the sampled
//!   rounds of a memory point ([`Controllers::cas`]), so that DRAM bytes are counted beside the
//!   estimate that assumes a read for ownership per regular store.

use std::collections::BTreeMap;

use memsight_core::perf::{Counter, Pmu, Scope, controller_pmus};
use memsight_core::sysfs::FsRoot;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An event the user asked for: a name for the results and perf's `term=value,…`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CounterSpec {
    pub name: String,
    pub terms: String,
}

/// Named events worth counting per offset: row-buffer misses and the traffic they come with.
fn relevant(name: &str) -> bool {
    ["act", "pre", "miss", "cas"]
        .iter()
        .any(|k| name.to_ascii_lowercase().contains(k))
}

/// Events by the name the results give them, encoded for one PMU.
type Events = Vec<(String, memsight_core::perf::Event)>;

/// The controllers and events a sweep reads.
pub struct Controllers {
    /// (PMU, CPU it is read on, events encoded for it).
    pmus: Vec<(Pmu, usize, Events)>,
}

/// Counters open for one point.
pub struct Running {
    counters: Vec<(String, Counter)>,
}

impl Controllers {
    /// What this machine offers; `Err` says, once, why nothing will be counted.
    pub fn plan(fs: &FsRoot, extra: &[CounterSpec]) -> Result<Controllers, String> {
        let found = controller_pmus(fs);
        if found.is_empty() {
            return Err("memory-controller counters: none exposed here (no uncore_imc or amd_umc PMU in /sys/bus/event_source/devices, as in most VMs): row conflicts per offset are inferred from bandwidth alone".into());
        }
        let mut pmus = Vec::new();
        for p in found {
            let mut events: Events = p
                .events
                .iter()
                .filter(|(n, _)| relevant(n))
                .filter_map(|(n, spec)| p.event(spec).map(|e| (n.clone(), e)))
                .collect();
            events.extend(
                extra
                    .iter()
                    .filter_map(|s| p.event(&s.terms).map(|e| (s.name.clone(), e))),
            );
            let cpu = p.cpus.first().copied().unwrap_or(0);
            if !events.is_empty() {
                pmus.push((p, cpu, events));
            }
        }
        if pmus.is_empty() {
            return Err("memory-controller counters: the controllers name no activate, precharge or CAS event; give one with --counter NAME=TERMS (e.g. act=event=0x01,umask=0x0b from the vendor's uncore guide)".into());
        }
        Ok(Controllers { pmus })
    }

    /// The read and write CAS events (`cas_count_read`, `cas_count_write`: 64 bytes each) of
    /// every controller that names them; `Err` says why nothing will be counted.
    pub fn cas(fs: &FsRoot) -> Result<Controllers, String> {
        let found = controller_pmus(fs);
        if found.is_empty() {
            return Err("no memory-controller counters are exposed here (no uncore_imc or amd_umc PMU), so DRAM bytes are estimated, not counted".into());
        }
        let pmus: Vec<(Pmu, usize, Events)> = found
            .into_iter()
            .filter_map(|p| {
                let events: Events = p
                    .events
                    .iter()
                    .filter(|(n, _)| {
                        n.as_str() == "cas_count_read" || n.as_str() == "cas_count_write"
                    })
                    .filter_map(|(n, spec)| p.event(spec).map(|e| (n.clone(), e)))
                    .collect();
                let cpu = p.cpus.first().copied().unwrap_or(0);
                (!events.is_empty()).then_some((p, cpu, events))
            })
            .collect();
        if pmus.is_empty() {
            return Err("the memory controllers name no cas_count_read/cas_count_write events, so DRAM bytes are estimated, not counted".into());
        }
        Ok(Controllers { pmus })
    }

    /// The PMUs read, for the method text.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.pmus.iter().map(|(p, _, _)| p.name.as_str()).collect();
        let events: std::collections::BTreeSet<&str> = self
            .pmus
            .iter()
            .flat_map(|(_, _, e)| e.iter().map(|(n, _)| n.as_str()))
            .collect();
        format!(
            "{} counted on {}",
            events.into_iter().collect::<Vec<_>>().join(", "),
            names.join(", ")
        )
    }

    /// Opens every counter; `Err` when the kernel refuses one (not root, perf_event_paranoid).
    pub fn start(&self) -> Result<Running, String> {
        let mut counters = Vec::new();
        for (p, cpu, events) in &self.pmus {
            for (name, e) in events {
                let c = Counter::open(*e, Scope::Cpu(*cpu)).map_err(|err| {
                    format!(
                        "memory-controller counters: the kernel refused {} on {} ({err}); run as root or lower /proc/sys/kernel/perf_event_paranoid",
                        name, p.name
                    )
                })?;
                counters.push((name.clone(), c));
            }
        }
        Ok(Running { counters })
    }
}

/// Bytes one CAS command moves: a 64-byte burst (BL8 on a 64-bit DDR4 channel, BL16 on a 32-bit
/// DDR5 subchannel).
pub const CAS_BYTES: u64 = 64;

/// CAS counts by event as the bytes they moved.
pub fn cas_bytes(counts: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    counts
        .into_iter()
        .map(|(k, v)| (k, v * CAS_BYTES))
        .collect()
}

impl Running {
    /// Bytes moved since `start` by CAS-counting events (`cas_count_read`, `cas_count_write`),
    /// summed over the controllers, by event name.
    pub fn finish_cas_bytes(self) -> BTreeMap<String, u64> {
        cas_bytes(self.finish())
    }

    /// Counts since `start`, summed over the controllers, by event name.
    pub fn finish(self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for (name, mut c) in self.counters {
            let v = c.read().unwrap_or(0);
            *out.entry(name).or_insert(0) += v;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_without_controllers_says_so_and_names_are_chosen() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        let why = Controllers::plan(&fs, &[]).err().unwrap();
        assert!(why.contains("none exposed"));
        for (name, want) in [
            ("cas_count_read", true),
            ("act_count", true),
            ("pre_count_page_miss", true),
            ("clockticks", false),
        ] {
            assert_eq!(relevant(name), want, "{name}");
        }
        // Controllers that name nothing relevant, and no --counter: say how to give one.
        let d = "/sys/bus/event_source/devices/amd_umc_0";
        fs.put(&format!("{d}/type"), "23\n").unwrap();
        fs.put(&format!("{d}/format/event"), "config:0-7\n")
            .unwrap();
        let why = Controllers::plan(&fs, &[]).err().unwrap();
        assert!(why.contains("--counter"), "{why}");
        let c = Controllers::plan(
            &fs,
            &[CounterSpec {
                name: "act".into(),
                terms: "event=0x05".into(),
            }],
        )
        .unwrap();
        assert_eq!(c.describe(), "act counted on amd_umc_0");
    }
}
