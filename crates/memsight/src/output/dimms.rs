//! The DIMM inventory as text.

use memsight_core::units::format_bytes;

use super::{heading, table};
use crate::dimms::DimmsResults;

/// Prints the inventory.
pub fn print(r: &DimmsResults) {
    heading("DIMM inventory");
    println!(
        "source: {} · {} of {} slots populated · {}",
        r.source,
        r.populated,
        r.slots,
        r.capacity()
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
    if r.modules.iter().any(|m| m.decoded.is_some()) {
        let mut t = table(&[
            "locator",
            "part number",
            "vendor",
            "type",
            "organisation",
            "package",
            "chips",
            "page",
            "tFAW ns",
            "confidence",
        ]);
        for m in &r.modules {
            let Some(d) = &m.decoded else { continue };
            t.add_row(vec![
                m.locator.clone().unwrap_or_else(|| m.handle.clone()),
                m.part_number.clone().unwrap_or_default(),
                d.vendor.clone(),
                format!("{:?} {}", d.generation, d.module_type),
                format!(
                    "{} ({} Gb{})",
                    d.organisation(),
                    d.density_gbit,
                    d.die_revision
                        .as_ref()
                        .map_or(String::new(), |r| format!(", {r}-die"))
                ),
                d.package.clone().unwrap_or_else(|| "-".into()),
                m.chips.map_or("-".into(), |c| c.to_string()),
                m.page_bytes.map_or("-".into(), format_bytes),
                m.tfaw_ns.map_or("-".into(), |t| format!("{t:.1}")),
                d.confidence.clone(),
            ]);
        }
        println!("Decoded from part numbers (docs/reference/dimm-part-numbers.md)\n{t}");
    }
    let c = &r.ceilings;
    if !c.sockets.is_empty() {
        let mut t = table(&[
            "socket",
            "DIMMs",
            "channels used / platform",
            "slot names read as",
            "MT/s (slowest configured)",
            "DRAM peak MB/s",
            "fabric read / write MB/s",
            "binding read / write MB/s",
        ]);
        for s in &c.sockets {
            t.add_row(vec![
                s.array.clone(),
                s.dimms.to_string(),
                format!(
                    "{}{} / {}",
                    s.channels_used,
                    if s.channel_bits == 64 {
                        String::new()
                    } else {
                        format!(" × {}-bit", s.channel_bits)
                    },
                    s.channels.map_or("?".into(), |c| c.to_string())
                ),
                s.scheme.describe().to_string(),
                s.mts.to_string(),
                s.dram_mbs.to_string(),
                match (c.fabric_read_mbs, c.fabric_write_mbs) {
                    (Some(r), Some(w)) => format!("{r} / {w}"),
                    _ => "-".into(),
                },
                match (c.binding_read_mbs, c.binding_write_mbs) {
                    (Some(r), Some(w)) => format!("{r} / {w}"),
                    _ => "-".into(),
                },
            ]);
        }
        println!(
            "Ceilings ({}; {} MB/s for the system)\n{t}",
            c.platform
                .as_ref()
                .map_or("platform not identified".to_string(), |p| format!(
                    "{}, {} channels of {}, {} MT/s at 1 DIMM per channel{}; source {}{}",
                    p.name,
                    p.channels_per_socket,
                    p.memory,
                    p.max_mts,
                    p.max_mts_2dpc
                        .map_or(String::new(), |m| format!(", {m} at 2")),
                    p.source,
                    if p.verified { "" } else { " (unverified)" }
                )),
            c.system_dram_mbs
        );
    }
    if !r.efficiency.is_empty() {
        let mut t = table(&[
            "test",
            "threads",
            "measured MB/s (DRAM est.)",
            "ceiling MB/s",
            "efficiency",
        ]);
        for e in &r.efficiency {
            t.add_row(vec![
                e.test.clone(),
                e.threads.to_string(),
                format!("{:.0}", e.measured_mbs),
                e.ceiling_mbs.to_string(),
                format!("{:.0}%", 100.0 * e.efficiency),
            ]);
        }
        println!("Efficiency\n{t}");
    }
    super::findings(&r.findings);
}

/// `dimms --plan`: the alternatives side by side, one column each, then each one's findings.
pub fn print_plans(r: &crate::dimms::PlanResults) {
    use memsight_model::plan::Plan;
    let mut header = vec!["".to_string()];
    header.extend(
        r.plans
            .iter()
            .enumerate()
            .map(|(i, p)| format!("plan {}: {}", i + 1, p.asked)),
    );
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = table(&refs);
    let row = |name: &str, f: &dyn Fn(&Plan) -> String| {
        let mut v = vec![name.to_string()];
        // One column per plan.
        v.extend(r.plans.iter().map(f));
        v
    };
    t.add_row(row("platform", &|p| {
        format!(
            "{} × {}{}",
            p.sockets,
            p.platform.name,
            if p.platform.verified {
                ""
            } else {
                " (unverified row)"
            }
        )
    }));
    t.add_row(row("takes", &|p| {
        format!(
            "{} channels/socket of {}",
            p.platform.channels_per_socket, p.platform.memory
        )
    }));
    t.add_row(row("DIMMs", &|p| {
        p.parts
            .iter()
            .map(|x| format!("{} × {}", x.count, x.part))
            .collect::<Vec<_>>()
            .join("\n")
    }));
    t.add_row(row("organisation", &|p| {
        p.parts.iter().map(part_line).collect::<Vec<_>>().join("\n")
    }));
    t.add_row(row("population", &population));
    t.add_row(row("speed", &|p| {
        format!(
            "{} MT/s at {} DIMM(s) per channel",
            p.mts, p.dimms_per_channel
        )
    }));
    t.add_row(row("theoretical peak", &|p| {
        format!(
            "{:.1} GB/s (all channels at {} MT/s: {:.1})",
            p.peak_mbs as f64 / 1000.0,
            p.platform.max_mts,
            p.platform_peak_mbs as f64 / 1000.0
        )
    }));
    t.add_row(row("capacity", &|p| format_bytes(p.capacity_bytes)));
    heading("DIMM plan (no hardware: part-number decoder, JEDEC tables, platform table)");
    println!("{t}");
    for (i, p) in r.plans.iter().enumerate() {
        println!("\nFindings, plan {} ({})", i + 1, p.asked);
        for f in &p.findings {
            println!("  • {f}");
        }
        println!("  • platform source: {}", p.platform.source);
        if i > 0 {
            let first = &r.plans[0];
            println!(
                "  • against plan 1: peak ×{:.2}, capacity ×{:.2}, DRAM chips ×{:.2}",
                p.peak_mbs as f64 / first.peak_mbs.max(1) as f64,
                p.capacity_bytes as f64 / first.capacity_bytes.max(1) as f64,
                chips(p) as f64 / chips(first).max(1) as f64
            );
        }
    }
}

/// DRAM devices in a plan: what its power scales with (the seed quotes Micron: 2Rx8 32 GB
/// modules of 16 Gb devices draw 31% less than 2Rx4 32 GB modules of 8 Gb devices).
fn chips(p: &memsight_model::plan::Plan) -> u32 {
    p.parts.iter().map(|x| x.count * x.chips).sum()
}

fn part_line(x: &memsight_model::plan::PlannedPart) -> String {
    let d = &x.decoded;
    format!(
        "{} {} {}: {} Gb x{}, {} chips, page {}, tFAW {}",
        format_bytes(d.capacity_bytes),
        d.module_type,
        d.organisation(),
        d.density_gbit,
        d.device_width,
        x.chips,
        x.page_bytes.map_or("?".into(), format_bytes),
        x.tfaw_ns
            .map_or("? (no JEDEC bin)".into(), |t| format!("{t:.1} ns"))
    )
}

/// Per socket: DIMMs on each channel, e.g. `socket 0: 1 1 1 1 0 0 (4 of 6 channels)`.
fn population(p: &memsight_model::plan::Plan) -> String {
    (0..p.sockets)
        .map(|s| {
            let chans: Vec<&memsight_model::plan::ChannelFill> =
                p.channels.iter().filter(|c| c.socket == s).collect();
            let used = chans.iter().filter(|c| !c.parts.is_empty()).count();
            format!(
                "socket {s}: {} ({used} of {} channels)",
                chans
                    .iter()
                    .map(|c| c.parts.len().to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                chans.len()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
