//! What the platform allows: memory channels and speeds per socket by CPU generation, the AMD
//! CCD→IOD fabric limit, and the resulting ceilings for an inventory (source:
//! `shared/reference/platform-limits.md`; values it marks unverified are labelled so).

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ddr::{link_mbs, peak_mbs};
use crate::dmidecode::Inventory;

/// A CPU generation's memory system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Platform {
    pub name: String,
    pub channels_per_socket: u32,
    /// Highest supported DIMM speed at one DIMM per channel, MT/s.
    pub max_mts: u32,
    /// AMD chiplet parts: bytes per fabric clock per CCD for reads and writes (32 / 16).
    pub fabric_bytes_per_clock: Option<(u32, u32)>,
    /// Where the figures come from, and caveats.
    pub source: String,
}

/// Identifies the platform from a CPU name as SMBIOS or /proc/cpuinfo print it.
pub fn identify(cpu: &str) -> Option<Platform> {
    let rows: &[(&str, &str, u32, u32, bool, &str)] = &[
        (
            r"EPYC 7\d\d1",
            "AMD EPYC 7001 (Naples)",
            8,
            2666,
            false,
            "platform-limits.md §1.2",
        ),
        (
            r"EPYC 7\d\d2",
            "AMD EPYC 7002 (Rome)",
            8,
            3200,
            true,
            "platform-limits.md §1.1–1.2",
        ),
        (
            r"EPYC 7\d\d3",
            "AMD EPYC 7003 (Milan)",
            8,
            3200,
            true,
            "platform-limits.md §1.1–1.2",
        ),
        (
            r"EPYC 9\d\d4",
            "AMD EPYC 9004 (Genoa)",
            12,
            4800,
            true,
            "platform-limits.md §1.1–1.2",
        ),
        (
            r"EPYC 9\d\d5",
            "AMD EPYC 9005 (Turin)",
            12,
            6000,
            true,
            "platform-limits.md §1.1–1.2",
        ),
        (
            r"Threadripper PRO 5\d\d\dWX",
            "AMD Threadripper PRO 5000WX",
            8,
            3200,
            true,
            "platform-limits.md §1.2 (fixtures)",
        ),
        (
            r"Threadripper 79\d\dX",
            "AMD Threadripper 7000 (TRX50)",
            4,
            5200,
            true,
            "platform-limits.md §1.2 (channel count and speed unverified)",
        ),
        (
            r"E5-\d{4}\w? v4",
            "Intel Xeon E5 v4 (Broadwell-EP)",
            4,
            2400,
            false,
            "platform-limits.md §2",
        ),
        (
            r"(Platinum|Gold|Silver|Bronze) \d1\d\d",
            "Intel Xeon SP 1st gen (Skylake-SP)",
            6,
            2666,
            false,
            "platform-limits.md §2",
        ),
        (
            r"(Platinum|Gold|Silver|Bronze) \d2\d\d",
            "Intel Xeon SP 2nd gen (Cascade Lake)",
            6,
            2933,
            false,
            "platform-limits.md §2 (SKU-dependent: Gold 5xxx 2666, Silver 2400)",
        ),
        (
            r"(Platinum|Gold|Silver|Bronze) \d3\d\d",
            "Intel Xeon SP 3rd gen (Ice Lake-SP)",
            8,
            3200,
            false,
            "platform-limits.md §2 (SKU-dependent: Gold 53xx 2933, Silver 2666)",
        ),
        (
            r"(Platinum|Gold|Silver|Bronze) \d4\d\d",
            "Intel Xeon SP 4th gen (Sapphire Rapids)",
            8,
            4800,
            false,
            "platform-limits.md §2",
        ),
        (
            r"(Platinum|Gold|Silver|Bronze) \d5\d\d",
            "Intel Xeon SP 5th gen (Emerald Rapids)",
            8,
            5600,
            false,
            "platform-limits.md §2 (unverified except fixtures)",
        ),
        (
            r"Xeon(\(R\))? 69\d\dP",
            "Intel Xeon 6900P (Granite Rapids-AP)",
            12,
            6400,
            false,
            "platform-limits.md §2 (MRDIMM 8800)",
        ),
        (
            r"Xeon(\(R\))? 67\d\d[PE]",
            "Intel Xeon 6700P/E",
            8,
            6400,
            false,
            "platform-limits.md §2 (unverified)",
        ),
    ];
    rows.iter().find_map(|&(re, name, ch, mts, fabric, src)| {
        Regex::new(re).ok()?.is_match(cpu).then(|| Platform {
            name: name.to_string(),
            channels_per_socket: ch,
            max_mts: mts,
            fabric_bytes_per_clock: fabric.then_some((32, 16)),
            source: src.to_string(),
        })
    })
}

/// The socket a slot belongs to, from its name: `CPU1_DIMM_A1`, `P1-DIMMA1`, `CPU 0` in the bank
/// locator, or Dell's `A1`/`B1` (letter = socket).
pub fn socket_of(d: &crate::dmidecode::MemoryDevice) -> Option<String> {
    let re = Regex::new(r"(?i)\b(?:CPU|PROC|SOCKET)[ _-]?(\d+)|^P(\d+)[-_ ]").ok()?;
    for text in [d.locator.as_deref(), d.bank_locator.as_deref()]
        .into_iter()
        .flatten()
    {
        if let Some(c) = re.captures(text) {
            return c.get(1).or(c.get(2)).map(|m| m.as_str().to_string());
        }
    }
    let dell = Regex::new(r"^([A-Z])\d+$").ok()?;
    d.locator
        .as_deref()
        .and_then(|l| dell.captures(l))
        .map(|c| c[1].to_string())
}

/// The channel a slot is on, from its name: `CHANNEL A` in the bank locator, or `DIMM_A1`/`DIMM A1`.
/// Where the bank locator also names the memory controller (Supermicro/Intel Xeon SP:
/// `P0_Node1_Channel0_Dimm0` is socket 0, controller 1, its channel 0), the controller is part of
/// the channel's identity: each controller numbers its channels from 0.
pub fn channel_of(d: &crate::dmidecode::MemoryDevice) -> Option<String> {
    let bank = Regex::new(r"(?i)(?:NODE\s*(\d+)[ _-]*)?CHANNEL\s*([A-Z0-9]+)").ok()?;
    if let Some(c) = d.bank_locator.as_deref().and_then(|b| bank.captures(b)) {
        let controller = c
            .get(1)
            .map_or(String::new(), |n| format!("IMC{}-", n.as_str()));
        return Some(format!(
            "{}{controller}{}",
            socket_of(d).unwrap_or_default(),
            &c[2]
        ));
    }
    let slot = Regex::new(r"(?i)DIMM[ _]?([A-Z])\d").ok()?;
    d.locator
        .as_deref()
        .and_then(|l| slot.captures(l))
        .map(|c| format!("{}{}", socket_of(d).unwrap_or_default(), &c[1]))
}

/// One socket's DRAM ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SocketCeiling {
    /// How the socket was identified: `socket N` from slot names, or `array H` (type 16 handle).
    pub array: String,
    pub dimms: u32,
    /// Channels populated: distinct channels named in the slot names when they all name one,
    /// otherwise min(DIMMs, channels per socket) (one DIMM per channel assumed).
    pub channels_used: u32,
    pub channels: Option<u32>,
    /// Slowest configured speed among the socket's DRAM DIMMs, MT/s.
    pub mts: u32,
    /// channels_used × 8 B × MT/s, MB/s.
    pub dram_mbs: u64,
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

/// Computes DRAM ceilings per socket (one per memory array holding DRAM) and, for AMD chiplet
/// platforms, the fabric limits given `ccds` and `fclk_mhz` (e.g. the EPYC seed: 4 CCDs at 1333 MHz).
pub fn ceilings(inv: &Inventory, ccds: Option<u32>, fclk_mhz: Option<u32>) -> Ceilings {
    let cpu = inv
        .processors
        .iter()
        .filter(|p| p.populated)
        .find_map(|p| p.version.clone());
    let platform = cpu.as_deref().and_then(identify);
    let mut notes = Vec::new();
    if platform.is_none() {
        notes.push(match &cpu {
            Some(c) => {
                format!("no platform limits known for '{c}': channel counts are not checked")
            }
            None => {
                "the SMBIOS text names no processor: channel counts are not checked".to_string()
            }
        });
    }
    // Group DRAM DIMMs by socket: from the slot names when every DIMM names its socket, else by
    // memory array (often one per socket, but some BIOSes put every slot in one array).
    let dram: Vec<_> = inv.populated().filter(|d| !d.non_volatile).collect();
    let by_name = dram.iter().all(|d| socket_of(d).is_some());
    let mut groups: std::collections::BTreeMap<String, Vec<&crate::dmidecode::MemoryDevice>> =
        Default::default();
    for d in &dram {
        let key = if by_name {
            format!("socket {}", socket_of(d).expect("checked"))
        } else {
            format!("array {}", d.array_handle.clone().unwrap_or_default())
        };
        groups.entry(key).or_default().push(d);
    }
    let cpus = inv.processors.iter().filter(|p| p.populated).count();
    if !by_name && cpus > 0 && groups.len() > cpus && groups.len().is_multiple_of(cpus) {
        // More arrays than CPUs (e.g. one per memory controller): consecutive arrays form a socket.
        let per = groups.len() / cpus;
        let merged: Vec<Vec<&crate::dmidecode::MemoryDevice>> = groups
            .into_values()
            .collect::<Vec<_>>()
            .chunks(per)
            .map(|c| c.concat())
            .collect();
        notes.push(format!(
            "{per} memory arrays per CPU: consecutive arrays are taken as one socket"
        ));
        groups = merged
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("socket {} (arrays merged)", i + 1), v))
            .collect();
    }
    if !by_name && groups.len() == 1 && cpus > 1 {
        notes.push("several CPUs but one memory array and slot names without a socket: all DIMMs are counted as one socket, so per-socket channel figures are approximate".to_string());
    }
    let mut sockets = Vec::new();
    for (key, dimms) in groups {
        let Some(mts) = dimms
            .iter()
            .filter_map(|d| d.configured_mts.or(d.speed_mts))
            .min()
        else {
            continue;
        };
        let n = dimms.len() as u32;
        let channels = platform.as_ref().map(|p| p.channels_per_socket);
        // Channels named in the slot names when all name one, else one DIMM per channel assumed.
        let named: std::collections::BTreeSet<String> =
            dimms.iter().filter_map(|d| channel_of(d)).collect();
        let used = if dimms.iter().all(|d| channel_of(d).is_some()) {
            named.len() as u32
        } else {
            n
        };
        let channels_used = channels.map_or(used, |c| used.min(c));
        sockets.push(SocketCeiling {
            array: key,
            dimms: n,
            channels_used,
            channels,
            mts,
            dram_mbs: peak_mbs(channels_used, mts),
        });
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(identify("Intel(R) Core(TM) i7-13700K").is_none());
    }

    /// EPYC seed (7452, 8 × DDR4-2933, 4 CCDs at FCLK 1333 MHz): DRAM 187 712 MB/s, fabric
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
}
