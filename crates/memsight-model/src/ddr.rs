//! DDR4/DDR5 organisation and timing (source: `docs/reference/jedec-ddr.md`, which cites JESD79-4/5
//! and vendor datasheets; Cloudflare's DDR4 study's (Shen, 2020) worked examples are its tests).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DRAM generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Generation {
    Ddr4,
    Ddr5,
}

impl std::fmt::Display for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Generation::Ddr4 => "DDR4",
            Generation::Ddr5 => "DDR5",
        })
    }
}

/// One DRAM device (chip): density and data width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Device {
    pub generation: Generation,
    /// Density in Gbit (2, 4, 8, 16, 24, 32).
    pub density_gbit: u32,
    /// Data width in bits (4, 8, 16).
    pub width: u32,
}

/// What a device is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Organisation {
    pub bank_groups: u32,
    pub banks_per_group: u32,
    pub rows: u64,
    pub columns: u64,
    /// Bytes opened by one ACTIVATE (columns × width ÷ 8).
    pub page_bytes: u64,
    /// Rows × columns × banks (the "memory depth").
    pub depth: u64,
}

impl Device {
    /// Bank groups, banks, rows, columns and page size (jedec-ddr.md §1). `None` for combinations
    /// the tables do not cover.
    pub fn organisation(&self) -> Option<Organisation> {
        let (bg, bpg, columns) = match (self.generation, self.width) {
            (Generation::Ddr4, 4 | 8) => (4, 4, 1024),
            (Generation::Ddr4, 16) => (2, 4, 1024),
            (Generation::Ddr5, 4) => (8, if self.density_gbit <= 8 { 2 } else { 4 }, 2048),
            (Generation::Ddr5, 8) => (8, if self.density_gbit <= 8 { 2 } else { 4 }, 1024),
            (Generation::Ddr5, 16) => (4, if self.density_gbit <= 8 { 2 } else { 4 }, 1024),
            _ => return None,
        };
        let banks = (bg * bpg) as u64;
        let bits = self.density_gbit as u64 * (1 << 30);
        let depth = bits / self.width as u64;
        let rows = depth / (columns * banks);
        if rows == 0 || !depth.is_multiple_of(columns * banks) {
            return None;
        }
        Some(Organisation {
            bank_groups: bg,
            banks_per_group: bpg,
            rows,
            columns,
            page_bytes: columns * self.width as u64 / 8,
            depth,
        })
    }
}

/// A module built from ranks of identical devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Module {
    pub device: Device,
    pub ranks: u32,
    /// 72/64 (DDR4 ECC), 80/64 (DDR5 RDIMM: 2 × (32 + 8)), 64/64 (no ECC).
    pub ecc: bool,
}

impl Module {
    /// Data bits per rank: 64 for both generations (DDR5 as two 32-bit sub-channels).
    pub const DATA_BITS: u32 = 64;

    /// Devices per rank for data, and with ECC.
    pub fn chips_per_rank(&self) -> (u32, u32) {
        let data = Self::DATA_BITS / self.device.width;
        let ecc_bits: u32 = match (self.ecc, self.device.generation) {
            (false, _) => 0,
            (true, Generation::Ddr4) => 8,
            (true, Generation::Ddr5) => 16,
        };
        (data, data + ecc_bits.div_ceil(self.device.width))
    }

    /// Total devices on the module (ECC included when present).
    pub fn chips(&self) -> u32 {
        let (data, with_ecc) = self.chips_per_rank();
        self.ranks * if self.ecc { with_ecc } else { data }
    }

    /// Usable capacity in bytes (data devices only).
    pub fn capacity_bytes(&self) -> u64 {
        let (data, _) = self.chips_per_rank();
        self.ranks as u64 * data as u64 * self.device.density_gbit as u64 * (1 << 30) / 8
    }
}

/// A timing limit `max(n clock cycles, ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Limit {
    pub min_clocks: u32,
    pub ns: f64,
}

impl Limit {
    /// The limit in clock cycles at a data rate (tCK = 2000 ÷ MT/s ns), rounded up.
    pub fn clocks_at(&self, mts: u32) -> u32 {
        let tck = 2000.0 / mts as f64;
        self.min_clocks.max((self.ns / tck - 1e-9).ceil() as u32)
    }

    /// The limit in ns at a data rate.
    pub fn ns_at(&self, mts: u32) -> f64 {
        self.clocks_at(mts) as f64 * 2000.0 / mts as f64
    }
}

/// DDR4 tFAW by speed bin and page size (jedec-ddr.md §3; Cloudflare DDR4 study's table for 1600–2400).
pub fn ddr4_tfaw(mts: u32, page_bytes: u64) -> Option<Limit> {
    let col = [1600, 1866, 2133, 2400, 2666, 2933, 3200]
        .iter()
        .position(|&b| b == mts)?;
    let (min_clocks, ns) = match page_bytes {
        512 => (16, [20.0, 17.0, 15.0, 13.0, 12.0, 10.875, 10.0][col]),
        1024 => (20, [25.0, 23.0, 21.0, 21.0, 21.0, 21.0, 21.0][col]),
        2048 => (28, [35.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0][col]),
        _ => return None,
    };
    Some(Limit { min_clocks, ns })
}

/// Theoretical peak in MB/s (10⁶ B/s): channels × 8 bytes × MT/s.
pub fn peak_mbs(channels: u32, mts: u32) -> u64 {
    channels as u64 * 8 * mts as u64
}

/// A fabric link limit in MB/s: links × bytes per clock × MHz (e.g. AMD CCD→IOD: 32 B/clk read,
/// 16 B/clk write at the fabric clock).
pub fn link_mbs(links: u32, bytes_per_clock: u32, mhz: u32) -> u64 {
    links as u64 * bytes_per_clock as u64 * mhz as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn ddr4(density: u32, width: u32) -> Device {
        Device {
            generation: Generation::Ddr4,
            density_gbit: density,
            width,
        }
    }

    /// Cloudflare DDR4 study (Shen, 2020): a 1Gbx8 device is 65536 rows × 1024 columns × 16 banks = 1 Gb deep, 8 Gb total;
    /// a 2Gbx4 device is 131072 × 1024 × 16 = 2 Gb deep, 8 Gb total.
    #[test]
    fn seed_device_depths() {
        let x8 = ddr4(8, 8).organisation().unwrap();
        assert_eq!(
            (x8.rows, x8.columns, x8.bank_groups * x8.banks_per_group),
            (65536, 1024, 16)
        );
        assert_eq!(x8.depth, GIB);
        assert_eq!(x8.depth * 8, 8 * GIB);
        let x4 = ddr4(8, 4).organisation().unwrap();
        assert_eq!((x4.rows, x4.columns), (131072, 1024));
        assert_eq!(x4.depth, 2 * GIB);
        // "With DDR4, both x4 and x8 devices have 4 groups of 4 banks. x16 devices have 2 groups of 4."
        let x16 = ddr4(8, 16).organisation().unwrap();
        assert_eq!((x16.bank_groups, x16.banks_per_group), (2, 4));
    }

    /// Cloudflare DDR4 study (Shen, 2020): 18 x4 devices make a single-rank ECC module, 36 a dual-rank one; with 8 Gb
    /// devices those are 16 GB and 32 GB. x8: 9 devices → 8 GB single rank, 18 → 16 GB dual rank.
    #[test]
    fn seed_module_capacities() {
        let m = |w, r| Module {
            device: ddr4(8, w),
            ranks: r,
            ecc: true,
        };
        assert_eq!((m(4, 1).chips(), m(4, 1).capacity_bytes()), (18, 16 * GIB));
        assert_eq!((m(4, 2).chips(), m(4, 2).capacity_bytes()), (36, 32 * GIB));
        assert_eq!((m(8, 1).chips(), m(8, 1).capacity_bytes()), (9, 8 * GIB));
        assert_eq!((m(8, 2).chips(), m(8, 2).capacity_bytes()), (18, 16 * GIB));
        assert_eq!(m(4, 1).chips_per_rank(), (16, 18));
    }

    /// Cloudflare DDR4 study (Shen, 2020): page size = 1024 columns × width → x4 ½ KB, x8 1 KB, x16 2 KB.
    #[test]
    fn seed_page_sizes() {
        for (w, page) in [(4, 512), (8, 1024), (16, 2048)] {
            assert_eq!(ddr4(8, w).organisation().unwrap().page_bytes, page);
        }
    }

    /// Cloudflare DDR4 study's (Shen, 2020) tFAW table (1600/1866/2133/2400): ½ KB 16CK or 20/17/15/13 ns, 1 KB 20CK or
    /// 25/23/21/21 ns, 2 KB 28CK or 35/30/30/30 ns. DDR4-1600 ½ KB = 20 ns = 16 CK.
    #[test]
    fn seed_tfaw_table() {
        let want = [
            (512, 16, [20.0, 17.0, 15.0, 13.0]),
            (1024, 20, [25.0, 23.0, 21.0, 21.0]),
            (2048, 28, [35.0, 30.0, 30.0, 30.0]),
        ];
        for (page, clocks, ns) in want {
            for (i, bin) in [1600, 1866, 2133, 2400].iter().enumerate() {
                let l = ddr4_tfaw(*bin, page).unwrap();
                assert_eq!((l.min_clocks, l.ns), (clocks, ns[i]), "{bin} {page}");
            }
        }
        let l = ddr4_tfaw(1600, 512).unwrap();
        assert_eq!(l.clocks_at(1600), 16);
        assert!((l.ns_at(1600) - 20.0).abs() < 1e-9);
        // x4 has the shortest window, x16 the longest, at every bin.
        for bin in [1600, 2400, 3200] {
            let f = |p| ddr4_tfaw(bin, p).unwrap().ns_at(bin);
            assert!(f(512) < f(1024) && f(1024) < f(2048));
        }
    }

    /// EPYC 7002 review: 8 channels × 8 B × 2933 MT/s = 187 712 MB/s; 4 CCDs × 32 B × 1333 MHz = 170 624
    /// MB/s read, × 16 B = 85 312 MB/s write.
    #[test]
    fn seed_epyc_ceilings() {
        assert_eq!(peak_mbs(8, 2933), 187_712);
        assert_eq!(link_mbs(4, 32, 1333), 170_624);
        assert_eq!(link_mbs(4, 16, 1333), 85_312);
    }

    #[test]
    fn ddr5_has_two_subchannels_worth_of_ecc_and_more_bank_groups() {
        let d = Device {
            generation: Generation::Ddr5,
            density_gbit: 16,
            width: 4,
        };
        let o = d.organisation().unwrap();
        assert_eq!(
            (o.bank_groups, o.banks_per_group, o.page_bytes),
            (8, 4, 1024)
        );
        let m = Module {
            device: d,
            ranks: 1,
            ecc: true,
        };
        assert_eq!(m.chips_per_rank(), (16, 20), "80-bit RDIMM: 2 × (32 + 8)");
        assert_eq!(m.capacity_bytes(), 32 * GIB);
    }
}

/// Activate, CAS and refresh timings of a device at a speed bin (jedec-ddr.md §2–5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    pub mts: u32,
    /// Burst length (8 for DDR4, 16 for DDR5) and bits per (sub-)channel (64, or 32 for each of
    /// DDR5's two sub-channels): one burst moves 64 B either way.
    pub burst_length: u32,
    pub channel_bits: u32,
    pub trrd_s: Limit,
    pub trrd_l: Limit,
    pub tccd_s: Limit,
    pub tccd_l: Limit,
    pub tfaw: Limit,
    /// All-bank refresh time and refresh interval, ns.
    pub trfc1_ns: Option<f64>,
    pub trefi_ns: f64,
}

impl Timings {
    /// Share of time a rank is refreshing (tRFC1 ÷ tREFI).
    pub fn refresh_overhead(&self) -> Option<f64> {
        self.trfc1_ns.map(|r| r / self.trefi_ns)
    }

    /// Closed-page ceiling of one rank: 4 ACTIVATEs per tFAW, one 64 B burst each, MB/s.
    pub fn act_limited_mbs(&self) -> f64 {
        4.0 * 64.0 / self.tfaw.ns_at(self.mts) * 1000.0
    }
}

/// Timings for a device at `mts`; DDR4 bins 1600–3200 and DDR5 bins 3200–6400.
pub fn timings(device: &Device, mts: u32) -> Option<Timings> {
    let page = device.organisation()?.page_bytes;
    let l = |min_clocks, ns| Limit { min_clocks, ns };
    match device.generation {
        Generation::Ddr4 => {
            let col = [1600, 1866, 2133, 2400, 2666, 2933, 3200]
                .iter()
                .position(|&b| b == mts)?;
            let big = page >= 2048;
            let trrd_s = if big {
                [6.0, 5.3, 5.3, 5.3, 5.3, 5.3, 5.3]
            } else {
                [5.0, 4.2, 3.7, 3.3, 3.0, 2.7, 2.5]
            }[col];
            let trrd_l = if big {
                [7.5, 6.4, 6.4, 6.4, 6.4, 6.4, 6.4]
            } else {
                [6.0, 5.3, 5.3, 4.9, 4.9, 4.9, 4.9]
            }[col];
            let tccd_l = [6.25, 5.355, 5.355, 5.0, 5.0, 5.0, 5.0][col];
            let trfc = match device.density_gbit {
                2 => Some(160.0),
                4 => Some(260.0),
                8 => Some(350.0),
                16 => Some(550.0),
                _ => None,
            };
            Some(Timings {
                mts,
                burst_length: 8,
                channel_bits: 64,
                trrd_s: l(4, trrd_s),
                trrd_l: l(4, trrd_l),
                tccd_s: l(4, 0.0),
                tccd_l: l(4, tccd_l),
                tfaw: ddr4_tfaw(mts, page)?,
                trfc1_ns: trfc,
                trefi_ns: 7800.0,
            })
        }
        Generation::Ddr5 => {
            if !(3200..=6400).contains(&mts) {
                return None;
            }
            let trfc = match device.density_gbit {
                8 => Some(195.0),
                16 => Some(295.0),
                24 | 32 => Some(410.0),
                _ => None,
            };
            Some(Timings {
                mts,
                burst_length: 16,
                channel_bits: 32,
                trrd_s: l(8, 0.0),
                trrd_l: l(8, 5.0),
                tccd_s: l(8, 0.0),
                tccd_l: l(8, 5.0),
                tfaw: if page >= 2048 { l(40, 0.0) } else { l(32, 0.0) },
                trfc1_ns: trfc,
                trefi_ns: 3900.0,
            })
        }
    }
}

#[cfg(test)]
mod timing_tests {
    use super::*;

    fn dev(generation: Generation, density_gbit: u32, width: u32) -> Device {
        Device {
            generation,
            density_gbit,
            width,
        }
    }

    /// jedec-ddr.md §3: DDR4-3200 x8 tFAW 21 ns = 34 nCK, tRRD_L 4.9 ns = 8 nCK; DDR4-2666 x16
    /// tRRD_S 5.3 ns = 8 nCK; DDR4-1600 x4 tFAW 16 nCK.
    #[test]
    fn ddr4_clock_counts_match_the_table() {
        let t = timings(&dev(Generation::Ddr4, 8, 8), 3200).unwrap();
        assert_eq!(
            (
                t.tfaw.clocks_at(3200),
                t.trrd_l.clocks_at(3200),
                t.tccd_l.clocks_at(3200)
            ),
            (34, 8, 8)
        );
        let t = timings(&dev(Generation::Ddr4, 8, 16), 2666).unwrap();
        assert_eq!(t.trrd_s.clocks_at(2666), 8);
        let t = timings(&dev(Generation::Ddr4, 8, 4), 1600).unwrap();
        assert_eq!(t.tfaw.clocks_at(1600), 16);
    }

    /// §4: DDR5-4800 tCCD_L 12, tRRD_L 12, tFAW(1 KB) 32 nCK = 13.33 ns; DDR5-6400 tCCD_L 16.
    #[test]
    fn ddr5_rules() {
        let t = timings(&dev(Generation::Ddr5, 16, 4), 4800).unwrap();
        assert_eq!(
            (
                t.tccd_l.clocks_at(4800),
                t.trrd_l.clocks_at(4800),
                t.tfaw.clocks_at(4800)
            ),
            (12, 12, 32)
        );
        assert!((t.tfaw.ns_at(4800) - 13.333).abs() < 0.01);
        assert_eq!(
            timings(&dev(Generation::Ddr5, 16, 4), 6400)
                .unwrap()
                .tccd_l
                .clocks_at(6400),
            16
        );
        assert_eq!((t.burst_length, t.channel_bits), (16, 32));
    }

    /// §5–6: refresh overhead DDR4 16 Gb 550/7800 = 7.1%, DDR5 16 Gb 295/3900 = 7.6%; DDR4-3200 x8
    /// closed-page ceiling 4 × 64 B per tFAW: the reference's ≈ 12.2 GB/s uses 21 ns; the clock-
    /// rounded window is 34 nCK = 21.25 ns, hence 12.05 GB/s.
    #[test]
    fn refresh_and_activate_ceilings() {
        let d4 = timings(&dev(Generation::Ddr4, 16, 8), 3200).unwrap();
        assert!((d4.refresh_overhead().unwrap() - 0.0705).abs() < 0.001);
        let d5 = timings(&dev(Generation::Ddr5, 16, 4), 4800).unwrap();
        assert!((d5.refresh_overhead().unwrap() - 0.0756).abs() < 0.001);
        let act = timings(&dev(Generation::Ddr4, 8, 8), 3200)
            .unwrap()
            .act_limited_mbs();
        assert!((act - 4.0 * 64.0 / 21.25 * 1000.0).abs() < 1.0, "{act}");
        assert!(
            (act - 12_190.0).abs() < 200.0,
            "close to the reference's 12.2 GB/s: {act}"
        );
    }
}
