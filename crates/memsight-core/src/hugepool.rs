//! Reserving hugetlb pages for the length of one measurement, as root, and giving them back.
//!
//! The pool is the kernel's (`/sys/kernel/mm/hugepages/hugepages-<size>kB/nr_hugepages`); a
//! [`Reservation`] raises it by what is missing and restores the previous value when dropped, so
//! the machine is left as it was even when the measurement fails or is interrupted.

use std::path::PathBuf;

use crate::buffer::PageKind;
use crate::error::{Error, Result};

fn pool_dir(kind: PageKind) -> Option<PathBuf> {
    let kb = match kind {
        PageKind::Huge2M => 2048,
        PageKind::Huge1G => 1_048_576,
        _ => return None,
    };
    Some(PathBuf::from(format!(
        "/sys/kernel/mm/hugepages/hugepages-{kb}kB"
    )))
}

fn read(path: &PathBuf) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A temporary increase of a hugetlb pool.
#[derive(Debug)]
pub struct Reservation {
    path: PathBuf,
    previous: u64,
    /// Pages added.
    pub added: u64,
}

impl Reservation {
    /// Makes sure `pages` pages of `kind` are free, raising the pool if needed. `Ok(None)` when
    /// enough were free already. Fails (restoring the pool) when the kernel cannot find the
    /// memory, or without the right to write the pool.
    pub fn ensure(kind: PageKind, pages: u64) -> Result<Option<Reservation>> {
        let dir = pool_dir(kind)
            .ok_or_else(|| Error::input(format!("{kind} pages have no hugetlb pool")))?;
        let nr_path = dir.join("nr_hugepages");
        let nr = read(&nr_path).ok_or_else(|| {
            Error::input(format!(
                "this kernel has no {kind} hugetlb pool ({})",
                dir.display()
            ))
        })?;
        let free = read(&dir.join("free_hugepages")).unwrap_or(0);
        if free >= pages {
            return Ok(None);
        }
        let want = nr + (pages - free);
        std::fs::write(&nr_path, want.to_string()).map_err(|e| {
            Error::input(format!(
                "cannot reserve {kind} pages ({e}): run as root, or reserve them first: echo {want} > {}",
                nr_path.display()
            ))
        })?;
        let r = Reservation {
            path: nr_path,
            previous: nr,
            added: pages - free,
        };
        let now_free = read(&dir.join("free_hugepages")).unwrap_or(0);
        if now_free < pages {
            // Dropping `r` restores the pool.
            return Err(Error::input(format!(
                "the kernel found only {now_free} of {pages} free {kind} pages (memory too fragmented); fell back"
            )));
        }
        Ok(Some(r))
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, self.previous.to_string());
    }
}
