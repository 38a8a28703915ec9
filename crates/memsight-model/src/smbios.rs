//! SMBIOS memory records from binary tables: `dmidecode --dump-bin` files and the kernel's
//! `/sys/firmware/dmi/tables` (read by the caller; this module only decodes bytes). The structures
//! are decoded by `smbios-lib`; the result is the same [`Inventory`] the text parser produces.

use smbioslib::{
    MemoryDeviceType, MemorySize, MemorySizeExtended, MemorySpeed, MemorySpeedExtended, SMBiosData,
    SMBiosMemoryDevice, SMBiosPhysicalMemoryArray, SMBiosProcessorInformation, SMBiosStruct,
    SMBiosVersion,
};

use crate::dmidecode::{
    Inventory, MemoryArray, MemoryDevice, ParseError, Processor, jedec_manufacturer,
};

/// Reads the entry point at the start of a `dmidecode --dump-bin` file (which stores the table at
/// the address the entry point names, 0x20) and returns (table, major, minor).
pub fn split_dump_bin(bytes: &[u8]) -> Result<(Vec<u8>, u8, u8), ParseError> {
    let bad = |why: &str| ParseError(format!("not a 'dmidecode --dump-bin' file: {why}"));
    let u32_at = |o: usize| {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let (addr, len, major, minor) = if bytes.starts_with(b"_SM3_") {
        let addr = bytes
            .get(0x10..0x18)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| bad("truncated SMBIOS 3 entry point"))?;
        let max = u32_at(0x0C).ok_or_else(|| bad("truncated SMBIOS 3 entry point"))?;
        (addr as usize, max as usize, bytes[7], bytes[8])
    } else if bytes.starts_with(b"_SM_") {
        if bytes.get(0x10..0x15) != Some(b"_DMI_") {
            return Err(bad("SMBIOS 2 entry point without its _DMI_ part"));
        }
        let len = bytes
            .get(0x16..0x18)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| bad("truncated entry point"))?;
        let addr = u32_at(0x18).ok_or_else(|| bad("truncated entry point"))?;
        (addr as usize, len as usize, bytes[6], bytes[7])
    } else if bytes.starts_with(b"_DMI_") {
        let len = bytes
            .get(0x06..0x08)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| bad("truncated entry point"))?;
        let addr = u32_at(0x08).ok_or_else(|| bad("truncated entry point"))?;
        (addr as usize, len as usize, 2, 0)
    } else {
        return Err(bad("no _SM3_, _SM_ or _DMI_ entry point at its start"));
    };
    if addr >= bytes.len() {
        return Err(bad("the table address lies outside the file"));
    }
    let end = addr.saturating_add(len).min(bytes.len());
    Ok((bytes[addr..end].to_vec(), major, minor))
}

/// The SMBIOS version in the kernel's `smbios_entry_point` file.
pub fn entry_point_version(ep: &[u8]) -> Option<(u8, u8)> {
    if ep.starts_with(b"_SM3_") {
        Some((*ep.get(7)?, *ep.get(8)?))
    } else if ep.starts_with(b"_SM_") {
        Some((*ep.get(6)?, *ep.get(7)?))
    } else {
        None
    }
}

fn text(s: smbioslib::SMBiosString) -> Option<String> {
    s.to_utf8_lossy()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty() && v != "Unknown" && v != "Not Specified" && v != "NO DIMM")
}

fn type_name(t: MemoryDeviceType) -> Option<String> {
    Some(
        match t {
            MemoryDeviceType::Ddr3 => "DDR3",
            MemoryDeviceType::Ddr4 => "DDR4",
            MemoryDeviceType::Ddr5 => "DDR5",
            MemoryDeviceType::Lpddr4 => "LPDDR4",
            MemoryDeviceType::Lpddr5 => "LPDDR5",
            MemoryDeviceType::Hbm => "HBM",
            MemoryDeviceType::Hbm2 => "HBM2",
            MemoryDeviceType::Hbm3 => "HBM3",
            MemoryDeviceType::Mrdimm => "MRDIMM",
            MemoryDeviceType::LogicalNonVolatileDevice => "Logical non-volatile device",
            _ => return None,
        }
        .to_string(),
    )
}

/// Decodes an SMBIOS structure table (types 4, 16, 17) into an inventory.
pub fn decode_table(table: Vec<u8>, major: u8, minor: u8) -> Inventory {
    let data = SMBiosData::from_vec_and_version(table, Some(SMBiosVersion::new(major, minor, 0)));
    let mut inv = Inventory::default();
    for p in data.collect::<SMBiosProcessorInformation<'_>>() {
        inv.processors.push(Processor {
            socket: text(p.socket_designation()),
            version: text(p.processor_version()),
            populated: p.status().is_some_and(|s| s.socket_populated()),
        });
    }
    for a in data.collect::<SMBiosPhysicalMemoryArray<'_>>() {
        inv.arrays.push(MemoryArray {
            handle: format!("0x{:04X}", a.parts().header.handle().0),
            location: a.location().map(|l| format!("{:?}", l.value)),
            usage: a.usage().map(|u| format!("{:?}", u.value)),
            error_correction: a
                .memory_error_correction()
                .map(|e| format!("{:?}", e.value)),
            maximum_capacity: None,
            devices: a.number_of_memory_devices().map(u32::from),
        });
    }
    for d in data.collect::<SMBiosMemoryDevice<'_>>() {
        inv.devices.push(memory_device(&d));
    }
    inv
}

/// One type 17 record: sizes and speeds resolved through their extended fields, widths of
/// 0xFFFF (unknown) and 0 dropped, the manufacturer's JEDEC code named.
fn memory_device(d: &SMBiosMemoryDevice<'_>) -> MemoryDevice {
    let size_bytes = match d.size() {
        Some(MemorySize::Kilobytes(k)) => Some(k as u64 * 1024),
        Some(MemorySize::Megabytes(m)) => Some(m as u64 * (1 << 20)),
        Some(MemorySize::SeeExtendedSize) => match d.extended_size() {
            Some(MemorySizeExtended::Megabytes(m)) => Some(m as u64 * (1 << 20)),
            _ => None,
        },
        _ => None,
    }
    .filter(|&s| s > 0);
    let speed = |s: Option<MemorySpeed>, e: Option<MemorySpeedExtended>| match s {
        Some(MemorySpeed::MTs(v)) if v > 0 => Some(v as u32),
        Some(MemorySpeed::SeeExtendedSpeed) => match e {
            Some(MemorySpeedExtended::MTs(v)) => Some(v),
            _ => None,
        },
        _ => None,
    };
    let memory_type = d.memory_type().and_then(|t| type_name(t.value));
    let detail = d.type_detail();
    let non_volatile = memory_type.as_deref() == Some("Logical non-volatile device")
        || detail.as_ref().is_some_and(|t| t.non_volatile());
    let width = |w: Option<u16>| w.filter(|&w| w != 0xFFFF && w != 0).map(u32::from);
    let manufacturer_raw = text(d.manufacturer());
    let rank = d.attributes().map(|a| (a & 0x0F) as u32).filter(|&r| r > 0);
    MemoryDevice {
        handle: format!("0x{:04X}", d.parts().header.handle().0),
        array_handle: d
            .physical_memory_array_handle()
            .map(|h| format!("0x{:04X}", h.0)),
        locator: text(d.device_locator()),
        bank_locator: text(d.bank_locator()),
        populated: size_bytes.is_some(),
        size_bytes,
        form_factor: d
            .form_factor()
            .map(|f| format!("{:?}", f.value).to_uppercase()),
        memory_type,
        inferred_type: None,
        type_detail: detail.map(|t| {
            let mut v = Vec::new();
            if t.synchronous() {
                v.push("Synchronous");
            }
            if t.registered() {
                v.push("Registered (Buffered)");
            }
            if t.non_volatile() {
                v.push("Non-Volatile");
            }
            v.join(" ")
        }),
        speed_mts: speed(d.speed(), d.extended_speed()),
        configured_mts: speed(
            d.configured_memory_speed(),
            d.extended_configured_memory_speed(),
        ),
        rank,
        total_width: width(d.total_width()),
        data_width: width(d.data_width()),
        manufacturer: manufacturer_raw
            .as_deref()
            .map(|m| jedec_manufacturer(m).map_or_else(|| m.to_string(), str::to_string)),
        manufacturer_raw,
        part_number: text(d.part_number()),
        memory_technology: None,
        non_volatile,
    }
}

/// Example data for tests of code that reads SMBIOS tables (here and in the memsight binary).
#[doc(hidden)]
pub mod example {
    /// A small SMBIOS 3.2 table: one CPU, one array, a populated 32 GB DDR4-3200 2R DIMM and an
    /// empty slot, then the end-of-table marker.
    pub fn synthetic_table() -> Vec<u8> {
        let mut t = Vec::new();
        // Type 4, 0x2A bytes.
        let mut p = vec![0u8; 0x2A];
        p[0] = 4;
        p[1] = 0x2A;
        p[2] = 0x00;
        p[3] = 0x04;
        p[0x04] = 1; // socket designation
        p[0x07] = 2; // manufacturer
        p[0x10] = 3; // version
        p[0x18] = 0x41; // populated, enabled
        t.extend(p);
        t.extend(b"CPU1\0AMD\0AMD EPYC 7502P 32-Core Processor\0\0");
        // Type 16, 0x0F bytes.
        let mut a = vec![0u8; 0x0F];
        a[0] = 16;
        a[1] = 0x0F;
        a[2] = 0x00;
        a[3] = 0x10;
        a[4] = 3;
        a[5] = 3;
        a[6] = 6;
        a[0x0D] = 2;
        t.extend(a);
        t.extend(b"\0\0");
        for (i, populated) in [(0u8, true), (1, false)] {
            let mut d = vec![0u8; 0x28];
            d[0] = 17;
            d[1] = 0x28;
            d[2] = 0x11 + i;
            d[3] = 0x00;
            d[4] = 0x00;
            d[5] = 0x10; // array handle 0x1000
            d[6] = 0xFE;
            d[7] = 0xFF;
            d[8..10].copy_from_slice(&72u16.to_le_bytes());
            d[10..12].copy_from_slice(&64u16.to_le_bytes());
            let size: u16 = if populated { 0x7FFF } else { 0 };
            d[12..14].copy_from_slice(&size.to_le_bytes());
            d[0x0E] = 0x09; // DIMM
            d[0x10] = 1;
            d[0x11] = 2;
            d[0x12] = 0x1A; // DDR4
            d[0x13..0x15].copy_from_slice(&0x2080u16.to_le_bytes()); // synchronous, registered
            if populated {
                d[0x15..0x17].copy_from_slice(&3200u16.to_le_bytes());
                d[0x17] = 3;
                d[0x1A] = 4;
                d[0x1B] = 2; // rank
                d[0x1C..0x20].copy_from_slice(&32768u32.to_le_bytes());
                d[0x20..0x22].copy_from_slice(&3200u16.to_le_bytes());
            }
            t.extend(d);
            if populated {
                t.extend(b"DIMM_A1\0P0 CHANNEL A\080CE869D80CE\0M393A4K40EB3-CWE\0\0");
            } else {
                t.extend(b"DIMM_A2\0P0 CHANNEL A\0\0");
            }
        }
        t.extend([127, 4, 0xFF, 0xFF, 0, 0]);
        t
    }

    /// The same table framed as `dmidecode --dump-bin` writes it (SMBIOS 3.2 entry point, table
    /// at 0x20).
    pub fn synthetic_dump_bin() -> Vec<u8> {
        let table = synthetic_table();
        let mut f = vec![0u8; 0x20];
        f[..5].copy_from_slice(b"_SM3_");
        f[6] = 0x18;
        f[7] = 3;
        f[8] = 2;
        f[0x0C..0x10].copy_from_slice(&(table.len() as u32).to_le_bytes());
        f[0x10..0x18].copy_from_slice(&0x20u64.to_le_bytes());
        f.extend(table);
        f
    }
}

#[cfg(test)]
mod tests {
    use super::example::synthetic_table;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn binary_table_decodes_like_the_text() {
        let inv = decode_table(synthetic_table(), 3, 2);
        assert_eq!(inv.processors.len(), 1);
        assert_eq!(
            inv.processors[0].version.as_deref(),
            Some("AMD EPYC 7502P 32-Core Processor")
        );
        assert!(inv.processors[0].populated);
        assert_eq!(inv.devices.len(), 2);
        let d = &inv.devices[0];
        assert!(d.populated);
        assert_eq!(d.size_bytes, Some(32 << 30));
        assert_eq!(d.memory_type.as_deref(), Some("DDR4"));
        assert_eq!(
            (d.speed_mts, d.configured_mts, d.rank),
            (Some(3200), Some(3200), Some(2))
        );
        assert_eq!((d.total_width, d.data_width), (Some(72), Some(64)));
        assert_eq!(d.manufacturer.as_deref(), Some("Samsung"));
        assert_eq!(d.part_number.as_deref(), Some("M393A4K40EB3-CWE"));
        assert_eq!(d.locator.as_deref(), Some("DIMM_A1"));
        assert!(!inv.devices[1].populated);
    }

    #[test]
    fn dump_bin_framing() {
        let mut f = vec![0u8; 0x20];
        f[..5].copy_from_slice(b"_SM3_");
        f[6] = 0x18;
        f[7] = 3;
        f[8] = 2;
        let table = synthetic_table();
        f[0x0C..0x10].copy_from_slice(&(table.len() as u32).to_le_bytes());
        f[0x10..0x18].copy_from_slice(&0x20u64.to_le_bytes());
        f.extend(&table);
        let (t, major, minor) = split_dump_bin(&f).unwrap();
        assert_eq!((major, minor), (3, 2));
        assert_eq!(t, table);
        assert!(split_dump_bin(b"hello").is_err());
        assert!(split_dump_bin(&f[..0x12]).is_err());
        let mut bad = f.clone();
        bad[0x10..0x18].copy_from_slice(&0xFFFF_FFFFu64.to_le_bytes());
        assert!(split_dump_bin(&bad).is_err());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = split_dump_bin(&bytes);
            let _ = decode_table(bytes, 3, 2);
        }
    }
}
