//! File-backed buffers: persistent memory and CXL memory reached through DAX (`--dax PATH`).
//!
//! App Direct persistent memory and some CXL setups are not NUMA nodes but devices: a devdax
//! character device (`/dev/daxX.Y`) or files on a file system mounted with `-o dax`. memsight maps
//! them shared, as PMDK does: a devdax device region by region (each buffer its own 2 MiB-aligned
//! range, returned when the buffer is dropped), or on a file system one new file per buffer in
//! the given directory, removed at once (its space is freed when the mapping goes). On a file
//! system the mapping asks for `MAP_SYNC` (`MAP_SHARED_VALIDATE`), which only real DAX grants; a
//! refusal means the page cache sits in between. A directory on tmpfs therefore *emulates* DAX
//! (ordinary DRAM through shared memory) and every figure taken on it says so.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Buffer, BufferReport, BufferRequest, PageKind};
use crate::error::{Error, Result};
use crate::units::{MIB, format_bytes};

/// What a `--dax` path turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DaxKind {
    /// A devdax character device: the media mapped directly.
    DevDax,
    /// A file system that granted `MAP_SYNC`: loads and stores reach the media.
    FsDax,
    /// tmpfs or another file system without DAX: DRAM (page cache) standing in.
    Emulated,
}

/// How a file-backed buffer was mapped, carried in its [`BufferReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileBacking {
    /// The path given (`--dax`).
    pub path: String,
    pub kind: DaxKind,
    /// File system type (statfs magic decoded), or `devdax`.
    pub filesystem: String,
    /// Whether the kernel granted `MAP_SYNC` (real DAX on a file system).
    pub map_sync: bool,
}

impl DaxKind {
    /// The kind in words, as conditions and tables print it.
    pub fn name(self) -> &'static str {
        match self {
            DaxKind::DevDax => "devdax",
            DaxKind::FsDax => "fsdax",
            DaxKind::Emulated => "emulated",
        }
    }
}

impl FileBacking {
    /// One line for method texts and reports.
    pub fn describe(&self) -> String {
        match self.kind {
            DaxKind::DevDax => format!("devdax device {}", self.path),
            DaxKind::FsDax => format!(
                "DAX file on {} at {} (MAP_SYNC)",
                self.filesystem, self.path
            ),
            DaxKind::Emulated => format!(
                "EMULATED DAX: a shared file on {} at {} (no MAP_SYNC: DRAM through the page cache, not persistent memory)",
                self.filesystem, self.path
            ),
        }
    }
}

/// A `--dax` target: where file-backed buffers are mapped from. Opened once per command and kept
/// for the life of the process (buffers hold a reference to it to return devdax regions).
#[derive(Debug)]
pub struct DaxTarget {
    path: PathBuf,
    device: bool,
    filesystem: String,
    /// Bytes a devdax device holds.
    device_bytes: u64,
    /// Devdax regions in use: (offset, length).
    used: Mutex<Vec<(u64, u64)>>,
    counter: AtomicU64,
}

impl PartialEq for DaxTarget {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// Devdax devices map in multiples of their alignment, 2 MiB by default.
const DEVDAX_ALIGN: u64 = 2 * MIB;

impl DaxTarget {
    /// Checks `path` and keeps it for the process: a devdax character device, or a directory in
    /// which memsight creates (and at once removes) one file per buffer.
    pub fn open(path: &Path) -> Result<&'static DaxTarget> {
        let meta = std::fs::metadata(path).map_err(|e| {
            Error::input(format!(
                "--dax {}: {e}; give a devdax device (/dev/daxX.Y) or a directory on a DAX file system (a tmpfs directory such as /dev/shm emulates one)",
                path.display()
            ))
        })?;
        let (device, filesystem, device_bytes) = if meta.file_type().is_char_device() {
            (true, "devdax".to_string(), devdax_size(path)?)
        } else if meta.is_dir() {
            (false, filesystem_name(path), 0)
        } else {
            return Err(Error::input(format!(
                "--dax {}: an existing file; memsight will not overwrite it. Give a directory on the DAX file system (memsight creates and removes its own files) or a devdax device",
                path.display()
            )));
        };
        Ok(Box::leak(Box::new(DaxTarget {
            path: path.to_path_buf(),
            device,
            filesystem,
            device_bytes,
            used: Mutex::new(Vec::new()),
            counter: AtomicU64::new(0),
        })))
    }

    /// The path given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What buffers from here are, before any is mapped (a file system's `MAP_SYNC` answer is
    /// known only after the first mapping; [`Buffer::report`] has the final word).
    pub fn probe(&'static self) -> Result<FileBacking> {
        let b = map_file(
            BufferRequest {
                bytes: 2 * MIB,
                kind: PageKind::Base4K,
                node: None,
                dax: Some(self),
            },
            self,
        )?;
        Ok(b.report.file.clone().expect("file-backed buffer"))
    }

    fn reserve(&self, len: u64) -> Result<u64> {
        let mut used = self.used.lock().map_err(|_| Error::system("dax lock"))?;
        used.sort_unstable();
        let mut at = 0u64;
        for &(off, l) in used.iter() {
            if at + len <= off {
                break;
            }
            at = (off + l).next_multiple_of(DEVDAX_ALIGN);
        }
        if at + len > self.device_bytes {
            return Err(Error::input(format!(
                "--dax {}: a {} buffer does not fit: the device holds {} and {} are in use",
                self.path.display(),
                format_bytes(len),
                format_bytes(self.device_bytes),
                format_bytes(used.iter().map(|u| u.1).sum())
            )));
        }
        used.push((at, len));
        Ok(at)
    }

    pub(super) fn release(&self, offset: u64) {
        if let Ok(mut used) = self.used.lock() {
            used.retain(|u| u.0 != offset);
        }
    }
}

/// Size of a devdax device from sysfs (`/sys/dev/char/MAJ:MIN/size`).
fn devdax_size(path: &Path) -> Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).map(|m| m.rdev()).unwrap_or(0);
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let sys = format!("/sys/dev/char/{maj}:{min}");
    let subsystem = std::fs::read_link(format!("{sys}/subsystem")).unwrap_or_default();
    if !subsystem.to_string_lossy().ends_with("dax") {
        return Err(Error::input(format!(
            "--dax {}: a character device that is not a devdax device (its subsystem is '{}')",
            path.display(),
            subsystem.display()
        )));
    }
    std::fs::read_to_string(format!("{sys}/size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| Error::system(format!("cannot read the size of {}", path.display())))
}

/// The file system type of a directory, from statfs.
fn filesystem_name(path: &Path) -> String {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return "unknown".into();
    };
    // SAFETY: an all-zero statfs is a valid out-parameter; the path is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return "unknown".into();
    }
    match st.f_type as i64 {
        0x0102_1994 => "tmpfs".into(),
        0xEF53 => "ext4".into(),
        0x5846_5342 => "xfs".into(),
        0x9123_683E => "btrfs".into(),
        0x2FC1_2FC1 => "zfs".into(),
        0x6969 => "nfs".into(),
        0x794C_7630 => "overlayfs".into(),
        other => format!("fs magic {other:#x}"),
    }
}

/// Free bytes of the file system holding `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: zeroed statvfs is a valid out-parameter; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail * st.f_frsize)
}

/// Maps a buffer from the DAX target: a region of the device, or a new file in the directory.
pub(super) fn map_file(req: BufferRequest, t: &'static DaxTarget) -> Result<Buffer> {
    if req.node.is_some() {
        return Err(Error::input(
            "--dax memory is where the device is: it cannot also be bound to a NUMA node (drop --node)",
        ));
    }
    let len = req.bytes.next_multiple_of(DEVDAX_ALIGN);
    let (fd, offset, map_sync) = if t.device {
        let offset = t.reserve(len)?;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&t.path)
            .map_err(|e| Error::input(format!("--dax {}: {e} (root needed?)", t.path.display())))?;
        (f, offset, false)
    } else {
        (new_file(t, len)?, 0, true)
    };
    let (p, synced) = map_shared(&fd, len, offset, map_sync);
    if p == libc::MAP_FAILED {
        let err = std::io::Error::last_os_error();
        if t.device {
            t.release(offset);
        }
        return Err(Error::system(format!(
            "mmap of {} from {} failed: {err}",
            format_bytes(req.bytes),
            t.path.display()
        )));
    }
    let map = NonNull::new(p.cast::<u8>()).ok_or_else(|| Error::system("mmap returned NULL"))?;
    let kind = if t.device {
        DaxKind::DevDax
    } else if synced {
        DaxKind::FsDax
    } else {
        DaxKind::Emulated
    };
    let mut report = BufferReport::new(req.bytes, PageKind::Base4K, None);
    report.file = Some(FileBacking {
        path: t.path.display().to_string(),
        kind,
        filesystem: t.filesystem.clone(),
        map_sync: synced,
    });
    if req.kind != PageKind::Base4K {
        report.warnings.push(format!(
            "{} asked for, but DAX memory comes in the pages its device or file system maps",
            req.kind
        ));
    }
    Ok(Buffer {
        map,
        map_len: len as usize,
        ptr: map,
        len: req.bytes as usize,
        touched: 0,
        report,
        region: t.device.then_some((t, offset)),
    })
}

/// Maps `len` bytes of `fd` at `offset`, shared; with `map_sync`, MAP_SYNC first (stores
/// durable once flushed from the caches, no fsync), falling back to a plain shared mapping
/// where the file system refuses it. Returns the address (MAP_FAILED if both failed, errno set) and whether
/// MAP_SYNC took.
fn map_shared(
    fd: &std::fs::File,
    len: u64,
    offset: u64,
    map_sync: bool,
) -> (*mut libc::c_void, bool) {
    use std::os::fd::AsRawFd;
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let try_map = |flags: libc::c_int| {
        // SAFETY: a shared mapping of our open file at a kernel-chosen address.
        unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                prot,
                flags,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        }
    };
    let mut synced = false;
    let mut p = libc::MAP_FAILED;
    if map_sync {
        p = try_map(libc::MAP_SHARED_VALIDATE | libc::MAP_SYNC);
        synced = p != libc::MAP_FAILED;
    }
    if p == libc::MAP_FAILED {
        p = try_map(libc::MAP_SHARED);
    }
    (p, synced)
}

/// A new file of `len` bytes in the target directory, allocated and already unlinked.
fn new_file(t: &DaxTarget, len: u64) -> Result<std::fs::File> {
    if let Some(free) = free_bytes(&t.path)
        && free < len
    {
        return Err(Error::input(format!(
            "--dax {}: a {} buffer does not fit: the file system has {} free",
            t.path.display(),
            format_bytes(len),
            format_bytes(free)
        )));
    }
    let n = t.counter.fetch_add(1, Ordering::Relaxed);
    let name = t.path.join(format!(".memsight-{}-{n}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&name)
        .map_err(|e| {
            Error::input(format!(
                "--dax {}: cannot create a file: {e}",
                t.path.display()
            ))
        })?;
    // Unlinked now, so neither an error nor Ctrl-C leaves it behind; the mapping keeps it alive.
    let _ = std::fs::remove_file(&name);
    use std::os::fd::AsRawFd;
    // SAFETY: plain call on our open descriptor.
    let rc = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, len as libc::off_t) };
    if rc != 0 {
        return Err(Error::input(format!(
            "--dax {}: cannot allocate {} ({})",
            t.path.display(),
            format_bytes(len),
            std::io::Error::from_raw_os_error(rc)
        )));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tmpfs_directory_emulates_dax_and_leaves_no_file() {
        let dir = Path::new("/dev/shm");
        if !dir.is_dir() {
            return;
        }
        let t = DaxTarget::open(dir).unwrap();
        let mut b = Buffer::allocate(
            BufferRequest {
                bytes: 3 * MIB,
                kind: PageKind::Base4K,
                node: None,
                dax: Some(t),
            },
            &crate::env::Environment::collect(
                &crate::sysfs::FsRoot::live(),
                crate::topology::Topology::load().unwrap(),
                false,
            ),
        )
        .unwrap();
        b.touch();
        let f = b.report().file.clone().unwrap();
        assert_eq!(f.kind, DaxKind::Emulated);
        assert_eq!(f.filesystem, "tmpfs");
        assert!(f.describe().contains("EMULATED"));
        assert!(b.as_mut_slice().iter().step_by(4096).all(|&x| x == 0xA5));
        let left = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!(".memsight-{}-", std::process::id()))
            });
        assert!(!left, "the backing file is unlinked at once");
    }

    #[test]
    fn an_existing_file_or_a_missing_path_is_refused() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = DaxTarget::open(f.path()).unwrap_err().to_string();
        assert!(e.contains("will not overwrite"), "{e}");
        let e = DaxTarget::open(Path::new("/nonexistent/x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("devdax"), "{e}");
    }

    #[test]
    fn devdax_regions_do_not_overlap_and_are_returned() {
        let t = DaxTarget {
            path: "/dev/dax9.9".into(),
            device: true,
            filesystem: "devdax".into(),
            device_bytes: 16 * MIB,
            used: Mutex::new(Vec::new()),
            counter: AtomicU64::new(0),
        };
        let a = t.reserve(4 * MIB).unwrap();
        let b = t.reserve(6 * MIB).unwrap();
        assert_eq!((a, b), (0, 4 * MIB));
        assert!(t.reserve(8 * MIB).is_err(), "10 of 16 MiB in use");
        t.release(a);
        assert_eq!(t.reserve(4 * MIB).unwrap(), 0, "the freed region is reused");
        assert_eq!(t.reserve(6 * MIB).unwrap(), 10 * MIB);
    }
}
