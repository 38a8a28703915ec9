//! Weighted interleave: a buffer's pages spread over nodes in a chosen ratio (DRAM:CXL 3:1 …).
//!
//! Linux 6.9+ has `MPOL_WEIGHTED_INTERLEAVE`, which takes its weights from
//! `/sys/kernel/mm/mempolicy/weighted_interleave/nodeN` (set by the tier study, which restores
//! them). Older kernels get the same placement from one `mbind` per range: `w0` pages bound to the
//! first node, `w1` to the second, repeated over the buffer. Either way the placement is checked
//! afterwards with `move_pages` over every page.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Buffer;
use crate::error::{Error, Result};

/// `MPOL_WEIGHTED_INTERLEAVE` (include/uapi/linux/mempolicy.h).
const MPOL_WEIGHTED_INTERLEAVE: libc::c_int = 6;
const MPOL_BIND: libc::c_int = 2;

/// Nodes and their page weights, and how the kernel is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Weighted {
    /// (node, weight), weight ≥ 1.
    pub nodes: Vec<(usize, u32)>,
    /// True: one `MPOL_WEIGHTED_INTERLEAVE` policy (weights already in sysfs); false: per-range
    /// `mbind`.
    pub kernel_policy: bool,
}

impl Buffer {
    /// Places the buffer's pages by weight. Call before touching; 4 KiB pages give the finest
    /// split (a huge page goes wholly to one node).
    pub fn interleave_weighted(&mut self, w: &Weighted) -> Result<()> {
        if self.report.file.is_some() {
            return Err(Error::input(
                "DAX memory cannot be interleaved over NUMA nodes (it is where its device is)",
            ));
        }
        if w.nodes.is_empty() || w.nodes.iter().any(|&(_, x)| x == 0) {
            return Err(Error::input(
                "weighted interleave needs nodes with weights ≥ 1",
            ));
        }
        let nodes: Vec<usize> = w.nodes.iter().map(|&(n, _)| n).collect();
        if w.kernel_policy {
            super::policy::set_policy(self, MPOL_WEIGHTED_INTERLEAVE, &nodes).map_err(|e| {
                Error::input(format!(
                    "MPOL_WEIGHTED_INTERLEAVE over nodes {} failed: {e} (Linux 6.9+ needed)",
                    crate::units::format_list(&nodes)
                ))
            })?;
        } else {
            self.bind_ranges(&w.nodes)?;
        }
        self.report.bound_node = None;
        self.report.interleaved = nodes;
        Ok(())
    }

    /// One `mbind` per run of pages: `weight` pages to each node in turn.
    fn bind_ranges(&self, nodes: &[(usize, u32)]) -> Result<()> {
        let page = self.report.kind.page_bytes() as usize;
        let mut off = 0usize;
        'outer: loop {
            for &(node, weight) in nodes {
                if off >= self.map_len {
                    break 'outer;
                }
                let len = (weight as usize * page).min(self.map_len - off);
                super::policy::mbind(self.map.as_ptr() as usize + off, len, MPOL_BIND, &[node])
                    .map_err(|e| {
                        Error::input(format!("cannot bind pages to NUMA node {node}: {e}"))
                    })?;
                off += len;
            }
        }
        Ok(())
    }

    /// Pages of the usable region on each node, counted over every page (`move_pages`): the
    /// split a weighted placement really got.
    pub fn page_split(&self) -> Vec<(i32, u64)> {
        let pages = self.len.div_ceil(4096);
        crate::pagemap::page_nodes(self.ptr.as_ptr() as usize, self.len, pages)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{BufferRequest, PageKind};
    use super::*;

    fn buffer() -> Buffer {
        Buffer::allocate(
            BufferRequest {
                bytes: 4 << 20,
                kind: PageKind::Base4K,
                node: None,
                dax: None,
            },
            &crate::env::Environment::collect(
                &crate::sysfs::FsRoot::live(),
                crate::topology::Topology::load().unwrap(),
                false,
            ),
        )
        .unwrap()
    }

    #[test]
    fn per_range_binding_places_every_page_on_node_0() {
        // One node here: the mechanism still runs range by range and every page lands on it.
        let mut b = buffer();
        b.interleave_weighted(&Weighted {
            nodes: vec![(0, 3), (0, 1)],
            kernel_policy: false,
        })
        .unwrap();
        b.touch();
        let split = b.page_split();
        assert_eq!(split, vec![(0, 1024)], "{split:?}");
    }

    #[test]
    fn zero_weights_are_refused() {
        let mut b = buffer();
        let e = b
            .interleave_weighted(&Weighted {
                nodes: vec![(0, 0)],
                kernel_policy: false,
            })
            .unwrap_err();
        assert!(e.to_string().contains("weights ≥ 1"));
    }

    #[test]
    fn the_kernel_policy_works_where_the_kernel_has_it() {
        if !std::path::Path::new("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir() {
            return;
        }
        let mut b = buffer();
        b.interleave_weighted(&Weighted {
            nodes: vec![(0, 1)],
            kernel_policy: true,
        })
        .unwrap();
        b.touch();
        assert_eq!(b.page_split(), vec![(0, 1024)]);
    }
}
