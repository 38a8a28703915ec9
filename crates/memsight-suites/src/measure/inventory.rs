//! The DIMM inventory: SMBIOS type 17 records from this machine's tables (root), or from a
//! `dmidecode` text or `--dump-bin` file of any machine.

use std::path::Path;

use memsight_core::{Error, Result};
use memsight_model::dmidecode::{Inventory, parse};

/// The inventory from `--dmidecode FILE` (dmidecode text, or a `dmidecode --dump-bin` file) or
/// from this machine's `/sys/firmware/dmi/tables` (root).
pub fn read(dmidecode: Option<&Path>) -> Result<(Inventory, String)> {
    use memsight_model::smbios::{decode_table, entry_point_version, split_dump_bin};
    if let Some(path) = dmidecode {
        let bytes = memsight_core::input::read_bounded(
            path,
            memsight_core::input::MAX_INPUT_BYTES,
            "--dmidecode file",
        )?;
        if [&b"_SM3_"[..], b"_SM_", b"_DMI_"]
            .iter()
            .any(|m| bytes.starts_with(m))
        {
            let (table, major, minor) = split_dump_bin(&bytes)
                .map_err(|e| Error::input(format!("'{}': {e}", path.display())))?;
            return Ok((
                decode_table(table, major, minor),
                format!(
                    "{} (dmidecode --dump-bin, SMBIOS {major}.{minor})",
                    path.display()
                ),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::input(format!(
                "'{}' is neither dmidecode text nor a --dump-bin file (no SMBIOS entry point at its start)",
                path.display()
            ))
        })?;
        let inv = parse(&text).map_err(|e| Error::input(e.0))?;
        return Ok((inv, path.display().to_string()));
    }
    let base = std::path::Path::new("/sys/firmware/dmi/tables");
    let ep = std::fs::read(base.join("smbios_entry_point"));
    let dmi = std::fs::read(base.join("DMI"));
    match (ep, dmi) {
        (Ok(ep), Ok(table)) => {
            let (major, minor) = entry_point_version(&ep).unwrap_or((3, 0));
            Ok((
                decode_table(table, major, minor),
                format!("/sys/firmware/dmi/tables (SMBIOS {major}.{minor})"),
            ))
        }
        (Err(e), _) | (_, Err(e)) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(Error::input(
                "reading /sys/firmware/dmi/tables needs root: run as root, or pass --dmidecode FILE (dmidecode text or --dump-bin)",
            ))
        }
        _ => Err(Error::input(
            "this machine exposes no SMBIOS tables (/sys/firmware/dmi/tables is missing; common in VMs): pass --dmidecode FILE from the host or another machine",
        )),
    }
}
