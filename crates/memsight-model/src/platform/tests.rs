//! The platform table, CPU name matching and the EPYC 7002 review's ceilings.

use super::*;
use crate::dmidecode::Inventory;

#[test]
fn platforms_are_recognised() {
    let p = identify("AMD EPYC 7502P 32-Core Processor").unwrap();
    assert_eq!(
        (p.channels_per_socket, p.max_mts, p.fabric_bytes_per_clock),
        (8, 3200, Some((32, 16)))
    );
    assert_eq!(
        identify("AMD EPYC 9654 96-Core Processor")
            .unwrap()
            .channels_per_socket,
        12
    );
    assert_eq!(
        identify("Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz")
            .unwrap()
            .channels_per_socket,
        8
    );
    assert_eq!(
        identify("Intel(R) Xeon(R) Platinum 8280 CPU @ 2.70GHz")
            .unwrap()
            .max_mts,
        2933
    );
    assert_eq!(
        identify("Intel(R) Xeon(R) 6980P")
            .unwrap()
            .channels_per_socket,
        12
    );
    assert!(identify("QEMU Virtual CPU version 2.5+").is_none());
}

/// EPYC 7002 review (7452, 8 × DDR4-2933, 4 CCDs at FCLK 1333 MHz): DRAM 187 712 MB/s, fabric
/// 170 624 MB/s read and 85 312 MB/s write — the fabric binds for both.
#[test]
fn epyc_seed_ceilings() {
    let mut inv = Inventory::default();
    inv.processors.push(crate::dmidecode::Processor {
        socket: Some("CPU1".into()),
        version: Some("AMD EPYC 7452 32-Core Processor".into()),
        populated: true,
    });
    for i in 0..8 {
        inv.devices.push(crate::dmidecode::MemoryDevice {
            handle: format!("0x{i}"),
            populated: true,
            size_bytes: Some(32 << 30),
            configured_mts: Some(2933),
            ..Default::default()
        });
    }
    let c = ceilings(&inv, Some(4), Some(1333));
    assert_eq!(c.system_dram_mbs, 187_712);
    assert_eq!(
        (c.fabric_read_mbs, c.fabric_write_mbs),
        (Some(170_624), Some(85_312))
    );
    assert_eq!(
        (c.binding_read_mbs, c.binding_write_mbs),
        (Some(170_624), Some(85_312))
    );
}

/// The CPUs the issue found unknown, and the same CPU as different tools print it.
#[test]
fn cpu_names_match_however_they_are_printed() {
    for (cpu, family, channels, mts) in [
        ("Intel(R) Xeon(R) Gold 6526Y", "Emerald Rapids", 8, 5600),
        ("INTEL(R) XEON(R) GOLD 6526Y", "Emerald Rapids", 8, 5600),
        (
            "Intel® Xeon® Gold 6526Y Processor",
            "Emerald Rapids",
            8,
            5600,
        ),
        ("AMD Ryzen 9 7950X 16-Core Processor", "Ryzen 7000", 2, 5200),
        (
            "AMD Ryzen 7 PRO 8840HS w/ Radeon 780M Graphics",
            "Hawk Point",
            2,
            5600,
        ),
        (
            "AMD Ryzen 9 5900X 12-Core Processor",
            "Ryzen 3000/5000",
            2,
            3200,
        ),
        (
            "13th Gen Intel(R) Core(TM) i7-13700K",
            "13th/14th gen (Raptor Lake, LGA1700)",
            2,
            5600,
        ),
        (
            "13th Gen Intel(R) Core(TM) i7-1360P",
            "Raptor Lake-P",
            2,
            5200,
        ),
        (
            "12th Gen Intel(R) Core(TM) i9-12900H",
            "Alder Lake-P",
            2,
            4800,
        ),
        (
            "11th Gen Intel(R) Core(TM) i5-1135G7 @ 2.40GHz",
            "Tiger Lake",
            2,
            3200,
        ),
        (
            "Intel(R) Core(TM) Ultra 9 285K",
            "Arrow Lake, LGA1851",
            2,
            6400,
        ),
        ("Intel(R) Core(TM) Ultra 7 155H", "Meteor Lake", 2, 5600),
        ("Intel(R) Core(TM) Ultra 7 258V", "Lunar Lake", 2, 8533),
        (
            "AMD Ryzen Threadripper PRO 3995WX 64-Cores",
            "PRO 3000WX/5000WX",
            8,
            3200,
        ),
        (
            "AMD Ryzen Threadripper 7970X 32-Cores",
            "Threadripper 7000",
            4,
            5200,
        ),
        (
            "AMD EPYC 9754 128-Core Processor",
            "Genoa/Bergamo",
            12,
            4800,
        ),
        ("AMD EPYC 8534P 64-Core Processor", "Siena", 6, 4800),
        ("AMD EPYC 9965 192-Core Processor", "Turin", 12, 6000),
        (
            "Intel(R) Xeon(R) CPU E5-2695 v3 @ 2.30GHz",
            "Haswell-EP",
            4,
            2133,
        ),
        (
            "Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz",
            "Cooper Lake",
            6,
            3200,
        ),
        ("Intel(R) Xeon(R) 6710E", "Sierra Forest", 8, 6400),
        ("Ampere(R) Altra(R) Processor", "Altra", 8, 3200),
        ("AmpereOne A192-32X", "AmpereOne", 8, 5200),
        ("NVIDIA Grace", "Grace", 8, 8000),
    ] {
        let p = identify(cpu).unwrap_or_else(|| panic!("{cpu} not known"));
        assert!(p.name.contains(family), "{cpu}: {}", p.name);
        assert_eq!((p.channels_per_socket, p.max_mts), (channels, mts), "{cpu}");
        assert!(!p.source.is_empty());
    }
}

#[test]
fn socket_counts_are_read_from_the_plan() {
    assert_eq!(parse_sockets("2x Xeon Gold 6248"), (2, "Xeon Gold 6248"));
    assert_eq!(parse_sockets("2 × EPYC 9654"), (2, "EPYC 9654"));
    assert_eq!(parse_sockets("Ryzen 9 7950X"), (1, "Ryzen 9 7950X"));
    assert_eq!(parse_sockets("8S Xeon Platinum 8468H").0, 8);
}

/// Ryzen 7000 runs 5200 at one DIMM per channel and 3600 at two (AMD via TechSpot).
#[test]
fn two_dimms_per_channel_lower_the_speed() {
    let p = identify("AMD Ryzen 9 7950X 16-Core Processor").unwrap();
    assert_eq!(p.supported_mts(1, false), Some(5200));
    assert_eq!(p.supported_mts(2, false), Some(3600));
}

/// HPE DL380 Gen11 as its BIOS names the slots (linuxhw/DMI `Server/HPE/ProLiant/ProLiant DL380
/// Gen11/89BBBA931D2E`): `PROC 1 DIMM 1`…`16` and `PROC 2 …`, DDR5 in slots 3, 7, 10 and 14 of
/// each socket at 5200 MT/s with a Gold 6526Y: four channels of eight per socket.
#[test]
fn hpe_numbered_slots_pair_up_on_channels() {
    use crate::dmidecode::{MemoryDevice, Processor};
    let mut inv = Inventory::default();
    for p in 1..=2 {
        inv.processors.push(Processor {
            socket: Some(format!("Proc {p}")),
            version: Some("INTEL(R) XEON(R) GOLD 6526Y".into()),
            populated: true,
        });
        for n in 1..=16u32 {
            let populated = [3, 7, 10, 14].contains(&n);
            inv.devices.push(MemoryDevice {
                handle: format!("{p}-{n}"),
                locator: Some(format!("PROC {p} DIMM {n}")),
                populated,
                size_bytes: populated.then_some(32 << 30),
                memory_type: Some("DDR5".into()),
                data_width: Some(64),
                speed_mts: Some(5600),
                configured_mts: populated.then_some(5200),
                ..Default::default()
            });
        }
    }
    let c = ceilings(&inv, None, None);
    assert_eq!(c.platform.as_ref().unwrap().channels_per_socket, 8);
    let used: Vec<u32> = c.sockets.iter().map(|s| s.channels_used).collect();
    assert_eq!(used, [4, 4]);
    assert_eq!(c.system_dram_mbs, 8 * 8 * 5200);
    assert!(
        c.sockets
            .iter()
            .all(|s| s.scheme == LocatorScheme::NumberedSlot)
    );
}

/// Names no scheme explains, on a known platform: one DIMM per channel, and a note says so.
#[test]
fn unknown_names_fall_back_to_the_platform_rule_and_say_so() {
    use crate::dmidecode::{MemoryDevice, Processor};
    let mut inv = Inventory::default();
    inv.processors.push(Processor {
        socket: None,
        version: Some("AMD EPYC 7763 64-Core Processor".into()),
        populated: true,
    });
    for i in 0..10 {
        inv.devices.push(MemoryDevice {
            handle: format!("{i}"),
            locator: Some(format!("Slot-{i}")),
            populated: true,
            size_bytes: Some(32 << 30),
            configured_mts: Some(3200),
            ..Default::default()
        });
    }
    let c = ceilings(&inv, None, None);
    assert_eq!(c.sockets[0].channels_used, 8);
    assert_eq!(c.sockets[0].scheme, LocatorScheme::Unknown);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("one DIMM per channel assumed")),
        "{:?}",
        c.notes
    );
}
