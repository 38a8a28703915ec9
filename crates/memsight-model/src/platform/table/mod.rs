//! The platform table: memory channels and supported speeds per CPU family, each row with its
//! source. Sources marked "unverified" state general knowledge that no document retrieved for
//! the table confirmed; the figures are still the vendors' published ones as far as we know,
//! and the output says so wherever such a row is used.

/// Memory kinds a platform drives, for the speed rule that applies to an inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kinds {
    /// Registered/load-reduced server DIMMs.
    ServerDimm,
    /// Unbuffered DIMMs (desktops, workstations on client sockets).
    Udimm,
    /// SODIMM or soldered LPDDR (laptops): 128-bit bus either way.
    Mobile,
    /// LPDDR soldered on the package only (Lunar Lake, Grace, Strix Halo).
    PackageLpddr,
}

/// One row: a case-insensitive pattern over the normalised CPU name, and the memory system.
pub(crate) struct Row {
    pub pattern: &'static str,
    pub name: &'static str,
    /// Memory channels per socket in 64-bit equivalents (a DDR5 DIMM's two 32-bit
    /// sub-channels are one; four 16-bit LPDDR channels are one).
    pub channels: u32,
    /// Highest DIMM speed at one DIMM per channel, MT/s (DDR4 or DDR5 as the row says).
    pub mts: u32,
    /// At two DIMMs per channel, where the platform supports it and the speed is known.
    pub mts_2dpc: Option<u32>,
    /// LPDDR speed for parts that also take soldered LPDDR, MT/s.
    pub lpddr_mts: Option<u32>,
    pub memory: &'static str,
    pub kinds: Kinds,
    /// AMD chiplet parts: CCD→IOD bytes per fabric clock, read and write.
    pub fabric: bool,
    pub source: &'static str,
    pub verified: bool,
}

macro_rules! row {
    ($pat:expr, $name:expr, $ch:expr, $mts:expr, $two:expr, $lp:expr, $mem:expr, $kinds:ident, $fabric:expr, $src:expr, $ok:expr) => {
        Row {
            pattern: $pat,
            name: $name,
            channels: $ch,
            mts: $mts,
            mts_2dpc: $two,
            lpddr_mts: $lp,
            memory: $mem,
            kinds: Kinds::$kinds,
            fabric: $fabric,
            source: $src,
            verified: $ok,
        }
    };
}

mod client;
mod server;

/// Every row, servers first (their patterns are the more specific); the first match wins.
pub(crate) fn rows() -> impl Iterator<Item = &'static Row> {
    server::ROWS.iter().chain(client::ROWS)
}
