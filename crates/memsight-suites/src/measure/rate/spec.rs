//! What a bandwidth test does and how its bytes are counted.
//!
//! Two counts are reported for every figure (METHODS.md §3):
//! - **program bytes**: what the kernel's loads and stores name (what STREAM and likwid-bench
//!   print);
//! - **estimated DRAM bytes**: what the memory controller moves when the working set lives in
//!   DRAM. A regular store first reads the line for ownership (RFO), so it costs a read and a
//!   write; a non-temporal store and `clzero` cost only the write; a read-modify-write reads the
//!   line once and writes it once (its store hits the line its load brought in).
//!
//! MLC's read:write mixes are ratios of DRAM reads to DRAM writes, so they are built from streams:
//! `R:W` with regular stores is `R − W` read streams and `W` write streams (each write stream adds
//! an RFO read); with non-temporal stores it is `R` read streams and `W` write streams.

use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{Isa, Load, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The operation a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Op {
    /// `sum += a[i]`.
    Read,
    /// `a[i] = pattern`.
    Write,
    /// `b[i] = a[i]`.
    Copy,
    /// `a[i] ^= pattern`.
    Rmw,
    /// `reads` source streams summed into `writes` destination streams.
    Mix { reads: usize, writes: usize },
    /// STREAM triad on f64 (`a = b + s·c`): two read streams, one write stream.
    Triad,
}

/// One bandwidth test: an operation and a store kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestSpec {
    /// Name as the user asked for it (`read`, `copy-nt`, `3:1`, `stream-triad-like` …).
    pub name: String,
    pub op: Op,
    pub store: Store,
    /// How reads load (non-temporal hints); regular for every test but the hinted reads.
    #[serde(default, skip_serializing_if = "is_regular")]
    pub load: Load,
}

fn is_regular(l: &Load) -> bool {
    *l == Load::Regular
}

/// Bytes moved by one pass over `len` bytes per stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Bytes {
    pub program_read: u64,
    pub program_written: u64,
    pub dram_read: u64,
    pub dram_written: u64,
}

impl Bytes {
    pub fn program(&self) -> u64 {
        self.program_read + self.program_written
    }
    pub fn dram(&self) -> u64 {
        self.dram_read + self.dram_written
    }
}

impl TestSpec {
    /// Whether this CPU runs the test at `isa`, or why not (one line).
    pub fn supported(&self, isa: Isa) -> std::result::Result<(), String> {
        memsight_kernels::bandwidth::supports(isa, self.store)?;
        memsight_kernels::bandwidth::supports_load(isa, self.load)
    }

    /// Read and write streams.
    pub fn streams(&self) -> (usize, usize) {
        match self.op {
            Op::Read => (1, 0),
            Op::Write => (0, 1),
            Op::Copy => (1, 1),
            Op::Rmw => (1, 1),
            Op::Mix { reads, writes } => (reads, writes),
            Op::Triad => (2, 1),
        }
    }

    /// Separate arrays the test needs (rmw works in place).
    pub fn arrays(&self) -> usize {
        match self.op {
            Op::Rmw => 1,
            Op::Triad => 3,
            _ => {
                let (r, w) = self.streams();
                r + w
            }
        }
    }

    /// Bytes of one pass with `len` bytes per array.
    pub fn bytes(&self, len: u64) -> Bytes {
        let (r, w) = self.streams();
        let (r, w) = (r as u64 * len, w as u64 * len);
        let rfo = match (self.op, self.store) {
            (Op::Rmw, _) => 0,
            (_, Store::Regular) => w,
            _ => 0,
        };
        Bytes {
            program_read: r,
            program_written: w,
            dram_read: r + rfo,
            dram_written: w,
        }
    }

    /// DRAM read:write ratio, reduced (`3:1`, `1:0` for all reads).
    pub fn dram_ratio(&self) -> String {
        let b = self.bytes(1);
        let g = gcd(b.dram_read, b.dram_written).max(1);
        format!("{}:{}", b.dram_read / g, b.dram_written / g)
    }

    /// Whether the test writes a chosen pattern (fills): other writing tests write data derived
    /// from their non-zero sources, so `--pattern` does not apply to them.
    pub fn writes_pattern(&self) -> bool {
        self.op == Op::Write
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The tests with a name of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    Read,
    /// Reads with a `prefetchnta` per line ahead (NCRB's non-temporal read).
    ReadNta,
    /// Reads with `movntdqa` loads.
    ReadMovntdqa,
    Write,
    WriteNt,
    WriteClzero,
    Copy,
    CopyNt,
    Rmw,
    /// MLC's all-reads: one read stream through the mix kernel.
    AllReads,
    /// `a = b + s·c` with regular stores.
    StreamTriad,
    /// The same with non-temporal stores (MLC's stream-triad-like).
    StreamTriadLike,
}

impl Named {
    pub const ALL: [Named; 12] = [
        Named::Read,
        Named::ReadNta,
        Named::ReadMovntdqa,
        Named::Write,
        Named::WriteNt,
        Named::WriteClzero,
        Named::Copy,
        Named::CopyNt,
        Named::Rmw,
        Named::AllReads,
        Named::StreamTriad,
        Named::StreamTriadLike,
    ];

    /// The name as results carry it.
    pub fn name(self) -> &'static str {
        match self {
            Named::Read => "read",
            Named::ReadNta => "read-nta",
            Named::ReadMovntdqa => "read-movntdqa",
            Named::Write => "write",
            Named::WriteNt => "write-nt",
            Named::WriteClzero => "write-clzero",
            Named::Copy => "copy",
            Named::CopyNt => "copy-nt",
            Named::Rmw => "rmw",
            Named::AllReads => "all-reads",
            Named::StreamTriad => "stream-triad",
            Named::StreamTriadLike => "stream-triad-like",
        }
    }

    /// The test.
    pub fn spec(self) -> TestSpec {
        let (op, store) = match self {
            Named::Read | Named::ReadNta | Named::ReadMovntdqa => (Op::Read, Store::Regular),
            Named::Write => (Op::Write, Store::Regular),
            Named::WriteNt => (Op::Write, Store::Nt),
            Named::WriteClzero => (Op::Write, Store::Clzero),
            Named::Copy => (Op::Copy, Store::Regular),
            Named::CopyNt => (Op::Copy, Store::Nt),
            Named::Rmw => (Op::Rmw, Store::Regular),
            Named::AllReads => (
                Op::Mix {
                    reads: 1,
                    writes: 0,
                },
                Store::Regular,
            ),
            Named::StreamTriad => (Op::Triad, Store::Regular),
            Named::StreamTriadLike => (Op::Triad, Store::Nt),
        };
        TestSpec {
            name: self.name().to_string(),
            op,
            store,
            load: match self {
                Named::ReadNta => Load::Prefetchnta,
                Named::ReadMovntdqa => Load::Movntdqa,
                _ => Load::Regular,
            },
        }
    }
}

/// The tests `memsight bandwidth` runs by default: lmbench's kernels with each store kind, and
/// MLC's mixes 3:1, 2:1, 1:1, 1:1-nt, 2:1-nt and stream-triad-like.
pub fn defaults() -> Vec<TestSpec> {
    // Every named test but the triads (STREAM's is asked for by name; MLC's stream-triad-like
    // comes last, with MLC's mixes) and the hinted reads (asked for by name).
    let mut v: Vec<TestSpec> = Named::ALL
        .into_iter()
        .filter(|n| {
            !matches!(
                n,
                Named::StreamTriad | Named::StreamTriadLike | Named::ReadNta | Named::ReadMovntdqa
            )
        })
        .map(Named::spec)
        .collect();
    for (r, w, nt) in [
        (3, 1, false),
        (2, 1, false),
        (1, 1, false),
        (1, 1, true),
        (2, 1, true),
    ] {
        v.push(ratio(r, w, nt).expect("MLC's mixes are valid"));
    }
    v.push(Named::StreamTriadLike.spec());
    v
}

/// A DRAM read:write ratio `r:w` with regular stores, or `r:w-nt` with non-temporal ones.
pub fn ratio(r: usize, w: usize, nt: bool) -> Result<TestSpec> {
    let name = format!("{r}:{w}{}", if nt { "-nt" } else { "" });
    if r + w == 0 || r > 8 || w > 8 {
        return Err(Error::input(format!(
            "ratio '{name}': use 0 to 8 reads and 0 to 8 writes, not both 0"
        )));
    }
    let store = if nt { Store::Nt } else { Store::Regular };
    let op = if nt {
        if r == 0 {
            return Err(Error::input(format!(
                "ratio '{name}': a non-temporal mix needs at least one read stream; use write-nt for pure writes"
            )));
        }
        Op::Mix {
            reads: r,
            writes: w,
        }
    } else {
        if r < w {
            return Err(Error::input(format!(
                "ratio '{name}': with regular stores every write also reads (RFO), so reads ≥ writes; use '{name}-nt'"
            )));
        }
        match (r - w, w) {
            (0, 1) => Op::Write,
            (0, _) => {
                return Err(Error::input(format!(
                    "ratio '{name}': with regular stores it needs a read stream or exactly one write stream; use {w}:{w}-nt"
                )));
            }
            (reads, writes) => Op::Mix { reads, writes },
        }
    };
    Ok(TestSpec {
        name,
        op,
        store,
        load: Load::Regular,
    })
}

/// The 64-bit word a fill stores, written `0x` and 16 hex digits in results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Fill(pub u64);

impl std::fmt::Display for Fill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

impl From<Fill> for String {
    fn from(f: Fill) -> String {
        f.to_string()
    }
}

impl TryFrom<String> for Fill {
    type Error = String;

    fn try_from(s: String) -> std::result::Result<Self, String> {
        s.strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .map(Fill)
            .ok_or_else(|| format!("'{s}' is not a 64-bit fill word (0x and hex digits)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test by its name as the command line gives it.
    fn parse_test(name: &str) -> Result<TestSpec> {
        if let Some(n) = Named::ALL.into_iter().find(|n| n.name() == name) {
            return Ok(n.spec());
        }
        let (ratio_text, nt) = match name.strip_suffix("-nt") {
            Some(r) => (r, true),
            None => (name, false),
        };
        let (r, w) = ratio_text.split_once(':').expect("a ratio");
        ratio(r.parse().unwrap(), w.parse().unwrap(), nt)
    }

    fn dram_ratio_of(name: &str) -> String {
        parse_test(name).unwrap().dram_ratio()
    }

    #[test]
    fn mlc_mixes_have_their_controller_ratios() {
        assert_eq!(dram_ratio_of("all-reads"), "1:0");
        assert_eq!(dram_ratio_of("3:1"), "3:1");
        assert_eq!(dram_ratio_of("2:1"), "2:1");
        assert_eq!(dram_ratio_of("1:1"), "1:1");
        assert_eq!(dram_ratio_of("2:1-nt"), "2:1");
        assert_eq!(dram_ratio_of("stream-triad-like"), "2:1");
        assert_eq!(dram_ratio_of("5:2"), "5:2");
        assert_eq!(dram_ratio_of("1:1-nt"), "1:1");
    }

    #[test]
    fn stores_decide_the_dram_bytes() {
        let mib = 1 << 20;
        let copy = parse_test("copy").unwrap().bytes(mib);
        assert_eq!(
            (copy.program(), copy.dram()),
            (2 * mib, 3 * mib),
            "regular copy pays an RFO"
        );
        let nt = parse_test("copy-nt").unwrap().bytes(mib);
        assert_eq!((nt.program(), nt.dram()), (2 * mib, 2 * mib));
        let w = parse_test("write").unwrap().bytes(mib);
        assert_eq!((w.program(), w.dram_read, w.dram_written), (mib, mib, mib));
        let z = parse_test("write-clzero").unwrap().bytes(mib);
        assert_eq!((z.program(), z.dram()), (mib, mib));
        let rmw = parse_test("rmw").unwrap().bytes(mib);
        assert_eq!(
            (rmw.program(), rmw.dram()),
            (2 * mib, 2 * mib),
            "rmw: no extra RFO"
        );
        let triad = parse_test("stream-triad").unwrap().bytes(mib);
        assert_eq!((triad.program(), triad.dram()), (3 * mib, 4 * mib));
        let r = parse_test("read").unwrap().bytes(mib);
        assert_eq!((r.program(), r.dram()), (mib, mib));
    }

    #[test]
    fn ratios_are_built_from_streams() {
        assert_eq!(
            parse_test("3:1").unwrap().op,
            Op::Mix {
                reads: 2,
                writes: 1
            }
        );
        assert_eq!(
            parse_test("3:1-nt").unwrap().op,
            Op::Mix {
                reads: 3,
                writes: 1
            }
        );
        assert_eq!(parse_test("1:1").unwrap().op, Op::Write);
        assert_eq!(
            parse_test("1:0").unwrap().op,
            Op::Mix {
                reads: 1,
                writes: 0
            }
        );
    }

    #[test]
    fn bad_ratios_are_input_errors() {
        for (r, w, nt) in [
            (1, 2, false),
            (0, 0, false),
            (9, 1, false),
            (0, 1, true),
            (2, 2, false),
        ] {
            assert!(
                matches!(ratio(r, w, nt), Err(Error::Input(_))),
                "{r}:{w} {nt}"
            );
        }
        let names: Vec<String> = defaults().into_iter().map(|t| t.name).collect();
        assert_eq!(names.len(), 14);
        assert!(names.contains(&"2:1-nt".to_string()));
    }
}
