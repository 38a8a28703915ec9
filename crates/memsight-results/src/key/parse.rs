//! Reading a key's text form back into its family: the one parser of key text.

use memsight_core::units::parse_size;

use super::{Key, Place, Size};

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
            ("coherence", 3) => Key::Coherence {
                test: super::CoherenceTest::from_name(s[1])?,
                threads: number(s[2].strip_suffix('t')?, "")?,
            },
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
