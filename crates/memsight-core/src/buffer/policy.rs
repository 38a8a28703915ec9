//! NUMA memory policies over a buffer's mapping: bound to one node, interleaved over several,
//! through `mbind` before any page is touched.

use super::Buffer;
use crate::error::{Error, Result};

/// Binds the whole mapping to one node (`mbind`, MPOL_BIND) before any page is touched.
pub(super) fn bind(b: &mut Buffer, node: usize) -> Result<()> {
    const MPOL_BIND: libc::c_int = 2;
    match set_policy(b, MPOL_BIND, &[node]) {
        Err(e) if harmless(&e, &[node]) => {
            b.report.warnings.push(unapplied(&e));
            Ok(())
        }
        Err(e) => Err(Error::input(format!(
            "cannot bind memory to NUMA node {node}: {e}; choose a node with memory this process may use"
        ))),
        Ok(()) => Ok(()),
    }
}

/// A policy the system refuses to take (no NUMA support in the kernel, a seccomp filter such as a
/// container's default one that allows `mbind` only with CAP_SYS_NICE, an emulator) is harmless
/// when every node it names is the one node with memory: the pages land there anyway.
fn harmless(e: &std::io::Error, nodes: &[usize]) -> bool {
    let refused = matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM));
    let memory_nodes = std::fs::read_to_string("/sys/devices/system/node/has_memory")
        .ok()
        .and_then(|t| crate::units::parse_cpu_list(t.trim()).ok())
        .unwrap_or_else(|| vec![0]);
    refused && memory_nodes.len() == 1 && nodes.iter().all(|n| *n == memory_nodes[0])
}

fn unapplied(e: &std::io::Error) -> String {
    format!(
        "the memory policy was not applied (mbind: {e}); with one node holding memory the pages are on it anyway"
    )
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
        match set_policy(self, MPOL_INTERLEAVE, nodes) {
            Err(e) if harmless(&e, nodes) => self.report.warnings.push(unapplied(&e)),
            Err(e) => {
                return Err(Error::input(format!(
                    "cannot interleave memory over nodes {}: {e}",
                    crate::units::format_list(nodes)
                )));
            }
            Ok(()) => {}
        }
        self.report.bound_node = None;
        self.report.interleaved = nodes.to_vec();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_policy_is_harmless_only_on_the_one_memory_node() {
        let memory_nodes = std::fs::read_to_string("/sys/devices/system/node/has_memory")
            .ok()
            .and_then(|t| crate::units::parse_cpu_list(t.trim()).ok())
            .unwrap_or_else(|| vec![0]);
        let refused = std::io::Error::from_raw_os_error(libc::ENOSYS);
        let forbidden = std::io::Error::from_raw_os_error(libc::EPERM);
        let invalid = std::io::Error::from_raw_os_error(libc::EINVAL);
        let only = memory_nodes[0];
        // Another error, or a node other than the one with memory, is never harmless.
        assert!(!harmless(&invalid, &[only]));
        assert!(!harmless(&refused, &[only + 1]));
        if memory_nodes.len() == 1 {
            assert!(harmless(&refused, &[only]));
            assert!(harmless(&forbidden, &[only, only]));
            assert!(unapplied(&refused).contains("pages are on it anyway"));
        } else {
            assert!(!harmless(&refused, &[only]));
        }
    }
}
