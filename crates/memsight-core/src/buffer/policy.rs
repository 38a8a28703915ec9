//! NUMA memory policies over a buffer's mapping: bound to one node, interleaved over several,
//! through `mbind` before any page is touched.

use super::Buffer;
use crate::error::{Error, Result};

/// Binds the whole mapping to one node (`mbind`, MPOL_BIND) before any page is touched.
pub(super) fn bind(b: &Buffer, node: usize) -> Result<()> {
    const MPOL_BIND: libc::c_int = 2;
    set_policy(b, MPOL_BIND, &[node]).map_err(|e| {
        Error::input(format!(
            "cannot bind memory to NUMA node {node}: {e}; choose a node with memory this process may use"
        ))
    })
}

/// Applies a memory policy over the whole mapping (`mbind`).
pub(super) fn set_policy(b: &Buffer, mode: libc::c_int, nodes: &[usize]) -> std::io::Result<()> {
    mbind(b.map.as_ptr() as usize, b.map_len, mode, nodes)
}

/// `mbind` over `len` bytes at `addr` with a node mask of `nodes`.
pub(super) fn mbind(
    addr: usize,
    len: usize,
    mode: libc::c_int,
    nodes: &[usize],
) -> std::io::Result<()> {
    let bits = 8 * std::mem::size_of::<libc::c_ulong>();
    let max = nodes.iter().copied().max().unwrap_or(0);
    let mut mask = vec![0 as libc::c_ulong; max / bits + 1];
    for &n in nodes {
        mask[n / bits] |= 1 << (n % bits);
    }
    // SAFETY: callers pass a range inside a mapping their buffer owns; the mask has
    // maxnode = mask.len()*bits bits.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            mode,
            mask.as_ptr(),
            mask.len() * bits + 1,
            0,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Buffer {
    /// Spreads the buffer's pages round-robin over `nodes` (MPOL_INTERLEAVE): the placement a
    /// NUMA-unaware program gets from `numactl --interleave`. Call before touching.
    pub fn interleave(&mut self, nodes: &[usize]) -> Result<()> {
        const MPOL_INTERLEAVE: libc::c_int = 3;
        if self.report.file.is_some() {
            return Err(Error::input(
                "DAX memory cannot be interleaved over NUMA nodes (it is where its device is)",
            ));
        }
        if nodes.is_empty() {
            return Err(Error::input("no NUMA node to interleave over"));
        }
        set_policy(self, MPOL_INTERLEAVE, nodes).map_err(|e| {
            Error::input(format!(
                "cannot interleave memory over nodes {}: {e}",
                crate::units::format_list(nodes)
            ))
        })?;
        self.report.bound_node = None;
        self.report.interleaved = nodes.to_vec();
        Ok(())
    }
}
