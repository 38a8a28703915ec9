//! Naming the core: the family and model numbers (Arm: implementer and part) of the designs
//! memsight knows, from the numbers Linux names them by (arch/x86/include/asm/intel-family.h,
//! the Zen generations' model ranges in arch/x86/kernel/cpu/amd.c,
//! arch/arm64/include/asm/cputype.h), and the feature flags where the numbers are not in the
//! table or the flags prove them replaced.

use super::class::{ClassBasis, CoreClass, CoreId, Signature};

impl CoreClass {
    /// Names the core: family and model first, the flags where the numbers are not in the table
    /// or where the flags prove them wrong.
    pub fn identify(sig: &Signature) -> CoreId {
        let by_flags = Self::from_flags(sig);
        let Some((class, design)) = by_numbers(sig) else {
            let basis = if by_flags == CoreClass::Unknown {
                ClassBasis::Unknown
            } else {
                ClassBasis::Flags
            };
            return CoreId {
                class: by_flags,
                design: None,
                basis,
            };
        };
        // A flag the design cannot have: the number is not this core's.
        if sig.flags.iter().any(|f| !class.may_have(f)) {
            return CoreId {
                class: by_flags,
                design: Some(design),
                basis: ClassBasis::FlagsOverModel,
            };
        }
        CoreId {
            class,
            design: Some(design),
            basis: ClassBasis::FamilyModel,
        }
    }

    /// The class the feature flags alone suggest (a lower bound: flags may be hidden).
    fn from_flags(sig: &Signature) -> CoreClass {
        let has = |f: &str| sig.flags.contains(&f);
        match sig.vendor {
            Some("GenuineIntel") => {
                if has("amx_tile") || has("avx512_fp16") {
                    CoreClass::IntelGoldenCoveServer
                } else if has("avx512f") && has("avx512_vbmi2") {
                    CoreClass::IntelSunnyCove {
                        server: sig
                            .brand
                            .is_some_and(|b| b.to_ascii_lowercase().contains("xeon")),
                    }
                } else if has("avx512f") {
                    CoreClass::IntelSkylakeServer
                } else if has("avx_vnni") {
                    CoreClass::IntelHybrid
                } else {
                    CoreClass::IntelOther
                }
            }
            // Zen 3 and Zen 4 share family 0x19; AVX-512 tells them apart. Other families'
            // unknown models are not guessed.
            Some("AuthenticAMD") => match sig.family {
                Some(0x19) if has("avx512f") => CoreClass::AmdZen4,
                Some(0x19) => CoreClass::AmdZen3,
                _ => CoreClass::Unknown,
            },
            _ => CoreClass::Unknown,
        }
    }
}

/// The class and design the numbers name, or `None` when the table does not have them.
fn by_numbers(sig: &Signature) -> Option<(CoreClass, &'static str)> {
    match sig.vendor? {
        "GenuineIntel" if sig.family == Some(6) => intel(sig.model?, sig.stepping),
        "AuthenticAMD" => amd(sig.family?, sig.model?),
        // Hygon's Dhyana is a Zen 1 core under family 0x18.
        "HygonGenuine" if sig.family == Some(0x18) => Some((CoreClass::AmdZen1, "Hygon Dhyana")),
        "0x41" => arm(sig.arm_part?),
        // Microsoft's Azure Cobalt 100 is a Neoverse N2 under its own implementer code.
        "0x6d" if sig.arm_part == Some(0xd49) => {
            Some((CoreClass::NeoverseN2, "Azure Cobalt 100 (Neoverse N2)"))
        }
        _ => None,
    }
}

/// Intel family 6.
fn intel(model: u32, stepping: Option<u32>) -> Option<(CoreClass, &'static str)> {
    use CoreClass::*;
    let sunny_server = IntelSunnyCove { server: true };
    let sunny_client = IntelSunnyCove { server: false };
    Some(match model {
        // One model number for three generations; the stepping tells them apart.
        0x55 => (
            IntelSkylakeServer,
            match stepping {
                Some(10..) => "Cooper Lake",
                Some(5..=7) => "Cascade Lake",
                Some(0..=4) => "Skylake-SP",
                _ => "Skylake-SP, Cascade Lake or Cooper Lake",
            },
        ),
        0x6A => (sunny_server, "Ice Lake-SP"),
        0x6C => (sunny_server, "Ice Lake-D"),
        0x8F => (IntelGoldenCoveServer, "Sapphire Rapids"),
        0xCF => (IntelGoldenCoveServer, "Emerald Rapids"),
        0xAD => (IntelGoldenCoveServer, "Granite Rapids"),
        0xAE => (IntelGoldenCoveServer, "Granite Rapids-D"),
        0xAF => (IntelEfficiency, "Sierra Forest"),
        0xB6 => (IntelEfficiency, "Grand Ridge"),
        0xDD => (IntelEfficiency, "Clearwater Forest"),
        0xBE => (IntelEfficiency, "Alder Lake-N"),
        0x97 | 0x9A => (IntelHybrid, "Alder Lake"),
        0xB7 | 0xBA | 0xBF => (IntelHybrid, "Raptor Lake"),
        0xAA | 0xAC => (IntelHybrid, "Meteor Lake"),
        0xB5 | 0xC5 | 0xC6 => (IntelHybrid, "Arrow Lake"),
        0xBD => (IntelHybrid, "Lunar Lake"),
        0xCC => (IntelHybrid, "Panther Lake"),
        0x7D | 0x7E => (sunny_client, "Ice Lake"),
        0x8C | 0x8D => (sunny_client, "Tiger Lake"),
        0xA7 => (sunny_client, "Rocket Lake"),
        0x4E | 0x5E => (IntelOther, "Skylake"),
        0x8E | 0x9E => (IntelOther, "Kaby Lake or Coffee Lake"),
        0xA5 | 0xA6 => (IntelOther, "Comet Lake"),
        0x3F => (IntelOther, "Haswell-EP"),
        0x4F => (IntelOther, "Broadwell-EP"),
        0x56 => (IntelOther, "Broadwell-DE"),
        0x3C | 0x45 | 0x46 => (IntelOther, "Haswell"),
        0x3D | 0x47 => (IntelOther, "Broadwell"),
        _ => return None,
    })
}

/// AMD families 0x17 (Zen 1, Zen 2), 0x19 (Zen 3, Zen 4) and 0x1A (Zen 5), by the model ranges
/// Linux gives each generation; Zen 6's ranges of family 0x1A are not in the table.
fn amd(family: u32, model: u32) -> Option<(CoreClass, &'static str)> {
    use CoreClass::*;
    Some(match (family, model) {
        (0x17, 0x00..=0x2F | 0x50..=0x5F) => (AmdZen1, "Zen/Zen+"),
        (0x17, 0x30..=0x3F) => (
            AmdZen2,
            "Rome or Castle Peak (EPYC 7002, Threadripper 3000)",
        ),
        (0x17, 0x40..=0x4F | 0x60..=0x7F | 0x90..=0x91 | 0xA0..=0xAF) => (AmdZen2, "Zen 2"),
        (0x19, 0x00..=0x0F) => (AmdZen3, "Milan or Chagall (EPYC 7003, Threadripper 5000)"),
        (0x19, 0x20..=0x5F) => (AmdZen3, "Zen 3"),
        (0x19, 0x10..=0x1F) => (
            AmdZen4,
            "Genoa or Storm Peak (EPYC 9004, Threadripper 7000)",
        ),
        (0x19, 0xA0..=0xAF) => (AmdZen4, "Bergamo or Siena (EPYC 9004, 8004)"),
        (0x19, 0x60..=0x9F) => (AmdZen4, "Zen 4"),
        (0x1A, 0x00..=0x0F) => (
            AmdZen5,
            "Turin or Shimada Peak (EPYC 9005, Threadripper 9000)",
        ),
        (0x1A, 0x10..=0x1F) => (AmdZen5, "Turin Dense (EPYC 9005)"),
        (0x1A, 0x20..=0x2F | 0x40..=0x4F | 0x60..=0x7F) => (AmdZen5, "Zen 5"),
        _ => return None,
    })
}

/// Arm Ltd's own designs (implementer 0x41).
fn arm(part: u32) -> Option<(CoreClass, &'static str)> {
    use CoreClass::*;
    Some(match part {
        0xd0c => (NeoverseN1, "Neoverse N1"),
        0xd40 => (NeoverseV1, "Neoverse V1"),
        0xd49 => (NeoverseN2, "Neoverse N2"),
        0xd4f => (NeoverseV2, "Neoverse V2"),
        0xd84 => (NeoverseV3, "Neoverse V3"),
        0xd83 => (NeoverseV3, "Neoverse V3AE"),
        0xd8e => (NeoverseV3, "Neoverse N3"),
        _ => return None,
    })
}
