//! SMBIOS memory records from `dmidecode` text output, as people paste it.
//!
//! Reads type 16 (Physical Memory Array) and type 17 (Memory Device) records and tolerates what
//! real BIOSes and dmidecode versions print: `<BAD INDEX>`, `Unknown`, `Not Specified`,
//! `<OUT OF SPEC>` types (DDR5 and Optane with an old dmidecode), JEDEC hex manufacturer ids, sizes
//! in kB/MB/GB/TB, empty sockets (`No Module Installed`), Optane "Logical non-volatile device"
//! entries, and indented continuation lines. Unknown values become `None`, never guesses.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A physical memory array (type 16): usually one per socket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryArray {
    pub handle: String,
    pub location: Option<String>,
    pub usage: Option<String>,
    pub error_correction: Option<String>,
    pub maximum_capacity: Option<String>,
    pub devices: Option<u32>,
}

/// A memory device slot (type 17), populated or not.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryDevice {
    pub handle: String,
    pub array_handle: Option<String>,
    pub locator: Option<String>,
    pub bank_locator: Option<String>,
    pub populated: bool,
    pub size_bytes: Option<u64>,
    pub form_factor: Option<String>,
    /// `DDR4`, `DDR5`, `LPDDR5` … as printed (`<OUT OF SPEC>` kept as None; see `inferred_type`).
    pub memory_type: Option<String>,
    /// The type memsight infers when the BIOS or dmidecode could not name it (e.g. DDR5 from an
    /// 80-bit total width), with the reason.
    pub inferred_type: Option<String>,
    pub type_detail: Option<String>,
    pub speed_mts: Option<u32>,
    pub configured_mts: Option<u32>,
    pub rank: Option<u32>,
    pub total_width: Option<u32>,
    pub data_width: Option<u32>,
    /// Manufacturer name, decoded from a JEDEC hex id where the BIOS printed one.
    pub manufacturer: Option<String>,
    /// The manufacturer text as printed.
    pub manufacturer_raw: Option<String>,
    pub part_number: Option<String>,
    pub memory_technology: Option<String>,
    /// True for persistent memory (Optane DC PMM, NVDIMM).
    pub non_volatile: bool,
}

/// A processor socket (type 4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Processor {
    pub socket: Option<String>,
    /// The CPU name (`Version:`), e.g. `AMD EPYC 7502P 32-Core Processor`.
    pub version: Option<String>,
    pub populated: bool,
}

/// Everything read from one dmidecode text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Inventory {
    #[serde(default)]
    pub processors: Vec<Processor>,
    pub arrays: Vec<MemoryArray>,
    pub devices: Vec<MemoryDevice>,
    /// Records or fields that could not be read, in words.
    pub warnings: Vec<String>,
}

impl Inventory {
    /// Populated slots.
    pub fn populated(&self) -> impl Iterator<Item = &MemoryDevice> {
        self.devices.iter().filter(|d| d.populated)
    }
}

/// Why a text could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A value that says "nothing here".
fn known(v: &str) -> Option<String> {
    let v = v.trim();
    let unknown = [
        "",
        "Unknown",
        "Not Specified",
        "None",
        "<BAD INDEX>",
        "Undefined",
        "<OUT OF SPEC>",
        "Not Provided",
        "Other",
    ];
    (!unknown.iter().any(|u| v.eq_ignore_ascii_case(u))).then(|| v.to_string())
}

/// `16384 MB`, `32 GB`, `1 TB`, `512 kB` → bytes.
pub fn parse_size(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    let mult = match it.next()? {
        "bytes" | "B" => 1,
        "kB" | "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

fn parse_rate(v: &str) -> Option<u32> {
    let mut it = v.split_whitespace();
    let n: u32 = it.next()?.parse().ok()?;
    matches!(it.next()?, "MT/s" | "MHz")
        .then_some(n)
        .filter(|&n| n > 0)
}

fn parse_bits(v: &str) -> Option<u32> {
    v.split_whitespace().next()?.parse().ok()
}

/// A JEDEC manufacturer id printed as hex (`80CE869D80CE`, `00AD063200AD`, `002C00B3002C`).
pub fn jedec_manufacturer(raw: &str) -> Option<&'static str> {
    let r = raw.trim();
    if r.len() < 4 || !r.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(r.get(i..i + 2)?, 16).ok();
    // Either "80CE…" (bank flag, id) or "00CE…".
    let id = byte(2).filter(|_| matches!(byte(0), Some(0x00 | 0x80)))?;
    match id {
        0xCE => Some("Samsung"),
        0xAD => Some("SK hynix"),
        0x2C => Some("Micron"),
        _ => None,
    }
}

/// One record: handle, DMI type, its `key: value` fields.
type Record = (String, u32, Vec<(String, String)>);

/// Parses dmidecode text. Fails only when the text holds no SMBIOS memory record at all.
/// One SMBIOS type 17 record, and a warning when its size is not understood.
fn memory_device<'a>(
    handle: String,
    get: &dyn Fn(&str) -> Option<&'a str>,
) -> (MemoryDevice, Option<String>) {
    let size_text = get("Size").unwrap_or("");
    let size_bytes = parse_size(size_text).filter(|&s| s > 0);
    let raw_type = get("Type").map(str::to_string);
    let detail = get("Type Detail").and_then(known);
    let technology = get("Memory Technology").and_then(known);
    let total_width = get("Total Width").and_then(parse_bits);
    let non_volatile = raw_type.as_deref() == Some("Logical non-volatile device")
        || detail
            .as_deref()
            .is_some_and(|d| d.contains("Non-Volatile"))
        || technology
            .as_deref()
            .is_some_and(|t| t.contains("persistent") || t.contains("NVDIMM"));
    let memory_type = raw_type.as_deref().and_then(known);
    let speed = get("Speed").and_then(parse_rate);
    let inferred_type = match (&memory_type, raw_type.as_deref()) {
        (None, Some("<OUT OF SPEC>")) if non_volatile => {
            Some("Optane/NVDIMM (type out of spec for this dmidecode)".to_string())
        }
        (None, Some("<OUT OF SPEC>"))
            if total_width == Some(80) || speed.is_some_and(|s| s >= 4000) =>
        {
            Some(
                "DDR5 (type out of spec for this dmidecode; 80-bit width or ≥ 4000 MT/s)"
                    .to_string(),
            )
        }
        _ => None,
    };
    let manufacturer_raw = get("Manufacturer").and_then(known);
    let manufacturer = manufacturer_raw
        .as_deref()
        .map(|m| jedec_manufacturer(m).map_or_else(|| m.to_string(), str::to_string));
    let device = MemoryDevice {
        handle,
        array_handle: get("Array Handle").map(str::to_string),
        locator: get("Locator").and_then(known),
        bank_locator: get("Bank Locator").and_then(known),
        populated: size_bytes.is_some(),
        size_bytes,
        form_factor: get("Form Factor").and_then(known),
        memory_type,
        inferred_type,
        type_detail: detail,
        speed_mts: speed,
        configured_mts: get("Configured Memory Speed")
            .or(get("Configured Clock Speed"))
            .and_then(parse_rate),
        rank: get("Rank").and_then(|v| v.parse().ok()),
        total_width,
        data_width: get("Data Width").and_then(parse_bits),
        manufacturer,
        manufacturer_raw,
        part_number: get("Part Number").and_then(known),
        memory_technology: technology,
        non_volatile,
    };
    let warning = (!size_text.is_empty()
        && size_bytes.is_none()
        && !size_text.contains("No Module")
        && !size_text.contains("Not Installed")
        && size_text != "0 B"
        && !size_text.starts_with("0 "))
    .then(|| format!("{}: size '{size_text}' not understood", device.handle));
    (device, warning)
}

pub fn parse(text: &str) -> Result<Inventory, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError(
            "the dmidecode text is empty: give the output of 'dmidecode --type 16,17' (as root)"
                .into(),
        ));
    }
    let mut inv = Inventory::default();
    let mut records: Vec<Record> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("Handle ") {
            let handle = rest.split(',').next().unwrap_or("").trim().to_string();
            let ty = rest
                .split("DMI type ")
                .nth(1)
                .and_then(|t| t.split(',').next())
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(u32::MAX);
            records.push((handle, ty, Vec::new()));
            continue;
        }
        let Some((_, _, fields)) = records.last_mut() else {
            continue;
        };
        // Fields are one tab deep; deeper lines continue a list field and are skipped.
        let Some(field) = line.strip_prefix('\t') else {
            continue;
        };
        if field.starts_with('\t') {
            continue;
        }
        if let Some((k, v)) = field.split_once(':') {
            fields.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    if !records.iter().any(|r| r.1 == 16 || r.1 == 17) {
        return Err(ParseError(
            "no SMBIOS memory records (DMI type 16 or 17) in this text: give the output of 'dmidecode --type 16,17' or of 'dmidecode'".into(),
        ));
    }
    for (handle, ty, fields) in records {
        let get = |k: &str| {
            fields
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        match ty {
            4 => inv.processors.push(Processor {
                socket: get("Socket Designation").and_then(known),
                version: get("Version").and_then(known),
                populated: get("Status").is_some_and(|s| s.starts_with("Populated")),
            }),
            16 => inv.arrays.push(MemoryArray {
                handle,
                location: get("Location").and_then(known),
                usage: get("Use").and_then(known),
                error_correction: get("Error Correction Type").and_then(known),
                maximum_capacity: get("Maximum Capacity").and_then(known),
                devices: get("Number Of Devices").and_then(|v| v.parse().ok()),
            }),
            17 => {
                let (device, warning) = memory_device(handle, &get);
                inv.devices.push(device);
                inv.warnings.extend(warning);
            }
            _ => {}
        }
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_and_ids() {
        assert_eq!(parse_size("16384 MB"), Some(16 << 30));
        assert_eq!(parse_size("32 GB"), Some(32 << 30));
        assert_eq!(parse_size("No Module Installed"), None);
        assert_eq!(jedec_manufacturer("80CE869D80CE"), Some("Samsung"));
        assert_eq!(jedec_manufacturer("00AD063200AD"), Some("SK hynix"));
        assert_eq!(jedec_manufacturer("002C00B3002C"), Some("Micron"));
        assert_eq!(jedec_manufacturer("Kingston"), None);
    }

    #[test]
    fn empty_and_foreign_text_are_errors() {
        assert!(parse("").is_err());
        assert!(parse("hello\nworld\n").is_err());
        assert!(parse("Handle 0x0001, DMI type 4, 48 bytes\nProcessor Information\n").is_err());
    }

    #[test]
    fn truncated_record_gives_a_partial_inventory() {
        let t = "Handle 0x0011, DMI type 17, 40 bytes\nMemory Device\n\tSize: 32 GB\n\tType: DDR4\n\tSpe";
        let inv = parse(t).unwrap();
        assert_eq!(inv.devices.len(), 1);
        assert_eq!(inv.devices[0].size_bytes, Some(32 << 30));
        assert_eq!(inv.devices[0].speed_mts, None);
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC*") {
            let _ = parse(&s);
        }

        #[test]
        fn arbitrary_records_never_panic(fields in proptest::collection::vec(("[A-Za-z ]{0,20}", "[ -~]{0,30}"), 0..20)) {
            let mut t = String::from("Handle 0x0011, DMI type 17, 40 bytes\nMemory Device\n");
            for (k, v) in fields {
                t.push_str(&format!("\t{k}: {v}\n"));
            }
            prop_assert!(parse(&t).is_ok());
        }
    }
}
