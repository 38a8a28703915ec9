//! The processor: vendor, model, the ISA features memory kernels care about, and caches as CPUID
//! describes them (for cross-checking against sysfs and hwloc).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sysfs::FsRoot;

mod class;
#[cfg(test)]
mod class_tests;
mod identify;

pub use class::{ClassBasis, CoreClass, CoreId, Signature};

/// ISA features that decide which kernels can run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct IsaFeatures {
    pub sse2: bool,
    pub avx2: bool,
    pub avx512f: bool,
    /// Non-temporal (streaming) stores: `movnti`/`movntps` with SSE2 on x86, `stnp` on AArch64.
    pub nt_stores: bool,
    /// AMD `clzero`: zero a cache line without reading it.
    pub clzero: bool,
    pub clflushopt: bool,
    pub clwb: bool,
    /// AArch64 Advanced SIMD.
    pub neon: bool,
    pub sve: bool,
}

/// One cache as CPUID or sysfs describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheInfo {
    pub level: u32,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    pub ways: Option<u32>,
    /// How many hardware threads share one instance (sysfs `shared_cpu_list`, or CPUID's
    /// "maximum logical processors sharing").
    pub shared_by: Option<usize>,
}

/// What the processor says about itself.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct CpuInfo {
    pub vendor: Option<String>,
    pub model_name: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    pub architecture: String,
    pub features: IsaFeatures,
    /// Caches from CPUID's deterministic cache leaf (leaf 4 on Intel, 0x8000001D on AMD).
    pub cpuid_caches: Vec<CacheInfo>,
    /// L3 size from AMD's legacy leaf 0x80000006, bytes. Inside a VM this is often the host's.
    pub cpuid_legacy_l3_bytes: Option<u64>,
    /// Hypervisor named by CPUID leaf 0x40000000 or `/sys/hypervisor/type`.
    pub hypervisor: Option<String>,
    /// The core design, as far as it matters to the methods (load ports, write-allocate
    /// evasion): from family and model first, the feature flags where the numbers are not in
    /// memsight's table or the flags prove them replaced ([`CoreClass::identify`]).
    #[serde(default)]
    pub core_class: CoreClass,
    /// The Arm CPU part (`CPU part` of /proc/cpuinfo), which names the design there.
    #[serde(default)]
    pub arm_part: Option<u32>,
    /// What named the class.
    #[serde(default)]
    pub core_basis: ClassBasis,
    /// The design the family and model name ("Emerald Rapids"), when the table has them; with
    /// `core_basis` `flags-over-model`, the design the flags proved the numbers wrong about.
    #[serde(default)]
    pub core_design: Option<String>,
}

impl CpuInfo {
    /// Reads the processor: CPUID where live on x86_64, `/proc/cpuinfo` otherwise (and for the
    /// model name everywhere, as a fallback).
    pub fn read(fs: &FsRoot) -> Self {
        let cpuinfo = fs.read("/proc/cpuinfo").unwrap_or_default();
        let first = |key: &str| cpuinfo_field(&cpuinfo, key);
        let flags: Vec<String> = first("flags")
            .or_else(|| first("Features"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let has = |f: &str| flags.iter().any(|x| x == f);
        let mut info = CpuInfo {
            vendor: first("vendor_id").or_else(|| first("CPU implementer")),
            model_name: first("model name").or_else(|| first("cpu model")),
            family: first("cpu family").and_then(|v| v.parse().ok()),
            model: first("model").and_then(|v| v.parse().ok()),
            stepping: first("stepping").and_then(|v| v.parse().ok()),
            architecture: architecture(fs, &cpuinfo, &flags),
            features: flag_features(&flags),
            cpuid_caches: Vec::new(),
            cpuid_legacy_l3_bytes: None,
            hypervisor: if has("hypervisor") {
                Some("unknown".to_string())
            } else {
                None
            },
            core_class: CoreClass::Unknown,
            arm_part: cpuinfo_field(&cpuinfo, "CPU part")
                .and_then(|p| u32::from_str_radix(p.trim_start_matches("0x"), 16).ok()),
            core_basis: ClassBasis::Unknown,
            core_design: None,
        };
        if let Some(h) = fs.read("/sys/hypervisor/type").filter(|h| !h.is_empty()) {
            info.hypervisor = Some(h);
        }
        #[cfg(target_arch = "x86_64")]
        if fs.is_live() {
            read_cpuid(&mut info);
        }
        let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
        let id = CoreClass::identify(&Signature {
            vendor: info.vendor.as_deref(),
            family: info.family,
            model: info.model,
            stepping: info.stepping,
            arm_part: info.arm_part,
            flags: &flag_refs,
            brand: info.model_name.as_deref(),
        });
        info.core_class = id.class;
        info.core_basis = id.basis;
        info.core_design = id.design.map(str::to_string);
        #[cfg(target_arch = "aarch64")]
        if fs.is_live() {
            live_arm_features(&mut info, first("CPU implementer").is_some());
        }
        info
    }

    /// The core for reports: its class, the design and the numbers that named it, or why the
    /// flags did ("Intel Golden Cove-class server core, Emerald Rapids (family 6 model 207)").
    pub fn core_name(&self) -> String {
        let class = self.core_class.describe();
        let numbers = match (self.family, self.model, self.arm_part) {
            (Some(f), Some(m), _) => format!("family {f} model {m}"),
            (_, _, Some(p)) => format!("CPU part {p:#x}"),
            _ => "no family and model".to_string(),
        };
        match (self.core_basis, &self.core_design) {
            // (An Arm design's name says more than its class's.)
            (ClassBasis::FamilyModel, Some(d)) if self.arm_part.is_some() => {
                format!("Arm {d} ({numbers})")
            }
            (ClassBasis::FamilyModel, Some(d)) => format!("{class}, {d} ({numbers})"),
            (ClassBasis::FlagsOverModel, Some(d)) => format!(
                "{class} (from its feature flags: {numbers} names {d}, which lacks some of them)"
            ),
            (ClassBasis::Flags, _) => {
                format!("{class} (from its feature flags: {numbers} is not in memsight's table)")
            }
            _ => class.to_string(),
        }
    }
}

/// The value of the first `key : value` line of /proc/cpuinfo with this key.
fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// The architecture: this build's when live; otherwise guessed from a recorded /proc/cpuinfo's
/// flags and fields, which differ between x86 and Arm.
fn architecture(fs: &FsRoot, cpuinfo: &str, flags: &[String]) -> String {
    let first = |key: &str| cpuinfo_field(cpuinfo, key);
    let has = |f: &str| flags.iter().any(|x| x == f);
    if fs.is_live() {
        std::env::consts::ARCH.to_string()
    } else if has("asimd") || first("CPU implementer").is_some() {
        "aarch64".to_string()
    } else if has("sse2") {
        "x86_64".to_string()
    } else {
        first("cpu")
            .or_else(|| first("arch"))
            .unwrap_or_else(|| "unknown".to_string())
    }
}

/// The instruction-set features the kernels choose between, as /proc/cpuinfo's flags list them.
fn flag_features(flags: &[String]) -> IsaFeatures {
    let has = |f: &str| flags.iter().any(|x| x == f);
    IsaFeatures {
        sse2: has("sse2"),
        avx2: has("avx2"),
        avx512f: has("avx512f"),
        nt_stores: has("sse2") || has("asimd"),
        clzero: has("clzero"),
        clflushopt: has("clflushopt"),
        clwb: has("clwb"),
        neon: has("asimd"),
        sve: has("sve"),
    }
}

/// What this process can run, whatever /proc/cpuinfo says (an emulator such as qemu-user shows
/// the host's x86 flags there); without an Arm implementer field the core is not known.
#[cfg(target_arch = "aarch64")]
fn live_arm_features(info: &mut CpuInfo, arm_implementer: bool) {
    let features = &mut info.features;
    features.neon = std::arch::is_aarch64_feature_detected!("neon");
    features.sve = std::arch::is_aarch64_feature_detected!("sve");
    features.nt_stores = features.neon;
    (features.sse2, features.avx2, features.avx512f) = (false, false, false);
    (features.clzero, features.clflushopt, features.clwb) = (false, false, false);
    if !arm_implementer {
        info.core_class = CoreClass::Unknown;
        info.core_basis = ClassBasis::Unknown;
        info.core_design = None;
    }
}

#[cfg(target_arch = "x86_64")]
fn read_cpuid(info: &mut CpuInfo) {
    let cpuid = raw_cpuid::CpuId::new();
    if let Some(v) = cpuid.get_vendor_info() {
        info.vendor = Some(v.as_str().to_string());
    }
    if let Some(b) = cpuid.get_processor_brand_string() {
        info.model_name = Some(b.as_str().trim().to_string());
    }
    if let Some(f) = cpuid.get_feature_info() {
        info.family = Some(f.family_id() as u32);
        info.model = Some(f.model_id() as u32);
        info.stepping = Some(f.stepping_id() as u32);
    }
    info.features.sse2 = std::arch::is_x86_feature_detected!("sse2");
    info.features.avx2 = std::arch::is_x86_feature_detected!("avx2");
    info.features.avx512f = std::arch::is_x86_feature_detected!("avx512f");
    info.features.nt_stores = info.features.sse2;
    if let Some(e) = cpuid.get_extended_feature_info() {
        info.features.clflushopt = e.has_clflushopt();
        info.features.clwb = e.has_clwb();
    }
    if let Some(p) = cpuid.get_processor_capacity_feature_info() {
        info.features.clzero = p.has_cl_zero();
    }
    if let Some(h) = cpuid.get_hypervisor_info() {
        use raw_cpuid::Hypervisor as H;
        info.hypervisor = Some(
            match h.identify() {
                H::Xen => "Xen",
                H::VMware => "VMware",
                H::HyperV => "Hyper-V",
                H::KVM => "KVM",
                H::QEMU => "QEMU",
                H::Bhyve => "bhyve",
                H::QNX => "QNX",
                H::ACRN => "ACRN",
                H::Unknown(..) => "an unidentified hypervisor",
            }
            .to_string(),
        );
    }
    if let Some(params) = cpuid.get_cache_parameters() {
        for c in params {
            let kind = match c.cache_type() {
                raw_cpuid::CacheType::Data => "data",
                raw_cpuid::CacheType::Instruction => "instruction",
                raw_cpuid::CacheType::Unified => "unified",
                _ => continue,
            };
            let size = (c.associativity()
                * c.physical_line_partitions()
                * c.coherency_line_size()
                * c.sets()) as u64;
            info.cpuid_caches.push(CacheInfo {
                level: c.level() as u32,
                kind: kind.to_string(),
                size_bytes: size,
                line_bytes: Some(c.coherency_line_size() as u64),
                ways: Some(if c.is_fully_associative() {
                    0
                } else {
                    c.associativity() as u32
                }),
                shared_by: Some(c.max_cores_for_cache()),
            });
        }
    }
    if info.vendor.as_deref() == Some("AuthenticAMD")
        && let Some(l) = cpuid.get_l2_l3_cache_and_tlb_info()
    {
        let l3 = l.l3cache_size() as u64 * 512 * 1024;
        if l3 > 0 {
            info.cpuid_legacy_l3_bytes = Some(l3);
        }
    }
}

/// Caches of one CPU as sysfs lists them (`/sys/devices/system/cpu/cpuN/cache/index*`).
pub fn sysfs_caches(fs: &FsRoot, cpu: usize) -> Vec<CacheInfo> {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let mut out = Vec::new();
    for idx in fs
        .list(&base)
        .into_iter()
        .filter(|n| n.starts_with("index"))
    {
        let p = |f: &str| format!("{base}/{idx}/{f}");
        let Some(level) = fs.read_u64(&p("level")) else {
            continue;
        };
        let kind = match fs.read(&p("type")).as_deref() {
            Some("Data") => "data",
            Some("Instruction") => "instruction",
            _ => "unified",
        };
        let Some(size_bytes) = fs.read(&p("size")).and_then(|s| parse_sysfs_size(&s)) else {
            continue;
        };
        let shared_by = fs
            .read(&p("shared_cpu_list"))
            .and_then(|l| crate::units::parse_cpu_list(&l).ok())
            .map(|v| v.len());
        out.push(CacheInfo {
            level: level as u32,
            kind: kind.to_string(),
            size_bytes,
            line_bytes: fs.read_u64(&p("coherency_line_size")),
            ways: fs.read_u64(&p("ways_of_associativity")).map(|w| w as u32),
            shared_by,
        });
    }
    out.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    out
}

/// Sysfs cache sizes look like `32K`, `1024K`, `32768K`, sometimes `16M`.
fn parse_sysfs_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1024 * 1024),
        'G' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes() {
        assert_eq!(parse_sysfs_size("32K"), Some(32 * 1024));
        assert_eq!(parse_sysfs_size("16M"), Some(16 << 20));
        assert_eq!(parse_sysfs_size("512"), Some(512));
        assert_eq!(parse_sysfs_size("x"), None);
    }

    #[test]
    fn live_cpu_has_a_name_and_caches() {
        let fs = FsRoot::live();
        let cpu = CpuInfo::read(&fs);
        assert!(cpu.model_name.is_some());
        let caches = sysfs_caches(&fs, 0);
        if !caches.is_empty() {
            assert!(caches.iter().any(|c| c.level == 1));
        }
    }
}
