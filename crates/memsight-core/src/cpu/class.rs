//! The core designs the methods tell apart (load ports, write-allocate evasion), and what each
//! gives them. identify.rs names a core from the vendor's family and model numbers first (Arm:
//! implementer and part), with the feature flags as the fallback. Hypervisors hide flags (a guest of an Emerald Rapids host was
//! seen without `amx_tile` and `avx512_fp16`) and some replace the model number (a guest of a
//! Sapphire Rapids host reported model 167, Rocket Lake's, with AMX); flags can be hidden but
//! never added, so a flag the named design cannot have proves the number wrong, and then the
//! flags decide.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Core designs whose memory behaviour differs in ways the methods must know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CoreClass {
    /// Intel Golden Cove or later server core: Sapphire and Emerald Rapids (Golden and Raptor
    /// Cove), Granite Rapids (Redwood Cove).
    IntelGoldenCoveServer,
    /// Intel hybrid client (Alder Lake and later): Golden Cove-class P-cores beside
    /// Gracemont-class E-cores.
    IntelHybrid,
    /// Intel Sunny/Cypress/Willow Cove with AVX-512 (Ice Lake, Tiger Lake, Rocket Lake).
    /// `server` for Ice Lake-SP and -D.
    IntelSunnyCove { server: bool },
    /// Intel Skylake-SP, Cascade Lake, Cooper Lake (and Skylake-X).
    IntelSkylakeServer,
    /// Intel E-core-only parts: Sierra Forest, Grand Ridge, Clearwater Forest, Alder Lake-N.
    IntelEfficiency,
    /// Other Intel cores (Haswell to Comet Lake, and what the table does not know).
    IntelOther,
    /// AMD Zen and Zen+ (and Hygon Dhyana): 128-bit load ports.
    AmdZen1,
    /// AMD Zen 2.
    AmdZen2,
    /// AMD Zen 3. (Results written before Zen 2 had a class of its own say this for both.)
    AmdZen3,
    /// AMD Zen 4: 512-bit operations as two 256-bit halves.
    AmdZen4,
    /// AMD Zen 5: full 512-bit datapaths on server and desktop parts.
    AmdZen5,
    /// Arm Neoverse N1 (CPU part 0xd0c).
    NeoverseN1,
    /// Arm Neoverse V1 (0xd40).
    NeoverseV1,
    /// Arm Neoverse N2 (0xd49).
    NeoverseN2,
    /// Arm Neoverse V2 (0xd4f: NVIDIA Grace, AWS Graviton4).
    NeoverseV2,
    /// Arm Neoverse V3/N3 and later (0xd84, 0xd8e).
    NeoverseV3,
    #[default]
    Unknown,
}

/// What named the core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClassBasis {
    /// The family and model (Arm: implementer and part) are in memsight's table.
    FamilyModel,
    /// The feature flags: the family and model are not in the table.
    Flags,
    /// The feature flags, because they hold a feature the design the model number names lacks
    /// (the number was replaced, as some hypervisors do).
    FlagsOverModel,
    /// Nothing did: neither the numbers nor the flags name a design in the table.
    #[default]
    Unknown,
}

/// What the processor says about itself, as the identification reads it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signature<'a> {
    /// `GenuineIntel`, `AuthenticAMD`, `HygonGenuine`, or the Arm implementer code (`0x41`).
    pub vendor: Option<&'a str>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    /// The Arm CPU part.
    pub arm_part: Option<u32>,
    pub flags: &'a [&'a str],
    /// The brand string (the flags fallback tells Ice Lake-SP from clients by "Xeon").
    pub brand: Option<&'a str>,
}

/// The core as identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreId {
    pub class: CoreClass,
    /// The design the numbers name ("Emerald Rapids", "Genoa", "Neoverse V2"), if the table
    /// has them (with [`ClassBasis::FlagsOverModel`], the design the flags overruled).
    pub design: Option<&'static str>,
    pub basis: ClassBasis,
}

/// Features whose presence proves a newer design than some model numbers name.
const TELLING: [&str; 5] = [
    "avx512f",
    "avx512_vbmi2",
    "avx_vnni",
    "amx_tile",
    "avx512_fp16",
];

impl CoreClass {
    /// Whether this design can have feature `flag` (of the telling ones; any other flag is
    /// allowed). Only x86 classes are judged by flags.
    pub(super) fn may_have(self, flag: &str) -> bool {
        if !TELLING.contains(&flag) {
            return true;
        }
        match self {
            CoreClass::IntelGoldenCoveServer => true,
            // (Early Alder Lake firmware let the P-cores run AVX-512 with the E-cores off.)
            CoreClass::IntelHybrid => flag != "amx_tile",
            CoreClass::IntelSunnyCove { .. } => matches!(flag, "avx512f" | "avx512_vbmi2"),
            CoreClass::IntelSkylakeServer => flag == "avx512f",
            CoreClass::IntelEfficiency => flag == "avx_vnni",
            CoreClass::IntelOther
            | CoreClass::AmdZen1
            | CoreClass::AmdZen2
            | CoreClass::AmdZen3 => false,
            // Zen 4 has AVX-512 with VBMI2 (not AMX, FP16 or the VEX AVX-VNNI); Zen 5 adds
            // AVX-VNNI.
            CoreClass::AmdZen4 => matches!(flag, "avx512f" | "avx512_vbmi2"),
            CoreClass::AmdZen5 => matches!(flag, "avx512f" | "avx512_vbmi2" | "avx_vnni"),
            _ => true,
        }
    }

    /// Bytes per cycle the L1 load ports carry with loads `vector_bytes` wide: loads per cycle
    /// at that width × the width (capped at the datapath). From the vendors' optimisation
    /// manuals and measurements (docs/methods/bandwidth.md lists the sources); `None` for cores
    /// not in the table.
    pub fn l1_load_bytes_per_cycle(self, vector_bytes: u64) -> Option<f64> {
        let (loads, max_width): (u64, u64) = match self {
            // Three load ports up to 256 bits, two of them for 512-bit loads.
            CoreClass::IntelGoldenCoveServer | CoreClass::IntelHybrid => {
                if vector_bytes >= 64 {
                    (2, 64)
                } else {
                    (3, 32)
                }
            }
            CoreClass::IntelSunnyCove { .. }
            | CoreClass::IntelSkylakeServer
            | CoreClass::IntelOther => (2, 64),
            // Zen and Zen+: two 128-bit loads (a 256-bit load is two halves).
            CoreClass::AmdZen1 => (2, 16),
            // Zen 2-4: two 256-bit loads per cycle (a 512-bit load is two halves on Zen 4).
            CoreClass::AmdZen2 | CoreClass::AmdZen3 | CoreClass::AmdZen4 => (2, 32),
            CoreClass::AmdZen5 => (2, 64),
            CoreClass::NeoverseN1 | CoreClass::NeoverseN2 => (2, 16),
            CoreClass::NeoverseV1 | CoreClass::NeoverseV2 | CoreClass::NeoverseV3 => (3, 16),
            // (Crestmont and Darkmont E-cores: no table entry checked against a measurement.)
            CoreClass::IntelEfficiency | CoreClass::Unknown => return None,
        };
        Some((loads * vector_bytes.min(max_width)) as f64)
    }

    /// Whether regular full-line stores may skip their read for ownership under load, so that
    /// "a store reads its line first" overstates DRAM traffic: Intel's SpecI2M on Ice Lake-SP and
    /// later Xeons (Laukemann et al., IPDPS 2024), and the write streaming mode of Arm's
    /// Neoverse cores, which stop allocating on write misses after a run of full-line stores
    /// (Arm's technical reference manuals for Neoverse N1 and its successors).
    pub fn may_evade_write_allocate(self) -> bool {
        matches!(
            self,
            CoreClass::IntelGoldenCoveServer
                | CoreClass::IntelSunnyCove { server: true }
                | CoreClass::NeoverseN1
                | CoreClass::NeoverseV1
                | CoreClass::NeoverseN2
                | CoreClass::NeoverseV2
                | CoreClass::NeoverseV3
        )
    }

    /// A name for reports.
    pub fn describe(self) -> &'static str {
        match self {
            CoreClass::IntelGoldenCoveServer => "Intel Golden Cove-class server core",
            CoreClass::IntelHybrid => "Intel hybrid client with Golden Cove-class P-cores",
            CoreClass::IntelSunnyCove { server: true } => "Intel Sunny Cove server core",
            CoreClass::IntelSunnyCove { server: false } => "Intel Sunny Cove-class client core",
            CoreClass::IntelSkylakeServer => "Intel Skylake-SP-class core",
            CoreClass::IntelEfficiency => "Intel E-core (Atom-class)",
            CoreClass::IntelOther => "Intel core",
            CoreClass::AmdZen1 => "AMD Zen/Zen+",
            CoreClass::AmdZen2 => "AMD Zen 2",
            CoreClass::AmdZen3 => "AMD Zen 3",
            CoreClass::AmdZen4 => "AMD Zen 4",
            CoreClass::AmdZen5 => "AMD Zen 5",
            CoreClass::NeoverseN1 => "Arm Neoverse N1",
            CoreClass::NeoverseV1 => "Arm Neoverse V1",
            CoreClass::NeoverseN2 => "Arm Neoverse N2",
            CoreClass::NeoverseV2 => "Arm Neoverse V2",
            CoreClass::NeoverseV3 => "Arm Neoverse V3/N3",
            CoreClass::Unknown => "core not in memsight's table",
        }
    }
}
