//! Where DRAM row-buffer conflicts recur, from the memory organisation.
//!
//! A memory controller that interleaves physical addresses linearly fills one row of every bank
//! of every rank of every channel before it returns to the first bank: two addresses a multiple
//! of `banks × ranks × channels × row bytes` apart fall in the same bank, usually in different
//! rows, and a kernel streaming both conflicts on every access (the Catamount paper (Ferreira et al., CUG 2008)). STREAM places
//! its arrays `N + OFFSET` elements apart, so COPY's source and destination (`a` and `c`, two gaps
//! apart) move twice as fast as OFFSET: the dips recur every cycle ÷ 2 of OFFSET. TRIAD touches all
//! three arrays (gaps of one and two), so its dips recur with the same period but less regularly.
//!
//! Modern controllers hash bank bits with higher address bits (XOR), which breaks this simple
//! recurrence; the prediction is labelled as the linear-interleave model and compared with what
//! the sweep measures.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ddr::{Generation, Module};

/// How a memory system interleaves banks, as the linear model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Interleave {
    /// Banks in one rank (DDR2: 4–8, DDR4: 16, DDR5: 32 for 16–32 Gbit devices).
    pub banks_per_rank: u32,
    /// Ranks on one channel (ranks per DIMM × DIMMs per channel).
    pub ranks_per_channel: u32,
    /// Channels interleaved below the row size (or ganged, as the Catamount paper's 128-bit Opteron bus).
    pub channels: u32,
    /// Bytes one ACTIVATE opens across the rank: device page × data devices per rank.
    pub rank_row_bytes: u64,
}

impl Interleave {
    /// Bytes after which the same bank recurs: banks × ranks × channels × row.
    pub fn bank_cycle_bytes(&self) -> u64 {
        self.banks_per_rank as u64
            * self.ranks_per_channel as u64
            * self.channels as u64
            * self.rank_row_bytes
    }

    /// Period of the dips in a STREAM-style OFFSET sweep when the two conflicting arrays are
    /// `gaps` array-strides apart (COPY's `a` and `c`: 2).
    pub fn offset_period(&self, gaps: u32) -> u64 {
        self.bank_cycle_bytes() / gaps.max(1) as u64
    }

    /// The model for identical modules: `dimms_per_channel` modules on each of `channels`
    /// channels. DDR5 modules hold two independent 32-bit sub-channels: they count as channels
    /// with half the row each (the product is the same).
    pub fn from_module(module: &Module, dimms_per_channel: u32, channels: u32) -> Option<Self> {
        let org = module.device.organisation()?;
        let (data_chips, _) = module.chips_per_rank();
        let (channels, chips) = match module.device.generation {
            Generation::Ddr4 => (channels, data_chips),
            Generation::Ddr5 => (channels * 2, data_chips / 2),
        };
        Some(Interleave {
            banks_per_rank: org.bank_groups * org.banks_per_group,
            ranks_per_channel: module.ranks * dimms_per_channel.max(1),
            channels,
            rank_row_bytes: org.page_bytes * chips as u64,
        })
    }
}

/// A bank mapping as XOR functions of physical address bits, the form DRAMA and memsight's probe
/// report: the parity of each function's bits is one bit of the bank index (bank, bank group,
/// rank or channel), and the row is the address from `row_bit` up. Linear interleaving is the
/// special case of one bit per function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankHash {
    pub functions: Vec<Vec<u32>>,
    pub row_bit: u32,
}

impl BankHash {
    /// The linear model as a hash: the bank index is the address bits between the rank row and
    /// the bank cycle.
    pub fn linear(i: &Interleave) -> BankHash {
        let lo = i.rank_row_bytes.trailing_zeros();
        let hi = i.bank_cycle_bytes().trailing_zeros();
        BankHash {
            functions: (lo..hi).map(|b| vec![b]).collect(),
            row_bit: hi,
        }
    }

    /// The bank index of an address.
    pub fn bank(&self, addr: u64) -> u64 {
        self.functions
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let parity = f.iter().map(|&b| (addr >> b) & 1).fold(0, |a, x| a ^ x);
                parity << i
            })
            .sum()
    }

    /// Whether `a` and `b` fall in the same bank and different rows: a row-buffer conflict when
    /// both are streamed.
    pub fn conflicts(&self, a: u64, b: u64) -> bool {
        self.bank(a) == self.bank(b) && a >> self.row_bit != b >> self.row_bit
    }

    /// Share of the cache lines of `span` bytes from address 0 whose partner `distance` bytes
    /// further conflicts with them (one line in 64 sampled: the functions use bits ≥ 6).
    pub fn conflict_share(&self, distance: u64, span: u64) -> f64 {
        let step = 64 * 64;
        let n = (span / step).max(1);
        let hits = (0..n)
            .filter(|k| self.conflicts(k * step, k * step + distance))
            .count();
        hits as f64 / n as f64
    }
}

/// `13,17;14,18` → XOR functions; `None` when it does not parse or a bit is not 6..63.
pub fn parse_functions(text: &str) -> Option<Vec<Vec<u32>>> {
    text.split(';')
        .map(|f| {
            f.split(',')
                .map(|b| b.trim().parse().ok().filter(|b| (6..64).contains(b)))
                .collect::<Option<Vec<u32>>>()
                .filter(|v| !v.is_empty())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ddr::Device;

    #[test]
    fn the_catamount_seed_predicts_128_kib() {
        // Cray XT4 node: two dual-rank DDR2-667 DIMMs, one per channel, channels ganged into a
        // 128-bit bus (aggregate row 16 KiB, 8 KiB per channel), 8 banks per rank: "16 banks".
        let m = Interleave {
            banks_per_rank: 8,
            ranks_per_channel: 2,
            channels: 2,
            rank_row_bytes: 8 << 10,
        };
        assert_eq!(m.bank_cycle_bytes(), 256 << 10);
        // COPY uses a and c, two array strides apart: dips every 128 KiB of OFFSET.
        assert_eq!(m.offset_period(2), 128 << 10);
    }

    #[test]
    fn ddr4_and_ddr5_modules() {
        // 2Rx8 DDR4 16 Gbit: 16 banks, 1 KiB page × 8 chips = 8 KiB per rank row.
        let ddr4 = Module {
            device: Device {
                generation: Generation::Ddr4,
                density_gbit: 16,
                width: 8,
            },
            ranks: 2,
            ecc: true,
        };
        let m = Interleave::from_module(&ddr4, 1, 8).unwrap();
        assert_eq!(m.banks_per_rank, 16);
        assert_eq!(m.rank_row_bytes, 8 << 10);
        assert_eq!(m.bank_cycle_bytes(), 16 * 2 * 8 * (8 << 10));
        // x4: half the page, twice the chips: the same rank row.
        let x4 = Module {
            device: Device {
                width: 4,
                ..ddr4.device
            },
            ..ddr4
        };
        assert_eq!(
            Interleave::from_module(&x4, 1, 8).unwrap().rank_row_bytes,
            8 << 10
        );
        // DDR5 1Rx8 16 Gbit: 32 banks; two sub-channels of 4 data chips × 1 KiB.
        let ddr5 = Module {
            device: Device {
                generation: Generation::Ddr5,
                density_gbit: 16,
                width: 8,
            },
            ranks: 1,
            ecc: true,
        };
        let m = Interleave::from_module(&ddr5, 1, 12).unwrap();
        assert_eq!(m.banks_per_rank, 32);
        assert_eq!(m.channels, 24);
        assert_eq!(m.rank_row_bytes, 4 << 10);
    }

    #[test]
    fn the_linear_model_as_a_hash_conflicts_every_bank_cycle() {
        let m = Interleave {
            banks_per_rank: 16,
            ranks_per_channel: 2,
            channels: 8,
            rank_row_bytes: 8 << 10,
        };
        let h = BankHash::linear(&m);
        assert_eq!(
            h.functions.len(),
            8,
            "256 bank × rank × channel combinations"
        );
        assert_eq!(h.row_bit, 21);
        let span = 64 << 20;
        assert!(h.conflict_share(2 << 20, span) > 0.99, "one cycle apart");
        assert!(h.conflict_share(6 << 20, span) > 0.99);
        assert!(
            h.conflict_share(1 << 20, span) < 0.01,
            "half a cycle: other banks"
        );
        assert!(h.conflict_share(4096, span) < 0.01, "same row");
    }

    #[test]
    fn an_xor_hash_moves_the_conflicts() {
        // Bank bit 0 = a13 ^ a17, bank bit 1 = a14 ^ a18; rows from bit 17.
        let h = BankHash {
            functions: parse_functions("13,17; 14,18").unwrap(),
            row_bit: 17,
        };
        assert!(
            !h.conflicts(0, 1 << 17),
            "flipping a row bit alone changes the bank"
        );
        assert!(
            h.conflicts(0, (1 << 17) | (1 << 13)),
            "with its partner: same bank, new row"
        );
        assert!(!h.conflicts(0, 1 << 13), "a bank bit alone");
        assert!(parse_functions("5,13").is_none() && parse_functions("x").is_none());
        assert!(parse_functions("13;").is_none());
    }
}
