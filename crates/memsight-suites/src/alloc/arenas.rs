//! glibc's malloc arenas of a running process, counted from outside it.
//!
//! Every arena but the main one lives in heaps that glibc reserves as 64 MiB regions aligned to
//! 64 MiB (`HEAP_MAX_SIZE` on 64-bit): an anonymous mapping whose used part is read-write and
//! whose rest is `PROT_NONE` until the heap grows. The kernel may merge neighbouring heaps into
//! one mapping, so the count walks 64 MiB-aligned addresses, not mappings. Each heap starts with
//! glibc's `heap_info`, whose first word points to its arena (inside the arena's first heap) and
//! whose second points to the arena's previous heap; where the process's memory can be read
//! (`/proc/PID/mem`: its parent, or root), those words confirm each heap and give the arenas as
//! the distinct owners. Cloudflare's RocksDB study (Vorobev, 2020) counted 60–80 arenas this way
//! for about 25 threads.

use std::os::unix::fs::FileExt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// glibc's heap size and alignment on 64-bit targets.
pub const HEAP_BYTES: u64 = 64 << 20;

/// One mapping of `/proc/PID/maps`, as far as the count needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub writable: bool,
    /// `---p`: reserved, not accessible.
    pub reserved: bool,
    /// No file, no name (`[heap]`, `[stack]` and files are not arena heaps).
    pub anonymous: bool,
}

/// Arenas of one process at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArenaCount {
    /// 64 MiB heaps of arenas other than the main one.
    pub heaps: u32,
    /// Arenas, the main one included, from the heaps' headers; `None` when the process's
    /// memory could not be read (the heaps are then counted from the mappings alone).
    pub arenas: Option<u32>,
}

/// Arenas and threads of a process at one moment of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArenaSample {
    pub seconds: f64,
    pub heaps: u32,
    pub arenas: Option<u32>,
    pub threads: Option<u32>,
}

/// How often the mappings are read: a large process has many, and the RSS sampling must not
/// slow down.
pub const SAMPLE_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// A sample of process `pid` at `seconds`.
pub fn sample(pid: u32, seconds: f64) -> Option<ArenaSample> {
    let c = of_process(pid)?;
    Some(ArenaSample {
        seconds,
        heaps: c.heaps,
        arenas: c.arenas,
        threads: threads(pid),
    })
}

/// The mappings of a `/proc/PID/maps` text; lines that do not parse are skipped.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?);
            let (s, e) = range.split_once('-')?;
            let path = f.nth(3);
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                writable: perms.starts_with("rw"),
                reserved: perms.starts_with("---"),
                anonymous: path.is_none(),
            })
        })
        .collect()
}

/// Start addresses of the 64 MiB-aligned blocks that look like glibc heaps: covered by
/// anonymous mappings, read-write from the start, then at most one switch to reserved.
pub fn heap_candidates(maps: &[Mapping]) -> Vec<u64> {
    let mut out = Vec::new();
    for (i, m) in maps.iter().enumerate() {
        if !(m.anonymous && m.writable) {
            continue;
        }
        let mut a = m.start.next_multiple_of(HEAP_BYTES);
        while a < m.end {
            if covered(&maps[i..], a) {
                out.push(a);
            }
            a += HEAP_BYTES;
        }
    }
    out
}

/// Whether `[a, a + HEAP_BYTES)` is read-write then reserved, without gaps, in `maps` (sorted,
/// the first one holding `a`).
fn covered(maps: &[Mapping], a: u64) -> bool {
    let end = a + HEAP_BYTES;
    let mut at = a;
    let mut reserved = false;
    for m in maps {
        if m.start > at || !m.anonymous {
            return false;
        }
        if m.writable && reserved || !(m.writable || m.reserved) {
            return false;
        }
        reserved |= m.reserved;
        at = m.end;
        if at >= end {
            return true;
        }
    }
    false
}

/// The count, with each candidate's first two words (`ar_ptr`, `prev`) as `read` returns them.
pub fn count(candidates: &[u64], read: impl Fn(u64) -> Option<(u64, u64)>) -> ArenaCount {
    let inside = |p: u64| candidates.iter().any(|&c| (c..c + HEAP_BYTES).contains(&p));
    let headers: Vec<Option<(u64, u64)>> = candidates.iter().map(|&c| read(c)).collect();
    // No heap at all: the main arena is the only one.
    if candidates.is_empty() {
        return ArenaCount {
            heaps: 0,
            arenas: Some(1),
        };
    }
    if headers.iter().all(Option::is_none) {
        return ArenaCount {
            heaps: candidates.len() as u32,
            arenas: None,
        };
    }
    // A heap is confirmed when its arena pointer lands in a candidate and its previous heap is
    // none or another candidate; an arena's first heap holds the arena itself.
    let mut owners: Vec<u64> = headers
        .iter()
        .flatten()
        .filter(|&&(arena, prev)| inside(arena) && (prev == 0 || candidates.contains(&prev)))
        .map(|&(arena, _)| arena)
        .collect();
    let heaps = owners.len() as u32;
    owners.sort_unstable();
    owners.dedup();
    ArenaCount {
        heaps,
        arenas: Some(owners.len() as u32 + 1),
    }
}

/// Arenas of process `pid` now; `None` when its mappings cannot be read (gone, or not ours).
pub fn of_process(pid: u32) -> Option<ArenaCount> {
    let maps = parse_maps(&std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?);
    let candidates = heap_candidates(&maps);
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok();
    Some(count(&candidates, |a| {
        let mut b = [0u8; 16];
        mem.as_ref()?.read_exact_at(&mut b, a).ok()?;
        let word = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some((word(0), word(8)))
    }))
}

/// Threads of process `pid` (`Threads:` of its status).
pub fn threads(pid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The anonymous mappings of glibc 2.36's malloc in a process with 8 allocating threads
    /// (memsight's bursty workload), as `/proc/PID/maps` listed them, file mappings left out.
    const MAPS: &str = include_str!("../../tests/data/glibc-arenas.maps");

    #[test]
    fn heaps_are_found_through_merged_mappings() {
        let maps = parse_maps(MAPS);
        let c = heap_candidates(&maps);
        // Two heaps share one mapping where the kernel merged a full heap with its successor's
        // used part; a heap whose reserve is one page still counts.
        assert_eq!(c.len(), 14, "{c:x?}");
        assert!(c.iter().all(|a| a % HEAP_BYTES == 0));
        assert!(c.contains(&0x7f4228000000) && c.contains(&0x7f422c000000));
        assert!(c.contains(&0x7f4260000000));
    }

    #[test]
    fn headers_confirm_heaps_and_name_their_arenas() {
        let c = [0x1_0000_0000u64, 0x1_0400_0000, 0x1_0800_0000];
        // Heap 1 and 3 belong to the arena in heap 1; heap 2 is an arena of its own.
        let read = |a: u64| match a {
            0x1_0000_0000 => Some((0x1_0000_0020, 0)),
            0x1_0400_0000 => Some((0x1_0400_0020, 0)),
            0x1_0800_0000 => Some((0x1_0000_0020, 0x1_0000_0000)),
            _ => None,
        };
        assert_eq!(
            count(&c, read),
            ArenaCount {
                heaps: 3,
                arenas: Some(3)
            }
        );
        // A region that only looks like a heap (its first word points nowhere) is not one.
        let big_array = |a: u64| match a {
            0x1_0800_0000 => Some((0xdead_beef, 7)),
            other => read(other),
        };
        assert_eq!(count(&c, big_array).heaps, 2);
        // Unreadable memory: heaps from the mappings, arenas unknown.
        assert_eq!(
            count(&c, |_| None),
            ArenaCount {
                heaps: 3,
                arenas: None
            }
        );
    }

    #[test]
    fn the_main_heap_stacks_and_files_are_not_arena_heaps() {
        let maps = parse_maps(
            "04000000-08000000 rw-p 00000000 00:00 0 [heap]\n\
             7f0000000000-7f0004000000 rw-p 00000000 08:01 42 /data/file\n\
             7f0008000000-7f000c000000 rw-p 00000000 00:00 0 [stack]\n\
             7f0010000000-7f0012000000 rw-p 00000000 00:00 0\n\
             7f0012000000-7f0013000000 ---p 00000000 00:00 0\n\
             garbage line\n",
        );
        // The last heap's reserve stops short of 64 MiB: not a heap either.
        assert!(heap_candidates(&maps).is_empty());
    }

    #[test]
    fn this_process_can_be_read() {
        let me = std::process::id();
        assert!(of_process(me).is_some());
        assert!(threads(me).is_some_and(|t| t >= 1));
        assert!(of_process(u32::MAX).is_none());
    }
}
