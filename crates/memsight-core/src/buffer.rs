//! Memory buffers of a chosen page kind, optionally bound to a NUMA node, verified after the fact.
//!
//! A measurement must say which pages it ran on (METHODS.md §6). memsight asks for a kind, checks
//! what the kernel gave through `/proc/self/smaps` (and `move_pages` for the node), and reports
//! both. Asking explicitly for a kind that cannot be had is an error; callers that only prefer a
//! kind (the TLB comparison of the latency ladder) use [`Buffer::allocate_preferring`], which falls
//! back with a warning.

use std::fmt;
use std::ptr::NonNull;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::env::Environment;
use crate::error::{Error, Result};
use crate::pagemap::{PhysicalLayout, SmapsEntry, page_nodes, physical_layout, smaps_entry};
use crate::units::{MIB, format_bytes};

mod file;
mod policy;
mod weighted;
pub use file::{DaxKind, DaxTarget, FileBacking};
pub use weighted::Weighted;

/// The kind of page backing a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum PageKind {
    /// 4 KiB pages (`MADV_NOHUGEPAGE`: THP off for the buffer, even with THP `always`).
    #[serde(rename = "4k")]
    #[cfg_attr(feature = "clap", value(name = "4k"))]
    Base4K,
    /// Transparent huge pages (`MADV_HUGEPAGE` on a 2 MiB-aligned region).
    Thp,
    /// hugetlb 2 MiB pages from the reserved pool (`MAP_HUGETLB`).
    #[serde(rename = "hugetlb_2m")]
    #[cfg_attr(feature = "clap", value(name = "2m"))]
    Huge2M,
    /// hugetlb 1 GiB pages from the reserved pool.
    #[serde(rename = "hugetlb_1g")]
    #[cfg_attr(feature = "clap", value(name = "1g"))]
    Huge1G,
}

impl PageKind {
    /// Page size in bytes (THP pages are 2 MiB where the kernel grants them).
    pub fn page_bytes(self) -> u64 {
        match self {
            PageKind::Base4K => 4096,
            PageKind::Thp | PageKind::Huge2M => 2 * MIB,
            PageKind::Huge1G => 1024 * MIB,
        }
    }

    /// True for the huge kinds.
    pub fn is_huge(self) -> bool {
        self != PageKind::Base4K
    }

    /// Name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Base4K => "4k",
            PageKind::Thp => "thp",
            PageKind::Huge2M => "2m",
            PageKind::Huge1G => "1g",
        }
    }
}

impl fmt::Display for PageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PageKind::Base4K => "4 KiB",
            PageKind::Thp => "THP",
            PageKind::Huge2M => "hugetlb 2 MiB",
            PageKind::Huge1G => "hugetlb 1 GiB",
        })
    }
}

impl FromStr for PageKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "4k" | "4kib" | "base" | "small" => Ok(PageKind::Base4K),
            "thp" | "transparent" => Ok(PageKind::Thp),
            "2m" | "2mib" | "hugetlb-2m" | "hugetlb_2m" => Ok(PageKind::Huge2M),
            "1g" | "1gib" | "hugetlb-1g" | "hugetlb_1g" => Ok(PageKind::Huge1G),
            _ => Err(Error::input(format!(
                "unknown page kind '{s}': use 4k, thp, 2m (hugetlb 2 MiB) or 1g (hugetlb 1 GiB)"
            ))),
        }
    }
}

/// What was asked and what the kernel gave, as verified after touching.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BufferReport {
    pub bytes: u64,
    pub requested: PageKind,
    /// The kind actually used (after any fallback).
    pub kind: PageKind,
    /// Share of the resident buffer on huge pages according to smaps, 0..1.
    pub huge_fraction: Option<f64>,
    /// Kernel page size of the mapping (smaps `KernelPageSize`).
    pub kernel_page_bytes: Option<u64>,
    /// NUMA node the buffer was bound to, if any.
    pub bound_node: Option<usize>,
    /// Pages found on each node, sampled with `move_pages` (node −2 … are kernel error codes for
    /// pages not yet present).
    pub pages_per_node: Vec<(i32, u64)>,
    /// Fallbacks and verification problems.
    pub warnings: Vec<String>,
    /// Nodes the pages are interleaved over (empty unless interleaved).
    #[serde(default)]
    pub interleaved: Vec<usize>,
    /// Physical contiguity from `/proc/self/pagemap` (frame numbers are visible to root only;
    /// `frames_visible: false` says so instead of reporting zeros as addresses).
    pub physical: Option<PhysicalLayout>,
    /// The DAX device or file the buffer is mapped from (`--dax`); absent for anonymous memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileBacking>,
}

impl BufferReport {
    fn new(bytes: u64, kind: PageKind, node: Option<usize>) -> Self {
        BufferReport {
            bytes,
            requested: kind,
            kind,
            huge_fraction: None,
            kernel_page_bytes: None,
            bound_node: node,
            pages_per_node: Vec::new(),
            physical: None,
            interleaved: Vec::new(),
            warnings: Vec::new(),
            file: None,
        }
    }
}

/// Memory owned by memsight (anonymous, or a shared mapping of a DAX device or file), unmapped on
/// drop.
pub struct Buffer {
    map: NonNull<u8>,
    map_len: usize,
    ptr: NonNull<u8>,
    len: usize,
    /// Bytes from the start already faulted in by [`Buffer::touch_to`].
    touched: usize,
    report: BufferReport,
    /// The devdax region this buffer holds, returned on drop.
    region: Option<(&'static DaxTarget, u64)>,
}

// SAFETY: the buffer is a mapping owned by this value (anonymous, or a file/devdax region no other
// buffer maps); moving the owner to another
// thread moves the only handle to it.
unsafe impl Send for Buffer {}
// SAFETY: shared references only hand out `*const` views and the read-only report.
unsafe impl Sync for Buffer {}

/// A request for a buffer.
#[derive(Debug, Clone, Copy)]
pub struct BufferRequest {
    pub bytes: u64,
    pub kind: PageKind,
    pub node: Option<usize>,
    /// Map from this DAX device or directory instead of anonymous memory (`--dax`).
    pub dax: Option<&'static DaxTarget>,
}

impl Buffer {
    /// Allocates exactly the requested kind or fails with an input error saying how to get it.
    pub fn allocate(req: BufferRequest, env: &Environment) -> Result<Buffer> {
        if let Some(t) = req.dax {
            return dax_buffer(req, t);
        }
        // THP is every suite's default; a machine with THP switched off ('never', common on
        // database servers) still measures, on 4 KiB pages, with the fallback in the report's
        // warnings (and so in the figures' conditions), never an error that stops the run.
        if req.kind == PageKind::Thp && env.thp_enabled.as_deref() == Some("never") {
            return Self::allocate_preferring(req, env);
        }
        check_request(&req, env)?;
        let mut b = map(req)?;
        b.verify();
        Ok(b)
    }

    /// Allocates the requested kind if possible, else the next best (1 GiB → 2 MiB → THP → 4 KiB),
    /// recording the fallback as a warning in the report.
    pub fn allocate_preferring(req: BufferRequest, env: &Environment) -> Result<Buffer> {
        if let Some(t) = req.dax {
            return dax_buffer(req, t);
        }
        check_size(req.bytes, env)?;
        let order = [
            PageKind::Huge1G,
            PageKind::Huge2M,
            PageKind::Thp,
            PageKind::Base4K,
        ];
        let start = order.iter().position(|k| *k == req.kind).unwrap_or(0);
        let mut notes = Vec::new();
        for &kind in &order[start..] {
            let r = BufferRequest { kind, ..req };
            match check_request(&r, env).and_then(|_| map(r)) {
                Ok(mut b) => {
                    b.report.requested = req.kind;
                    b.report.warnings.extend(notes);
                    b.verify();
                    return Ok(b);
                }
                Err(e) => notes.push(format!("{kind} unavailable ({e}); fell back")),
            }
        }
        Err(Error::system(notes.join("; ")))
    }

    /// Start of the usable region.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Usable length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: zero-length buffers are refused.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The verification report.
    pub fn report(&self) -> &BufferReport {
        &self.report
    }

    /// The buffer as bytes.
    /// The buffer's bytes, shared (for readers running together).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is this buffer's mapping, alive while `self` is; the shared
        // borrow of `self` keeps `as_mut_slice` from handing out a writer meanwhile.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr..ptr+len lies inside our live mapping, which `&mut self` owns exclusively.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The buffer as 64-bit floats (the usable region is 2 MiB- or page-aligned; a trailing
    /// partial element is left out).
    pub fn as_f64_mut(&mut self) -> &mut [f64] {
        // SAFETY: the region is page-aligned (so 8-byte aligned), lies in our live mapping, and
        // every bit pattern is a valid f64; `&mut self` gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<f64>(), self.len / 8) }
    }

    /// Writes one non-zero byte per 4 KiB so every page is faulted in by the calling thread
    /// (first touch decides the node of unbound memory), then re-verifies.
    pub fn touch(&mut self) {
        self.touch_to(self.len);
        self.verify();
    }

    /// Faults in the pages of the first `bytes` (at most the length) not touched yet, one
    /// non-zero byte per 4 KiB, by the calling thread: a buffer sized for the largest working
    /// set a measurement might need costs memory only as far as the measurement grows.
    pub fn touch_to(&mut self, bytes: usize) {
        let end = bytes.min(self.len);
        let from = self.touched.next_multiple_of(4096);
        let s = self.as_mut_slice();
        for i in (from..end).step_by(4096) {
            s[i] = 0xA5;
        }
        self.touched = self.touched.max(end);
    }

    /// Shortens the usable region to its first `bytes` (the part a measurement used) and
    /// re-verifies, so that the report describes that part. The tail stays mapped until drop.
    pub fn truncate(&mut self, bytes: usize) {
        self.len = bytes.clamp(1, self.len);
        self.touched = self.touched.min(self.len);
        self.report.bytes = self.len as u64;
        self.verify();
    }

    /// Returns every other 4 KiB page to the kernel (`MADV_DONTNEED`), keeping the rest: the free
    /// memory left behind is a checkerboard of single pages, as after long uptime (the Catamount
    /// paper's (Ferreira et al., CUG 2008) "fragmented" Linux node). Only for 4 KiB buffers; returns the bytes released.
    pub fn release_every_other_page(&mut self) -> Result<u64> {
        if self.report.kind != PageKind::Base4K {
            return Err(Error::input(
                "only a 4 KiB-page buffer can be fragmented page by page",
            ));
        }
        let mut released = 0u64;
        for off in (4096..self.len).step_by(8192) {
            // SAFETY: ptr+off .. +4096 lies inside our mapping and is page aligned (the mapping
            // and 4 KiB steps); MADV_DONTNEED on private anonymous memory only drops the page.
            let rc = unsafe {
                libc::madvise(self.ptr.as_ptr().add(off).cast(), 4096, libc::MADV_DONTNEED)
            };
            if rc != 0 {
                return Err(Error::last_os("madvise(MADV_DONTNEED)"));
            }
            released += 4096;
        }
        Ok(released)
    }

    /// Re-reads what the kernel gave for the resident part: page kind (smaps), nodes
    /// (move_pages) and physical layout (pagemap).
    pub fn verify(&mut self) {
        let addr = self.ptr.as_ptr() as usize;
        let Some(e) = smaps_entry(addr) else {
            self.report
                .warnings
                .push("could not read /proc/self/smaps to verify the page kind".into());
            return;
        };
        self.report.kernel_page_bytes = Some(e.kernel_page_bytes);
        self.report.huge_fraction = huge_fraction(&e, self.report.kind);
        self.report.pages_per_node = page_nodes(addr, self.len, 256);
        self.report.physical = physical_layout(addr, self.len).ok();
        if let Some(node) = self.report.bound_node {
            let off: u64 = self
                .report
                .pages_per_node
                .iter()
                .filter(|(n, _)| *n >= 0 && *n as usize != node)
                .map(|(_, c)| c)
                .sum();
            if off > 0 {
                self.report.warnings.push(format!(
                    "{off} sampled pages are not on node {node} although the buffer is bound there"
                ));
            }
        }
    }

    /// Adds a warning when THP was asked for but most of the touched buffer is on 4 KiB pages.
    pub fn check_thp(&mut self) {
        if self.report.kind == PageKind::Thp
            && let Some(f) = self.report.huge_fraction.filter(|&f| f < 0.9)
        {
            self.report.warnings.push(format!(
                    "THP requested but only {:.0}% of the buffer is on huge pages (memory fragmented, or THP defrag off); figures mix page sizes",
                    100.0 * f
                ));
        }
    }
}

fn huge_fraction(e: &SmapsEntry, kind: PageKind) -> Option<f64> {
    match kind {
        PageKind::Huge2M | PageKind::Huge1G => {
            Some(if e.hugetlb_bytes > 0 || e.kernel_page_bytes >= 2 * MIB {
                1.0
            } else {
                0.0
            })
        }
        _ if e.rss_bytes == 0 => None,
        _ => Some(e.anon_huge_bytes as f64 / e.rss_bytes as f64),
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: map/map_len describe exactly the mapping we created and nobody else unmaps it.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
        if let Some((t, offset)) = self.region {
            t.release(offset);
        }
    }
}

/// A file-backed buffer, verified like an anonymous one.
fn dax_buffer(req: BufferRequest, t: &'static DaxTarget) -> Result<Buffer> {
    if req.bytes == 0 {
        return Err(Error::input("buffer size must be at least 1 byte"));
    }
    let mut b = file::map_file(req, t)?;
    b.verify();
    Ok(b)
}

/// Views 8-byte aligned bytes as f64 (every bit pattern is a valid f64). Panics when misaligned;
/// a trailing partial element is left out.
pub fn bytes_as_f64_mut(b: &mut [u8]) -> &mut [f64] {
    assert_eq!(
        b.as_ptr() as usize % 8,
        0,
        "f64 view needs 8-byte alignment"
    );
    // SAFETY: aligned (checked), inside `b`, exclusive through `&mut`, any bits are a valid f64.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<f64>(), b.len() / 8) }
}

/// Views 4-byte aligned bytes as u32 (every bit pattern is a valid u32). Panics when
/// misaligned; a trailing partial element is left out.
pub fn bytes_as_u32_mut(b: &mut [u8]) -> &mut [u32] {
    assert_eq!(
        b.as_ptr() as usize % 4,
        0,
        "u32 view needs 4-byte alignment"
    );
    // SAFETY: aligned (checked), inside `b`, exclusive through `&mut`, any bits are a valid u32.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<u32>(), b.len() / 4) }
}

/// The bytes of u64 words (8-byte aligned memory for tests and small buffers).
pub fn u64_as_bytes_mut(w: &mut [u64]) -> &mut [u8] {
    // SAFETY: the same memory, exclusive through `&mut`; u8 has no alignment or validity rules.
    unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<u8>(), w.len() * 8) }
}

/// Refuses sizes the process cannot have, before anything is allocated.
pub fn check_size(bytes: u64, env: &Environment) -> Result<()> {
    if bytes == 0 {
        return Err(Error::input("buffer size must be at least 1 byte"));
    }
    if let Some(usable) = env.memory.usable_bytes() {
        // Leave headroom for the rest of the system: at most 90% of what is available.
        let limit = usable / 10 * 9;
        if bytes > limit {
            return Err(Error::DoesNotFit(format!(
                "a {} buffer does not fit: this process can use about {} ({}); choose a smaller size",
                format_bytes(bytes),
                format_bytes(limit),
                match env.memory.cgroup_limit_file {
                    Some(f) if env.memory.usable_bytes() != env.memory.available_bytes => {
                        format!("within its {}", f.describe())
                    }
                    _ => "MemAvailable".to_string(),
                }
            )));
        }
    }
    Ok(())
}

fn check_request(req: &BufferRequest, env: &Environment) -> Result<()> {
    check_size(req.bytes, env)?;
    env.check_node(req.node)?;
    match req.kind {
        PageKind::Huge2M | PageKind::Huge1G => {
            let page = req.kind.page_bytes();
            let need = req.bytes.div_ceil(page);
            let free = match req.node {
                Some(n) => std::fs::read_to_string(format!(
                    "/sys/devices/system/node/node{n}/hugepages/hugepages-{}kB/free_hugepages",
                    page / 1024
                ))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0),
                // Live, not the environment's snapshot: a pool reserved since then counts.
                None => std::fs::read_to_string(format!(
                    "/sys/kernel/mm/hugepages/hugepages-{}kB/free_hugepages",
                    page / 1024
                ))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or_else(|| env.huge_pages_free(page)),
            };
            if free < need {
                let knob = if req.kind == PageKind::Huge2M {
                    "/proc/sys/vm/nr_hugepages".to_string()
                } else {
                    "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages".to_string()
                };
                return Err(Error::input(format!(
                    "{} pages requested but the pool has {free} free and {need} are needed: as root, echo {need} > {knob} (release it afterwards), or use --page-kind thp",
                    req.kind
                )));
            }
        }
        PageKind::Thp => {
            if env.thp_enabled.as_deref() == Some("never") {
                return Err(Error::input(
                    "THP requested but transparent huge pages are disabled ('never'): echo madvise > /sys/kernel/mm/transparent_hugepage/enabled, or use --page-kind 2m",
                ));
            }
        }
        PageKind::Base4K => {}
    }
    Ok(())
}

fn map(req: BufferRequest) -> Result<Buffer> {
    let len = usize::try_from(req.bytes).map_err(|_| Error::input("size too large"))?;
    let page = req.kind.page_bytes() as usize;
    let (map_len, flags) = match req.kind {
        PageKind::Huge2M => (
            len.next_multiple_of(page),
            libc::MAP_HUGETLB | (21 << libc::MAP_HUGE_SHIFT),
        ),
        PageKind::Huge1G => (
            len.next_multiple_of(page),
            libc::MAP_HUGETLB | (30 << libc::MAP_HUGE_SHIFT),
        ),
        // Over-allocate by 2 MiB so the usable region can start 2 MiB-aligned (THP needs it, and
        // 4 KiB runs then have the same alignment as huge-page runs).
        _ => (len.next_multiple_of(4096) + 2 * MIB as usize, 0),
    };
    // SAFETY: anonymous private mapping with no fixed address; the kernel picks the range.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        let err = std::io::Error::last_os_error();
        return Err(if req.kind.is_huge() && req.kind != PageKind::Thp {
            Error::input(format!(
                "{} mapping of {} failed ({err}): the pool is smaller than it looked or reserved by others; reserve more pages or use --page-kind thp",
                req.kind,
                format_bytes(req.bytes)
            ))
        } else {
            Error::system(format!("mmap of {} failed: {err}", format_bytes(req.bytes)))
        });
    }
    let map = NonNull::new(p.cast::<u8>()).ok_or_else(|| Error::system("mmap returned NULL"))?;
    let start = match req.kind {
        PageKind::Huge2M | PageKind::Huge1G => map,
        _ => {
            let a = (map.as_ptr() as usize).next_multiple_of(2 * MIB as usize);
            NonNull::new(a as *mut u8).expect("aligned address is non-null")
        }
    };
    let mut b = Buffer {
        map,
        map_len,
        ptr: start,
        len,
        touched: 0,
        report: BufferReport::new(req.bytes, req.kind, req.node),
        region: None,
    };
    let advice = match req.kind {
        PageKind::Thp => Some(libc::MADV_HUGEPAGE),
        PageKind::Base4K => Some(libc::MADV_NOHUGEPAGE),
        _ => None,
    };
    if let Some(advice) = advice {
        // SAFETY: the range lies inside our mapping.
        if unsafe { libc::madvise(b.map.as_ptr().cast(), b.map_len, advice) } != 0 {
            b.report.warnings.push(format!(
                "madvise for {} failed: {}",
                req.kind,
                std::io::Error::last_os_error()
            ));
        }
    }
    if let Some(node) = req.node {
        policy::bind(&mut b, node)?;
    }
    Ok(b)
}

#[cfg(test)]
mod tests;
