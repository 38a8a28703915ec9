//! DIMM inventory from SMBIOS type 16/17 records: from a `dmidecode` text file, or by running
//! `dmidecode --type 16,17` here (root). Parsing is `memsight_model::dmidecode`.

use memsight_core::units::format_bytes;
use memsight_core::{Error, Result};
use memsight_model::dmidecode::{Inventory, parse};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cli::DimmsArgs;

/// The `dimms` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DimmsResults {
    /// Where the records came from.
    pub source: String,
    pub inventory: Inventory,
    pub populated: usize,
    pub slots: usize,
    pub total_bytes: u64,
    pub findings: Vec<String>,
}

fn read_text(a: &DimmsArgs) -> Result<(String, String)> {
    if let Some(path) = &a.dmidecode {
        let bytes = std::fs::read(path).map_err(|e| {
            Error::input(format!(
                "cannot read '{}': {e}; give a file holding dmidecode's text output",
                path.display()
            ))
        })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::input(format!(
                "'{}' is not text: give dmidecode's text output (a --dump-bin file is not read yet)",
                path.display()
            ))
        })?;
        return Ok((text, path.display().to_string()));
    }
    let out = std::process::Command::new("dmidecode").args(["--type", "16,17"]).output().map_err(|_| {
        Error::input("dmidecode is not installed: apt-get install dmidecode, or pass --dmidecode FILE with its output from the machine")
    })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(Error::input(format!(
            "dmidecode failed ({}): it needs root to read /sys/firmware/dmi/tables; run as root or pass --dmidecode FILE",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("no message")
        )));
    }
    if text.contains("No SMBIOS nor DMI entry point found") {
        return Err(Error::input(
            "this machine exposes no SMBIOS tables (common in VMs): pass --dmidecode FILE with the output of the host or another machine",
        ));
    }
    Ok((text, "dmidecode --type 16,17 (this machine)".to_string()))
}

/// Reads and summarises the inventory.
pub fn run(a: &DimmsArgs) -> Result<DimmsResults> {
    let (text, source) = read_text(a)?;
    let inventory = parse(&text).map_err(|e| Error::input(e.0))?;
    let populated = inventory.populated().count();
    let total_bytes = inventory.populated().filter_map(|d| d.size_bytes).sum();
    let mut findings = Vec::new();
    let slow: Vec<String> = inventory
        .populated()
        .filter_map(|d| match (d.speed_mts, d.configured_mts) {
            (Some(r), Some(c)) if c < r => Some(format!(
                "{} ({c} of {r} MT/s)",
                d.locator.as_deref().unwrap_or(&d.handle)
            )),
            _ => None,
        })
        .collect();
    if !slow.is_empty() {
        findings.push(format!(
            "{} DIMM(s) run below their rated speed: {}",
            slow.len(),
            slow.join(", ")
        ));
    }
    let mut parts: Vec<&str> = inventory
        .populated()
        .filter_map(|d| d.part_number.as_deref())
        .collect();
    parts.sort_unstable();
    parts.dedup();
    if parts.len() > 1 {
        findings.push(format!("mixed part numbers: {}", parts.join(", ")));
    }
    let mut sizes: Vec<u64> = inventory
        .populated()
        .filter(|d| !d.non_volatile)
        .filter_map(|d| d.size_bytes)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() > 1 {
        findings.push(format!(
            "mixed DRAM module sizes: {}",
            sizes
                .iter()
                .map(|s| format_bytes(*s))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if inventory.populated().any(|d| d.non_volatile) {
        findings.push("persistent memory (Optane/NVDIMM) is installed beside DRAM".to_string());
    }
    if populated < inventory.devices.len() {
        findings.push(format!(
            "{} of {} slots are empty",
            inventory.devices.len() - populated,
            inventory.devices.len()
        ));
    }
    Ok(DimmsResults {
        source,
        populated,
        slots: inventory.devices.len(),
        total_bytes,
        inventory,
        findings,
    })
}
