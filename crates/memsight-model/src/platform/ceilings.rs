//! DRAM ceilings of an inventory: DIMMs grouped by socket, channels counted from the slot names
//! (or from the platform's rule where the names say nothing), data width per channel, speed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::locator::{Located, LocatorScheme, channel_of_slot, locate};
use super::{Platform, identify};
use crate::ddr::link_mbs;
use crate::dmidecode::{Inventory, MemoryDevice};

/// One socket's DRAM ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SocketCeiling {
    /// How the socket was identified: `socket N` from slot names, or `array H` (type 16 handle).
    pub array: String,
    pub dimms: u32,
    /// Channels populated: distinct channels found from the slot names, or min(DIMMs, channels
    /// per socket) where the names follow no known scheme (one DIMM per channel assumed).
    pub channels_used: u32,
    /// The platform's channels per socket (64-bit channels).
    pub channels: Option<u32>,
    /// Data bits per populated channel: 64 for DDR4/DDR5 DIMMs (two 32-bit DDR5 sub-channels
    /// are one channel), 16 for LPDDR.
    #[serde(default = "sixty_four")]
    pub channel_bits: u32,
    /// How the slot names were read.
    #[serde(default = "unknown_scheme")]
    pub scheme: LocatorScheme,
    /// Most DIMMs found on one channel (0 when the channels are not known from the names).
    #[serde(default)]
    pub max_dimms_per_channel: u32,
    /// Slowest configured speed among the socket's DRAM DIMMs, MT/s.
    pub mts: u32,
    /// channels_used × channel_bits ÷ 8 × MT/s, MB/s.
    pub dram_mbs: u64,
}

fn sixty_four() -> u32 {
    64
}

fn unknown_scheme() -> LocatorScheme {
    LocatorScheme::Unknown
}

/// The ceilings of a system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ceilings {
    pub platform: Option<Platform>,
    pub sockets: Vec<SocketCeiling>,
    /// Sum over sockets, MB/s.
    pub system_dram_mbs: u64,
    /// Per-socket CCD→IOD limits when the CCD count and fabric clock are known, MB/s.
    pub fabric_read_mbs: Option<u64>,
    pub fabric_write_mbs: Option<u64>,
    /// min(DRAM, fabric) per socket for reads and for writes, MB/s (first socket).
    pub binding_read_mbs: Option<u64>,
    pub binding_write_mbs: Option<u64>,
    pub notes: Vec<String>,
}

fn is_lpddr(d: &MemoryDevice) -> bool {
    d.memory_type
        .as_deref()
        .is_some_and(|t| t.to_ascii_uppercase().starts_with("LPDDR"))
}

/// Data bits one record stands for: LPDDR records are 16-bit channels whatever width the BIOS
/// prints (the XPS 9320 prints 64 for each of its eight LPDDR5 packages); DIMMs are 64 bits
/// unless the BIOS lists a 32-bit DDR5 sub-channel on its own.
fn record_bits(d: &MemoryDevice) -> u32 {
    if is_lpddr(d) {
        16
    } else {
        d.data_width.filter(|&w| w > 0).map_or(64, |w| w.min(64))
    }
}

/// Groups every slot (empty ones too, for slot counts) by socket.
struct Grouping<'a> {
    groups: BTreeMap<String, Vec<(&'a MemoryDevice, Located)>>,
    /// The lowest slot number the board uses (0 or 1).
    base: u32,
    notes: Vec<String>,
}

fn group<'a>(inv: &'a Inventory, platform: Option<&Platform>) -> Grouping<'a> {
    let cpus = inv.processors.iter().filter(|p| p.populated).count().max(1);
    let located: Vec<(&MemoryDevice, Located)> =
        inv.devices.iter().map(|d| (d, locate(d))).collect();
    let base = located
        .iter()
        .filter_map(|(_, l)| l.slot)
        .min()
        .unwrap_or(1)
        .min(1);
    let dram = |d: &MemoryDevice| d.populated && !d.non_volatile;
    let mut notes = Vec::new();
    let by_name = located
        .iter()
        .filter(|(d, _)| dram(d))
        .all(|(_, l)| l.socket.is_some());
    let channels = platform.map(|p| p.channels_per_socket);
    let key = |d: &MemoryDevice, l: &Located| -> String {
        if by_name {
            return format!("socket {}", l.socket.as_deref().unwrap_or("?"));
        }
        // Channel letters counted across sockets (`ChannelA`…`ChannelP` on a 2-socket Ice
        // Lake board): the platform's channel count splits them.
        if let (Some(ch), LocatorScheme::ChannelDimm, Some(c)) = (channels, l.scheme, &l.channel)
            && cpus > 1
        {
            let idx = c.bytes().next().map_or(0, |b| (b - b'A') as u32);
            return format!("socket {}", idx / ch.max(1));
        }
        format!("array {}", d.array_handle.clone().unwrap_or_default())
    };
    let mut groups: BTreeMap<String, Vec<(&MemoryDevice, Located)>> = BTreeMap::new();
    for (d, l) in located {
        groups.entry(key(d, &l)).or_default().push((d, l));
    }
    groups.retain(|_, v| v.iter().any(|(d, _)| dram(d)));
    if !by_name && groups.len() > cpus && groups.len().is_multiple_of(cpus) {
        // More arrays than CPUs (one per memory controller): consecutive arrays form a socket.
        let per = groups.len() / cpus;
        notes.push(format!(
            "{per} memory arrays per CPU: consecutive arrays are taken as one socket"
        ));
        let merged: Vec<Vec<_>> = groups
            .into_values()
            .collect::<Vec<_>>()
            .chunks(per)
            .map(|c| c.concat())
            .collect();
        groups = merged
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("socket {i} (arrays merged)"), v))
            .collect();
    }
    if !by_name && groups.len() == 1 && cpus > 1 {
        notes.push("several CPUs but one memory array and slot names without a socket: all DIMMs are counted as one socket, so per-socket channel figures are approximate".to_string());
    }
    Grouping {
        groups,
        base,
        notes,
    }
}

/// A slot's channel within its socket: named by the slot, or its slot number turned into a
/// channel with the platform's channel count (`#3`), or its own for an LPDDR record; `None`
/// when nothing says.
fn channel_id(
    d: &MemoryDevice,
    l: &Located,
    slots: u32,
    channels: Option<u32>,
    base: u32,
) -> Option<String> {
    match (&l.channel, l.slot, channels) {
        (Some(c), _, _) => Some(c.clone()),
        (None, Some(s), Some(ch)) => Some(format!(
            "#{}",
            channel_of_slot(l.scheme, s, base, slots, ch)
        )),
        _ if is_lpddr(d) => Some(format!("lpddr {}", d.handle)),
        _ => None,
    }
}

/// Where every slot of an inventory sits, by handle: the socket (as `ceilings` groups them) and
/// the channel when known, resolved exactly as the ceilings are (for the DIMM map).
pub fn slot_places(inv: &Inventory) -> BTreeMap<String, (String, Option<String>)> {
    let platform = inv
        .processors
        .iter()
        .filter(|p| p.populated)
        .find_map(|p| p.version.as_deref())
        .and_then(identify);
    let channels = platform.as_ref().map(|p| p.channels_per_socket);
    let g = group(inv, platform.as_ref());
    let mut out = BTreeMap::new();
    for (key, slots) in g.groups {
        for (d, l) in &slots {
            let ch = channel_id(d, l, slots.len() as u32, channels, g.base);
            out.insert(d.handle.clone(), (key.clone(), ch));
        }
    }
    out
}

/// Counts one socket's channels. Returns the ceiling and, when the names said nothing usable,
/// a note saying which rule replaced them.
fn socket_ceiling(
    key: String,
    slots: &[(&MemoryDevice, Located)],
    platform: Option<&Platform>,
    base: u32,
) -> Option<(SocketCeiling, Option<String>)> {
    let dimms: Vec<&(&MemoryDevice, Located)> = slots
        .iter()
        .filter(|(d, _)| d.populated && !d.non_volatile)
        .collect();
    let mts = dimms
        .iter()
        .filter_map(|(d, _)| d.configured_mts.or(d.speed_mts))
        .min()?;
    let n = dimms.len() as u32;
    let channels = platform.map(|p| p.channels_per_socket);
    let scheme = dimms[0].1.scheme;
    // channel id → (bits, DIMMs on it)
    let mut named: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut unresolved = Vec::new();
    for (d, l) in &dimms {
        match channel_id(d, l, slots.len() as u32, channels, base) {
            Some(id) => {
                let e = named.entry(id).or_insert((record_bits(d), 0));
                e.1 += 1;
            }
            None => unresolved.push(d.locator.clone().unwrap_or_else(|| d.handle.clone())),
        }
    }
    let mut note = (scheme == LocatorScheme::Unknown && unresolved.is_empty()).then(|| {
        format!("{key}: slot names follow no scheme memsight knows: each LPDDR record is taken as one 16-bit channel")
    });
    let (used, bus_bits, max_dpc) = if unresolved.is_empty() {
        let bits: u32 = named.values().map(|v| v.0).sum();
        let dpc = named.values().map(|v| v.1).max().unwrap_or(0);
        (named.len() as u32, bits, dpc)
    } else {
        let used = channels.map_or(n, |c| n.min(c));
        note = Some(unresolved_note(&key, &unresolved, scheme));
        (used, used * 64, 0)
    };
    let cap_bits = channels.map_or(u32::MAX, |c| c * 64);
    let bus_bits = if bus_bits > cap_bits {
        note = Some(format!(
            "{key}: the slot names give {bus_bits} data bits but the platform has {cap_bits}: capped"
        ));
        cap_bits
    } else {
        bus_bits
    };
    let channel_bits = bus_bits.checked_div(used).unwrap_or(64);
    Some((
        SocketCeiling {
            array: key,
            dimms: n,
            channels_used: used,
            channels,
            channel_bits,
            scheme: if unresolved.is_empty() {
                scheme
            } else {
                LocatorScheme::Unknown
            },
            max_dimms_per_channel: max_dpc,
            mts,
            dram_mbs: bus_bits as u64 / 8 * mts as u64,
        },
        note,
    ))
}

/// Why the ceiling is an upper bound when slot names do not place DIMMs on channels: the first
/// few names, and whether the platform's channel count would have told.
fn unresolved_note(key: &str, unresolved: &[String], scheme: LocatorScheme) -> String {
    format!(
        "{key}: slot names ({}) do not say which channel a DIMM is on{}: one DIMM per channel assumed, so the ceiling is an upper bound",
        unresolved
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        if scheme.needs_platform() {
            " without the platform's channel count"
        } else {
            ""
        }
    )
}

/// Computes DRAM ceilings per socket and, for AMD chiplet platforms, the fabric limits given
/// `ccds` and `fclk_mhz` (e.g. the EPYC 7002 review: 4 CCDs at 1333 MHz).
pub fn ceilings(inv: &Inventory, ccds: Option<u32>, fclk_mhz: Option<u32>) -> Ceilings {
    let cpu = inv
        .processors
        .iter()
        .filter(|p| p.populated)
        .find_map(|p| p.version.clone());
    let platform = cpu.as_deref().and_then(identify);
    let mut notes = Vec::new();
    match (&platform, &cpu) {
        (None, Some(c)) => notes.push(format!(
            "no platform limits known for '{c}': channel counts are not checked"
        )),
        (None, None) => notes
            .push("the SMBIOS text names no processor: channel counts are not checked".to_string()),
        (Some(p), _) if !p.verified => notes.push(format!(
            "platform row '{}' is not confirmed by a retrieved document: {}",
            p.name, p.source
        )),
        _ => {}
    }
    let g = group(inv, platform.as_ref());
    notes.extend(g.notes);
    let mut sockets = Vec::new();
    for (key, slots) in g.groups {
        if let Some((s, note)) = socket_ceiling(key, &slots, platform.as_ref(), g.base) {
            notes.extend(note);
            sockets.push(s);
        }
    }
    let system_dram_mbs = sockets.iter().map(|s| s.dram_mbs).sum();
    let fabric = match (
        platform.as_ref().and_then(|p| p.fabric_bytes_per_clock),
        ccds,
        fclk_mhz,
    ) {
        (Some((r, w)), Some(c), Some(f)) => Some((link_mbs(c, r, f), link_mbs(c, w, f))),
        (Some(_), _, _) => {
            notes.push("AMD chiplet part: give --ccds and --fclk to compute the CCD→IOD fabric limit (32 B/clk read, 16 B/clk write per CCD)".to_string());
            None
        }
        _ => None,
    };
    let first = sockets.first().map(|s| s.dram_mbs);
    Ceilings {
        platform,
        system_dram_mbs,
        fabric_read_mbs: fabric.map(|f| f.0),
        fabric_write_mbs: fabric.map(|f| f.1),
        binding_read_mbs: first.map(|d| fabric.map_or(d, |f| d.min(f.0))),
        binding_write_mbs: first.map(|d| fabric.map_or(d, |f| d.min(f.1))),
        sockets,
        notes,
    }
}
