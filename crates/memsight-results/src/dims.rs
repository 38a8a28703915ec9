//! The dimensions a figure's key names, as typed labels (test, CPU, threads, node, working set,
//! mix …) for the CSV export's columns and Prometheus labels; [`crate::key::Key::dims`] gives
//! them. Reading keys rather than storing labels means results recorded before the labels
//! existed export the same way.

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

    /// A count or a size (CPU and node numbers, threads, bytes, chains): an integer column in
    /// the Parquet table, text everywhere else. `Node` is not: it may read `interleaved`.
    pub fn is_count(self) -> bool {
        matches!(
            self,
            Dim::Cpu
                | Dim::PeerCpu
                | Dim::CpuNode
                | Dim::Threads
                | Dim::WorkingSetBytes
                | Dim::BlockBytes
                | Dim::Chains
                | Dim::ClassBytes
        )
    }

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
