//! What the platform allows: memory channels and speeds per socket by CPU family ([`table`]),
//! where each DIMM sits ([`locator`]), and the resulting ceilings for an inventory
//! ([`ceilings`]). The AMD CCD→IOD fabric figures come from `docs/reference/platform-limits.md`.

mod ceilings;
pub mod locator;
mod table;

use std::sync::LazyLock;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use ceilings::{Ceilings, SocketCeiling, ceilings, slot_places};
pub use locator::{LocatorScheme, channel_of, socket_of};

/// What memory a platform takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PlatformClass {
    /// Registered/load-reduced DIMMs (servers, workstations).
    Server,
    /// Unbuffered DIMMs (desktops).
    Desktop,
    /// SODIMMs or soldered LPDDR (laptops).
    Laptop,
    /// LPDDR on the CPU package only.
    OnPackage,
}

/// A CPU family's memory system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Platform {
    pub name: String,
    /// Memory channels per socket, counted as 64-bit channels (a DDR5 DIMM's two 32-bit
    /// sub-channels are one; four 16-bit LPDDR channels are one).
    pub channels_per_socket: u32,
    /// Highest supported DIMM speed at one DIMM per channel, MT/s.
    pub max_mts: u32,
    /// At two DIMMs per channel, where known.
    #[serde(default)]
    pub max_mts_2dpc: Option<u32>,
    /// Soldered LPDDR speed for laptop parts, MT/s.
    #[serde(default)]
    pub lpddr_mts: Option<u32>,
    /// The memory it takes, in words (`DDR5 RDIMM`, `DDR5-5600 SODIMM or LPDDR5X-7500` …).
    #[serde(default)]
    pub memory: String,
    #[serde(default = "default_class")]
    pub class: PlatformClass,
    /// AMD chiplet parts: bytes per fabric clock per CCD for reads and writes (32 / 16).
    pub fabric_bytes_per_clock: Option<(u32, u32)>,
    /// Where the figures come from, and caveats.
    pub source: String,
    /// False where no document retrieved for memsight confirmed the row (said in the output).
    #[serde(default)]
    pub verified: bool,
}

fn default_class() -> PlatformClass {
    PlatformClass::Server
}

impl Platform {
    /// The speed the platform runs `dpc` DIMMs per channel at, where it is known; LPDDR parts
    /// run their soldered memory at `lpddr_mts`.
    pub fn supported_mts(&self, dpc: u32, lpddr: bool) -> Option<u32> {
        if lpddr {
            return self.lpddr_mts;
        }
        match dpc {
            0 | 1 => Some(self.max_mts),
            _ => self.max_mts_2dpc,
        }
    }
}

/// Uppercases a CPU name and drops the marks vendors print differently: `Intel(R) Xeon(R)
/// Gold 6526Y CPU @ 2.80GHz`, `INTEL(R) XEON(R) GOLD 6526Y` and `Intel® Xeon® Gold 6526Y` all
/// become `INTEL XEON GOLD 6526Y …`.
pub fn normalise_cpu(cpu: &str) -> String {
    static MARKS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\((R|TM|C)\)|®|™").expect("static pattern"));
    let plain = MARKS.replace_all(cpu, " ").to_ascii_uppercase();
    plain.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Identifies the platform from a CPU name as SMBIOS, `/proc/cpuinfo` or `lscpu` print it.
pub fn identify(cpu: &str) -> Option<Platform> {
    let name = normalise_cpu(cpu);
    table::rows().find_map(|r| {
        let re = Regex::new(&format!("(?i){}", r.pattern)).ok()?;
        re.is_match(&name).then(|| Platform {
            name: r.name.to_string(),
            channels_per_socket: r.channels,
            max_mts: r.mts,
            max_mts_2dpc: r.mts_2dpc,
            lpddr_mts: r.lpddr_mts,
            memory: r.memory.to_string(),
            class: match r.kinds {
                table::Kinds::ServerDimm => PlatformClass::Server,
                table::Kinds::Udimm => PlatformClass::Desktop,
                table::Kinds::Mobile => PlatformClass::Laptop,
                table::Kinds::PackageLpddr => PlatformClass::OnPackage,
            },
            fabric_bytes_per_clock: r.fabric.then_some((32, 16)),
            source: r.source.to_string(),
            verified: r.verified,
        })
    })
}

/// Splits `"2x Xeon Gold 6248"`, `"2 × EPYC 9654"` or `"Ryzen 9 7950X"` into a socket count
/// (1 when not given) and the CPU name.
pub fn parse_sockets(text: &str) -> (u32, &str) {
    static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\s*(\d+)\s*(?:x|×|\*|-?socket|s\b)\s*").expect("static pattern")
    });
    match PREFIX.captures(text) {
        Some(c) => {
            let n = c[1].parse().unwrap_or(1);
            (n, &text[c.get(0).map_or(0, |m| m.end())..])
        }
        None => (1, text.trim()),
    }
}

#[cfg(test)]
mod tests;
