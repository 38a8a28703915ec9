//! DRAM device power from datasheet currents, the method of Micron's technical note TN-40-07
//! ("Calculating Memory Power for DDR4 SDRAM"): background power from the standby currents
//! (IDD2N precharge standby when idle, IDD3N active standby under load), refresh from IDD5B over
//! tRFC per tREFI, activate energy from IDD0 over tRC less the standby it replaces, and read and
//! write burst power from IDD4R/IDD4W above IDD3N for the share of time the data bus carries
//! them; VPP (wordline pump) currents likewise. Each access engages every device of one rank.
//! Not counted: the DQ drivers and on-die termination (board-dependent), the RDIMM's register and
//! the PMIC of DDR5 modules. Cloudflare's DDR4 study (Shen, 2020) quoted Micron: a 32 GB 2Rx8
//! module of 16 Gb dies uses about 31% less power than a 2Rx4 module of 8 Gb dies.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ddr::{Device, Generation};

/// Datasheet currents of one device, mA, at the speed given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Currents {
    pub idd0: f64,
    pub ipp0: f64,
    pub idd2n: f64,
    pub idd3n: f64,
    pub ipp3n: f64,
    pub idd4r: f64,
    pub idd4w: f64,
    pub idd5b: f64,
    /// The speed these limits are given for, MT/s.
    pub mts: u32,
    pub source: String,
}

const VDD: f64 = 1.2;
const VPP: f64 = 2.5;
/// tREFI at normal temperature, ns (JEDEC JESD79-4).
const TREFI_NS: f64 = 7800.0;
/// tRAS and tRC at DDR4-2400 (JESD79-4 speed bin 2400R: 32 ns, 45.32 ns).
const TRAS_NS: f64 = 32.0;
const TRC_NS: f64 = 45.32;

const MICRON_8GB: &str =
    "Micron 8Gb DDR4 SDRAM data sheet (MT40A2G4, MT40A1G8), IDD limits at DDR4-2400";

/// The currents memsight has a datasheet for: DDR4 8 Gb x4 and x8.
fn datasheet(d: &Device) -> Option<Currents> {
    if d.generation != Generation::Ddr4 || d.density_gbit != 8 {
        return None;
    }
    let x4 = Currents {
        idd0: 43.0,
        ipp0: 3.0,
        idd2n: 34.0,
        idd3n: 38.0,
        ipp3n: 3.0,
        idd4r: 110.0,
        idd4w: 103.0,
        idd5b: 250.0,
        mts: 2400,
        source: MICRON_8GB.to_string(),
    };
    match d.width {
        4 => Some(x4),
        8 => Some(Currents {
            idd0: 48.0,
            idd3n: 43.0,
            idd4r: 135.0,
            idd4w: 123.0,
            ..x4
        }),
        _ => None,
    }
}

/// tRFC1 by density, ns (JESD79-4: 8 Gb 350 ns, 16 Gb 550 ns).
fn trfc_ns(density_gbit: u32) -> Option<f64> {
    match density_gbit {
        2 => Some(160.0),
        4 => Some(260.0),
        8 => Some(350.0),
        16 => Some(550.0),
        _ => None,
    }
}

/// The currents to use for a device, and the assumption made when its own are not in the
/// table: a 16 Gb DDR4 die of the same width takes the 8 Gb die's standby, activate and burst
/// currents (its refresh is longer: JEDEC's tRFC for 16 Gb is used).
pub fn currents(d: &Device) -> Option<(Currents, Option<String>)> {
    if let Some(c) = datasheet(d) {
        return Some((c, None));
    }
    if d.generation == Generation::Ddr4 && d.density_gbit == 16 {
        let c = datasheet(&Device {
            density_gbit: 8,
            ..*d
        })?;
        return Some((
            c,
            Some(format!(
                "no 16 Gb x{} currents in the table: the 8 Gb x{} die's are used, with the 16 Gb refresh time (tRFC 550 ns)",
                d.width, d.width
            )),
        ));
    }
    None
}

/// A module's estimated power.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModulePower {
    /// All ranks in precharge standby, refreshing, W.
    pub idle_w: f64,
    /// At `at_mbs`, W.
    pub loaded_w: f64,
    /// The module's share of traffic the loaded figure assumes, MB/s.
    pub at_mbs: f64,
    /// Share of that traffic that is reads.
    pub read_share: f64,
    pub currents: Currents,
    pub assumption: Option<String>,
}

/// Estimates one module of `ranks` ranks of `chips` devices in all, running at `mts` and
/// carrying `mbs` MB/s of which `read_share` are reads, each 64-byte access opening a row
/// (random access). The currents are the table's speed's; the bus share is the module's own.
pub fn module(
    d: &Device,
    (ranks, chips): (u32, u32),
    mts: u32,
    mbs: f64,
    read_share: f64,
) -> Option<ModulePower> {
    let (c, assumption) = currents(d)?;
    let trfc = trfc_ns(d.density_gbit)?;
    let n = f64::from(chips);
    let per_rank = n / f64::from(ranks.max(1));
    let ma = 1e-3;
    let refresh = n * (c.idd5b - c.idd3n) * ma * VDD * trfc / TREFI_NS;
    let idle_w = n * (c.idd2n * ma * VDD + c.ipp3n * ma * VPP) + refresh;
    // Under load the banks stay open: active standby for every device.
    let background = n * (c.idd3n * ma * VDD + c.ipp3n * ma * VPP) + refresh;
    // The data bus of a DDR4 channel moves 8 bytes per transfer; a module's traffic keeps one
    // rank bursting for this share of the time.
    let busy = (mbs / (8.0 * f64::from(mts.max(1)))).min(1.0);
    let bursts = per_rank
        * ma
        * VDD
        * busy
        * (read_share * (c.idd4r - c.idd3n) + (1.0 - read_share) * (c.idd4w - c.idd3n));
    // One ACTIVATE per 64-byte access: its energy is IDD0 over tRC less the standby current
    // the same time would have drawn (TN-40-07's P(ACT)), for every device of the rank.
    let act_j = ma
        * 1e-9
        * ((c.idd0 * TRC_NS - c.idd3n * TRAS_NS - c.idd2n * (TRC_NS - TRAS_NS)) * VDD
            + (c.ipp0 - c.ipp3n) * TRC_NS * VPP);
    let acts_per_s = mbs * 1e6 / 64.0;
    let activates = per_rank * act_j * acts_per_s;
    Some(ModulePower {
        idle_w,
        loaded_w: background + bursts + activates,
        at_mbs: mbs,
        read_share,
        currents: c,
        assumption,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(density_gbit: u32, width: u32) -> Device {
        Device {
            generation: Generation::Ddr4,
            density_gbit,
            width,
        }
    }

    #[test]
    fn the_studys_micron_claim_holds_in_direction_and_rough_size() {
        // 32 GB RDIMMs: 2Rx8 of 16 Gb (18 devices) against 2Rx4 of 8 Gb (36 devices), idle and
        // at 10 GB/s of 2:1 reads.
        let a = module(&dev(16, 8), (2, 18), 3200, 10_000.0, 2.0 / 3.0).unwrap();
        let b = module(&dev(8, 4), (2, 36), 3200, 10_000.0, 2.0 / 3.0).unwrap();
        assert!(a.assumption.is_some() && b.assumption.is_none());
        for (x, y) in [(a.idle_w, b.idle_w), (a.loaded_w, b.loaded_w)] {
            let saving = 1.0 - x / y;
            assert!((0.2..0.55).contains(&saving), "{x} vs {y}: {saving}");
        }
        // Load costs power, and a module of twice the devices idles at about twice the power.
        assert!(b.loaded_w > b.idle_w);
        let b8 = module(&dev(8, 8), (2, 18), 3200, 0.0, 1.0).unwrap();
        assert!((b.idle_w / b8.idle_w - 2.0).abs() < 0.3);
        // Plausible magnitudes for a DDR4 RDIMM's devices: a few watts.
        assert!((1.0..8.0).contains(&b.loaded_w), "{}", b.loaded_w);
    }

    #[test]
    fn parts_without_currents_get_no_estimate() {
        assert!(module(&dev(8, 16), (1, 4), 3200, 0.0, 1.0).is_none());
        assert!(
            module(
                &Device {
                    generation: Generation::Ddr5,
                    density_gbit: 16,
                    width: 4
                },
                (2, 40),
                4800,
                0.0,
                1.0
            )
            .is_none()
        );
    }
}
