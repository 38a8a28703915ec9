//! Hardware and software event counters through `perf_event_open(2)`, and the kernel's
//! description of a PMU in sysfs (`/sys/bus/event_source/devices/<pmu>/`: its `type`, the
//! `format/` fields that say where each term of an event goes in `config`/`config1`, the named
//! `events/`, and the `cpumask` of CPUs an uncore PMU is read on).
//!
//! Used for memory-controller counters (Intel `uncore_imc_*`, AMD `amd_umc_*`): activates,
//! precharges and CAS commands per measured point. Counting mode only (no sampling).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::sysfs::FsRoot;

/// `perf_event_attr` up to `config1` (`PERF_ATTR_SIZE_VER0`, 64 bytes): every kernel since 2.6.31
/// accepts it, and counting needs nothing after it.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// Bit 0 disabled, 1 inherit, 2 pinned, 3 exclusive, 4 exclude_user, 5 exclude_kernel,
    /// 6 exclude_hv.
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// `PERF_TYPE_SOFTWARE` and its `PERF_COUNT_SW_TASK_CLOCK`: used to test the plumbing on machines
/// without hardware counters.
pub const TYPE_SOFTWARE: u32 = 1;
pub const SW_TASK_CLOCK: u64 = 1;

/// Which events a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The PMU's `type`.
    pub pmu_type: u32,
    pub config: u64,
    pub config1: u64,
}

/// Whom a counter watches: this thread (user space only), or a whole CPU (uncore PMUs count
/// for their whole socket on the CPU their `cpumask` names; needs root or
/// `perf_event_paranoid` ≤ 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    ThisThread,
    Cpu(usize),
}

/// One open counter; counting from the moment it is opened.
#[derive(Debug)]
pub struct Counter {
    file: File,
}

impl Counter {
    /// Opens a counter for `event` over `scope`.
    pub fn open(event: Event, scope: Scope) -> std::io::Result<Counter> {
        let (pid, cpu, flags) = match scope {
            // A thread's own counters in user space are allowed at perf_event_paranoid 2.
            Scope::ThisThread => (0, -1, EXCLUDE_KERNEL | EXCLUDE_HV),
            // Uncore PMUs refuse the exclude bits.
            Scope::Cpu(c) => (-1, c as libc::c_int, 0),
        };
        let attr = Attr {
            kind: event.pmu_type,
            size: std::mem::size_of::<Attr>() as u32,
            config: event.config,
            config1: event.config1,
            flags,
            ..Attr::default()
        };
        // SAFETY: `attr` is a valid perf_event_attr of the size it declares and outlives the
        // call; the other arguments are plain integers.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                pid as libc::pid_t,
                cpu,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel returned a new file descriptor that nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        Ok(Counter {
            file: File::from(owned),
        })
    }

    /// The count so far.
    pub fn read(&mut self) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        // A counter file reads as one u64 each time, from its start.
        (&self.file).read_exact(&mut b)?;
        Ok(u64::from_ne_bytes(b))
    }
}

/// A PMU as sysfs describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pmu {
    pub name: String,
    pub pmu_type: u32,
    /// CPUs it is read on (uncore: one per socket); empty for core PMUs.
    pub cpus: Vec<usize>,
    /// Format fields: name → (`config` word 0 or 1, bit ranges).
    formats: BTreeMap<String, (u8, Vec<(u32, u32)>)>,
    /// Named events: name → `term=value,…`.
    pub events: BTreeMap<String, String>,
}

impl Pmu {
    /// Reads `/sys/bus/event_source/devices/<name>`; `None` when it does not exist.
    pub fn load(fs: &FsRoot, name: &str) -> Option<Pmu> {
        let dir = format!("/sys/bus/event_source/devices/{name}");
        let pmu_type = fs.read(&format!("{dir}/type"))?.trim().parse().ok()?;
        let cpus = fs
            .read(&format!("{dir}/cpumask"))
            .and_then(|m| crate::units::parse_cpu_list(m.trim()).ok())
            .unwrap_or_default();
        let mut formats = BTreeMap::new();
        for f in fs.list(&format!("{dir}/format")) {
            if let Some(spec) = fs.read(&format!("{dir}/format/{f}"))
                && let Some(parsed) = parse_format(spec.trim())
            {
                formats.insert(f, parsed);
            }
        }
        let mut events = BTreeMap::new();
        for e in fs.list(&format!("{dir}/events")) {
            if e.contains('.') {
                continue; // `.scale` and `.unit` files describe an event, they are not one
            }
            if let Some(spec) = fs.read(&format!("{dir}/events/{e}")) {
                events.insert(e, spec.trim().to_string());
            }
        }
        Some(Pmu {
            name: name.to_string(),
            pmu_type,
            cpus,
            formats,
            events,
        })
    }

    /// Encodes `term=value,…` (perf's syntax: `event=0x02,umask=0x01`; a bare term means 1)
    /// through the format fields; `None` when a term is unknown or a value does not parse.
    pub fn event(&self, spec: &str) -> Option<Event> {
        let mut words = [0u64; 2];
        for term in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (name, value) = match term.split_once('=') {
                Some((n, v)) => (n.trim(), parse_number(v.trim())?),
                None => (term, 1),
            };
            let (word, ranges) = self.formats.get(name)?;
            let mut v = value;
            for &(lo, hi) in ranges {
                let width = hi - lo + 1;
                let mask = if width >= 64 {
                    u64::MAX
                } else {
                    (1u64 << width) - 1
                };
                words[*word as usize] |= (v & mask) << lo;
                v = if width >= 64 { 0 } else { v >> width };
            }
        }
        Some(Event {
            pmu_type: self.pmu_type,
            config: words[0],
            config1: words[1],
        })
    }
}

/// `config:0-7,21` or `config1:0-15` → (word, bit ranges).
fn parse_format(spec: &str) -> Option<(u8, Vec<(u32, u32)>)> {
    let (word, bits) = spec.split_once(':')?;
    let word = match word {
        "config" => 0,
        "config1" => 1,
        _ => return None,
    };
    let ranges = bits
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => r.parse().ok().map(|a| (a, a)),
        })
        .collect::<Option<Vec<_>>>()?;
    Some((word, ranges))
}

fn parse_number(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Memory-controller PMUs (Intel `uncore_imc_*`, AMD `amd_umc_*`) the kernel exposes.
pub fn controller_pmus(fs: &FsRoot) -> Vec<Pmu> {
    fs.list("/sys/bus/event_source/devices")
        .into_iter()
        .filter(|d| d.starts_with("uncore_imc") || d.starts_with("amd_umc"))
        .filter_map(|d| Pmu::load(fs, &d))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_encoded_through_the_format_fields() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        let d = "/sys/bus/event_source/devices/uncore_imc_0";
        fs.put(&format!("{d}/type"), "18\n").unwrap();
        fs.put(&format!("{d}/cpumask"), "0,28\n").unwrap();
        fs.put(&format!("{d}/format/event"), "config:0-7\n")
            .unwrap();
        fs.put(&format!("{d}/format/umask"), "config:8-15\n")
            .unwrap();
        fs.put(&format!("{d}/format/edge"), "config:18\n").unwrap();
        fs.put(&format!("{d}/format/thresh"), "config:24-31\n")
            .unwrap();
        fs.put(&format!("{d}/format/ch_mask"), "config1:0-7\n")
            .unwrap();
        fs.put(
            &format!("{d}/events/cas_count_read"),
            "event=0x04,umask=0x03\n",
        )
        .unwrap();
        fs.put(
            &format!("{d}/events/cas_count_read.scale"),
            "6.103515625e-5\n",
        )
        .unwrap();
        fs.put("/sys/bus/event_source/devices/cpu/type", "4\n")
            .unwrap();
        let p = Pmu::load(&fs, "uncore_imc_0").unwrap();
        assert_eq!(p.pmu_type, 18);
        assert_eq!(p.cpus, vec![0, 28]);
        assert_eq!(p.events.len(), 1, "the .scale file is not an event");
        let e = p.event(&p.events["cas_count_read"]).unwrap();
        assert_eq!((e.pmu_type, e.config, e.config1), (18, 0x0304, 0));
        let e = p
            .event("event=0x02,umask=0x01,edge,thresh=3,ch_mask=0x5")
            .unwrap();
        assert_eq!(e.config, 0x02 | 0x01 << 8 | 1 << 18 | 3 << 24);
        assert_eq!(e.config1, 5);
        assert!(p.event("nosuchterm=1").is_none());
        assert!(p.event("event=zz").is_none());
        let all = controller_pmus(&fs);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].name, "uncore_imc_0");
    }

    #[test]
    fn a_software_counter_counts_this_threads_time() {
        let event = Event {
            pmu_type: TYPE_SOFTWARE,
            config: SW_TASK_CLOCK,
            config1: 0,
        };
        let mut c = match Counter::open(event, Scope::ThisThread) {
            Ok(c) => c,
            Err(e) => {
                // Some sandboxes forbid perf_event_open altogether (seccomp, paranoid 3).
                eprintln!("skipped: perf_event_open refused: {e}");
                return;
            }
        };
        let before = c.read().unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        // task-clock counts nanoseconds of this thread's CPU time, not wall time: spin until it
        // has counted 20 ms, however long other work keeps this thread off its CPU.
        let mut after = before;
        while after - before < 20_000_000 && t.elapsed() < std::time::Duration::from_secs(30) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            after = c.read().unwrap();
        }
        assert!(
            after - before >= 20_000_000,
            "{before} → {after} in {:?}",
            t.elapsed()
        );
        // It counted this thread's time: never more than the wall time that passed.
        assert!(
            (after - before) as f64 <= t.elapsed().as_nanos() as f64 * 1.05,
            "{before} → {after} in {:?}",
            t.elapsed()
        );
    }
}
