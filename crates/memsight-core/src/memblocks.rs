//! What the kernel knows about a physical address: the memory block it lies in
//! (`/sys/devices/system/memory`, Documentation/admin-guide/mm/memory-hotplug.rst), that block's
//! node, zones and hot-plug state, and the CXL region holding it (`/sys/bus/cxl/devices/region*`,
//! Documentation/driver-api/cxl).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sysfs::FsRoot;

const MEMORY: &str = "/sys/devices/system/memory";

/// One memory block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryBlock {
    /// `memoryN`'s N.
    pub index: u64,
    /// First physical address.
    pub start: u64,
    pub bytes: u64,
    pub node: Option<usize>,
    /// `online`, `offline`, …
    pub state: Option<String>,
    /// Zones the block can be onlined into (`valid_zones`), e.g. `Normal`, `Movable`.
    pub zones: Option<String>,
    /// Whether the kernel may unplug it (`removable`; hot-plugged memory usually is).
    pub removable: Option<bool>,
}

/// A CXL region's physical range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CxlRegion {
    pub name: String,
    pub start: u64,
    pub bytes: u64,
}

/// Every memory block under `fs`; empty where the kernel publishes none.
pub fn blocks(fs: &FsRoot) -> Vec<MemoryBlock> {
    let Some(size) = fs
        .read(&format!("{MEMORY}/block_size_bytes"))
        .and_then(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
    else {
        return Vec::new();
    };
    let mut out: Vec<MemoryBlock> = fs
        .list(MEMORY)
        .into_iter()
        .filter_map(|name| {
            let index: u64 = name.strip_prefix("memory")?.parse().ok()?;
            let dir = format!("{MEMORY}/{name}");
            let node = fs
                .list(&dir)
                .iter()
                .find_map(|e| e.strip_prefix("node")?.parse().ok());
            Some(MemoryBlock {
                index,
                start: index * size,
                bytes: size,
                node,
                state: fs.read(&format!("{dir}/state")),
                zones: fs.read(&format!("{dir}/valid_zones")),
                removable: fs.read_u64(&format!("{dir}/removable")).map(|r| r == 1),
            })
        })
        .collect();
    out.sort_by_key(|b| b.index);
    out
}

/// Every CXL region with a physical range.
pub fn cxl_regions(fs: &FsRoot) -> Vec<CxlRegion> {
    let dir = "/sys/bus/cxl/devices";
    fs.list(dir)
        .into_iter()
        .filter(|n| n.starts_with("region"))
        .filter_map(|name| {
            let hex = |f: &str| {
                let v = fs.read(&format!("{dir}/{name}/{f}"))?;
                u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()
            };
            let (start, bytes) = (hex("resource")?, hex("size")?);
            (bytes > 0).then_some(CxlRegion { name, start, bytes })
        })
        .collect()
}

/// The blocks overlapping `[start, start + bytes)`.
pub fn overlapping(blocks: &[MemoryBlock], start: u64, bytes: u64) -> Vec<&MemoryBlock> {
    blocks
        .iter()
        .filter(|b| b.start < start + bytes && start < b.start + b.bytes)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four 128 MiB blocks on two nodes, the last hot-plugged (movable, removable), and a CXL
    /// region over it, as the kernel's documented layout has them.
    fn tree() -> (tempfile::TempDir, FsRoot) {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        fs.put(&format!("{MEMORY}/block_size_bytes"), "8000000")
            .unwrap();
        for (i, node, zones, removable) in [
            (0, 0, "DMA32 Normal", "0"),
            (1, 0, "Normal", "0"),
            (2, 1, "Normal", "0"),
            (3, 1, "Movable", "1"),
        ] {
            let d = format!("{MEMORY}/memory{i}");
            fs.put(&format!("{d}/state"), "online").unwrap();
            fs.put(&format!("{d}/valid_zones"), zones).unwrap();
            fs.put(&format!("{d}/removable"), removable).unwrap();
            fs.put(&format!("{d}/node{node}/uevent"), "").unwrap();
        }
        fs.put(&format!("{MEMORY}/auto_online_blocks"), "online")
            .unwrap();
        fs.put("/sys/bus/cxl/devices/region0/resource", "0x18000000")
            .unwrap();
        fs.put("/sys/bus/cxl/devices/region0/size", "0x8000000")
            .unwrap();
        fs.put("/sys/bus/cxl/devices/mem0/serial", "0x1").unwrap();
        (dir, fs)
    }

    #[test]
    fn blocks_nodes_zones_and_cxl_regions_are_read() {
        let (_d, fs) = tree();
        let b = blocks(&fs);
        assert_eq!(b.len(), 4);
        assert_eq!((b[3].start, b[3].bytes), (3 << 27, 1 << 27));
        assert_eq!((b[2].node, b[3].removable), (Some(1), Some(true)));
        assert_eq!(b[3].zones.as_deref(), Some("Movable"));
        let over = overlapping(&b, (1 << 27) + 4096, 1 << 27);
        assert_eq!(over.iter().map(|b| b.index).collect::<Vec<_>>(), [1, 2]);
        let cxl = cxl_regions(&fs);
        assert_eq!(
            cxl,
            [CxlRegion {
                name: "region0".into(),
                start: 3 << 27,
                bytes: 1 << 27
            }]
        );
        assert!(blocks(&FsRoot::at("/nonexistent".into())).is_empty());
    }
}
