//! Where a buffer's pages really are: page kind from `/proc/self/smaps`, physical frames from
//! `/proc/self/pagemap` (root only; frame numbers read as 0 otherwise), and NUMA node per page from
//! `move_pages(2)` in query mode.

use std::os::unix::fs::FileExt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What smaps says about the mapping that holds an address.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SmapsEntry {
    pub kernel_page_bytes: u64,
    pub rss_bytes: u64,
    pub anon_huge_bytes: u64,
    pub hugetlb_bytes: u64,
    pub thp_eligible: Option<bool>,
}

/// Reads the smaps entry of the mapping that contains `addr`.
pub fn smaps_entry(addr: usize) -> Option<SmapsEntry> {
    let text = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    let mut e = SmapsEntry::default();
    let mut found = false;
    for line in text.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-').filter(|_| !head.ends_with(':'))
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            if found {
                break;
            }
            inside = a <= addr && addr < b;
            found = inside;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let kb = || -> u64 {
            v.split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
                * 1024
        };
        match k {
            "KernelPageSize" => e.kernel_page_bytes = kb(),
            "Rss" => e.rss_bytes = kb(),
            "AnonHugePages" => e.anon_huge_bytes = kb(),
            "Private_Hugetlb" | "Shared_Hugetlb" => e.hugetlb_bytes += kb(),
            "THPeligible" => e.thp_eligible = Some(v.trim() == "1"),
            _ => {}
        }
    }
    found.then_some(e)
}

/// How physically contiguous a buffer is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PhysicalLayout {
    /// 4 KiB pages examined.
    pub pages: u64,
    /// Pages present in memory.
    pub present: u64,
    /// False when frame numbers are hidden (not root): then no contiguity figure is given.
    pub frames_visible: bool,
    /// Runs of consecutive frames (1 = fully contiguous).
    pub runs: Option<u64>,
    pub longest_run_bytes: Option<u64>,
    pub median_run_bytes: Option<u64>,
    /// Runs grouped by length (empty when frames are hidden).
    #[serde(default)]
    pub run_histogram: Vec<RunBucket>,
}

/// Frame numbers of the 4 KiB pages covering `addr .. addr + len`, from `/proc/self/pagemap`:
/// `None` for pages not present. Without root the kernel reports every frame as 0; the second
/// value says whether frames were visible (then `Some(0)` never means an address).
pub fn frames(addr: usize, len: usize) -> std::io::Result<(Vec<Option<u64>>, bool)> {
    const PAGE: usize = 4096;
    let f = std::fs::File::open("/proc/self/pagemap")?;
    let first = addr / PAGE;
    let last = (addr + len).div_ceil(PAGE);
    let n = last - first;
    let mut raw = vec![0u8; n * 8];
    let mut done = 0;
    while done < raw.len() {
        let got = f.read_at(&mut raw[done..], (first * 8 + done) as u64)?;
        if got == 0 {
            break;
        }
        done += got;
    }
    Ok(parse_entries(&raw[..done - done % 8]))
}

/// Decodes pagemap entries (8 bytes little-endian each: bit 63 present, bits 0–54 frame number;
/// the kernel's Documentation/admin-guide/mm/pagemap.rst). Returns the frames and whether any
/// was visible (non-zero).
pub fn parse_entries(raw: &[u8]) -> (Vec<Option<u64>>, bool) {
    let entries: Vec<Option<u64>> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .map(|e| (e >> 63 & 1 == 1).then_some(e & ((1u64 << 55) - 1)))
        .collect();
    let visible = entries.iter().any(|e| matches!(e, Some(p) if *p != 0));
    (entries, visible)
}

/// The layout of a buffer from its frames (what [`physical_layout`] reports).
pub fn layout_of(entries: &[Option<u64>], visible: bool) -> PhysicalLayout {
    const PAGE: u64 = 4096;
    let present: Vec<u64> = entries.iter().flatten().copied().collect();
    let mut out = PhysicalLayout {
        pages: entries.len() as u64,
        present: present.len() as u64,
        frames_visible: visible,
        ..Default::default()
    };
    if visible {
        let runs = frame_runs(&present);
        let mut lens: Vec<u64> = runs.iter().map(|&r| r * PAGE).collect();
        out.run_histogram = run_histogram(&lens);
        lens.sort_unstable();
        out.runs = Some(runs.len() as u64);
        out.longest_run_bytes = lens.last().copied();
        out.median_run_bytes = lens.get(lens.len() / 2).copied();
    }
    out
}

/// Runs of physically consecutive pages in one length range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunBucket {
    /// Label, e.g. `4 KiB` or `64 KiB – 2 MiB`.
    pub range: String,
    pub runs: u64,
    /// Bytes in runs of this range.
    pub bytes: u64,
}

/// Run lengths (bytes) grouped into the ranges that matter for DRAM mapping: a lone page, less
/// than a typical bank-interleave cycle, less than a huge page, at least a 2 MiB / 1 GiB page.
pub fn run_histogram(run_bytes: &[u64]) -> Vec<RunBucket> {
    const KIB: u64 = 1024;
    let edges: [(&str, u64, u64); 5] = [
        ("4 KiB", 0, 8 * KIB),
        ("8 – 64 KiB", 8 * KIB, 64 * KIB),
        ("64 KiB – 2 MiB", 64 * KIB, 2 * KIB * KIB),
        ("2 MiB – 1 GiB", 2 * KIB * KIB, KIB * KIB * KIB),
        ("≥ 1 GiB", KIB * KIB * KIB, u64::MAX),
    ];
    edges
        .iter()
        .map(|(label, lo, hi)| {
            let inside: Vec<u64> = run_bytes
                .iter()
                .copied()
                .filter(|b| b >= lo && b < hi)
                .collect();
            RunBucket {
                range: label.to_string(),
                runs: inside.len() as u64,
                bytes: inside.iter().sum(),
            }
        })
        .collect()
}

/// Reads `/proc/self/pagemap` for `len` bytes at `addr` (both 4 KiB aligned or rounded out).
pub fn physical_layout(addr: usize, len: usize) -> std::io::Result<PhysicalLayout> {
    let (entries, visible) = frames(addr, len)?;
    Ok(layout_of(&entries, visible))
}

/// Lengths (in pages) of runs of consecutive frame numbers, in order.
pub fn frame_runs(pfns: &[u64]) -> Vec<u64> {
    let mut runs = Vec::new();
    let mut len = 0u64;
    for (i, &p) in pfns.iter().enumerate() {
        if i > 0 && p == pfns[i - 1].wrapping_add(1) {
            len += 1;
        } else {
            if len > 0 {
                runs.push(len);
            }
            len = 1;
        }
    }
    if len > 0 {
        runs.push(len);
    }
    runs
}

/// NUMA node of each sampled page (`move_pages` query), as (node, pages) counts.
pub fn page_nodes(addr: usize, len: usize, max_samples: usize) -> Vec<(i32, u64)> {
    const PAGE: usize = 4096;
    let pages = len.div_ceil(PAGE).max(1);
    let step = pages.div_ceil(max_samples.max(1)).max(1);
    let mut ptrs: Vec<*mut libc::c_void> = (0..pages)
        .step_by(step)
        .map(|i| (addr + i * PAGE) as *mut libc::c_void)
        .collect();
    let mut status = vec![0i32; ptrs.len()];
    // SAFETY: query mode (nodes = NULL) only reads page placement; the arrays are ours and sized
    // to `count`; pid 0 is this process.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            ptrs.len(),
            ptrs.as_mut_ptr(),
            std::ptr::null::<i32>(),
            status.as_mut_ptr(),
            0,
        )
    };
    if rc != 0 {
        return Vec::new();
    }
    let mut counts: std::collections::BTreeMap<i32, u64> = Default::default();
    for s in status {
        *counts.entry(s).or_default() += 1;
    }
    counts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        std::fs::read(p).unwrap()
    }

    #[test]
    fn recorded_pagemaps_parse() {
        // 8 MiB touched on 4 KiB pages, recorded as root in a KVM guest: frames scattered.
        let (e, visible) = parse_entries(&recorded("pagemap-4k-8MiB.bin"));
        assert!(visible);
        assert_eq!(e.len(), 2048);
        let l = layout_of(&e, visible);
        assert_eq!(l.present, 2048);
        assert!(
            l.runs.unwrap() > 1000,
            "demand-paged 4 KiB memory is scattered"
        );
        assert_eq!(
            l.run_histogram.iter().map(|b| b.bytes).sum::<u64>(),
            8 << 20
        );
        // The same on THP: four 2 MiB runs, each a huge page.
        let (e, visible) = parse_entries(&recorded("pagemap-thp-8MiB.bin"));
        let l = layout_of(&e, visible);
        assert_eq!(l.runs, Some(4));
        assert_eq!(l.longest_run_bytes, Some(2 << 20));
        let huge = l
            .run_histogram
            .iter()
            .find(|b| b.range == "2 MiB – 1 GiB")
            .unwrap();
        assert_eq!((huge.runs, huge.bytes), (4, 8 << 20));
        // Hidden frames (non-root): present, but zero: no layout claimed.
        let mut hidden = Vec::new();
        for _ in 0..4 {
            hidden.extend_from_slice(&(1u64 << 63).to_le_bytes());
        }
        let (e, visible) = parse_entries(&hidden);
        assert!(!visible);
        let l = layout_of(&e, visible);
        assert_eq!((l.present, l.runs), (4, None));
    }

    #[test]
    fn runs_of_frames() {
        assert_eq!(frame_runs(&[10, 11, 12, 50, 51, 7]), vec![3, 2, 1]);
        assert_eq!(frame_runs(&[]), Vec::<u64>::new());
        assert_eq!(frame_runs(&[5]), vec![1]);
    }
}
