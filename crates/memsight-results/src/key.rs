//! Figure keys, typed: one variant per family of figure, with the dimensions it varies over.
//! Presenters build a [`Key`] and the figure carries its text form (`bandwidth/read/2t`);
//! export, check, compare, fleet and the run's story read the text back with [`Key::parse`]
//! instead of taking it apart by prefix, and the CSV columns and Prometheus labels come from
//! [`Key::dims`]. The text form and its parse live here only, so a key written is a key read,
//! and results recorded before the type existed read back the same way.

use std::fmt;

use memsight_core::units::{format_bytes, parse_size};

use crate::dims::{Dim, Dims};

/// A working-set or block size in a key, as the key writes it: compactly (`4.75KiB`, `64MiB`),
/// three significant digits as [`format_bytes`] gives them. The text is kept as read, so that a
/// key written by an earlier version (`19.0MiB`) reads back to the same text.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place(pub String);

/// A figure's key.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        }
    }
}

/// A decimal number after `prefix` (`cpu3` → 3), and nothing else.
fn number(s: &str, prefix: &str) -> Option<u64> {
    let n = s.strip_prefix(prefix)?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| n.parse().ok())?
}

/// A size as keys write it (`4.75KiB`, `256B`).
fn size(s: &str) -> Option<Size> {
    parse_size(s).ok().map(|_| Size(s.to_string()))
}

/// A segment that can stand in a key: not empty.
fn word(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

impl Key {
    /// The key of a figure's text, `None` for text no family writes (a key from a newer
    /// memsight, or not a figure key at all).
    pub fn parse(text: &str) -> Option<Key> {
        if let Some(rest) = text.strip_prefix("fleet/") {
            let (member, figure) = rest.split_once('/')?;
            return Some(Key::Fleet {
                member: word(member)?,
                figure: Box::new(Key::parse(figure)?),
            });
        }
        let s: Vec<&str> = text.split('/').collect();
        match s[0] {
            "latency" | "tlb" | "mlp" => Self::parse_ladder(&s),
            "bandwidth" | "bandwidth-sweep" => Self::parse_bandwidth(&s),
            "tiers" => Self::parse_tiers(&s),
            "numa" => Self::parse_numa(&s),
            "pmem" => Self::parse_pmem(&s),
            _ => Self::parse_other(&s),
        }
    }

    fn parse_ladder(s: &[&str]) -> Option<Key> {
        let cpu = number(s.get(1)?, "cpu")?;
        Some(match (s[0], &s[2..]) {
            ("latency", ["level", level]) => Key::LatencyLevel {
                cpu,
                level: word(level)?,
            },
            ("latency", [at]) => Key::LatencyPoint {
                cpu,
                size: size(at)?,
            },
            ("tlb", [at]) => Key::Tlb {
                cpu,
                size: size(at)?,
            },
            ("mlp", [k]) => Key::Mlp {
                cpu,
                chains: number(k, "k")?,
            },
            _ => return None,
        })
    }

    fn parse_bandwidth(s: &[&str]) -> Option<Key> {
        let test = word(s.get(1)?)?;
        let threads = s.get(2)?.strip_suffix('t').and_then(|n| number(n, ""))?;
        Some(match (s[0], &s[3..]) {
            ("bandwidth", []) => Key::Bandwidth {
                test,
                threads,
                pattern: None,
            },
            ("bandwidth", [p]) => Key::Bandwidth {
                test,
                threads,
                pattern: Some(word(p)?),
            },
            ("bandwidth-sweep", [at]) => Key::BandwidthSweep {
                test,
                threads,
                size: size(at)?,
            },
            _ => return None,
        })
    }

    fn parse_tiers(s: &[&str]) -> Option<Key> {
        let (first, second) = (*s.get(1)?, *s.get(2)?);
        Some(match (first, &s[2..]) {
            ("near", [at, test]) => Key::TiersNear {
                size: size(at)?,
                test: word(test)?,
            },
            ("weighted", [placement, test]) => Key::TiersWeighted {
                placement: word(placement)?,
                test: word(test)?,
            },
            (node, [test, block, t]) => Key::TiersAccess {
                node: Place(word(node)?),
                test: word(test)?,
                block: size(block)?,
                threads: number(t, "t")?,
            },
            (node, [_]) => {
                let node = Place(word(node)?);
                let block = second
                    .strip_prefix("latency-")
                    .and_then(|b| b.strip_suffix('B'))
                    .and_then(|b| number(b, ""));
                match block {
                    Some(block) => Key::TiersBlockLatency { node, block },
                    None => Key::Tiers {
                        node,
                        test: word(second)?,
                    },
                }
            }
            _ => return None,
        })
    }

    fn parse_numa(s: &[&str]) -> Option<Key> {
        let cpu_node = number(s.get(1)?, "node")?;
        let node = Place(word(s.get(2)?)?);
        let test = word(s.get(3)?)?;
        let kernel = match &s[4..] {
            [] => None,
            [k] => Some(word(k)?),
            _ => return None,
        };
        Some(Key::Numa {
            cpu_node,
            node,
            test,
            kernel,
        })
    }

    fn parse_pmem(s: &[&str]) -> Option<Key> {
        Some(match &s[1..] {
            ["volume", strategy, test] => Key::PmemVolume {
                strategy: word(strategy)?,
                test: word(test)?,
            },
            ["concurrency", strategy, test] => Key::PmemConcurrency {
                strategy: word(strategy)?,
                test: word(test)?,
            },
            [bytes, test] => Key::PmemClass {
                bytes: number(bytes, "")?,
                test: word(test)?,
            },
            _ => return None,
        })
    }

    fn parse_other(s: &[&str]) -> Option<Key> {
        let w = |i: usize| s.get(i).and_then(|x| word(x));
        Some(match (s[0], s.len()) {
            ("c2c", 3) => {
                let (a, b) = s[1].split_once('-')?;
                Key::C2c {
                    cpu: number(a, "")?,
                    peer: number(b, "")?,
                    test: w(2)?,
                }
            }
            ("dimms", 2) => Key::Dimms { statistic: w(1)? },
            ("dimms-plan", 3) => Key::DimmsPlan {
                plan: number(s[1], "")?,
                statistic: w(2)?,
            },
            ("health", 3) if s[1] == "memory-errors" => Key::MemoryErrors { test: w(2)? },
            ("loaded", 3) => Key::Loaded {
                mix: w(1)?,
                statistic: w(2)?,
            },
            ("rowbuffer", 4) => Key::Rowbuffer {
                test: w(1)?,
                placement: w(2)?,
                statistic: w(3)?,
            },
            ("scan", 3) => Key::Scan {
                address: w(1)?,
                test: w(2)?,
            },
            ("stream", 2) => Key::Stream { test: w(1)? },
            ("alloc", 3) if s[1] == "process" => Key::AllocProcess { test: w(2)? },
            ("alloc", 3) => Key::Alloc {
                allocator: w(1)?,
                test: w(2)?,
            },
            ("profile", 2) => Key::Profile { test: w(1)? },
            _ => return None,
        })
    }
}

impl Key {
    /// The suite that measures figures of this key, as figures name it.
    pub fn suite(&self) -> &'static str {
        Key::suite_of_prefix(self.prefix()).expect("every family's prefix has a suite")
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
    fn prefix(&self) -> &'static str {
        match self {
            Key::LatencyLevel { .. } | Key::LatencyPoint { .. } => "latency",
            Key::Tlb { .. } => "tlb",
            Key::Mlp { .. } => "mlp",
            Key::Bandwidth { .. } => "bandwidth",
            Key::BandwidthSweep { .. } => "bandwidth-sweep",
            Key::C2c { .. } => "c2c",
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

/// The labels of a figure's key; empty when no family of [`Key`] reads it (the key is then the
/// only way to tell figures apart).
pub fn dims_of(text: &str) -> Dims {
    Key::parse(text).map(|k| k.dims()).unwrap_or_default()
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
