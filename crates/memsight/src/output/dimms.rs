//! The DIMM inventory as text.

use memsight_core::units::format_bytes;

use super::{heading, table};
use crate::dimms::DimmsResults;

/// Prints the inventory.
pub fn print(r: &DimmsResults) {
    heading("DIMM inventory");
    println!(
        "source: {} · {} of {} slots populated · {} installed",
        r.source,
        r.populated,
        r.slots,
        format_bytes(r.total_bytes)
    );
    let mut t = table(&[
        "locator",
        "bank",
        "size",
        "type",
        "form",
        "rated MT/s",
        "configured MT/s",
        "rank",
        "width total/data",
        "manufacturer",
        "part number",
    ]);
    for d in &r.inventory.devices {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let num = |v: Option<u32>| v.map_or("-".into(), |x| x.to_string());
        t.add_row(vec![
            opt(&d.locator),
            opt(&d.bank_locator),
            d.size_bytes.map_or("empty".into(), format_bytes),
            d.memory_type
                .clone()
                .or_else(|| d.inferred_type.clone())
                .unwrap_or_else(|| "-".into())
                + if d.non_volatile { " (persistent)" } else { "" },
            opt(&d.form_factor),
            num(d.speed_mts),
            num(d.configured_mts),
            num(d.rank),
            format!("{}/{}", num(d.total_width), num(d.data_width)),
            opt(&d.manufacturer),
            opt(&d.part_number),
        ]);
    }
    println!("{t}");
    super::findings(&r.findings);
}
