//! CPUs as users name them: a list (`0-3,8`, as taskset), or a part of the machine as MLC and
//! likwid name it: one thread per core (MLC's `-X`), the CPUs of a NUMA node, a socket or a
//! last-level-cache domain (likwid's `M1`, `S0`, `C0`). Resolved against the topology, to the
//! CPUs this process may use.

use crate::error::{Error, Result};
use crate::topology::Topology;

/// A choice of CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuSet {
    /// These OS CPU numbers.
    List(Vec<usize>),
    /// The first allowed thread of every core.
    OnePerCore,
    /// The CPUs of NUMA node N (OS index).
    Node(usize),
    /// The CPUs of socket N (logical index, from 0).
    Socket(usize),
    /// The CPUs that share last-level cache domain N (a CCX, a socket's L3; from 0).
    Llc(usize),
}

/// What the forms are, for messages and help.
pub const FORMS: &str = "a list (0-3,8), one-per-core, node:N, socket:N or llc:N";

impl CpuSet {
    /// Reads `0-3,8`, `one-per-core`, `node:1`, `socket:0`, `llc:3`.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let index = |n: &str| {
            n.parse::<usize>().map_err(|_| {
                Error::input(format!("'{text}': the index must be a number; use {FORMS}"))
            })
        };
        if t == "one-per-core" {
            return Ok(CpuSet::OnePerCore);
        }
        if let Some((kind, n)) = t.split_once(':') {
            return match kind {
                "node" => Ok(CpuSet::Node(index(n)?)),
                "socket" => Ok(CpuSet::Socket(index(n)?)),
                "llc" => Ok(CpuSet::Llc(index(n)?)),
                _ => Err(Error::input(format!(
                    "'{text}': unknown CPU group; use {FORMS}"
                ))),
            };
        }
        crate::units::parse_cpu_list(t)
            .map(CpuSet::List)
            .map_err(|_| Error::input(format!("'{text}' names no CPUs; use {FORMS}")))
    }

    /// The allowed CPUs it names, in OS order; refused when there are none.
    pub fn resolve(&self, topo: &Topology) -> Result<Vec<usize>> {
        if let CpuSet::List(l) = self {
            // Checked later against the allowed CPUs, with the fix in the message.
            return Ok(l.clone());
        }
        let allowed = topo.cpus.iter().filter(|c| c.allowed);
        let mut out: Vec<usize> = match self {
            CpuSet::OnePerCore => {
                let mut seen = std::collections::BTreeSet::new();
                let mut cpus: Vec<_> = allowed.collect();
                cpus.sort_by_key(|c| c.os_index);
                cpus.into_iter()
                    .filter(|c| seen.insert(c.core))
                    .map(|c| c.os_index)
                    .collect()
            }
            CpuSet::Node(n) => allowed
                .filter(|c| c.node == Some(*n))
                .map(|c| c.os_index)
                .collect(),
            CpuSet::Socket(n) => allowed
                .filter(|c| c.package == Some(*n))
                .map(|c| c.os_index)
                .collect(),
            CpuSet::Llc(n) => allowed
                .filter(|c| c.llc_domain == Some(*n))
                .map(|c| c.os_index)
                .collect(),
            CpuSet::List(_) => unreachable!("returned above"),
        };
        out.sort_unstable();
        if out.is_empty() {
            return Err(Error::input(format!(
                "{} holds no CPU this process may use; {}",
                self.describe(),
                groups(topo)
            )));
        }
        Ok(out)
    }

    /// In words: `NUMA node 1`, `one thread per core`.
    pub fn describe(&self) -> String {
        match self {
            CpuSet::List(l) => format!("CPUs {}", crate::units::format_list(l)),
            CpuSet::OnePerCore => "one thread per core".into(),
            CpuSet::Node(n) => format!("NUMA node {n}"),
            CpuSet::Socket(n) => format!("socket {n}"),
            CpuSet::Llc(n) => format!("last-level cache domain {n}"),
        }
    }
}

/// What the machine has, for a refusal: `nodes 0-1, sockets 0-1, llc 0-15`.
fn groups(topo: &Topology) -> String {
    let allowed: Vec<_> = topo.cpus.iter().filter(|c| c.allowed).collect();
    let list = |f: &dyn Fn(&crate::topology::Cpu) -> Option<usize>| {
        let mut v: Vec<usize> = allowed.iter().filter_map(|c| f(c)).collect();
        v.sort_unstable();
        v.dedup();
        if v.is_empty() {
            "none".to_string()
        } else {
            crate::units::format_list(&v)
        }
    };
    format!(
        "here: node {}, socket {}, llc {}",
        list(&|c| c.node),
        list(&|c| c.package),
        list(&|c| c.llc_domain)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> Topology {
        // testdata/ at the top of this repository (sources in testdata/README.md).
        let xml = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/hwloc/xml")
            .join(name);
        Topology::from_xml_file(&xml).unwrap()
    }

    #[test]
    fn forms_parse_and_refuse_in_one_line() {
        assert_eq!(
            CpuSet::parse("0-2,8").unwrap(),
            CpuSet::List(vec![0, 1, 2, 8])
        );
        assert_eq!(CpuSet::parse("one-per-core").unwrap(), CpuSet::OnePerCore);
        assert_eq!(CpuSet::parse("node:1").unwrap(), CpuSet::Node(1));
        assert_eq!(CpuSet::parse("socket:0").unwrap(), CpuSet::Socket(0));
        assert_eq!(CpuSet::parse("llc:3").unwrap(), CpuSet::Llc(3));
        for bad in ["core:1", "node:x", "lots", ""] {
            let e = CpuSet::parse(bad).unwrap_err().to_string();
            assert!(e.contains("one-per-core"), "{bad}: {e}");
        }
    }

    #[test]
    fn groups_resolve_on_a_four_socket_machine() {
        // 4 sockets × 2 cores × 2 threads.
        let t = fixture("16em64t-4s2c2t.xml");
        let per_core = CpuSet::OnePerCore.resolve(&t).unwrap();
        assert_eq!(per_core.len(), 8, "{per_core:?}");
        let s1 = CpuSet::Socket(1).resolve(&t).unwrap();
        assert_eq!(s1.len(), 4);
        assert!(s1.iter().all(|c| {
            t.cpus
                .iter()
                .any(|x| x.os_index == *c && x.package == Some(1))
        }));
        let e = CpuSet::Socket(9).resolve(&t).unwrap_err().to_string();
        assert!(e.contains("socket 0-3"), "{e}");
        let n = CpuSet::Node(0).resolve(&t).unwrap();
        assert!(!n.is_empty());
        assert!(!CpuSet::Llc(0).resolve(&t).unwrap().is_empty());
    }
}
