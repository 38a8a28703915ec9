//! The core named from recorded `/proc/cpuinfo` (the CPUs memsight has run on, and real machines
//! from hwloc's test suite), and what each class's methods give.

use super::*;

fn testdata() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Reads `cpuinfo` as a recorded machine's /proc/cpuinfo.
fn read(cpuinfo: &str) -> CpuInfo {
    let dir = tempfile::tempdir().unwrap();
    let fs = FsRoot::at(dir.path().to_path_buf());
    fs.put("/proc/cpuinfo", cpuinfo).unwrap();
    CpuInfo::read(&fs)
}

fn recorded(file: &str) -> CpuInfo {
    read(&std::fs::read_to_string(testdata().join("cpuinfo").join(file)).unwrap())
}

/// /proc/cpuinfo of one of hwloc's recorded Linux machines.
fn hwloc_machine(name: &str) -> CpuInfo {
    let tarball = testdata().join(format!("hwloc/linux/{name}.tar.bz2"));
    let out = std::process::Command::new("tar")
        .args(["-xjOf"])
        .arg(&tarball)
        .args(["--wildcards", "*/proc/cpuinfo"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read(&String::from_utf8(out.stdout).unwrap())
}

/// The guest this issue was found on: Emerald Rapids with AMX and AVX512-FP16 hidden by the
/// hypervisor was named "Sunny Cove server core (Ice Lake-SP)" from its flags.
#[test]
fn emerald_rapids_with_amx_and_fp16_masked_is_named_from_its_model() {
    for file in [
        "intel-6-207-kvm-amx-fp16-masked.txt",
        "intel-6-207-kvm-amx-masked.txt",
    ] {
        let cpu = recorded(file);
        assert_eq!(cpu.core_class, CoreClass::IntelGoldenCoveServer, "{file}");
        assert_eq!(cpu.core_basis, ClassBasis::FamilyModel);
        assert_eq!(cpu.core_design.as_deref(), Some("Emerald Rapids"));
        assert_eq!(
            cpu.core_name(),
            "Intel Golden Cove-class server core, Emerald Rapids (family 6 model 207)"
        );
        // Three 256-bit loads a cycle (the AVX2 and SSE2 limits a Sunny Cove naming cut by a
        // third), and SpecI2M.
        let c = cpu.core_class;
        assert_eq!(c.l1_load_bytes_per_cycle(32), Some(96.0));
        assert_eq!(c.l1_load_bytes_per_cycle(16), Some(48.0));
        assert_eq!(c.l1_load_bytes_per_cycle(64), Some(128.0));
        assert!(c.may_evade_write_allocate());
    }
}

/// A guest of a Sapphire Rapids host reported Rocket Lake's model number with AMX: the flags
/// prove the number wrong (Rocket Lake has no AMX) and name the core.
#[test]
fn a_model_number_the_flags_contradict_yields_to_the_flags() {
    let cpu = recorded("intel-6-167-kvm-amx.txt");
    assert_eq!(cpu.core_class, CoreClass::IntelGoldenCoveServer);
    assert_eq!(cpu.core_basis, ClassBasis::FlagsOverModel);
    assert_eq!(cpu.core_design.as_deref(), Some("Rocket Lake"));
    let name = cpu.core_name();
    assert!(name.starts_with("Intel Golden Cove-class server core (from its feature flags: family 6 model 167 names Rocket Lake"), "{name}");
}

#[test]
fn the_amd_guests_are_named_by_family_and_model() {
    let zen4 = recorded("amd-25-17-kvm.txt");
    assert_eq!(zen4.core_class, CoreClass::AmdZen4);
    assert_eq!(zen4.core_basis, ClassBasis::FamilyModel);
    assert_eq!(
        zen4.core_name(),
        "AMD Zen 4, Genoa or Storm Peak (EPYC 9004, Threadripper 7000) (family 25 model 17)"
    );
    assert_eq!(zen4.core_class.l1_load_bytes_per_cycle(64), Some(64.0));
    assert!(!zen4.core_class.may_evade_write_allocate());
    // The AVX-512 flags Linux lists on Genoa (with VBMI2, without AVX-VNNI, AMX or FP16) and on
    // Turin (with AVX-VNNI too) are the designs' own: the numbers name them.
    let genoa_flags = "fpu sse2 avx avx2 avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512_bf16 clzero avx512vbmi avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq";
    for (family, model, flags, class) in [
        (25, 17, genoa_flags.to_string(), CoreClass::AmdZen4),
        (
            26,
            2,
            format!("{genoa_flags} avx_vnni avx512_vp2intersect"),
            CoreClass::AmdZen5,
        ),
    ] {
        let cpu = read(&format!(
            "vendor_id\t: AuthenticAMD\ncpu family\t: {family}\nmodel\t\t: {model}\nflags\t\t: {flags}\n"
        ));
        assert_eq!(
            (cpu.core_class, cpu.core_basis),
            (class, ClassBasis::FamilyModel),
            "{family}/{model}"
        );
    }
    // Zen 4 with AVX-512 hidden is still Zen 4 (the flags alone said "Zen 2/3").
    let masked =
        read("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nflags\t\t: sse2 avx2\n");
    assert_eq!(masked.core_class, CoreClass::AmdZen4);
    // A Zen 5 guest was run on but its numbers were not recorded; Turin is family 26 model 2
    // (Linux's Zen 5 ranges), Granite Ridge model 0x44.
    for model in [2, 0x11, 0x44] {
        let zen5 = read(&format!(
            "vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: {model}\nflags\t\t: avx512f\n"
        ));
        assert_eq!(zen5.core_class, CoreClass::AmdZen5, "model {model}");
        assert_eq!(zen5.core_class.l1_load_bytes_per_cycle(64), Some(128.0));
    }
    // Zen 6's models are not in the table, and family 0x1A is not guessed from flags.
    let zen6 =
        read("vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 80\nflags\t\t: avx512f\n");
    assert_eq!(zen6.core_class, CoreClass::Unknown);
    assert_eq!(zen6.core_class.l1_load_bytes_per_cycle(32), None);
}

/// Real machines from hwloc's test suite: their /proc/cpuinfo as recorded there.
#[test]
fn hwloc_recorded_machines_are_named_by_family_and_model() {
    let cases = [
        (
            "32intel64-2p8co2t+8ve",
            CoreClass::IntelSkylakeServer,
            Some("Skylake-SP"),
        ),
        (
            "memorysidecaches",
            CoreClass::IntelSkylakeServer,
            Some("Cascade Lake"),
        ),
        (
            "20em64t-hybrid-1p6c2t+2ca4co1t",
            CoreClass::IntelHybrid,
            Some("Raptor Lake"),
        ),
        (
            "offline-cpu0-node0",
            CoreClass::IntelOther,
            Some("Haswell-EP"),
        ),
        // (A QEMU guest named "Intel Core Processor (Skylake, IBRS)".)
        (
            "2pa-pcidomain32bits",
            CoreClass::IntelOther,
            Some("Skylake"),
        ),
        // Opteron (family 0x10), Kunpeng 920 (HiSilicon 0x48), GB10 (Cortex-X925/A725): not in
        // the table, and not guessed.
        ("32amd64-4s2n4c-cgroup2", CoreClass::Unknown, None),
        ("128arm-2pa2n8cluster4co", CoreClass::Unknown, None),
        ("nvidia-dgx-gb10", CoreClass::Unknown, None),
    ];
    for (name, class, design) in cases {
        let cpu = hwloc_machine(name);
        assert_eq!(cpu.core_class, class, "{name}");
        assert_eq!(cpu.core_design.as_deref(), design, "{name}");
        let basis = if design.is_some() {
            ClassBasis::FamilyModel
        } else {
            ClassBasis::Unknown
        };
        assert_eq!(cpu.core_basis, basis, "{name}");
    }
}

/// The Intel server generations from Skylake-SP to Granite Rapids, the E-core Xeons and the
/// client hybrids, by model number, whatever the hypervisor left of their flags.
#[test]
fn intel_generations_by_model() {
    let id = |model: u32, stepping: u32, flags: &[&str]| {
        CoreClass::identify(&Signature {
            vendor: Some("GenuineIntel"),
            family: Some(6),
            model: Some(model),
            stepping: Some(stepping),
            flags,
            brand: Some("Intel(R) Xeon(R) Processor"),
            ..Signature::default()
        })
    };
    let none: &[&str] = &["sse2", "avx2"];
    let cases = [
        (0x55, 4, CoreClass::IntelSkylakeServer, "Skylake-SP"),
        (0x55, 7, CoreClass::IntelSkylakeServer, "Cascade Lake"),
        (0x55, 11, CoreClass::IntelSkylakeServer, "Cooper Lake"),
        (
            0x6A,
            6,
            CoreClass::IntelSunnyCove { server: true },
            "Ice Lake-SP",
        ),
        (0x8F, 8, CoreClass::IntelGoldenCoveServer, "Sapphire Rapids"),
        (0xCF, 2, CoreClass::IntelGoldenCoveServer, "Emerald Rapids"),
        (0xAD, 1, CoreClass::IntelGoldenCoveServer, "Granite Rapids"),
        (0xAF, 3, CoreClass::IntelEfficiency, "Sierra Forest"),
        (0xDD, 0, CoreClass::IntelEfficiency, "Clearwater Forest"),
        (0x97, 2, CoreClass::IntelHybrid, "Alder Lake"),
        (0xB7, 1, CoreClass::IntelHybrid, "Raptor Lake"),
        (0xAA, 4, CoreClass::IntelHybrid, "Meteor Lake"),
        (0xC6, 2, CoreClass::IntelHybrid, "Arrow Lake"),
        (0xBD, 1, CoreClass::IntelHybrid, "Lunar Lake"),
        // A Xeon brand on a client die is a client core (Rocket Lake's Xeon E-2300).
        (
            0xA7,
            1,
            CoreClass::IntelSunnyCove { server: false },
            "Rocket Lake",
        ),
    ];
    for (model, stepping, class, design) in cases {
        let got = id(model, stepping, none);
        assert_eq!(
            (got.class, got.design, got.basis),
            (class, Some(design), ClassBasis::FamilyModel),
            "model {model:#x}"
        );
    }
    // Skylake-SP's number with AVX512-VBMI2 is a replaced number: Ice Lake-class or newer.
    let icx = id(0x55, 4, &["avx512f", "avx512_vbmi2"]);
    assert_eq!(icx.basis, ClassBasis::FlagsOverModel);
    assert_eq!(icx.class, CoreClass::IntelSunnyCove { server: true });
    // A number not in the table: the flags, said so.
    let new = id(0xFE, 0, &["avx512f", "amx_tile"]);
    assert_eq!(
        (new.class, new.basis),
        (CoreClass::IntelGoldenCoveServer, ClassBasis::Flags)
    );
}

#[test]
fn arm_parts_and_other_vendors() {
    let arm = |implementer: &'static str, part: u32| {
        CoreClass::identify(&Signature {
            vendor: Some(implementer),
            arm_part: Some(part),
            flags: &["asimd"],
            ..Signature::default()
        })
    };
    assert_eq!(arm("0x41", 0xd0c).class, CoreClass::NeoverseN1);
    assert_eq!(arm("0x41", 0xd40).class, CoreClass::NeoverseV1);
    assert_eq!(arm("0x41", 0xd49).class, CoreClass::NeoverseN2);
    assert_eq!(arm("0x41", 0xd4f).class, CoreClass::NeoverseV2);
    assert_eq!(arm("0x41", 0xd84).class, CoreClass::NeoverseV3);
    assert_eq!(arm("0x41", 0xd8e).class, CoreClass::NeoverseV3);
    assert_eq!(arm("0x61", 0x22).class, CoreClass::Unknown);
    let grace = read(
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd4f\nFeatures\t: fp asimd sve sve2\n",
    );
    assert_eq!(grace.core_class, CoreClass::NeoverseV2);
    assert_eq!(grace.core_name(), "Arm Neoverse V2 (CPU part 0xd4f)");
    let hygon = CoreClass::identify(&Signature {
        vendor: Some("HygonGenuine"),
        family: Some(0x18),
        model: Some(1),
        ..Signature::default()
    });
    assert_eq!(hygon.class, CoreClass::AmdZen1);
}

/// What each class gives the methods: the L1 load-port limit at each vector width and whether
/// stores may skip their read for ownership.
#[test]
fn each_class_gives_its_load_ports_and_write_allocate_behaviour() {
    use CoreClass::*;
    // (class, limit at 64-, 32-, 16-byte vectors, may evade)
    let table = [
        (
            IntelGoldenCoveServer,
            Some(128.0),
            Some(96.0),
            Some(48.0),
            true,
        ),
        (IntelHybrid, Some(128.0), Some(96.0), Some(48.0), false),
        (
            IntelSunnyCove { server: true },
            Some(128.0),
            Some(64.0),
            Some(32.0),
            true,
        ),
        (
            IntelSunnyCove { server: false },
            Some(128.0),
            Some(64.0),
            Some(32.0),
            false,
        ),
        (
            IntelSkylakeServer,
            Some(128.0),
            Some(64.0),
            Some(32.0),
            false,
        ),
        (IntelEfficiency, None, None, None, false),
        (IntelOther, Some(128.0), Some(64.0), Some(32.0), false),
        (AmdZen1, Some(32.0), Some(32.0), Some(32.0), false),
        (AmdZen2, Some(64.0), Some(64.0), Some(32.0), false),
        (AmdZen3, Some(64.0), Some(64.0), Some(32.0), false),
        (AmdZen4, Some(64.0), Some(64.0), Some(32.0), false),
        (AmdZen5, Some(128.0), Some(64.0), Some(32.0), false),
        (NeoverseN1, None, None, Some(32.0), true),
        (NeoverseV2, None, None, Some(48.0), true),
        (Unknown, None, None, None, false),
    ];
    for (class, l64, l32, l16, evade) in table {
        // (Arm has no 32- or 64-byte loads: NEON is 16 bytes; those rows check 16 only.)
        if !matches!(class, NeoverseN1 | NeoverseV2) {
            assert_eq!(class.l1_load_bytes_per_cycle(64), l64, "{class:?} at 64");
            assert_eq!(class.l1_load_bytes_per_cycle(32), l32, "{class:?} at 32");
        }
        assert_eq!(class.l1_load_bytes_per_cycle(16), l16, "{class:?} at 16");
        assert_eq!(class.may_evade_write_allocate(), evade, "{class:?}");
    }
}
