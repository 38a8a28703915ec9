//! Where a DIMM sits, from the names the BIOS gives its slot (SMBIOS type 17 `Locator` and
//! `Bank Locator`). Vendors encode socket, memory controller, channel and slot in different
//! ways; each way is a [`LocatorScheme`]. Slot-number schemes need the platform's channel count
//! to become channels, so [`locate`] returns the slot number and `ceilings` resolves it.

use std::sync::LazyLock;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dmidecode::MemoryDevice;

/// How a BIOS names its slots.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum LocatorScheme {
    /// Supermicro/Intel Xeon SP bank locator `P0_Node1_Channel2_Dimm0`: socket, memory
    /// controller, channel within that controller, slot.
    XeonNodeChannel,
    /// AMD bank locator `P0 CHANNEL A` (the locator `DIMM 0`/`DIMM 1` is the slot).
    AmdChannel,
    /// Intel client `Controller0-ChannelA-DIMM0`, `Controller1-DIMM0`; LPDDR
    /// `Controller0-ChannelA` (one 16-bit channel each).
    ClientController,
    /// `ChannelA-DIMM0` with the memory controller as bank locator `NODE n`.
    ChannelDimm,
    /// One letter per channel: `CPU1_DIMM_A1`, `P1-DIMMA1`, `CPU0.A0`, `CPU0_DIMM_A`,
    /// `DIMM_P0_A1`, `P0_UMC0_CH_A0`, `DIMM_A1`, Lenovo `DIMM A1` (CPU in the bank locator).
    ChannelLetter,
    /// Dell `A1`…`A16` (letter = socket) and Precision `DIMM5_CPU0`: slot n is on channel
    /// (n − 1) mod channels (Dell owner's manuals: R540, XC940, XC750xa, DL4000 channel tables).
    DellSlot,
    /// HPE `PROC 1 DIMM 3`, Lenovo `DIMM 13`, `Socket 0 DIMM 2`: numbered slots, each channel's
    /// slots adjacent (HPE SL210t Gen8 and Lenovo SR860 V2 channel tables; the HPE DL380 Gen11
    /// fixture's OEM type 202 records pair DIMM 1–2, 3–4 … on one channel each).
    NumberedSlot,
    /// None of the above (`Motherboard`, empty names): the platform's rule applies instead.
    Unknown,
}

impl LocatorScheme {
    /// A short description for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Self::XeonNodeChannel => "Xeon SP P<socket>_Node<controller>_Channel<n>",
            Self::AmdChannel => "AMD P<socket> CHANNEL <letter>",
            Self::ClientController => "Intel client Controller<n>-Channel<letter>",
            Self::ChannelDimm => "Channel<letter>-DIMM<n>",
            Self::ChannelLetter => "one letter per channel (CPU1_DIMM_A1 and kin)",
            Self::DellSlot => "Dell <socket letter><n> (A1…, B1…): channel = (n − 1) mod channels",
            Self::NumberedSlot => "numbered slots (HPE, Lenovo): adjacent slots share a channel",
            Self::Unknown => "unknown: one DIMM per channel assumed",
        }
    }

    /// Whether slot numbers must be turned into channels with the platform's channel count.
    pub fn needs_platform(self) -> bool {
        matches!(self, Self::DellSlot | Self::NumberedSlot)
    }
}

/// What a slot's names say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub scheme: LocatorScheme,
    /// Socket as the names print it (only a grouping key: some count from 0, some from 1).
    pub socket: Option<String>,
    /// The channel's identity within the socket when the names give it.
    pub channel: Option<String>,
    /// The slot number for [`LocatorScheme::DellSlot`] and [`LocatorScheme::NumberedSlot`].
    pub slot: Option<u32>,
}

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static pattern")
}

static XEON: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:P(\d+))?_NODE(\d+)_CHANNEL(\d+)_DIMM\d+"));
static AMD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^P(\d+)\s+CHANNEL\s+([A-Z])\b"));
static CLIENT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^CONTROLLER(\d+)(?:-CHANNEL([A-Z]))?(?:-DIMM\d+)?$"));
static CHANNEL_DIMM: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^CHANNEL([A-Z])-DIMM\d+$"));
static LETTER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(?:(?:CPU|PROC|P)(\d+)[_.\- ]?)?(DIMM[_ ]?)?(?:P(\d+)_)?(?:UMC\d+_CH_)?([A-Z])\d*$")
});
static DELL: LazyLock<Regex> = LazyLock::new(|| re(r"^([A-Z])(\d{1,2})$"));
static PRECISION: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^DIMM(\d+)_CPU(\d+)$"));
static NUMBERED: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:(?:PROC|CPU|SOCKET)\s*(\d+)\s+)?DIMM\s*(\d+)$"));
static SOCKET: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:CPU|PROC|SOCKET)[ _-]?(\d+)|^P(\d+)[-_ ]"));

/// The socket named anywhere in the slot's names (`CPU1_…`, `P1-…`, `PROC 1`, bank `CPU 0`).
fn named_socket(d: &MemoryDevice) -> Option<String> {
    [d.locator.as_deref(), d.bank_locator.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|t| {
            let c = SOCKET.captures(t)?;
            c.get(1).or(c.get(2)).map(|m| m.as_str().to_string())
        })
}

/// Reads the slot's names. Bank-locator schemes come first: they are the more precise where a
/// board prints both (Supermicro `P1-DIMMA1` / `P0_Node0_Channel0_Dimm0`).
pub fn locate(d: &MemoryDevice) -> Located {
    let loc = d.locator.as_deref().unwrap_or("").trim();
    let bank = d.bank_locator.as_deref().unwrap_or("").trim();
    let found = |scheme, socket: Option<String>, channel: Option<String>, slot| Located {
        scheme,
        socket: socket.or_else(|| named_socket(d)),
        channel,
        slot,
    };
    if let Some(c) = XEON.captures(bank) {
        let socket = c.get(1).map(|m| m.as_str().to_string());
        return found(
            LocatorScheme::XeonNodeChannel,
            socket,
            Some(format!("IMC{}/{}", &c[2], &c[3])),
            None,
        );
    }
    if let Some(c) = AMD.captures(bank) {
        let ch = c[2].to_ascii_uppercase();
        return found(
            LocatorScheme::AmdChannel,
            Some(c[1].to_string()),
            Some(ch),
            None,
        );
    }
    if let Some(c) = CLIENT.captures(loc) {
        let letter = c
            .get(2)
            .map_or(String::new(), |m| m.as_str().to_ascii_uppercase());
        let channel = Some(format!("C{}{letter}", &c[1]));
        return found(
            LocatorScheme::ClientController,
            Some("0".into()),
            channel,
            None,
        );
    }
    if let Some(c) = CHANNEL_DIMM.captures(loc) {
        let ch = c[1].to_ascii_uppercase();
        return found(LocatorScheme::ChannelDimm, None, Some(ch), None);
    }
    if let Some(c) = PRECISION.captures(loc) {
        let slot = c[1].parse().ok();
        return found(LocatorScheme::DellSlot, Some(c[2].to_string()), None, slot);
    }
    if let Some(c) = DELL.captures(loc) {
        let slot = c[2].parse().ok();
        return found(LocatorScheme::DellSlot, Some(c[1].to_string()), None, slot);
    }
    if let Some(c) = NUMBERED.captures(loc) {
        let socket = c.get(1).map(|m| m.as_str().to_string());
        return found(LocatorScheme::NumberedSlot, socket, None, c[2].parse().ok());
    }
    if let Some(c) = LETTER.captures(loc) {
        // A bare `A1` is Dell's (caught above); here a socket prefix or `DIMM` must be present.
        let socket = c.get(1).or(c.get(3)).map(|m| m.as_str().to_string());
        if socket.is_some() || c.get(2).is_some() {
            let ch = c[4].to_ascii_uppercase();
            return found(LocatorScheme::ChannelLetter, socket, Some(ch), None);
        }
    }
    found(LocatorScheme::Unknown, None, None, None)
}

/// The socket a slot belongs to, from its names.
pub fn socket_of(d: &MemoryDevice) -> Option<String> {
    locate(d).socket
}

/// The channel a slot is on within its socket, when its names give it directly (no platform
/// needed): `A`, `IMC1/0`, `C0A`.
pub fn channel_of(d: &MemoryDevice) -> Option<String> {
    locate(d).channel
}

/// Turns a slot number into a channel index within its socket. `base` is the lowest slot number
/// the board uses (0 or 1), `slots` the socket's slot count and `channels` the platform's.
pub fn channel_of_slot(
    scheme: LocatorScheme,
    slot: u32,
    base: u32,
    slots: u32,
    channels: u32,
) -> u32 {
    let i = slot.saturating_sub(base);
    match scheme {
        LocatorScheme::DellSlot => i % channels.max(1),
        _ => {
            let per_channel = (slots / channels.max(1)).max(1);
            (i % slots.max(1)) / per_channel
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LocatorScheme::*;

    fn dev(loc: &str, bank: &str) -> MemoryDevice {
        MemoryDevice {
            locator: Some(loc.into()),
            bank_locator: (!bank.is_empty()).then(|| bank.to_string()),
            ..Default::default()
        }
    }

    /// Locator, bank locator, and the scheme, socket, channel and slot they give.
    type Case = (
        &'static str,
        &'static str,
        LocatorScheme,
        Option<&'static str>,
        Option<&'static str>,
        Option<u32>,
    );

    /// One slot of each scheme as real BIOSes print it (the fixtures and vendor manuals).
    const CASES: &[Case] = &[
        (
            "P1-DIMMD1",
            "P0_Node1_Channel0_Dimm0",
            XeonNodeChannel,
            Some("0"),
            Some("IMC1/0"),
            None,
        ),
        (
            "CPU1_A0",
            "_Node1_Channel3_Dimm0",
            XeonNodeChannel,
            Some("1"),
            Some("IMC1/3"),
            None,
        ),
        (
            "DIMM 0",
            "P1 CHANNEL L",
            AmdChannel,
            Some("1"),
            Some("L"),
            None,
        ),
        (
            "CPU2_DIMM_A1",
            "P1 CHANNEL A",
            AmdChannel,
            Some("1"),
            Some("A"),
            None,
        ),
        (
            "Controller1-ChannelA-DIMM1",
            "BANK 0",
            ClientController,
            Some("0"),
            Some("C1A"),
            None,
        ),
        (
            "Controller0-DIMM1",
            "BANK 0",
            ClientController,
            Some("0"),
            Some("C0"),
            None,
        ),
        (
            "Controller1-ChannelD",
            "BANK 3",
            ClientController,
            Some("0"),
            Some("C1D"),
            None,
        ),
        (
            "ChannelK-DIMM0",
            "NODE 5",
            ChannelDimm,
            None,
            Some("K"),
            None,
        ),
        (
            "CPU1_DIMM_A1",
            "",
            ChannelLetter,
            Some("1"),
            Some("A"),
            None,
        ),
        (
            "P2-DIMMF1",
            "NO DIMM",
            ChannelLetter,
            Some("2"),
            Some("F"),
            None,
        ),
        (
            "CPU0.G0",
            "BANK 6",
            ChannelLetter,
            Some("0"),
            Some("G"),
            None,
        ),
        (
            "CPU1_DIMM_L",
            "BANK 23",
            ChannelLetter,
            Some("1"),
            Some("L"),
            None,
        ),
        (
            "DIMM_P0_H1",
            "BANK 1",
            ChannelLetter,
            Some("0"),
            Some("H"),
            None,
        ),
        ("DIMM_B2", "BANK 3", ChannelLetter, None, Some("B"), None),
        (
            "DIMM J1",
            "Secondary Main Board/CPU 3",
            ChannelLetter,
            Some("3"),
            Some("J"),
            None,
        ),
        ("B12", "Not Specified", DellSlot, Some("B"), None, Some(12)),
        ("DIMM11_CPU1", "", DellSlot, Some("1"), None, Some(11)),
        (
            "PROC 2 DIMM 14",
            "",
            NumberedSlot,
            Some("2"),
            None,
            Some(14),
        ),
        (
            "Socket 0 DIMM 4",
            "Bank 4",
            NumberedSlot,
            Some("0"),
            None,
            Some(4),
        ),
        ("DIMM 7", "", NumberedSlot, None, None, Some(7)),
        ("Motherboard", "", Unknown, None, None, None),
    ];

    #[test]
    fn every_known_scheme_is_read() {
        for &(loc, bank, scheme, socket, channel, slot) in CASES {
            let l = locate(&dev(loc, bank));
            assert_eq!(l.scheme, scheme, "{loc} / {bank}");
            assert_eq!(l.socket.as_deref(), socket, "{loc} / {bank}");
            assert_eq!(l.channel.as_deref(), channel, "{loc} / {bank}");
            assert_eq!(l.slot, slot, "{loc} / {bank}");
        }
    }

    /// Dell: A1–A6 are the first slot of channels 0–5 and A7–A12 the second (XC940 manual);
    /// HPE Gen11: slots 3, 7, 10 and 14 of 16 are four different channels of eight.
    #[test]
    fn slot_numbers_become_channels() {
        let dell: Vec<u32> = [2, 3, 5, 6, 8, 9]
            .iter()
            .map(|&n| channel_of_slot(DellSlot, n, 1, 12, 6))
            .collect();
        assert_eq!(dell, [1, 2, 4, 5, 1, 2]);
        let hpe: Vec<u32> = [3, 7, 10, 14]
            .iter()
            .map(|&n| channel_of_slot(NumberedSlot, n, 1, 16, 8))
            .collect();
        assert_eq!(hpe, [1, 3, 4, 6]);
        // Six slots on an eight-channel Altra board: one slot per channel.
        assert_eq!(channel_of_slot(NumberedSlot, 5, 0, 6, 8), 5);
    }
}
