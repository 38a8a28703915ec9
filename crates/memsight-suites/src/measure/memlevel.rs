//! Where in the memory hierarchy a working set or a latency plateau sits: a cache level or
//! memory. Written `L1`, `L2` … and `memory` in results (files before schema 3 wrote `DRAM` for
//! bandwidth sweep points; read as `memory`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A level of the memory hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum MemLevel {
    /// Cache level n (1 = L1).
    Cache(u8),
    /// Beyond the last cache: DRAM, or whatever memory the buffer was placed on.
    Memory,
    /// A latency plateau matched to no level the OS reports.
    Unmatched,
}

impl fmt::Display for MemLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemLevel::Cache(n) => write!(f, "L{n}"),
            MemLevel::Memory => f.write_str("memory"),
            MemLevel::Unmatched => f.write_str("unmatched"),
        }
    }
}

impl FromStr for MemLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "memory" | "DRAM" => Ok(MemLevel::Memory),
            "unmatched" => Ok(MemLevel::Unmatched),
            _ => s
                .strip_prefix('L')
                .and_then(|n| n.parse().ok())
                .map(MemLevel::Cache)
                .ok_or_else(|| format!("'{s}' is not a memory level (L1, L2 …, memory)")),
        }
    }
}

impl From<MemLevel> for String {
    fn from(l: MemLevel) -> String {
        l.to_string()
    }
}

impl TryFrom<String> for MemLevel {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_old_names_are_read() {
        for l in [
            MemLevel::Cache(1),
            MemLevel::Cache(3),
            MemLevel::Memory,
            MemLevel::Unmatched,
        ] {
            assert_eq!(l.to_string().parse::<MemLevel>(), Ok(l));
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(serde_json::from_str::<MemLevel>(&json).unwrap(), l);
        }
        assert_eq!("DRAM".parse::<MemLevel>(), Ok(MemLevel::Memory));
        assert!("L".parse::<MemLevel>().is_err());
        assert!(MemLevel::Cache(1) < MemLevel::Cache(2) && MemLevel::Cache(4) < MemLevel::Memory);
    }
}
