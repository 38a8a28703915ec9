//! What a figure's key says, as typed labels: the suite's key grammar (one template per kind of
//! figure) read back into test, CPU, threads, node, working set, mix … for the CSV export's
//! columns and Prometheus labels. Reading keys rather than storing labels means results recorded
//! before the labels existed export the same way.

use std::sync::LazyLock;

use regex::Regex;

use crate::figure::Figure;

/// One dimension of a figure, as a CSV column and a Prometheus label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dim {
    /// The test or kernel (`read`, `copy-nt`, `latency`, `triad`).
    Test,
    /// The CPU (or CPU range) that measured.
    Cpu,
    /// The other CPU of a pair (core-to-core transfers).
    PeerCpu,
    /// The NUMA node whose CPUs measured.
    CpuNode,
    /// Where the memory was: a NUMA node, `interleaved`, `dax`, `near`.
    Node,
    /// Threads that measured together.
    Threads,
    /// The working set, bytes (as the key states it: three significant digits).
    WorkingSetBytes,
    /// Bytes per access (memory tiers' access granularity).
    BlockBytes,
    /// A read:write mix (`3:1`, `all-reads`, `2:1-NT`).
    Mix,
    /// A cache level or memory (`L1`, `memory`).
    Level,
    /// Independent pointer chains (memory-level parallelism).
    Chains,
    /// The data written (`0x0`, `0xefefefefefefefef`).
    Pattern,
    /// Which statistic of a series (`peak`, `median`, `idle`, `saturation` …).
    Statistic,
    /// The allocator or allocation strategy.
    Allocator,
    /// How pages were placed (`contiguous`, `4k`, a weighted ratio).
    Placement,
    /// Object or class size, bytes (persistent-memory pools).
    ClassBytes,
    /// A physical address range (scan).
    Address,
    /// A DIMM plan's number.
    Plan,
}

impl Dim {
    /// Every dimension, in column order.
    pub const ALL: [Dim; 18] = [
        Dim::Test,
        Dim::Cpu,
        Dim::PeerCpu,
        Dim::CpuNode,
        Dim::Node,
        Dim::Threads,
        Dim::WorkingSetBytes,
        Dim::BlockBytes,
        Dim::Mix,
        Dim::Level,
        Dim::Chains,
        Dim::Pattern,
        Dim::Statistic,
        Dim::Allocator,
        Dim::Placement,
        Dim::ClassBytes,
        Dim::Address,
        Dim::Plan,
    ];

    /// The column and label name.
    pub fn name(self) -> &'static str {
        match self {
            Dim::Test => "test",
            Dim::Cpu => "cpu",
            Dim::PeerCpu => "peer_cpu",
            Dim::CpuNode => "cpu_node",
            Dim::Node => "node",
            Dim::Threads => "threads",
            Dim::WorkingSetBytes => "working_set_bytes",
            Dim::BlockBytes => "block_bytes",
            Dim::Mix => "mix",
            Dim::Level => "level",
            Dim::Chains => "chains",
            Dim::Pattern => "pattern",
            Dim::Statistic => "statistic",
            Dim::Allocator => "allocator",
            Dim::Placement => "placement",
            Dim::ClassBytes => "class_bytes",
            Dim::Address => "address",
            Dim::Plan => "plan",
        }
    }

    fn from_name(name: &str) -> Option<Dim> {
        Dim::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The value as it goes into a column: sizes in bytes, everything else as the key says it.
    fn value(self, raw: &str) -> Option<String> {
        match self {
            Dim::WorkingSetBytes | Dim::BlockBytes | Dim::ClassBytes => {
                memsight_core::units::parse_size(raw)
                    .ok()
                    .map(|b| b.to_string())
            }
            Dim::Threads | Dim::Chains | Dim::Cpu | Dim::PeerCpu | Dim::CpuNode | Dim::Plan => {
                raw.parse::<u64>().ok().map(|n| n.to_string())
            }
            // `node1` in keys; the label is the node's number, as numactl and the kernel say it.
            Dim::Node => Some(
                raw.strip_prefix("node")
                    .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .unwrap_or(raw)
                    .to_string(),
            ),
            _ => Some(raw.to_string()),
        }
    }
}

/// A figure's labels: the dimensions its key names, in [`Dim::ALL`]'s order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dims(pub Vec<(Dim, String)>);

impl Dims {
    /// The value of one dimension, if the figure has it.
    pub fn get(&self, d: Dim) -> Option<&str> {
        self.0
            .iter()
            .find(|(x, _)| *x == d)
            .map(|(_, v)| v.as_str())
    }
}

/// Key templates, per kind of figure: `{name}` is a [`Dim`] (`{_test}` a literal test name given
/// after the template). The first that matches wins, so the more literal come first.
/// Labels a template fixes whatever the key says.
type Fixed = &'static [(Dim, &'static str)];

const TEMPLATES: &[(&str, Fixed)] = &[
    ("latency/cpu{cpu}/level/{level}", &[(Dim::Test, "latency")]),
    (
        "latency/cpu{cpu}/{working_set_bytes}",
        &[(Dim::Test, "latency")],
    ),
    ("mlp/cpu{cpu}/k{chains}", &[(Dim::Test, "mlp")]),
    ("tlb/cpu{cpu}/{working_set_bytes}", &[(Dim::Test, "tlb")]),
    ("bandwidth/{test}/{threads}t/{pattern}", &[]),
    ("bandwidth/{test}/{threads}t", &[]),
    (
        "bandwidth-sweep/{test}/{threads}t/{working_set_bytes}",
        &[(Dim::Statistic, "sweep")],
    ),
    ("c2c/{cpu}-{peer_cpu}/{test}", &[]),
    ("dimms/{statistic}", &[(Dim::Test, "theoretical")]),
    (
        "dimms-plan/{plan}/{statistic}",
        &[(Dim::Test, "theoretical")],
    ),
    ("health/memory-errors/{test}", &[]),
    ("loaded/{mix}/{statistic}", &[]),
    ("numa/node{cpu_node}/{node}/{test}/{pattern}", &[]),
    ("numa/node{cpu_node}/{node}/{test}", &[]),
    ("pmem/concurrency/{allocator}/{test}", &[]),
    ("pmem/volume/{allocator}/{test}", &[]),
    ("pmem/{class_bytes}/{test}", &[]),
    (
        "rowbuffer/hpccg/{placement}/{statistic}",
        &[(Dim::Test, "hpccg")],
    ),
    ("rowbuffer/{test}/{placement}/{statistic}", &[]),
    ("scan/{address}/{test}", &[]),
    ("stream/{test}", &[]),
    (
        "tiers/near/{working_set_bytes}/{test}",
        &[(Dim::Node, "near")],
    ),
    (
        "tiers/weighted/{placement}/{test}",
        &[(Dim::Node, "weighted")],
    ),
    (
        "tiers/{node}/latency-{block_bytes}",
        &[(Dim::Test, "latency")],
    ),
    ("tiers/{node}/{test}/{block_bytes}/t{threads}", &[]),
    ("tiers/{node}/{test}", &[]),
    ("alloc/process/{test}", &[(Dim::Allocator, "process")]),
    ("profile/{test}", &[]),
    ("alloc/{allocator}/{test}", &[]),
];

/// The templates as anchored regular expressions, with their fixed labels.
static COMPILED: LazyLock<Vec<(Regex, Fixed)>> = LazyLock::new(|| {
    TEMPLATES
        .iter()
        .map(|(t, fixed)| (template_regex(t), *fixed))
        .collect()
});

fn template_regex(t: &str) -> Regex {
    let mut re = String::from("^");
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        re.push_str(&regex::escape(&rest[..open]));
        let close = open + rest[open..].find('}').expect("template braces close");
        re.push_str(&format!("(?P<{}>[^/]+?)", &rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    re.push_str(&regex::escape(rest));
    re.push('$');
    Regex::new(&re).expect("key templates are valid expressions")
}

/// The labels of a figure's key; empty when no template knows the key (the key is then the only
/// way to tell figures apart).
pub fn of_key(key: &str) -> Dims {
    for (re, fixed) in COMPILED.iter() {
        let Some(caps) = re.captures(key) else {
            continue;
        };
        let mut out: Vec<(Dim, String)> = fixed.iter().map(|(d, v)| (*d, v.to_string())).collect();
        for name in re.capture_names().flatten() {
            let d = Dim::from_name(name).expect("template names are dimensions");
            let Some(v) = d.value(&caps[name]) else {
                // A size or number that does not read as one: not this template.
                out.clear();
                break;
            };
            out.push((d, v));
        }
        if out.is_empty() {
            continue;
        }
        out.sort_by_key(|(d, _)| *d);
        return Dims(out);
    }
    Dims::default()
}

/// The labels of a figure.
pub fn of(f: &Figure) -> Dims {
    of_key(&f.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_as_typed_labels() {
        let d = of_key("latency/cpu3/4.75KiB");
        assert_eq!(d.get(Dim::Cpu), Some("3"));
        assert_eq!(d.get(Dim::WorkingSetBytes), Some("4864"));
        assert_eq!(d.get(Dim::Test), Some("latency"));
        let d = of_key("latency/cpu0/level/L2");
        assert_eq!(d.get(Dim::Level), Some("L2"));
        assert_eq!(d.get(Dim::WorkingSetBytes), None);
        let d = of_key("bandwidth/write-nt/2t/0x0");
        assert_eq!(
            (d.get(Dim::Test), d.get(Dim::Threads), d.get(Dim::Pattern)),
            (Some("write-nt"), Some("2"), Some("0x0"))
        );
        let d = of_key("bandwidth/3:1/2t");
        assert_eq!(d.get(Dim::Test), Some("3:1"));
        let d = of_key("c2c/0-12/modified");
        assert_eq!(
            (d.get(Dim::Cpu), d.get(Dim::PeerCpu)),
            (Some("0"), Some("12"))
        );
        let d = of_key("numa/node1/interleaved/bandwidth/write-nt");
        assert_eq!(d.get(Dim::CpuNode), Some("1"));
        assert_eq!(d.get(Dim::Node), Some("interleaved"));
        assert_eq!(d.get(Dim::Pattern), Some("write-nt"));
        assert_eq!(of_key("numa/node0/node1/latency").get(Dim::Node), Some("1"));
        let d = of_key("tiers/node2/random-read/256B/t4");
        assert_eq!(d.get(Dim::BlockBytes), Some("256"));
        assert_eq!(d.get(Dim::Threads), Some("4"));
        assert_eq!(
            of_key("pmem/65536/utilisation").get(Dim::ClassBytes),
            Some("65536")
        );
        assert_eq!(of_key("loaded/2:1-NT/idle").get(Dim::Mix), Some("2:1-NT"));
        assert!(of_key("something/else/entirely").0.is_empty());
    }
}
