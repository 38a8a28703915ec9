//! What the sweep should look for, before it runs: the linear-interleave model of every socket
//! (from the DIMM inventory or given), the dip periods it predicts for the kernels swept, and an
//! OFFSET range that can see them (at least three periods of the longest, a step fine enough for
//! the shortest).

use memsight_core::units::format_bytes;
use memsight_core::{Error, Result};
use memsight_model::rowbuffer::Interleave;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Kernel;

/// Where the linear-interleave model comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSource {
    /// Given in full (banks, ranks, channels, rank row bytes).
    Given(Interleave),
    /// From the DIMM inventory: this dmidecode file, or this machine's SMBIOS tables.
    Inventory(Option<std::path::PathBuf>),
}

/// The interleave model of every socket, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelInfo {
    /// One model per socket, in the inventory's socket order (one for a given model).
    pub sockets: Vec<Interleave>,
    pub source: String,
}

/// The periods a sweep looks for: dips recur every `shortest` and every `longest` of OFFSET.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Periods {
    pub shortest: u64,
    pub longest: u64,
}

/// Detection calls dips regular from three on: the range must hold three periods.
pub const PERIODS_IN_RANGE: u64 = 3;
/// Points per shortest period by default (the Catamount paper (Ferreira et al., CUG 2008): 8 KiB steps, 128 KiB period).
pub const POINTS_PER_PERIOD: u64 = 16;
/// The bank cycle assumed without a model: 2 MiB, a COPY period of 1 MiB, as the model gives
/// for common 2-socket DDR4 servers (16 banks × 2 ranks × 8 channels × 8 KiB rows).
pub const ASSUMED_CYCLE: u64 = 2 << 20;
/// At most this many offsets per sweep.
pub const MAX_POINTS: u64 = 4096;

/// Array strides between the pairs of arrays a kernel streams together: COPY reads `a` and
/// writes `c` (two strides apart); SCALE reads `c` and writes `b` (one); ADD and TRIAD touch all
/// three (one and two). The dips of a pair recur every bank cycle ÷ strides of OFFSET.
/// HPCCG streams neighbouring arrays (values and columns, `p` and `Ap`, `r` and `p`) and arrays
/// two apart (`x` and `p`, `r` and `Ap`): one and two.
pub fn gaps(k: Kernel) -> &'static [u32] {
    match k {
        Kernel::Copy => &[2],
        Kernel::Scale => &[1],
        Kernel::Add | Kernel::Triad | Kernel::Hpccg => &[1, 2],
    }
}

impl ModelInfo {
    /// From the arguments or the DIMM inventory; `None` when the inventory cannot be read or
    /// decoded.
    pub fn resolve(src: &ModelSource) -> Option<ModelInfo> {
        let file = match src {
            ModelSource::Given(i) => {
                return Some(ModelInfo {
                    sockets: vec![*i],
                    source: "--banks/--ranks/--channels/--row-bytes".into(),
                });
            }
            ModelSource::Inventory(file) => file,
        };
        let (inventory, source) = crate::measure::inventory::read(file.as_deref()).ok()?;
        // The DRAM modules' part numbers, decoded (persistent modules are no DRAM to model).
        let decoded: Vec<memsight_model::partnum::Decoded> = inventory
            .populated()
            .filter(|d| !d.non_volatile)
            .filter_map(|d| {
                d.part_number
                    .as_deref()
                    .and_then(memsight_model::partnum::decode)
            })
            .collect();
        let m = decoded.first()?;
        let ceilings = memsight_model::platform::ceilings(&inventory, None, None);
        let module = memsight_model::ddr::Module {
            device: memsight_model::ddr::Device {
                generation: m.generation,
                density_gbit: m.density_gbit,
                width: m.device_width,
            },
            ranks: m.ranks,
            ecc: true,
        };
        let mut sockets = Vec::new();
        let mut words = Vec::new();
        for s in &ceilings.sockets {
            let channels = s.channels_used.max(1);
            let dpc = (s.dimms / channels).max(1);
            sockets.push(Interleave::from_module(&module, dpc, channels)?);
            words.push(format!(
                "{}: {dpc} DIMM(s) per channel on {channels} channel(s)",
                s.array
            ));
        }
        let distinct: Vec<String> = decoded
            .iter()
            .map(|x| x.organisation())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mixed = if distinct.len() > 1 {
            format!(
                "; modules differ ({}): the model uses the first",
                distinct.join(", ")
            )
        } else {
            String::new()
        };
        Some(ModelInfo {
            sockets,
            source: format!(
                "{}: {} × {} ({}){mixed}",
                source,
                m.organisation(),
                format_bytes(m.capacity_bytes),
                words.join("; ")
            ),
        })
    }

    /// Whether the sockets are populated differently (their models differ).
    pub fn sockets_differ(&self) -> bool {
        self.sockets.windows(2).any(|w| w[0] != w[1])
    }

    /// The shortest and longest dip period over the sockets and the kernels swept.
    pub fn periods(&self, kernels: &[Kernel]) -> Option<Periods> {
        let all: Vec<u64> = self
            .sockets
            .iter()
            .flat_map(|m| {
                kernels
                    .iter()
                    .flat_map(|&k| gaps(k).iter().map(|&g| m.offset_period(g)))
            })
            .filter(|&p| p > 0)
            .collect();
        Some(Periods {
            shortest: *all.iter().min()?,
            longest: *all.iter().max()?,
        })
    }
}

/// Periods without a model: those of [`ASSUMED_CYCLE`] for the kernels swept.
pub fn assumed_periods(kernels: &[Kernel]) -> Periods {
    let gaps: Vec<u32> = kernels.iter().flat_map(|&k| gaps(k).to_vec()).collect();
    Periods {
        shortest: ASSUMED_CYCLE / *gaps.iter().max().unwrap_or(&2) as u64,
        longest: ASSUMED_CYCLE / *gaps.iter().min().unwrap_or(&2) as u64,
    }
}

/// The default OFFSET range: 0 to [`PERIODS_IN_RANGE`] longest periods, in steps of the shortest
/// period ÷ `points_per_period` (a multiple of 64 B so the vector kernels stay aligned, and
/// coarser when the range would exceed [`MAX_POINTS`]).
pub fn default_offsets(p: Periods, points_per_period: u64) -> Vec<u64> {
    let end = PERIODS_IN_RANGE * p.longest;
    let fine = (p.shortest / points_per_period.max(1)) / 64 * 64;
    let step = fine.max(64).max((end / (MAX_POINTS - 2)).div_ceil(64) * 64);
    // The last point reaches the end: a range short of three periods by a step could not show
    // the third dip.
    (0..=end.div_ceil(step)).map(|i| i * step).collect()
}

/// An OFFSET range `START..END/STEP` (bytes; every offset a multiple of 8 B, one element).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetRange {
    pub start: u64,
    pub end: u64,
    pub step: u64,
}

impl std::fmt::Display for OffsetRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}/{}", self.start, self.end, self.step)
    }
}

impl OffsetRange {
    /// The offsets of the range, checked.
    pub fn offsets(&self) -> Result<Vec<u64>> {
        let OffsetRange { start, end, step } = *self;
        if step == 0 || step % 8 != 0 || start % 8 != 0 || end < start {
            return Err(Error::input(format!(
                "--offsets {self}: START..END/STEP with END ≥ START and START and STEP multiples of 8 B, e.g. 0..1M/8K"
            )));
        }
        let n = (end - start) / step + 1;
        if n > MAX_POINTS {
            return Err(Error::input(format!(
                "--offsets {self} gives {n} points; at most {MAX_POINTS} (use a larger step)"
            )));
        }
        Ok((0..n).map(|i| start + i * step).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddr4_2r(channels: u32) -> Interleave {
        Interleave {
            banks_per_rank: 16,
            ranks_per_channel: 2,
            channels,
            rank_row_bytes: 8 << 10,
        }
    }

    #[test]
    fn offsets_at_any_multiple_of_8_bytes() {
        let r = |start, end, step| OffsetRange { start, end, step }.offsets();
        assert_eq!(
            r(0, 16 << 10, 4 << 10).unwrap(),
            vec![0, 4096, 8192, 12288, 16384]
        );
        assert_eq!(r(0, 128, 64).unwrap(), vec![0, 64, 128]);
        assert_eq!(r(8, 32, 8).unwrap(), vec![8, 16, 24, 32]);
        assert!(r(0, 1 << 20, 100).is_err(), "not a multiple of 8");
        assert!(r(4, 1 << 20, 8).is_err(), "start not a multiple of 8");
        assert!(r(1 << 20, 0, 4096).is_err());
        assert!(r(0, 1 << 30, 64).is_err(), "too many points");
    }

    #[test]
    fn periods_follow_the_arrays_each_kernel_pairs() {
        let m = ModelInfo {
            sockets: vec![ddr4_2r(8)],
            source: String::new(),
        };
        // Bank cycle 16 × 2 × 8 × 8 KiB = 2 MiB.
        let copy = m.periods(&[Kernel::Copy]).unwrap();
        assert_eq!((copy.shortest, copy.longest), (1 << 20, 1 << 20));
        let all = m.periods(&Kernel::ALL).unwrap();
        assert_eq!((all.shortest, all.longest), (1 << 20, 2 << 20));
        assert_eq!(assumed_periods(&Kernel::ALL), all);
    }

    #[test]
    fn the_default_range_holds_three_longest_periods_finely() {
        let p = Periods {
            shortest: 1 << 20,
            longest: 2 << 20,
        };
        let o = default_offsets(p, POINTS_PER_PERIOD);
        assert_eq!(*o.last().unwrap(), 6 << 20);
        assert_eq!(o[1], 64 << 10, "16 points per shortest period");
        // A step that does not divide the range still reaches its end.
        let odd = default_offsets(
            Periods {
                shortest: 1 << 20,
                longest: 1 << 20,
            },
            6,
        );
        assert!(*odd.last().unwrap() >= 3 << 20);
        assert!(o.iter().all(|x| x % 64 == 0));
        // A tiny period is not resolved below 64 B, and a huge one is capped at MAX_POINTS.
        let tiny = default_offsets(
            Periods {
                shortest: 256,
                longest: 256,
            },
            16,
        );
        assert_eq!(tiny[1], 64);
        let huge = default_offsets(
            Periods {
                shortest: 8 << 20,
                longest: 1 << 30,
            },
            16,
        );
        assert!(huge.len() as u64 <= MAX_POINTS);
        assert!(*huge.last().unwrap() >= 3 << 30);
    }

    #[test]
    fn differing_sockets_are_noticed() {
        let m = ModelInfo {
            sockets: vec![ddr4_2r(8), ddr4_2r(6)],
            source: String::new(),
        };
        assert!(m.sockets_differ());
        // The longest period comes from the fuller socket, the shortest from the other.
        let p = m.periods(&[Kernel::Copy]).unwrap();
        assert_eq!(p.longest, 1 << 20);
        assert_eq!(p.shortest, 3 << 18);
    }
}
