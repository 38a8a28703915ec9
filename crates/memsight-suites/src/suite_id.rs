//! Every suite by identity, and what the layers around the suites must decide about each one.
//! A new suite is a new variant, and each `match` below is exhaustive: the compiler asks, for the
//! new suite, what a time budget does with it and whether its bandwidths are a team's. The
//! registry of commands (`memsight_results::with_suites!`) matches this enum exhaustively too,
//! so the two lists cannot drift apart. Names only, no suite module: like a suite, this names
//! nothing of another suite.

/// A suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SuiteId {
    Latency,
    Bandwidth,
    Stream,
    LoadedLatency,
    Numa,
    C2c,
    Dimms,
    Tiers,
    Rowbuffer,
    Alloc,
    Profile,
    Pmem,
    Scan,
    Coherence,
}

/// What a `--time-budget` does with a suite of `memsight run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnderBudget {
    /// Never left out: the health-check figures (latency and bandwidth) and the DIMM inventory
    /// (a table read in milliseconds, which references need).
    Kept,
    /// Left out when the prediction exceeds the budget, lower ranks first.
    LeftOut(u8),
    /// Not a step of `memsight run`.
    NotInRun,
}

impl SuiteId {
    /// Every suite, in the registry's order.
    pub const ALL: [SuiteId; 14] = [
        SuiteId::Latency,
        SuiteId::Bandwidth,
        SuiteId::Stream,
        SuiteId::LoadedLatency,
        SuiteId::Numa,
        SuiteId::C2c,
        SuiteId::Dimms,
        SuiteId::Tiers,
        SuiteId::Rowbuffer,
        SuiteId::Alloc,
        SuiteId::Profile,
        SuiteId::Pmem,
        SuiteId::Scan,
        SuiteId::Coherence,
    ];

    /// The command's name, which figures and skip lines carry (`loaded-latency`).
    pub fn name(self) -> &'static str {
        match self {
            SuiteId::Latency => "latency",
            SuiteId::Bandwidth => "bandwidth",
            SuiteId::Stream => "stream",
            SuiteId::LoadedLatency => "loaded-latency",
            SuiteId::Numa => "numa",
            SuiteId::C2c => "c2c",
            SuiteId::Dimms => "dimms",
            SuiteId::Tiers => "tiers",
            SuiteId::Rowbuffer => "rowbuffer",
            SuiteId::Alloc => "alloc",
            SuiteId::Profile => "profile",
            SuiteId::Pmem => "pmem",
            SuiteId::Scan => "scan",
            SuiteId::Coherence => "coherence",
        }
    }

    /// The suite of a command name; `None` for a name no suite has (a newer memsight's).
    pub fn from_name(name: &str) -> Option<SuiteId> {
        SuiteId::ALL.into_iter().find(|s| s.name() == name)
    }

    /// What a time budget does with the suite: the studies go before the matrices.
    pub fn under_budget(self) -> UnderBudget {
        match self {
            SuiteId::Latency | SuiteId::Bandwidth | SuiteId::Dimms => UnderBudget::Kept,
            SuiteId::Rowbuffer => UnderBudget::LeftOut(0),
            SuiteId::Tiers => UnderBudget::LeftOut(1),
            SuiteId::LoadedLatency => UnderBudget::LeftOut(2),
            SuiteId::C2c => UnderBudget::LeftOut(3),
            SuiteId::Numa => UnderBudget::LeftOut(4),
            SuiteId::Stream
            | SuiteId::Alloc
            | SuiteId::Profile
            | SuiteId::Pmem
            | SuiteId::Scan
            | SuiteId::Coherence => UnderBudget::NotInRun,
        }
    }

    /// Whether its GB/s figures are a team's although their keys name no thread count (STREAM,
    /// the NUMA matrix's cells, loaded latency's saturation): a run's drift holds them against
    /// the team's rate, not one core's.
    pub fn team_bandwidth(self) -> bool {
        match self {
            SuiteId::Stream | SuiteId::Numa | SuiteId::LoadedLatency => true,
            SuiteId::Latency
            | SuiteId::Bandwidth
            | SuiteId::C2c
            | SuiteId::Dimms
            | SuiteId::Tiers
            | SuiteId::Rowbuffer
            | SuiteId::Alloc
            | SuiteId::Profile
            | SuiteId::Pmem
            | SuiteId::Scan
            | SuiteId::Coherence => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_every_suite_is_listed_once() {
        for s in SuiteId::ALL {
            assert_eq!(SuiteId::from_name(s.name()), Some(s));
        }
        let mut names: Vec<_> = SuiteId::ALL.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SuiteId::ALL.len());
        assert_eq!(SuiteId::from_name("newsuite"), None);
    }
}
