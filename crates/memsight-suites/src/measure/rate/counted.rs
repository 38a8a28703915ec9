//! DRAM bytes: estimated from the kernel, and counted by the memory controllers where they can
//! be read.
//!
//! The estimate adds a read for ownership to every regular store: the core reads a line before
//! it writes part of it. Ice Lake-SP and later Xeons (SpecI2M) and Arm's Neoverse cores (write
//! streaming mode) can skip that read for full-line stores under load (Laukemann et al.,
//! "Analyzing the Performance of Write-Allocate Evasion on Modern Processors", IPDPS 2024; Arm's
//! technical reference manuals), so on those cores the estimate
//! overstates the traffic of write and copy kernels by up to the stores' own bytes. Where the
//! kernel exposes the memory controllers' CAS counters (Intel `uncore_imc_*` `cas_count_read`
//! and `cas_count_write`, 64 bytes each), each point also carries the bytes they counted over its
//! sampled rounds. Those counters count the whole socket, other processes included.

use std::sync::Mutex;
use std::time::Instant;

use memsight_core::env::Environment;
use memsight_core::team::Bracket;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::measure::counters::{Controllers, Running};

/// DRAM bytes the controllers counted over a point's sampled rounds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CountedDram {
    /// Counted DRAM bytes per program byte of the kernel over the same rounds (read + write).
    pub per_program_byte: f64,
    /// Counted DRAM bytes ÷ the rounds' wall time, 10⁹ B/s.
    pub gbs: f64,
    /// Counted bytes by event (`cas_count_read`, `cas_count_write`), 64 per CAS command.
    pub bytes_by_event: std::collections::BTreeMap<String, u64>,
}

/// How the DRAM bytes of a bandwidth result were obtained.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DramAccounting {
    /// The estimate's assumption, in words.
    pub assumption: String,
    /// The core is known to skip the read for ownership of full-line stores under load, so the
    /// estimate may overstate write traffic.
    pub core_may_evade: bool,
    /// Which counters were read, or why none were.
    pub counters: String,
}

/// What a result says about its DRAM bytes, and a finding where the estimate may be wrong.
pub fn accounting(env: &Environment, counters: &Result<Controllers, String>) -> DramAccounting {
    DramAccounting {
        assumption: "estimated DRAM bytes = program bytes + one read for ownership per line of regular stores (none for non-temporal stores, CLZERO or read-modify-write)".to_string(),
        core_may_evade: env.cpu.core_class.may_evade_write_allocate(),
        counters: match counters {
            Ok(c) => format!("counted: {}", c.describe()),
            Err(why) => why.clone(),
        },
    }
}

/// The finding for a core that may evade the read for ownership.
pub fn evasion_finding(env: &Environment, counted: bool) -> Option<String> {
    env.cpu.core_class.may_evade_write_allocate().then(|| {
        format!(
            "estimated DRAM bytes may overstate write traffic here: this core ({}) can skip the read for ownership of full-line stores under load (Laukemann et al., IPDPS 2024); {}",
            env.cpu.core_name(),
            if counted {
                "compare with the counted DRAM bytes"
            } else {
                "without memory-controller counters the program bytes are the safer figure for write and copy kernels"
            }
        )
    })
}

/// Counters around one point's sampled rounds.
pub struct Counting<'a> {
    controllers: Option<&'a Controllers>,
    running: Mutex<Option<(Running, Instant)>>,
    done: Mutex<Option<(std::collections::BTreeMap<String, u64>, f64)>>,
    /// Why counting failed (the kernel refused a counter), reported once.
    pub refused: Mutex<Option<String>>,
}

impl<'a> Counting<'a> {
    pub fn new(controllers: Option<&'a Controllers>) -> Self {
        Counting {
            controllers,
            running: Mutex::new(None),
            done: Mutex::new(None),
            refused: Mutex::new(None),
        }
    }

    fn open(&self) {
        let Some(c) = self.controllers else { return };
        match c.start() {
            Ok(r) => *lock(&self.running) = Some((r, Instant::now())),
            Err(why) => *lock(&self.refused) = Some(why),
        }
    }

    fn close(&self) {
        if let Some((r, t)) = lock(&self.running).take() {
            let ns = t.elapsed().as_nanos() as f64;
            *lock(&self.done) = Some((r.finish_cas_bytes(), ns));
        }
    }

    /// Runs `f` with a bracket that opens the counters before the sampled rounds and closes
    /// them after.
    pub fn around<T>(&self, f: impl FnOnce(&Bracket) -> T) -> T {
        let open = || self.open();
        let close = || self.close();
        f(&Bracket {
            open: &open,
            close: &close,
        })
    }

    /// The counted bytes, given the program bytes the rounds moved.
    pub fn result(&self, program_bytes: u64) -> Option<CountedDram> {
        let (bytes, ns) = lock(&self.done).take()?;
        let total: u64 = bytes.values().sum();
        Some(CountedDram {
            per_program_byte: total as f64 / program_bytes.max(1) as f64,
            gbs: total as f64 / ns.max(1.0),
            bytes_by_event: bytes,
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::sysfs::FsRoot;

    /// The CAS events of an Intel memory controller as the kernel describes them (uncore_imc:
    /// event 0x04, umask 0x03 read / 0x0c write on Skylake-SP through Ice Lake-SP).
    #[test]
    fn cas_events_are_found_or_their_absence_said() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        assert!(
            Controllers::cas(&fs)
                .err()
                .unwrap()
                .contains("estimated, not counted")
        );
        for imc in ["uncore_imc_0", "uncore_imc_1"] {
            let d = format!("/sys/bus/event_source/devices/{imc}");
            fs.put(&format!("{d}/type"), "18\n").unwrap();
            fs.put(&format!("{d}/cpumask"), "0\n").unwrap();
            fs.put(&format!("{d}/format/event"), "config:0-7\n")
                .unwrap();
            fs.put(&format!("{d}/format/umask"), "config:8-15\n")
                .unwrap();
            fs.put(
                &format!("{d}/events/cas_count_read"),
                "event=0x04,umask=0x03\n",
            )
            .unwrap();
            fs.put(
                &format!("{d}/events/cas_count_write"),
                "event=0x04,umask=0x0c\n",
            )
            .unwrap();
            fs.put(&format!("{d}/events/act_count"), "event=0x01\n")
                .unwrap();
        }
        let c = Controllers::cas(&fs).unwrap();
        assert_eq!(
            c.describe(),
            "cas_count_read, cas_count_write counted on uncore_imc_0, uncore_imc_1"
        );
    }

    #[test]
    fn counted_bytes_are_64_per_cas_and_per_program_byte() {
        let c = Counting::new(None);
        let counts = [
            ("cas_count_read".to_string(), 1000),
            ("cas_count_write".to_string(), 500),
        ];
        *lock(&c.done) = Some((crate::measure::counters::cas_bytes(counts.into()), 1000.0));
        let r = c.result(64_000).unwrap();
        assert_eq!(r.bytes_by_event["cas_count_read"], 64_000);
        assert!((r.per_program_byte - 1.5).abs() < 1e-9);
        assert!((r.gbs - 96.0).abs() < 1e-9);
        // Nothing counted (no controllers): no figure.
        assert!(Counting::new(None).result(1).is_none());
    }
}
