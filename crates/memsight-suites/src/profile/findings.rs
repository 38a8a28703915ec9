//! The profile in words: memory held, bandwidth pressure, huge pages, placement and arenas, each
//! with the change to make.

use memsight_core::finding::{Cited, Finding};
use memsight_core::units::format_bytes;

use super::procfs::Snapshot;
use super::{Ending, PressureTrace, ProfileResults, placement, pressure};

/// Anonymous memory above this, mostly on small pages, is worth a huge-page change.
const LARGE_ANON: u64 = 256 << 20;

/// Memory held, huge-page coverage, placement, arenas: each with the change to make.
pub(super) fn findings(r: &ProfileResults, cpus: usize) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let Some(peak) = &r.peak else {
        out.push(Finding::unsampled(format!(
            "no reading of pid {} was taken: it ended before the first one (or its /proc files could not be read)",
            r.pid
        )));
        return out;
    };
    let h = peak.held;
    out.push(Finding::unsampled(format!(
        "memory held at the peak: RSS {} (anonymous {}, file {}, shared {}), swap {}, {} thread{}",
        format_bytes(h.rss),
        format_bytes(h.anon),
        format_bytes(h.file),
        format_bytes(h.shmem),
        format_bytes(h.swap),
        h.threads,
        if h.threads == 1 { "" } else { "s" }
    )));
    if h.swap > 0 {
        out.push(Finding::unsampled(format!(
            "{} of it was in swap: every touch of a swapped page waits for the disk; give it memory (or a larger cgroup limit) before tuning anything else",
            format_bytes(h.swap)
        )));
    }
    out.extend(page_cache_finding(r).map(Finding::from));
    // The pressure reading is the median of the probe's clean samples (those that lost the CPU
    // are dropped): unbiased however many were dropped, and said with the count in its text.
    out.extend(r.pressure.as_ref().and_then(|p| {
        let text = pressure_text(p, cpus)? + &probe_shared(r).unwrap_or_default();
        Some(Finding::citing(
            text,
            vec![Cited::value(
                format!("probe latency on CPU {}", p.probe_cpu),
                p.overall_ns?,
                "ns",
                false,
            )],
        ))
    }));
    let counted = r
        .counted
        .as_ref()
        .map(|c| counted_finding(c, r.pressure.as_ref()));
    let monitored = r
        .monitored
        .as_ref()
        .map(|m| monitored_finding(m, r.pressure.as_ref()));
    let placed = r.placement.as_ref().map(placement::findings);
    let rest = counted
        .into_iter()
        .chain(monitored)
        .chain(huge_finding(peak, r.thp_mode.as_deref()))
        .chain(placed.into_iter().flatten())
        .chain(crate::alloc::attach::arena_finding(&r.arenas, cpus));
    out.extend(rest.map(Finding::from));
    if matches!(r.ending, Ending::Interrupted | Ending::TimedOut) {
        out.push(Finding::unsampled(format!(
            "the profile was stopped ({}) after {:.1} s: the readings up to then are kept",
            if r.ending == Ending::Interrupted {
                "Ctrl-C"
            } else {
                "time limit"
            },
            r.seconds
        )));
    }
    out
}

/// Page cache above this, and above the program's anonymous memory, is worth a change.
const LARGE_CACHE: u64 = 256 << 20;

/// Page cache charged to the program's cgroup: memory it holds beyond its resident set.
fn page_cache_finding(r: &ProfileResults) -> Option<String> {
    let g = r.memory_group.as_ref()?;
    let most = r
        .timeline
        .iter()
        .filter_map(|s| s.group)
        .max_by_key(|m| m.page_cache)?;
    let whose = if g.own {
        "the cgroup memsight ran it in".to_string()
    } else {
        format!(
            "its cgroup {} ({} process{})",
            g.name,
            g.processes,
            if g.processes == 1 { "" } else { "es" }
        )
    };
    let mut text = format!(
        "page cache charged to {whose}: at most {} (mapped {}, dirty or under writeback {}); it counts the file pages it brought in first, not those others had cached",
        format_bytes(most.page_cache),
        format_bytes(most.mapped_file),
        format_bytes(most.dirty),
    );
    let anon = r.peak.as_ref().map_or(0, |p| p.held.anon);
    if most.page_cache >= LARGE_CACHE && most.page_cache > anon {
        text.push_str(": more than its anonymous memory. The kernel reclaims it under pressure, but until then it displaces other work's data; for files read or written once, open them with O_DIRECT or drop what was read with posix_fadvise(POSIX_FADV_DONTNEED), or bound it with memory.high on its cgroup");
    }
    Some(text)
}

/// Where the probe's CPU was also one the program's threads ran on: said, since the probe's
/// latency then carries the time it waited for the program (samples that lost the CPU are
/// dropped, but the program's cache traffic on that core stays).
fn probe_shared(r: &ProfileResults) -> Option<String> {
    let p = r.pressure.as_ref()?;
    let seen: u64 = r.program_cpus.iter().map(|c| c.1).sum();
    let there = r.program_cpus.iter().find(|c| c.0 == p.probe_cpu)?.1;
    (there > 0).then(|| {
        format!(
            "; the probe ran on CPU {}, where the program's threads were also seen ({there} of {seen} readings): it shared that core with the program (pin the program elsewhere, or give --probe-cpu a CPU it does not use, where the machine has one)",
            p.probe_cpu
        )
    })
}

/// [`pressure_text`] on a machine with CPUs to spare for more load.
#[cfg(test)]
fn pressure_finding(p: &PressureTrace) -> Option<String> {
    pressure_text(p, usize::MAX)
}

/// Where the program sat on the curve family, from the probe's median latency while it ran;
/// `cpus` this process may use (more load CPUs are advised only where there are any).
fn pressure_text(p: &PressureTrace, cpus: usize) -> Option<String> {
    let (ns, what) = (p.overall_ns?, p.overall?);
    let times = ns / p.family_idle_ns;
    let dropped = if p.dropped > 0 {
        format!(
            "; {} of {} probe samples were dropped because the probe lost CPU {} (to the program or other work)",
            p.dropped, p.samples, p.probe_cpu
        )
    } else {
        String::new()
    };
    let head = format!(
        "bandwidth pressure: the probe's latency while it ran was {ns:.0} ns, {times:.2}× idle"
    );
    let body = match what {
        pressure::Pressure::Flat { below_gbs } => format!(
            "memory traffic below {below_gbs:.1} GB/s: the curves are flat there, so latency says no more than that; memory bandwidth does not hold it up"
        ),
        pressure::Pressure::Unbounded { flat_to_gbs } => format!(
            "latency cannot bound its memory traffic here: a curve stays flat to its last point ({flat_to_gbs:.1} GB/s, the most its load threads drew), so this machine's curves never show memory loaded; {}",
            if cpus > 2 {
                "measure them with more load CPUs where they had fewer than this machine has (loaded-latency --cpus), or read counted traffic"
            } else {
                "this machine has no CPU to spare for more load (one chases, the other loads), so read counted traffic instead (resctrl memory-bandwidth monitoring or the memory controllers' counters, where the machine exposes them)"
            }
        ),
        pressure::Pressure::Within { low_gbs, high_gbs } => {
            let share = high_gbs / p.saturation_gbs;
            format!(
                "memory traffic {low_gbs:.1}–{high_gbs:.1} GB/s (the interval spans the read:write mixes it may have), up to {:.0}% of the {:.1} GB/s the curves saturate at{}",
                share * 100.0,
                p.saturation_gbs,
                if share >= 0.7 && times >= 1.3 {
                    ": memory-bound; less traffic (blocking, fewer passes, smaller types) or more memory channels would speed it up"
                } else {
                    ""
                }
            )
        }
        pressure::Pressure::Above { at_least_gbs } => format!(
            "memory traffic above {at_least_gbs:.1} GB/s, more than the curves' load threads drew; they never loaded memory enough to raise its latency, so there is no upper bound and no sign here of how close memory is to saturation (curves measured with more load CPUs would say)"
        ),
        pressure::Pressure::Saturated { at_least_gbs } => format!(
            "memory saturated (at least {at_least_gbs:.1} GB/s, the lowest saturation of the curves): memory-bound; only less traffic or more bandwidth (channels, nodes) speeds it up"
        ),
    };
    Some(format!(
        "{head}: {body}{}{}. This is the traffic of the whole machine's memory while it ran, its own and any other work's, read off the loaded-latency curves ({}){dropped}{}",
        rounds_note(p),
        spread_note(p),
        p.family_source,
        guest_caveat(p, &what)
    ))
}

/// Where the curves' rounds disagreed and reading each round's sweep widened the interval: what
/// their merge alone says, so that a wide interval is seen to be the machine's, not the program's.
fn rounds_note(p: &PressureTrace) -> String {
    p.overall_merged.map_or_else(String::new, |m| {
        format!(
            "; the curves' rounds disagreed (the machine answered the same load at different latencies while they were measured), so each round is read and the interval spans them: their merge alone reads {}",
            span(&m)
        )
    })
}

/// Readings whose middle half spans more than this ratio moved beyond the curves' flat band
/// (5% either side): one interval from their median hides that.
const MOVED: f64 = 1.10;

/// How far the readings moved over the run, when the middle half of them spans more than
/// [`MOVED`]: each end with what the curves make of it. A program's phases move it, and so does
/// other work (on a guest, the host): one median interval would hide either.
fn spread_note(p: &PressureTrace) -> String {
    let mut v: Vec<(f64, Option<pressure::Pressure>)> = p
        .readings
        .iter()
        .filter_map(|r| r.latency_ns.map(|ns| (ns, r.pressure)))
        .collect();
    if v.len() < 8 {
        return String::new();
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let ((lo_ns, lo), (hi_ns, hi)) = (v[v.len() / 4], v[3 * v.len() / 4]);
    if hi_ns < lo_ns * MOVED {
        return String::new();
    }
    let says = |x: Option<pressure::Pressure>| x.map_or_else(|| "nothing".into(), |x| span(&x));
    format!(
        "; its readings moved: their middle half lay at {lo_ns:.0}–{hi_ns:.0} ns, which the curves read as {} and {} (its traffic changed over the run, or other work's did; the timeline shows when)",
        says(lo),
        says(hi)
    )
}

/// An interval in a few words.
fn span(x: &pressure::Pressure) -> String {
    match x.bounds() {
        (lo, hi) if hi.is_finite() && lo > 0.0 => format!("{lo:.1}–{hi:.1} GB/s"),
        (_, hi) if hi.is_finite() => format!("below {hi:.1} GB/s"),
        (lo, _) if lo > 0.0 => format!("above {lo:.1} GB/s"),
        _ => "no bound".into(),
    }
}

/// Under a hypervisor, an interval that claims traffic needs a second profile: the host's own
/// state (where it keeps the guest's memory, who else uses those channels) can change how much
/// latency the same traffic raises, between runs minutes apart, and one run cannot see it
/// (docs/methods/profile.md, "Checked against loads of known bandwidth").
fn guest_caveat(p: &PressureTrace, what: &pressure::Pressure) -> String {
    let claims = matches!(
        what,
        pressure::Pressure::Within { .. }
            | pressure::Pressure::Above { .. }
            | pressure::Pressure::Saturated { .. }
    );
    match &p.hypervisor {
        Some(h) if claims => format!(
            ". Under a hypervisor ({h}) the same traffic can raise latency by different amounts from one run to the next, as the host's state changes: compare two profiles before trusting the interval"
        ),
        _ => String::new(),
    }
}

/// An interval's bounds as `lo–hi` in GB/s, `∞` for no upper bound (set beside a counted figure).
fn bounds_text(o: &pressure::Pressure) -> String {
    match o.bounds() {
        (lo, hi) if hi.is_finite() => format!("{lo:.1}–{hi:.1}"),
        (lo, _) => format!("{lo:.1}–∞"),
    }
}

/// The controllers' count, against the probe's interval where there is one.
fn counted_finding(c: &super::CountedTraffic, p: Option<&PressureTrace>) -> String {
    let total = c.read_gbs + c.write_gbs;
    let against = p.and_then(|p| p.overall).map_or(String::new(), |o| {
        format!(
            "; the probe's interval {} GB/s {} it",
            bounds_text(&o),
            if o.contains(total) { "holds" } else { "misses" }
        )
    });
    format!(
        "counted DRAM traffic over its run: {total:.1} GB/s (reads {:.1}, writes {:.1}; {}; the whole socket's, other work included){against}",
        c.read_gbs, c.write_gbs, c.source
    )
}

/// The program's own traffic, counted by resctrl, against the probe's interval (which is the
/// whole machine's traffic: the program's share of it lies at or below its top).
fn monitored_finding(m: &super::MonitoredTraffic, p: Option<&PressureTrace>) -> String {
    let local = m.local_share.map_or(String::new(), |l| {
        format!(", {:.0}% from the local node", l * 100.0)
    });
    let against = p.and_then(|p| p.overall).map_or(String::new(), |o| {
        let verdict = if o.contains(m.gbs) {
            "holds it"
        } else if m.gbs < o.bounds().0 {
            "lies above it: the machine moved more than the program (other work, or the probe's own chase)"
        } else {
            "misses it"
        };
        format!(
            "; the probe's interval {} GB/s (the whole machine's traffic) {verdict}",
            bounds_text(&o)
        )
    });
    format!(
        "its own memory traffic, counted by resctrl bandwidth monitoring for its tasks: {:.2} GB/s over {:.1} s ({} in all{local}){against}",
        m.gbs,
        m.seconds,
        format_bytes(m.bytes)
    )
}

/// Huge-page coverage of its anonymous memory, against the kernel's THP mode.
fn huge_finding(peak: &Snapshot, thp_mode: Option<&str>) -> Option<String> {
    let c = peak.huge;
    let share = c.thp_share()?;
    let hugetlb = if c.hugetlb > 0 {
        format!("; {} on hugetlb pages", format_bytes(c.hugetlb))
    } else {
        String::new()
    };
    let advice = if c.anonymous >= LARGE_ANON && share < 0.5 {
        match thp_mode {
            Some("never") => {
                "; THP is off on this machine (`never`): hugetlb pages or THP `madvise` would cut its TLB misses on large arrays"
            }
            Some("madvise") => {
                "; THP is `madvise` here: the program gets huge pages only where it asks, so madvise(MADV_HUGEPAGE) its large buffers (or run it with THP `always`) to cut TLB misses"
            }
            _ => {
                "; THP is on, yet most of it is on small pages: memory may be fragmented (compare /proc/buddyinfo) or the buffers are too small or not 2 MiB-aligned"
            }
        }
    } else {
        ""
    };
    Some(format!(
        "huge pages: {:.0}% of its {} of anonymous memory is on transparent huge pages{hugetlb}{advice}",
        share * 100.0,
        format_bytes(c.anonymous)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::procfs::{Held, HugeCoverage};

    fn peak(anonymous: u64, anon_huge: u64) -> Snapshot {
        Snapshot {
            seconds: 1.0,
            held: Held::default(),
            huge: HugeCoverage {
                anonymous,
                anon_huge,
                ..Default::default()
            },
            nodes: Vec::new(),
            group: None,
            monitored_bytes: None,
        }
    }

    #[test]
    fn small_pages_under_large_memory_get_the_change_for_the_thp_mode() {
        let f = huge_finding(&peak(1 << 30, 1 << 28), Some("madvise")).unwrap();
        assert!(
            f.starts_with("huge pages: 25% of its 1 GiB") && f.contains("MADV_HUGEPAGE"),
            "{f}"
        );
        let f = huge_finding(&peak(1 << 30, 1 << 28), Some("never")).unwrap();
        assert!(f.contains("THP is off"), "{f}");
        // Well covered, or small: no advice.
        assert!(
            !huge_finding(&peak(1 << 30, 1 << 29 | 1 << 28), Some("madvise"))
                .unwrap()
                .contains(';')
        );
        assert!(
            !huge_finding(&peak(64 << 20, 0), Some("madvise"))
                .unwrap()
                .contains(';')
        );
        assert!(huge_finding(&peak(0, 0), Some("madvise")).is_none());
    }

    fn trace(overall: pressure::Pressure, ns: f64) -> PressureTrace {
        PressureTrace {
            family_source: "run 3".into(),
            probe_cpu: 1,
            probe_bytes: 1 << 28,
            family_idle_ns: 100.0,
            probe_idle_ns: Some(100.0),
            scale: 1.0,
            readings: Vec::new(),
            overall: Some(overall),
            overall_merged: None,
            overall_ns: Some(ns),
            saturation_gbs: 40.0,
            dropped: 2,
            samples: 50,
            hypervisor: None,
        }
    }

    #[test]
    fn under_a_hypervisor_an_interval_that_claims_traffic_asks_for_a_second_profile() {
        let within = pressure::Pressure::Within {
            low_gbs: 25.0,
            high_gbs: 32.0,
        };
        let mut t = trace(within, 160.0);
        let bare = pressure_finding(&t).unwrap();
        assert!(!bare.contains("hypervisor"), "{bare}");
        t.hypervisor = Some("KVM".into());
        let f = pressure_finding(&t).unwrap();
        assert!(
            f.contains("Under a hypervisor (KVM)") && f.contains("compare two profiles"),
            "{f}"
        );
        // A flat reading claims no traffic: nothing to check twice.
        let mut t = trace(pressure::Pressure::Flat { below_gbs: 20.0 }, 101.0);
        t.hypervisor = Some("KVM".into());
        assert!(!pressure_finding(&t).unwrap().contains("hypervisor"));
    }

    #[test]
    fn readings_that_moved_are_said_with_what_each_end_reads_as() {
        let within = pressure::Pressure::Within {
            low_gbs: 33.0,
            high_gbs: 55.0,
        };
        let flat = pressure::Pressure::Flat { below_gbs: 40.0 };
        let reading = |i: usize, ns: f64, p| super::super::PressureReading {
            seconds: i as f64 * 0.1,
            latency_ns: Some(ns),
            pressure: Some(p),
        };
        let mut t = trace(within, 150.0);
        // Half the readings near idle, half far above it.
        t.readings = (0..8)
            .map(|i| reading(i, 135.0 + i as f64, flat))
            .chain((8..16).map(|i| reading(i, 180.0 + i as f64, within)))
            .collect();
        let f = pressure_finding(&t).unwrap();
        assert!(
            f.contains("middle half lay at 139–192 ns")
                && f.contains("read as below 40.0 GB/s and 33.0–55.0 GB/s"),
            "{f}"
        );
        // Steady readings: nothing added.
        t.readings = (0..16).map(|i| reading(i, 150.0, within)).collect();
        assert!(!pressure_finding(&t).unwrap().contains("moved"));
    }

    #[test]
    fn an_interval_the_rounds_widened_says_what_their_merge_reads() {
        let mut t = trace(
            pressure::Pressure::Within {
                low_gbs: 12.0,
                high_gbs: 60.0,
            },
            160.0,
        );
        assert!(!pressure_finding(&t).unwrap().contains("rounds disagreed"));
        t.overall_merged = Some(pressure::Pressure::Within {
            low_gbs: 34.0,
            high_gbs: 59.0,
        });
        let f = pressure_finding(&t).unwrap();
        assert!(
            f.contains("12.0–60.0 GB/s")
                && f.contains("rounds disagreed")
                && f.contains("their merge alone reads 34.0–59.0 GB/s"),
            "{f}"
        );
    }

    #[test]
    fn pressure_is_said_with_its_interval_and_what_it_means() {
        let f = pressure_finding(&trace(
            pressure::Pressure::Within {
                low_gbs: 25.0,
                high_gbs: 32.0,
            },
            160.0,
        ))
        .unwrap();
        assert!(
            f.contains("25.0–32.0 GB/s")
                && f.contains("80% of the 40.0 GB/s")
                && f.contains("memory-bound"),
            "{f}"
        );
        assert!(
            f.contains("2 of 50 probe samples were dropped") && f.contains("(run 3)"),
            "{f}"
        );
        let f =
            pressure_finding(&trace(pressure::Pressure::Flat { below_gbs: 20.0 }, 101.0)).unwrap();
        assert!(
            f.contains("below 20.0 GB/s: the curves are flat there"),
            "{f}"
        );
        let f = pressure_finding(&trace(
            pressure::Pressure::Saturated { at_least_gbs: 30.0 },
            300.0,
        ))
        .unwrap();
        assert!(f.contains("memory saturated (at least 30.0 GB/s"), "{f}");
        let f = pressure_finding(&trace(
            pressure::Pressure::Above { at_least_gbs: 14.2 },
            112.0,
        ))
        .unwrap();
        assert!(
            f.contains("above 14.2 GB/s") && !f.contains("memory-bound"),
            "{f}"
        );
        let f = pressure_finding(&trace(
            pressure::Pressure::Unbounded { flat_to_gbs: 18.6 },
            104.0,
        ))
        .unwrap();
        assert!(
            f.contains("cannot bound") && f.contains("(18.6 GB/s, the most its load threads drew)"),
            "{f}"
        );
    }

    #[test]
    fn counted_traffic_is_set_against_the_probes_interval() {
        let c = crate::profile::CountedTraffic {
            read_gbs: 20.0,
            write_gbs: 8.0,
            seconds: 3.0,
            source: "cas_count_read, cas_count_write counted on uncore_imc_0".into(),
        };
        let p = trace(
            pressure::Pressure::Within {
                low_gbs: 25.0,
                high_gbs: 32.0,
            },
            160.0,
        );
        let f = counted_finding(&c, Some(&p));
        assert!(
            f.starts_with("counted DRAM traffic over its run: 28.0 GB/s (reads 20.0, writes 8.0"),
            "{f}"
        );
        assert!(
            f.ends_with("the probe's interval 25.0–32.0 GB/s holds it"),
            "{f}"
        );
        let p = trace(pressure::Pressure::Flat { below_gbs: 20.0 }, 101.0);
        assert!(counted_finding(&c, Some(&p)).ends_with("0.0–20.0 GB/s misses it"));
        assert!(!counted_finding(&c, None).contains("interval"));
    }

    #[test]
    fn page_cache_charged_to_the_program_is_said_with_the_change_when_large() {
        use memsight_core::memcg::GroupMemory;
        let reading = |page_cache: u64| {
            let mut s = peak(64 << 20, 0);
            s.held.anon = 64 << 20;
            s.group = Some(GroupMemory {
                page_cache,
                mapped_file: 1 << 20,
                ..Default::default()
            });
            s
        };
        let mut r = ProfileResults {
            method: String::new(),
            command: "sort big.txt".into(),
            pid: 7,
            ending: Ending::Exited(0),
            seconds: 2.0,
            timeline: vec![reading(100 << 20), reading(2 << 30), reading(1 << 30)],
            peak: Some(reading(1 << 30)),
            placement: None,
            program_cpus: Vec::new(),
            arenas: Vec::new(),
            thp_mode: None,
            pressure: None,
            counted: None,
            not_counted: None,
            monitored: None,
            not_monitored: None,
            memory_group: Some(crate::profile::MemoryGroup {
                name: "/memsight-profile-1".into(),
                cgroup_v2: true,
                own: true,
                processes: 1,
            }),
            no_memory_group: None,
            findings: Vec::new(),
        };
        let f = page_cache_finding(&r).unwrap();
        assert!(
            f.starts_with("page cache charged to the cgroup memsight ran it in: at most 2 GiB"),
            "{f}"
        );
        assert!(f.contains("O_DIRECT"), "{f}");
        // Small: said, with no change to make; shared: the group and its processes named.
        r.timeline = vec![reading(100 << 20)];
        r.memory_group.as_mut().unwrap().own = false;
        r.memory_group.as_mut().unwrap().processes = 3;
        let f = page_cache_finding(&r).unwrap();
        assert!(
            f.contains("(3 processes)") && !f.contains("O_DIRECT"),
            "{f}"
        );
        r.memory_group = None;
        assert!(page_cache_finding(&r).is_none());
    }

    #[test]
    fn monitored_traffic_is_the_programs_own_below_the_machines() {
        let m = crate::profile::MonitoredTraffic {
            gbs: 10.0,
            local_share: Some(0.9),
            bytes: 30_000_000_000,
            seconds: 3.0,
            group: "/sys/fs/resctrl/mon_groups/memsight-1".into(),
        };
        let within = trace(
            pressure::Pressure::Within {
                low_gbs: 8.0,
                high_gbs: 14.0,
            },
            150.0,
        );
        let f = monitored_finding(&m, Some(&within));
        assert!(
            f.contains("10.00 GB/s over 3.0 s") && f.contains("90% from the local node"),
            "{f}"
        );
        assert!(f.ends_with("holds it"), "{f}");
        let above = trace(
            pressure::Pressure::Within {
                low_gbs: 12.0,
                high_gbs: 14.0,
            },
            150.0,
        );
        assert!(monitored_finding(&m, Some(&above)).contains("other work"));
        let flat = trace(pressure::Pressure::Flat { below_gbs: 5.0 }, 101.0);
        assert!(monitored_finding(&m, Some(&flat)).ends_with("misses it"));
    }
}
