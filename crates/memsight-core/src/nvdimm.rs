//! Persistent-memory regions as the kernel's NVDIMM subsystem (libnvdimm) publishes them under
//! `/sys/bus/nd/devices/region*`, and what their persistence domain means.
//!
//! The platform firmware (ACPI NFIT) tells the kernel how far a store must travel before a power
//! failure cannot lose it: with ADR, the memory controller's write-pending queues are flushed on
//! power loss, so software must write dirty lines back from the CPU caches (`clwb` or
//! `clflushopt`, then `sfence`) — the cost PMDK's `pmem_persist` pays; with eADR (Intel Optane
//! 200 series on Ice Lake-SP, and CXL persistent memory with Global Persistent Flush) the CPU
//! caches are flushed too, so a store is durable once globally visible and the write-back can be
//! skipped (PMDK then only fences). The kernel names these `memory_controller` and `cpu_cache`
//! (Documentation/ABI/testing/sysfs-bus-nvdimm; Intel's Optane talk, Hot Chips 2019).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sysfs::FsRoot;

/// Where a store becomes durable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PersistenceDomain {
    /// eADR: the CPU caches are inside the domain.
    CpuCache,
    /// ADR: the memory controller's queues are; lines must leave the caches.
    MemoryController,
    /// The region publishes none (the platform promises nothing, or an old kernel).
    NotStated,
    /// A value this version does not know, as the kernel wrote it.
    Other(String),
}

impl PersistenceDomain {
    fn parse(s: &str) -> Self {
        match s.trim() {
            "cpu_cache" => Self::CpuCache,
            "memory_controller" => Self::MemoryController,
            "" => Self::NotStated,
            other => Self::Other(other.to_string()),
        }
    }

    /// The usual name.
    pub fn short(&self) -> &str {
        match self {
            Self::CpuCache => "eADR (CPU caches flushed on power loss)",
            Self::MemoryController => "ADR (memory controller queues flushed on power loss)",
            Self::NotStated => "not stated by the platform",
            Self::Other(s) => s,
        }
    }

    /// What it means for a persist and for the persist cost memsight measures.
    pub fn meaning(&self) -> &'static str {
        match self {
            Self::CpuCache => {
                "a store is durable once globally visible: the line write-back (clwb) that a persist measured with it includes is not needed here, only the fence, so software may skip it (PMDK does when it sees eADR)"
            }
            Self::MemoryController => {
                "a store is durable only after its line is written back from the CPU caches (clwb or clflushopt, then sfence): the persist cost measured is what software pays on every persist"
            }
            Self::NotStated | Self::Other(_) => {
                "software cannot rely on either: PMDK assumes ADR and writes lines back"
            }
        }
    }
}

/// One persistent-memory region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Region {
    /// `region0`, …
    pub name: String,
    /// `nd_pmem_region`, or `nd_blk_region`, as `devtype` says.
    pub kind: Option<String>,
    pub size_bytes: Option<u64>,
    /// The node of the CPUs closest to it.
    pub numa_node: Option<i64>,
    /// The node its memory becomes when onlined as system RAM.
    pub target_node: Option<i64>,
    pub persistence_domain: PersistenceDomain,
}

/// Every region under `fs`.
pub fn regions(fs: &FsRoot) -> Vec<Region> {
    let dir = "/sys/bus/nd/devices";
    fs.list(dir)
        .into_iter()
        .filter(|n| n.starts_with("region"))
        .map(|name| {
            let at = |f: &str| fs.read(&format!("{dir}/{name}/{f}"));
            let int = |f: &str| at(f).and_then(|v| v.parse::<i64>().ok());
            Region {
                kind: at("devtype").or_else(|| {
                    at("uevent")?
                        .lines()
                        .find_map(|l| l.strip_prefix("DEVTYPE=").map(String::from))
                }),
                size_bytes: at("size").and_then(|v| v.parse().ok()),
                numa_node: int("numa_node"),
                target_node: int("target_node"),
                persistence_domain: PersistenceDomain::parse(
                    &at("persistence_domain").unwrap_or_default(),
                ),
                name,
            }
        })
        .collect()
}

/// One sentence per region: its size and nodes, its domain and what that means.
pub fn describe(r: &Region) -> String {
    let size = r.size_bytes.map_or(String::new(), |b| {
        format!(", {}", crate::units::format_bytes(b))
    });
    let node = match (r.numa_node, r.target_node) {
        (Some(n), Some(t)) if t != n => format!(", near node {n}, node {t} when onlined"),
        (Some(n), _) if n >= 0 => format!(", near node {n}"),
        _ => String::new(),
    };
    format!(
        "persistent memory {}{size}{node}: persistence domain {}: {}",
        r.name,
        r.persistence_domain.short(),
        r.persistence_domain.meaning()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-socket Optane machine in App Direct mode as libnvdimm lays it out: one interleaved
    /// region per socket, ADR on one and eADR on the other (as on a mixed BIOS setting).
    fn tree() -> (tempfile::TempDir, FsRoot) {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        let r = "/sys/bus/nd/devices";
        for (name, domain, node) in [
            ("region0", "memory_controller", "0"),
            ("region1", "cpu_cache", "1"),
        ] {
            fs.put(&format!("{r}/{name}/persistence_domain"), domain)
                .unwrap();
            fs.put(&format!("{r}/{name}/size"), "1623497637888")
                .unwrap();
            fs.put(&format!("{r}/{name}/numa_node"), node).unwrap();
            fs.put(
                &format!("{r}/{name}/target_node"),
                &format!("{}", 2 + node.parse::<i64>().unwrap()),
            )
            .unwrap();
            fs.put(
                &format!("{r}/{name}/uevent"),
                "DEVTYPE=nd_pmem_region\nOF_NAME=x\n",
            )
            .unwrap();
        }
        fs.put(&format!("{r}/region2/size"), "0").unwrap();
        fs.put(&format!("{r}/ndbus0/provider"), "ACPI.NFIT")
            .unwrap();
        fs.put(&format!("{r}/nmem0/serial"), "0x1234").unwrap();
        (dir, fs)
    }

    #[test]
    fn regions_and_their_domains_are_read() {
        let (_d, fs) = tree();
        let r = regions(&fs);
        assert_eq!(r.len(), 3, "buses and DIMMs are not regions");
        assert_eq!(r[0].persistence_domain, PersistenceDomain::MemoryController);
        assert_eq!(r[1].persistence_domain, PersistenceDomain::CpuCache);
        assert_eq!(r[2].persistence_domain, PersistenceDomain::NotStated);
        assert_eq!(r[0].kind.as_deref(), Some("nd_pmem_region"));
        assert_eq!((r[1].numa_node, r[1].target_node), (Some(1), Some(3)));
        let adr = describe(&r[0]);
        assert!(
            adr.contains("ADR") && adr.contains("clwb") && adr.contains("1.48 TiB"),
            "{adr}"
        );
        assert!(describe(&r[1]).contains("not needed"));
        assert!(regions(&FsRoot::at("/nonexistent".into())).is_empty());
    }
}
