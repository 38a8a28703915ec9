//! Machine topology from hwloc: packages, cores, hardware threads, caches, NUMA nodes (CPU-less
//! memory nodes included) and the set of CPUs and nodes this process may use.
//!
//! The topology is copied into plain serialisable structs so that the rest of memsight (placement
//! planning, reports, JSON) never touches hwloc objects. It can come from this machine, from an
//! hwloc XML export (`--topology-xml`), or from a recorded `/sys` tree (`HWLOC_FSROOT`), which is
//! how the multi-socket, ARM, CXL and cgroup-restricted paths are tested on a 2-core VM.

use std::collections::BTreeMap;
use std::path::Path;

use hwlocality::Topology as HwTopology;
use hwlocality::bitmap::Bitmap;
use hwlocality::object::TopologyObject;
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::types::{CacheType, ObjectType};
use hwlocality::topology::builder::{BuildFlags, TypeFilter};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Where a topology came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind", content = "path")]
pub enum TopologySource {
    /// The running machine.
    Live,
    /// A recorded `/sys` + `/proc` tree named by `HWLOC_FSROOT`.
    FsRoot(String),
    /// An hwloc XML export.
    Xml(String),
}

/// One hardware thread (hwloc PU).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Cpu {
    /// OS index: the number Linux uses (`taskset`, `/sys/devices/system/cpu/cpuN`).
    pub os_index: usize,
    /// Logical index of the core holding this thread.
    pub core: usize,
    /// Logical index of the package (socket) holding it, if known.
    pub package: Option<usize>,
    /// OS index of the nearest NUMA node with memory, if known.
    pub node: Option<usize>,
    /// Logical index of the last-level cache domain it shares (CCX, socket L3), if known.
    pub llc_domain: Option<usize>,
    /// Whether this process may run on it (cpuset, cgroup, affinity).
    pub allowed: bool,
}

/// One NUMA node: a pool of memory, possibly without CPUs (CXL expanders, PMEM, HBM).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NumaNode {
    /// OS index (`/sys/devices/system/node/nodeN`).
    pub os_index: usize,
    /// Memory local to the node, bytes.
    pub memory_bytes: u64,
    /// OS indices of the CPUs whose local node this is (Linux `nodeN/cpulist`; empty for a
    /// CPU-less node such as a CXL expander or PMEM in system-RAM mode).
    pub cpus: Vec<usize>,
    /// True when no CPU has it as its local node.
    pub cpu_less: bool,
    /// CPUs physically near it (hwloc locality): for a CPU-less node, the CPUs it is attached to.
    pub near_cpus: Vec<usize>,
    /// The kind hwloc or the kernel gives: DRAM, HBM, NVM, SPM, CXL-DRAM, GPU-Memory …
    pub kind: Option<String>,
    /// The kernel memory tier hwloc saw, if any (lower is faster).
    pub memory_tier: Option<u32>,
    /// DAX backing, if the node is a DAX device in system-RAM mode.
    pub dax_type: Option<String>,
    /// Whether this process may allocate from it.
    pub allowed: bool,
}

/// A group of identical caches at one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheGroup {
    /// 1 for L1, 2 for L2 …
    pub level: u32,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    /// Capacity of one instance, bytes.
    pub size_bytes: u64,
    /// Line size, bytes.
    pub line_bytes: Option<u64>,
    /// Ways of associativity (0 = fully associative), if known.
    pub ways: Option<u32>,
    /// How many instances of this size exist.
    pub instances: usize,
    /// Hardware threads sharing one instance.
    pub threads_per_instance: usize,
}

/// A memory device hwloc reports outside the NUMA tree (CXL memory devices, DAX devices).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MemoryDevice {
    pub name: String,
    pub subtype: Option<String>,
    /// `key=value` attributes hwloc gives (sizes, DAX type, parent).
    pub info: BTreeMap<String, String>,
}

/// The machine as memsight needs it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Topology {
    pub source: TopologySource,
    pub packages: usize,
    pub cores: usize,
    pub threads: usize,
    /// Largest number of hardware threads on one core (1 = no SMT).
    pub smt: usize,
    pub cpus: Vec<Cpu>,
    pub numa_nodes: Vec<NumaNode>,
    /// CPU caches, data and unified only, grouped by level and size, smallest level first.
    pub caches: Vec<CacheGroup>,
    /// Memory-side caches (e.g. DRAM in front of PMEM in Memory Mode, MCDRAM).
    pub memory_side_caches: Vec<CacheGroup>,
    pub memory_devices: Vec<MemoryDevice>,
    /// CPU model hwloc found (from `/proc/cpuinfo` or CPUID), if any.
    pub cpu_model: Option<String>,
    /// Total memory of the machine, bytes.
    pub total_memory_bytes: u64,
}

fn cstr(s: Option<&std::ffi::CStr>) -> Option<String> {
    s.map(|c| c.to_string_lossy().into_owned())
}

fn bits<S: std::borrow::Borrow<Bitmap>>(set: &S) -> Vec<usize> {
    set.borrow().iter_set().map(usize::from).collect()
}

/// A topology XML larger than this is refused: hwloc's export of a 512-thread machine with its
/// PCI tree is a few MiB.
const MAX_XML_BYTES: u64 = 64 << 20;

/// An export of hwloc 3 as the hwloc 2 memsight links reads it. hwloc 3 writes
/// `<topology version="3.0">`, which hwloc 2 refuses before reading anything else, while the
/// objects, sets and distances it writes are those of the 2.0 format (checked on the hwloc 3
/// exports in testdata/); so the version is rewritten, and hwloc still refuses, in words,
/// anything it cannot parse.
fn readable_by_hwloc2(xml: &str) -> std::borrow::Cow<'_, str> {
    const V3: &str = "<topology version=\"3.0\">";
    if xml.contains(V3) {
        xml.replacen(V3, "<topology version=\"2.0\">", 1).into()
    } else {
        xml.into()
    }
}

impl Topology {
    /// Loads the topology this process should see: a recorded tree if `HWLOC_FSROOT` is set,
    /// otherwise this machine.
    pub fn load() -> Result<Self> {
        let source = match std::env::var("HWLOC_FSROOT") {
            Ok(r) if !r.is_empty() && r != "/" => TopologySource::FsRoot(r),
            _ => TopologySource::Live,
        };
        let builder = HwTopology::builder();
        let mut t = Self::build(builder, source)?;
        t.apply_sysfs(&crate::sysfs::FsRoot::from_env());
        Ok(t)
    }

    /// Where Linux's own files are readable, they decide which CPUs belong to each node and which
    /// memory tier a node is in (`/sys/devices/virtual/memory_tiering`, kernel 6.1+).
    fn apply_sysfs(&mut self, fs: &crate::sysfs::FsRoot) {
        for n in &mut self.numa_nodes {
            let base = format!("/sys/devices/system/node/node{}", n.os_index);
            if let Some(list) = fs.read(&format!("{base}/cpulist")) {
                n.cpus = if list.is_empty() {
                    Vec::new()
                } else {
                    crate::units::parse_cpu_list(&list).unwrap_or_default()
                };
                n.cpu_less = n.cpus.is_empty();
            }
        }
        for c in &mut self.cpus {
            if let Some(n) = self
                .numa_nodes
                .iter()
                .find(|n| n.cpus.contains(&c.os_index))
            {
                c.node = Some(n.os_index);
            }
        }
        for tier in fs.list("/sys/devices/virtual/memory_tiering") {
            let Some(id) = tier
                .strip_prefix("memory_tier")
                .and_then(|i| i.parse::<u32>().ok())
            else {
                continue;
            };
            let Some(list) = fs.read(&format!(
                "/sys/devices/virtual/memory_tiering/{tier}/nodelist"
            )) else {
                continue;
            };
            for node in crate::units::parse_cpu_list(&list).unwrap_or_default() {
                if let Some(n) = self.numa_nodes.iter_mut().find(|n| n.os_index == node) {
                    n.memory_tier = Some(id);
                }
            }
        }
    }

    /// Loads an hwloc XML export.
    pub fn from_xml_file(path: &Path) -> Result<Self> {
        if !path.is_file() {
            return Err(Error::input(format!(
                "topology XML '{}' does not exist: give a file written by 'lstopo --of xml'",
                path.display()
            )));
        }
        let text = crate::input::read_text(path, MAX_XML_BYTES, "topology XML")?;
        let builder = HwTopology::builder()
            .from_xml(&readable_by_hwloc2(&text))
            .map_err(|e| {
                Error::input(format!(
                    "cannot read topology XML '{}': {e}; give a file written by 'lstopo --of xml'",
                    path.display()
                ))
            })?;
        Self::build(builder, TopologySource::Xml(path.display().to_string()))
    }

    fn build(
        builder: hwlocality::topology::builder::TopologyBuilder,
        source: TopologySource,
    ) -> Result<Self> {
        let hw = builder
            .with_flags(BuildFlags::INCLUDE_DISALLOWED)
            .map_err(|e| Error::system(format!("hwloc: {e}")))?
            .with_io_type_filter(TypeFilter::KeepImportant)
            .map_err(|e| Error::system(format!("hwloc: {e}")))?
            .with_type_filter(ObjectType::MemCache, TypeFilter::KeepAll)
            .map_err(|e| Error::system(format!("hwloc: {e}")))?
            .build()
            .map_err(|e| {
                let why = hwloc_failure(&e);
                match &source {
                    TopologySource::Xml(path) => Error::input(format!(
                        "cannot read topology XML '{path}': hwloc refused it ({why}); give a file written by 'lstopo --of xml'"
                    )),
                    _ => Error::system(format!("hwloc could not read the topology ({why})")),
                }
            })?;
        Ok(Self::from_hwloc(&hw, source))
    }

    fn from_hwloc(hw: &HwTopology, source: TopologySource) -> Self {
        let allowed_cpus: Vec<usize> = bits(&*hw.allowed_cpuset());
        let allowed_nodes: Vec<usize> = bits(&*hw.allowed_nodeset());

        let llc_objects = llc_objects(hw);
        let cpus = cpus(hw, &llc_objects, &allowed_cpus);
        let numa_nodes = numa_nodes(hw, &cpus, &allowed_nodes);

        let caches = group_caches(
            hw,
            &[
                ObjectType::L1Cache,
                ObjectType::L2Cache,
                ObjectType::L3Cache,
                ObjectType::L4Cache,
                ObjectType::L5Cache,
            ],
        );
        let memory_side_caches = memory_side_caches(hw);

        let memory_devices = hw
            .objects_with_type(ObjectType::OSDevice)
            .filter(|o| {
                let st = cstr(o.subtype()).unwrap_or_default();
                st.contains("CXL") || o.info("DAXType").is_some()
            })
            .map(|o| MemoryDevice {
                name: cstr(o.name()).unwrap_or_default(),
                subtype: cstr(o.subtype()),
                info: o
                    .infos()
                    .iter()
                    .map(|i| {
                        (
                            i.name().to_string_lossy().into_owned(),
                            i.value().to_string_lossy().into_owned(),
                        )
                    })
                    .collect(),
            })
            .collect();

        let root = hw.root_object();
        let cpu_model = hw
            .objects_with_type(ObjectType::Package)
            .find_map(|p| cstr(p.info("CPUModel")))
            .or_else(|| cstr(root.info("CPUModel")));

        let mut per_core: BTreeMap<usize, usize> = BTreeMap::new();
        for c in &cpus {
            *per_core.entry(c.core).or_default() += 1;
        }
        Topology {
            source,
            packages: hw.objects_with_type(ObjectType::Package).len().max(1),
            cores: hw
                .objects_with_type(ObjectType::Core)
                .len()
                .max(per_core.len()),
            threads: cpus.len(),
            smt: per_core.values().copied().max().unwrap_or(1),
            cpus,
            numa_nodes,
            caches,
            memory_side_caches,
            memory_devices,
            cpu_model,
            total_memory_bytes: root.total_memory(),
        }
    }

    /// CPUs this process may run on, by OS index.
    pub fn allowed_cpus(&self) -> Vec<usize> {
        self.cpus
            .iter()
            .filter(|c| c.allowed)
            .map(|c| c.os_index)
            .collect()
    }

    /// NUMA nodes this process may allocate from, by OS index.
    pub fn allowed_nodes(&self) -> Vec<usize> {
        self.numa_nodes
            .iter()
            .filter(|n| n.allowed)
            .map(|n| n.os_index)
            .collect()
    }

    /// The data or unified cache at `level` with the largest instance size.
    pub fn cache(&self, level: u32) -> Option<&CacheGroup> {
        self.caches
            .iter()
            .filter(|c| c.level == level && c.kind != "instruction")
            .max_by_key(|c| c.size_bytes)
    }

    /// The last-level CPU cache (largest level number).
    pub fn last_level_cache(&self) -> Option<&CacheGroup> {
        let level = self.caches.iter().map(|c| c.level).max()?;
        self.cache(level)
    }

    /// The NUMA node a CPU's local memory lives on.
    pub fn node_of_cpu(&self, cpu: usize) -> Option<usize> {
        self.cpus.iter().find(|c| c.os_index == cpu)?.node
    }
}

fn numa_descendants(obj: &TopologyObject) -> Vec<&TopologyObject> {
    if obj.object_type() == ObjectType::NUMANode {
        vec![obj]
    } else {
        obj.memory_children().flat_map(numa_descendants).collect()
    }
}

/// Memory-side caches (DRAM caching PMEM in Memory Mode, MCDRAM, HBM caching DDR). hwlocality does
/// not expose their cache attributes, so they are read from hwloc's own XML export of the
/// topology, where each is an `object type="MemCache"` with `cache_size` and `depth`.
fn memory_side_caches(hw: &HwTopology) -> Vec<CacheGroup> {
    let Ok(xml) = hw.export_xml(hwlocality::topology::export::xml::XMLExportFlags::empty()) else {
        return Vec::new();
    };
    let attr = |tag: &str, name: &str| -> Option<u64> {
        let key = format!(" {name}=\"");
        let at = tag.find(&key)? + key.len();
        tag[at..].split('"').next()?.parse().ok()
    };
    let mut groups: Vec<CacheGroup> = Vec::new();
    for tag in xml
        .split('<')
        .filter(|t| t.starts_with("object type=\"MemCache\""))
    {
        let size_bytes = attr(tag, "cache_size").unwrap_or(0);
        let level = attr(tag, "depth").unwrap_or(1) as u32;
        if let Some(g) = groups
            .iter_mut()
            .find(|g| g.level == level && g.size_bytes == size_bytes)
        {
            g.instances += 1;
        } else {
            groups.push(CacheGroup {
                level,
                kind: "memory-side".to_string(),
                size_bytes,
                line_bytes: attr(tag, "cache_linesize"),
                ways: attr(tag, "cache_associativity").map(|w| w as u32),
                instances: 1,
                threads_per_instance: 0,
            });
        }
    }
    groups
}

/// The last cache level that covers more than one core, else the deepest data cache.
fn llc_objects(hw: &HwTopology) -> Vec<&TopologyObject> {
    let mut by_level: BTreeMap<u32, Vec<&TopologyObject>> = BTreeMap::new();
    for obj in hw.objects_with_type(ObjectType::L3Cache).chain(
        hw.objects_with_type(ObjectType::L2Cache)
            .chain(hw.objects_with_type(ObjectType::L4Cache)),
    ) {
        if let Some(ObjectAttributes::Cache(c)) = obj.attributes() {
            by_level.entry(c.depth() as u32).or_default().push(obj);
        }
    }
    by_level
        .into_iter()
        .next_back()
        .map(|(_, v)| v)
        .unwrap_or_default()
}

/// Every PU with its core, package, node and last-level-cache domain.
fn cpus(hw: &HwTopology, llc_objects: &[&TopologyObject], allowed_cpus: &[usize]) -> Vec<Cpu> {
    let mut cpus = Vec::new();
    for pu in hw.objects_with_type(ObjectType::PU) {
        let Some(os_index) = pu.os_index() else {
            continue;
        };
        let core = pu
            .first_ancestor_with_type(ObjectType::Core)
            .map_or(pu.logical_index(), |c| c.logical_index());
        let package = pu
            .first_ancestor_with_type(ObjectType::Package)
            .map(|p| p.logical_index());
        let node = pu.ancestors().find(|a| a.memory_arity() > 0).and_then(|a| {
            a.memory_children()
                .flat_map(numa_descendants)
                .filter_map(|n| n.os_index())
                .next()
        });
        let llc_domain = llc_objects
            .iter()
            .position(|l| pu.is_in_subtree(l))
            .map(|i| llc_objects[i].logical_index());
        cpus.push(Cpu {
            os_index,
            core,
            package,
            node,
            llc_domain,
            allowed: allowed_cpus.contains(&os_index),
        });
    }
    cpus.sort_by_key(|c| c.os_index);
    cpus
}

/// Every NUMA node: memory, own and near CPUs, kind and tier (CPU-less ones included).
fn numa_nodes(hw: &HwTopology, cpus: &[Cpu], allowed_nodes: &[usize]) -> Vec<NumaNode> {
    let mut numa_nodes = Vec::new();
    for n in hw.objects_with_type(ObjectType::NUMANode) {
        let os_index = n.os_index().unwrap_or(n.logical_index());
        let node_cpus = n.cpuset().map(|s| bits(&*s)).unwrap_or_default();
        let memory_bytes = match n.attributes() {
            Some(ObjectAttributes::NUMANode(a)) => a.local_memory().map_or(0, |m| m.get()),
            _ => 0,
        };
        let memory_tier = cstr(n.info("MemoryTier")).and_then(|t| t.parse().ok());
        let own: Vec<usize> = cpus
            .iter()
            .filter(|c| c.node == Some(os_index))
            .map(|c| c.os_index)
            .collect();
        numa_nodes.push(NumaNode {
            os_index,
            memory_bytes,
            cpu_less: own.is_empty(),
            cpus: own,
            near_cpus: node_cpus,
            kind: cstr(n.subtype()),
            memory_tier,
            dax_type: cstr(n.info("DAXType")),
            allowed: allowed_nodes.contains(&os_index),
        });
    }
    numa_nodes.sort_by_key(|n| n.os_index);
    numa_nodes
}

fn group_caches(hw: &HwTopology, types: &[ObjectType]) -> Vec<CacheGroup> {
    let mut groups: Vec<CacheGroup> = Vec::new();
    for &ty in types {
        for obj in hw.objects_with_type(ty) {
            let Some(ObjectAttributes::Cache(c)) = obj.attributes() else {
                continue;
            };
            let kind = match c.cache_type() {
                CacheType::Data => "data",
                CacheType::Instruction => continue,
                _ => "unified",
            }
            .to_string();
            let size_bytes = c.size().map_or(0, |s| s.get());
            let threads = obj.cpuset().and_then(|s| s.weight()).unwrap_or(0);
            let ways = match c.associativity() {
                hwlocality::object::attributes::CacheAssociativity::Full => Some(0),
                hwlocality::object::attributes::CacheAssociativity::Ways(w) => Some(w.get() as u32),
                _ => None,
            };
            let level = c.depth() as u32;
            if let Some(g) = groups.iter_mut().find(|g| {
                g.level == level
                    && g.kind == kind
                    && g.size_bytes == size_bytes
                    && g.threads_per_instance == threads
            }) {
                g.instances += 1;
            } else {
                groups.push(CacheGroup {
                    level,
                    kind,
                    size_bytes,
                    line_bytes: c.line_size().map(|l| l.get() as u64),
                    ways,
                    instances: 1,
                    threads_per_instance: threads,
                });
            }
        }
    }
    groups.sort_by_key(|a| (a.level, a.size_bytes));
    groups
}

/// An hwloc call's failure in words: the entry point and the OS error's description (hwlocality
/// prints the error as a Rust value).
fn hwloc_failure(e: &hwlocality::errors::RawHwlocError) -> String {
    match e.errno {
        Some(errno) => format!("{}: {errno} (errno {})", e.api, errno.0),
        None => format!("{} failed", e.api),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hwloc_3_export_is_read_as_the_2_0_format() {
        let v3 = "<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n<object type=\"Machine\"/>";
        let read = readable_by_hwloc2(v3);
        assert!(read.contains("<topology version=\"2.0\">"), "{read}");
        assert!(!read.contains("3.0"), "{read}");
        let v2 = "<topology version=\"2.0\"><info name=\"x\" value=\"version=3.0\"/>";
        assert_eq!(readable_by_hwloc2(v2), v2);
        // A recorded hwloc 3 export, read through the file path users give.
        let xml = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/hwloc/xml/16amd64-4distances.xml");
        assert!(
            std::fs::read_to_string(&xml)
                .unwrap()
                .contains("<topology version=\"3.0\">")
        );
        let t = Topology::from_xml_file(&xml).unwrap();
        assert!(!t.numa_nodes.is_empty());
    }
}
