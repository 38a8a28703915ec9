//! Figure keys, typed: one variant per family of figure, with the dimensions it varies over.
//! A figure holds its [`Key`]; it travels as the key's text form (`bandwidth/read/2t`), written
//! by `Display` and read back by [`Key::read`] (serde goes through both), so that results
//! recorded before the type existed, and a newer memsight's keys ([`Key::Unread`]), read back
//! as written. The CSV columns and Prometheus labels come from [`Key::dims`]. The text form, its
//! parse (`parse.rs`) and the selectors references use (`pattern.rs`) live in this module only:
//! `scripts/check-layers.py` fails on code elsewhere that takes key text apart.

use std::fmt;

use memsight_core::units::{format_bytes, parse_size};

use crate::dims::{Dim, Dims};

mod parse;
mod pattern;

pub use pattern::selects;

/// What a cache-line contention figure measures: a closed set, named as the key writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoherenceTest {
    /// Every thread incrementing one counter.
    Counter,
    /// Two threads incrementing their own words (plain load and store), adjacent in one line.
    AdjacentWords,
    /// The same, each word in a line of its own.
    PaddedWords,
    /// Two threads incrementing their own words atomically, adjacent in one line.
    AdjacentAtomic,
    /// The same, each word in a line of its own.
    PaddedAtomic,
    /// Line-sized messages from one core to another.
    Ring,
}

impl CoherenceTest {
    pub const ALL: [CoherenceTest; 6] = [
        CoherenceTest::Counter,
        CoherenceTest::AdjacentWords,
        CoherenceTest::PaddedWords,
        CoherenceTest::AdjacentAtomic,
        CoherenceTest::PaddedAtomic,
        CoherenceTest::Ring,
    ];

    /// Its name in a key.
    pub fn name(self) -> &'static str {
        match self {
            CoherenceTest::Counter => "counter",
            CoherenceTest::AdjacentWords => "adjacent-words",
            CoherenceTest::PaddedWords => "padded-words",
            CoherenceTest::AdjacentAtomic => "adjacent-atomic",
            CoherenceTest::PaddedAtomic => "padded-atomic",
            CoherenceTest::Ring => "ring",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// A working-set or block size in a key, as the key writes it: compactly (`4.75KiB`, `64MiB`),
/// three significant digits as [`format_bytes`] gives them. The text is kept as read, so that a
/// key written by an earlier version (`19.0MiB`) reads back to the same text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Size(String);

impl Size {
    /// The key's text for `bytes`.
    pub fn of(bytes: u64) -> Size {
        Size(format_bytes(bytes).replace(' ', ""))
    }

    /// The bytes the text says.
    pub fn bytes(&self) -> u64 {
        parse_size(&self.0).unwrap_or(0)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a tiers or NUMA figure's memory was: a node (`node1`), or a word (`interleaved`,
/// `dax`, a column label without its spaces). Labels give a node by its number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place(pub String);

/// A figure's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// A plateau of one CPU's latency ladder: `latency/cpu0/level/L2`, `…/level/memory`.
    LatencyLevel { cpu: u64, level: String },
    /// One working set of a ladder: `latency/cpu0/64MiB`.
    LatencyPoint { cpu: u64, size: Size },
    /// The TLB cost at one working set: `tlb/cpu0/64MiB`.
    Tlb { cpu: u64, size: Size },
    /// Memory-level parallelism with `chains` chains: `mlp/cpu0/k4`.
    Mlp { cpu: u64, chains: u64 },
    /// A test on a team: `bandwidth/read/2t`, `bandwidth/write-nt/2t/0x0`.
    Bandwidth {
        test: String,
        threads: u64,
        pattern: Option<String>,
    },
    /// One working set of the bandwidth sweep: `bandwidth-sweep/read/1t/64KiB`.
    BandwidthSweep {
        test: String,
        threads: u64,
        size: Size,
    },
    /// A cache-line transfer between two CPUs: `c2c/0-12/modified`.
    C2c { cpu: u64, peer: u64, test: String },
    /// Cache-line contention on a team: `coherence/counter/4t`, `coherence/ring/2t`.
    Coherence { test: CoherenceTest, threads: u64 },
    /// The installed DIMMs' theoretical figures: `dimms/peak`.
    Dimms { statistic: String },
    /// A what-if plan's theoretical figures: `dimms-plan/1/peak`.
    DimmsPlan { plan: u64, statistic: String },
    /// The memory-error counters: `health/memory-errors/ce`.
    MemoryErrors { test: String },
    /// A loaded-latency curve's figure: `loaded/all-reads/saturation`.
    Loaded { mix: String, statistic: String },
    /// A NUMA cell: `numa/node0/node1/latency`, `numa/node0/interleaved/bandwidth/write-nt`.
    Numa {
        cpu_node: u64,
        node: Place,
        test: String,
        kernel: Option<String>,
    },
    /// A persistent-memory pool's utilisation for one object size: `pmem/65536/utilisation`.
    PmemClass { bytes: u64, test: String },
    /// An arena strategy's volume workload: `pmem/volume/single/seconds`.
    PmemVolume { strategy: String, test: String },
    /// An arena strategy's concurrency study: `pmem/concurrency/single/failure-rate`.
    PmemConcurrency { strategy: String, test: String },
    /// The OFFSET sweep's figure of a kernel on a placement: `rowbuffer/copy/contiguous/peak`.
    Rowbuffer {
        test: String,
        placement: String,
        statistic: String,
    },
    /// One physical range: `scan/dram-0x100000000/read`.
    Scan { address: String, test: String },
    /// A STREAM kernel: `stream/triad`.
    Stream { test: String },
    /// The near-memory sweep at one working set: `tiers/near/4GiB/latency`.
    TiersNear { size: Size, test: String },
    /// The weighted-interleave sweep at one ratio: `tiers/weighted/3-1/read`.
    TiersWeighted { placement: String, test: String },
    /// Idle latency of whole-block reads on a tier: `tiers/node2/latency-256B`.
    TiersBlockLatency { node: Place, block: u64 },
    /// Random whole-block accesses on a tier: `tiers/node2/random-read/256B/t4`.
    TiersAccess {
        node: Place,
        test: String,
        block: Size,
        threads: u64,
    },
    /// A tier's figure: `tiers/node2/latency`, `tiers/dax/knee`.
    Tiers { node: Place, test: String },
    /// A watched process's figure: `alloc/process/rss-growth`.
    AllocProcess { test: String },
    /// An allocator configuration's figure: `alloc/tcmalloc/ops`.
    Alloc { allocator: String, test: String },
    /// A profiled program's figure: `profile/peak-rss`.
    Profile { test: String },
    /// A fleet member's headline figure: `fleet/node17/bandwidth/read/2t`.
    Fleet { member: String, figure: Box<Key> },
    /// Text no family of this memsight reads (a newer memsight's key, in a fleet directory or
    /// a history), kept as written: it names no dimensions, and its suite is its first part's.
    Unread(String),
}

impl fmt::Display for Key {
    // long: one arm per family of key; the text form of every key in one place is the point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::LatencyLevel { cpu, level } => write!(f, "latency/cpu{cpu}/level/{level}"),
            Key::LatencyPoint { cpu, size } => write!(f, "latency/cpu{cpu}/{size}"),
            Key::Tlb { cpu, size } => write!(f, "tlb/cpu{cpu}/{size}"),
            Key::Mlp { cpu, chains } => write!(f, "mlp/cpu{cpu}/k{chains}"),
            Key::Bandwidth {
                test,
                threads,
                pattern,
            } => {
                write!(f, "bandwidth/{test}/{threads}t")?;
                pattern.iter().try_for_each(|p| write!(f, "/{p}"))
            }
            Key::BandwidthSweep {
                test,
                threads,
                size,
            } => write!(f, "bandwidth-sweep/{test}/{threads}t/{size}"),
            Key::C2c { cpu, peer, test } => write!(f, "c2c/{cpu}-{peer}/{test}"),
            Key::Coherence { test, threads } => write!(f, "coherence/{}/{threads}t", test.name()),
            Key::Dimms { statistic } => write!(f, "dimms/{statistic}"),
            Key::DimmsPlan { plan, statistic } => write!(f, "dimms-plan/{plan}/{statistic}"),
            Key::MemoryErrors { test } => write!(f, "health/memory-errors/{test}"),
            Key::Loaded { mix, statistic } => write!(f, "loaded/{mix}/{statistic}"),
            Key::Numa {
                cpu_node,
                node,
                test,
                kernel,
            } => {
                write!(f, "numa/node{cpu_node}/{}/{test}", node.0)?;
                kernel.iter().try_for_each(|k| write!(f, "/{k}"))
            }
            Key::PmemClass { bytes, test } => write!(f, "pmem/{bytes}/{test}"),
            Key::PmemVolume { strategy, test } => write!(f, "pmem/volume/{strategy}/{test}"),
            Key::PmemConcurrency { strategy, test } => {
                write!(f, "pmem/concurrency/{strategy}/{test}")
            }
            Key::Rowbuffer {
                test,
                placement,
                statistic,
            } => write!(f, "rowbuffer/{test}/{placement}/{statistic}"),
            Key::Scan { address, test } => write!(f, "scan/{address}/{test}"),
            Key::Stream { test } => write!(f, "stream/{test}"),
            Key::TiersNear { size, test } => write!(f, "tiers/near/{size}/{test}"),
            Key::TiersWeighted { placement, test } => {
                write!(f, "tiers/weighted/{placement}/{test}")
            }
            Key::TiersBlockLatency { node, block } => {
                write!(f, "tiers/{}/latency-{block}B", node.0)
            }
            Key::TiersAccess {
                node,
                test,
                block,
                threads,
            } => write!(f, "tiers/{}/{test}/{block}/t{threads}", node.0),
            Key::Tiers { node, test } => write!(f, "tiers/{}/{test}", node.0),
            Key::AllocProcess { test } => write!(f, "alloc/process/{test}"),
            Key::Alloc { allocator, test } => write!(f, "alloc/{allocator}/{test}"),
            Key::Profile { test } => write!(f, "profile/{test}"),
            Key::Fleet { member, figure } => write!(f, "fleet/{member}/{figure}"),
            Key::Unread(text) => f.write_str(text),
        }
    }
}

impl Key {
    /// The suite that measures figures of this key, as figures name it; for an unread key,
    /// its first part's suite, or the first part itself when no suite has that prefix.
    pub fn suite(&self) -> &str {
        let prefix = self.prefix();
        Key::suite_of_prefix(prefix).unwrap_or(prefix)
    }

    /// The suite that measures the figures whose keys begin with `prefix`, a key's first part
    /// (`tlb` → `latency`, `loaded` → `loaded-latency`); `None` for a prefix no family writes.
    /// Typed keys ([`Key::suite`]) and text that is not yet a key (a `check` reference's
    /// pattern, `latency/cpu*/…`) both find their suite here, so it is said once.
    pub fn suite_of_prefix(prefix: &str) -> Option<&'static str> {
        Some(match prefix {
            "latency" | "tlb" | "mlp" => "latency",
            "bandwidth" | "bandwidth-sweep" => "bandwidth",
            "c2c" => "c2c",
            "coherence" => "coherence",
            "dimms" => "dimms",
            "dimms-plan" => "dimms-plan",
            "health" => "health",
            "loaded" => "loaded-latency",
            "numa" => "numa",
            "pmem" => "pmem",
            "rowbuffer" => "rowbuffer",
            "scan" => "scan",
            "stream" => "stream",
            "tiers" => "tiers",
            "alloc" => "alloc",
            "profile" => "profile",
            "fleet" => "fleet",
            _ => return None,
        })
    }

    /// The first part of the key's text form, as [`fmt::Display`] writes it (the tests hold
    /// the two together): what the family's suite is found by.
    fn prefix(&self) -> &str {
        match self {
            Key::Unread(text) => text.split('/').next().unwrap_or_default(),
            Key::LatencyLevel { .. } | Key::LatencyPoint { .. } => "latency",
            Key::Tlb { .. } => "tlb",
            Key::Mlp { .. } => "mlp",
            Key::Bandwidth { .. } => "bandwidth",
            Key::BandwidthSweep { .. } => "bandwidth-sweep",
            Key::C2c { .. } => "c2c",
            Key::Coherence { .. } => "coherence",
            Key::Dimms { .. } => "dimms",
            Key::DimmsPlan { .. } => "dimms-plan",
            Key::MemoryErrors { .. } => "health",
            Key::Loaded { .. } => "loaded",
            Key::Numa { .. } => "numa",
            Key::PmemClass { .. } | Key::PmemVolume { .. } | Key::PmemConcurrency { .. } => "pmem",
            Key::Rowbuffer { .. } => "rowbuffer",
            Key::Scan { .. } => "scan",
            Key::Stream { .. } => "stream",
            Key::TiersNear { .. }
            | Key::TiersWeighted { .. }
            | Key::TiersBlockLatency { .. }
            | Key::Tiers { .. }
            | Key::TiersAccess { .. } => "tiers",
            Key::AllocProcess { .. } | Key::Alloc { .. } => "alloc",
            Key::Profile { .. } => "profile",
            Key::Fleet { .. } => "fleet",
        }
    }

    /// The dimensions the key names, as CSV columns and Prometheus labels, in [`Dim::ALL`]'s
    /// order. A fleet member's figure has its figure's.
    pub fn dims(&self) -> Dims {
        let mut out: Vec<(Dim, String)> = match self {
            Key::Fleet { figure, .. } => return figure.dims(),
            Key::Unread(_) => return Dims::default(),
            Key::LatencyLevel { .. }
            | Key::LatencyPoint { .. }
            | Key::Tlb { .. }
            | Key::Mlp { .. } => self.ladder_dims(),
            Key::Numa { .. }
            | Key::TiersNear { .. }
            | Key::TiersWeighted { .. }
            | Key::TiersBlockLatency { .. }
            | Key::TiersAccess { .. }
            | Key::Tiers { .. } => self.memory_dims(),
            // Every family is named, so that a new one does not compile until it has its
            // dimensions.
            Key::Bandwidth { .. }
            | Key::BandwidthSweep { .. }
            | Key::C2c { .. }
            | Key::Coherence { .. }
            | Key::Dimms { .. }
            | Key::DimmsPlan { .. }
            | Key::MemoryErrors { .. }
            | Key::Loaded { .. }
            | Key::PmemClass { .. }
            | Key::PmemVolume { .. }
            | Key::PmemConcurrency { .. }
            | Key::Rowbuffer { .. }
            | Key::Scan { .. }
            | Key::Stream { .. }
            | Key::AllocProcess { .. }
            | Key::Alloc { .. }
            | Key::Profile { .. } => self.test_dims(),
        };
        out.sort_by_key(|(d, _)| *d);
        Dims(out)
    }

    fn ladder_dims(&self) -> Vec<(Dim, String)> {
        let (test, cpu, last) = match self {
            Key::LatencyLevel { cpu, level } => ("latency", cpu, (Dim::Level, level.clone())),
            Key::LatencyPoint { cpu, size } => (
                "latency",
                cpu,
                (Dim::WorkingSetBytes, size.bytes().to_string()),
            ),
            Key::Tlb { cpu, size } => {
                ("tlb", cpu, (Dim::WorkingSetBytes, size.bytes().to_string()))
            }
            Key::Mlp { cpu, chains } => ("mlp", cpu, (Dim::Chains, chains.to_string())),
            _ => unreachable!("ladder_dims is called for ladder keys"),
        };
        vec![(Dim::Test, test.into()), (Dim::Cpu, cpu.to_string()), last]
    }

    /// Figures of memory placed on a node or tier.
    fn memory_dims(&self) -> Vec<(Dim, String)> {
        let n = |p: &Place| (Dim::Node, p.label());
        let t = |s: &str| (Dim::Test, s.to_string());
        match self {
            Key::Numa {
                cpu_node,
                node,
                test,
                kernel,
            } => {
                let mut v = vec![(Dim::CpuNode, cpu_node.to_string()), n(node), t(test)];
                v.extend(kernel.iter().map(|k| (Dim::Pattern, k.clone())));
                v
            }
            Key::TiersNear { size, test } => vec![
                (Dim::Node, "near".into()),
                (Dim::WorkingSetBytes, size.bytes().to_string()),
                t(test),
            ],
            Key::TiersWeighted { placement, test } => vec![
                (Dim::Node, "weighted".into()),
                (Dim::Placement, placement.clone()),
                t(test),
            ],
            Key::TiersBlockLatency { node, block } => {
                vec![n(node), t("latency"), (Dim::BlockBytes, block.to_string())]
            }
            Key::TiersAccess {
                node,
                test,
                block,
                threads,
            } => vec![
                n(node),
                t(test),
                (Dim::BlockBytes, block.bytes().to_string()),
                (Dim::Threads, threads.to_string()),
            ],
            Key::Tiers { node, test } => vec![n(node), t(test)],
            _ => unreachable!("memory_dims is called for NUMA and tier keys"),
        }
    }

    /// Figures named by a test (and what else each family adds).
    fn test_dims(&self) -> Vec<(Dim, String)> {
        let t = |s: &str| (Dim::Test, s.to_string());
        let stat = |s: &str| (Dim::Statistic, s.to_string());
        match self {
            Key::Bandwidth {
                test,
                threads,
                pattern,
            } => {
                let mut v = vec![t(test), (Dim::Threads, threads.to_string())];
                v.extend(pattern.iter().map(|p| (Dim::Pattern, p.clone())));
                v
            }
            Key::BandwidthSweep {
                test,
                threads,
                size,
            } => vec![
                t(test),
                (Dim::Threads, threads.to_string()),
                (Dim::WorkingSetBytes, size.bytes().to_string()),
                stat("sweep"),
            ],
            Key::C2c { cpu, peer, test } => vec![
                (Dim::Cpu, cpu.to_string()),
                (Dim::PeerCpu, peer.to_string()),
                t(test),
            ],
            Key::Coherence { test, threads } => {
                vec![t(test.name()), (Dim::Threads, threads.to_string())]
            }
            Key::Dimms { statistic } => vec![t("theoretical"), stat(statistic)],
            Key::DimmsPlan { plan, statistic } => {
                vec![
                    t("theoretical"),
                    (Dim::Plan, plan.to_string()),
                    stat(statistic),
                ]
            }
            Key::Loaded { mix, statistic } => vec![(Dim::Mix, mix.clone()), stat(statistic)],
            Key::PmemClass { bytes, test } => vec![(Dim::ClassBytes, bytes.to_string()), t(test)],
            Key::PmemVolume { strategy, test } | Key::PmemConcurrency { strategy, test } => {
                vec![(Dim::Allocator, strategy.clone()), t(test)]
            }
            Key::Rowbuffer {
                test,
                placement,
                statistic,
            } => vec![
                t(test),
                (Dim::Placement, placement.clone()),
                stat(statistic),
            ],
            Key::Scan { address, test } => vec![(Dim::Address, address.clone()), t(test)],
            Key::AllocProcess { test } => vec![(Dim::Allocator, "process".into()), t(test)],
            Key::Alloc { allocator, test } => vec![(Dim::Allocator, allocator.clone()), t(test)],
            Key::MemoryErrors { test } | Key::Stream { test } | Key::Profile { test } => {
                vec![t(test)]
            }
            _ => unreachable!("test_dims is called for the other keys"),
        }
    }
}

impl Place {
    /// The label: a node by its number (`node1` → `1`, as numactl and the kernel say it), else
    /// the word.
    pub fn label(&self) -> String {
        self.0
            .strip_prefix("node")
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .unwrap_or(&self.0)
            .to_string()
    }
}

/// The labels of a figure's key text; empty when no family of [`Key`] reads it (the key is then
/// the only way to tell figures apart).
pub fn dims_of(text: &str) -> Dims {
    Key::read(text).dims()
}

impl Key {
    /// The key of a figure's text: its family's, or [`Key::Unread`] with the text as written.
    pub fn read(text: &str) -> Key {
        Key::parse(text).unwrap_or_else(|| Key::Unread(text.to_string()))
    }

    /// The key, unless no family of this memsight reads it.
    pub fn known(&self) -> Option<&Key> {
        (!matches!(self, Key::Unread(_))).then_some(self)
    }
}

impl std::str::FromStr for Key {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Key, Self::Err> {
        Ok(Key::read(text))
    }
}

// A key travels as its text form, in result files, the history and every export, so that a
// file written before the type existed, or by a newer memsight, reads back.
impl serde::Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

// In the JSON Schema, a key is the string it is written as, exactly as before it was typed.
impl schemars::JsonSchema for Key {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "string".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(Key::read(&text))
    }
}

#[cfg(test)]
mod tests;
