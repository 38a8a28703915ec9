//! Cache-line contention: what many cores on one line cost, which a core-to-core matrix (one
//! line, two cores taking turns) does not show.
//!
//! - **Contended increments**: a team of 1, 2, 4 … N threads, one per core, each adding 1 to the
//!   same counter with an atomic read-modify-write; the team's increments per second, and the
//!   time per increment (with two or more threads, almost every increment first takes the line
//!   from another core: a transfer).
//! - **False sharing**: two threads each incrementing its own word, with a plain load and store
//!   and with an atomic fetch-add, the two words adjacent in one line and then each in a line of
//!   its own; the slowdown is padded ÷ adjacent.
//! - **Message ring**: one thread writing line-sized messages into a ring of lines and
//!   publishing them in batches, its partner reading and checking them; bytes per second, and
//!   the time per message.
//!
//! Every figure is the median of samples under the team sampler (each sample a timed run of
//! every thread, started together), with its confidence interval and the samples a disturbance
//! dropped. The kernels are `memsight_kernels::coherence`.

mod findings;
mod suite;
pub use suite::Coherence;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use memsight_core::env::Environment;
use memsight_core::finding::Finding;
use memsight_core::stats::{StopRule, Summary};
use memsight_core::team::sample_team;
use memsight_core::{Error, Result};
use memsight_kernels::coherence::{CHUNK, Op, Ring, Words, contend, receive, send};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::measure::progress::{Completed, Tick};
use crate::measure::sampling::Sampling;

/// Increments per thread per pass (the sampler times as many passes as make a sample).
const OPS: u64 = 1000;
/// Messages per pass of the ring.
const MESSAGES: u64 = 256;
/// Bytes of one message: the line it fills.
pub const MESSAGE_BYTES: u64 = 64;

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct CoherenceSettings {
    /// The team, in the order threads join it (the first two are the pair of the false-sharing
    /// and ring tests); `None`: one CPU per core.
    pub cpus: Option<Vec<usize>>,
    /// Lines in the message ring (a power of two, 4 to 65536).
    pub ring_slots: usize,
    pub sampling: Sampling,
}

impl Default for CoherenceSettings {
    fn default() -> Self {
        CoherenceSettings {
            cpus: None,
            ring_slots: 64,
            sampling: Sampling {
                target_ci: 0.02,
                min_samples: 7,
                point_budget: 0.4,
                sample_ms: 5.0,
            },
        }
    }
}

/// The contended counter with `threads` threads.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Contended {
    pub threads: usize,
    /// The team's increments, millions per second.
    pub mops: Summary,
}

impl Contended {
    /// Nanoseconds per increment of the team (the median's).
    pub fn ns_per_op(&self) -> f64 {
        1e3 / self.mops.median
    }
}

/// The false-sharing pair: each thread incrementing its own word, with plain and with atomic
/// increments (`None`: not given, the reason in [`CoherenceResults::not_given`]).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FalseSharing {
    pub cpus: [usize; 2],
    /// Plain load-and-store increments (`(*p)++`).
    pub plain: Option<Layouts>,
    /// Atomic increments (a per-thread statistics counter in an array).
    pub atomic: Option<Layouts>,
}

/// One kind of increment in both layouts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Layouts {
    /// Both threads' increments, millions per second, their words adjacent in one line.
    pub adjacent_mops: Summary,
    /// The same, each word in a line of its own.
    pub padded_mops: Summary,
}

/// The message ring.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RingFigures {
    pub writer: usize,
    pub reader: usize,
    pub slots: usize,
    /// Message bytes (64 a message: the line) per second, GB/s.
    pub gbps: Summary,
}

impl RingFigures {
    /// Nanoseconds per message (the median's).
    pub fn ns_per_message(&self) -> f64 {
        MESSAGE_BYTES as f64 / self.gbps.median
    }
}

/// The `coherence` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CoherenceResults {
    pub method: String,
    /// The team, in the order threads join it.
    pub cpus: Vec<usize>,
    /// How the team was chosen.
    pub selection: String,
    pub contended: Vec<Contended>,
    pub false_sharing: Option<FalseSharing>,
    /// Contended figures measured but not given, and why: too few of their samples ran with
    /// every thread on its CPU, and a contended rate read from the others would be faster than
    /// the machine's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_given: Vec<String>,
    pub ring: Option<RingFigures>,
    pub findings: Vec<Finding>,
}

/// The team and how it was chosen: as given, or one CPU per core (the hardware threads of the
/// one core allowed, where there is one); at least two.
pub fn team(a: &CoherenceSettings, env: &Environment) -> Result<(Vec<usize>, String)> {
    let (cpus, how) = match &a.cpus {
        Some(list) => {
            memsight_core::pin::validate_cpus(list, &env.allowed_cpus)?;
            (list.clone(), "as given".to_string())
        }
        None => {
            let mut per_core: BTreeMap<(Option<usize>, usize), usize> = BTreeMap::new();
            for c in env.topology.cpus.iter() {
                if env.allowed_cpus.contains(&c.os_index) {
                    per_core.entry((c.package, c.core)).or_insert(c.os_index);
                }
            }
            if per_core.len() >= 2 {
                let how = "one CPU per core, in core order";
                (per_core.into_values().collect(), how.to_string())
            } else {
                let how = "the hardware threads of the one core allowed: the line moves between two threads of one core, not between cores";
                (env.allowed_cpus.clone(), how.to_string())
            }
        }
    };
    if cpus.len() < 2 {
        return Err(Error::input(format!(
            "cache-line contention needs at least 2 CPUs but only {} can be used; give --cpus with two or more",
            cpus.len()
        )));
    }
    Ok((cpus, how))
}

/// Checks every setting before anything is measured.
pub fn check(a: &CoherenceSettings, env: &Environment) -> Result<()> {
    a.sampling.rule()?;
    if !(4..=65536).contains(&a.ring_slots) || !a.ring_slots.is_power_of_two() {
        return Err(Error::input(format!(
            "--ring-slots {}: a power of two from 4 to 65536",
            a.ring_slots
        )));
    }
    team(a, env).map(drop)
}

/// The team sizes of the contended counter: 1, 2, 4 … and the whole team.
pub fn team_sizes(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |k| Some(k * 2))
        .take_while(|&k| k < n)
        .collect();
    v.push(n);
    v
}

/// Measures the three tests; `complete` is false when a stop request cut it short.
pub fn run(
    a: &CoherenceSettings,
    env: &Environment,
    tick: Tick<'_>,
) -> Result<Completed<CoherenceResults>> {
    check(a, env)?;
    let (rule, sample_ns) = a.sampling.rule()?;
    let (cpus, selection) = team(a, env)?;
    let mut out = CoherenceResults {
        method: method(a, &rule, sample_ns),
        cpus: cpus.clone(),
        selection,
        contended: Vec::new(),
        false_sharing: None,
        not_given: Vec::new(),
        ring: None,
        findings: Vec::new(),
    };
    let stopped = |out: CoherenceResults| Ok(Completed::new(out, false));
    for k in team_sizes(cpus.len()) {
        tick(&format!("one counter, {k} threads"));
        match contended(&cpus[..k], &rule, sample_ns)? {
            Rate::Given(mops) => out.contended.push(Contended { threads: k, mops }),
            Rate::Disturbed => out
                .not_given
                .push(not_given(&format!("one counter, {k} threads"))),
            Rate::Stopped => return stopped(out),
        }
    }
    let pair = [cpus[0], cpus[1]];
    tick("false sharing");
    let Some(fs) = false_sharing(pair, &rule, sample_ns, &mut out.not_given)? else {
        return stopped(out);
    };
    out.false_sharing = Some(fs);
    tick("message ring");
    let Some(gbps) = ring(pair, a.ring_slots, &rule, sample_ns)? else {
        return stopped(out);
    };
    out.ring = Some(RingFigures {
        writer: pair[0],
        reader: pair[1],
        slots: a.ring_slots,
        gbps,
    });
    out.findings = findings::findings(&out, env);
    let complete = !memsight_core::cancel::requested();
    Ok(Completed::new(out, complete))
}

/// A contended rate, or why there is none.
enum Rate {
    Given(Summary),
    /// Too few samples ran with every thread on its CPU: the rate is not given (a disturbance
    /// leaves the other threads uncontended, so it would read faster than the machine).
    Disturbed,
    /// A stop request came first.
    Stopped,
}

/// Why a contended figure (`what`) is not given.
fn not_given(what: &str) -> String {
    format!(
        "{what}: not given: fewer than 3 of its samples ran with every thread on its CPU, and a contended rate read from the others would be faster than the machine's (a thread waiting for its CPU leaves the others uncontended); measure again on a quieter machine"
    )
}

/// The team's increments of one counter, millions per second.
fn contended(cpus: &[usize], rule: &StopRule, sample_ns: f64) -> Result<Rate> {
    let counter = memsight_kernels::pingpong::Line::default();
    team_rate(cpus, rule, sample_ns, |_| &counter.value, Op::Atomic)
}

/// The team's increments per second (millions), thread `i` incrementing `word(i)` as `op`,
/// counted only while every thread ran: the first to finish its share ends the sample for the
/// others ([`contend`]), so that no thread's increments are counted while it ran alone,
/// uncontended, which would read faster than the machine.
fn team_rate<'a>(
    cpus: &[usize],
    rule: &StopRule,
    sample_ns: f64,
    word: impl Fn(usize) -> &'a AtomicU64 + Sync,
    op: Op,
) -> Result<Rate> {
    let ended = memsight_kernels::pingpong::Line::default();
    // The latest round and its increments: each thread adds its own as it stops, and the
    // sampler reads them once every thread has stopped.
    let latest = Mutex::new((0u64, 0u64));
    let out = sample_team(
        cpus,
        rule,
        sample_ns,
        |i, _| Ok((i, 0u64)),
        |(i, round), passes| {
            // Every thread runs every round, so the threads' counts stay equal.
            *round += 1;
            let done = contend(word(*i), op, passes * OPS, &ended.value, *round);
            let mut l = latest.lock().unwrap_or_else(|e| e.into_inner());
            if l.0 != *round {
                *l = (*round, 0);
            }
            l.1 += done;
        },
        |_, ns| {
            let l = latest.lock().unwrap_or_else(|e| e.into_inner());
            l.1 as f64 / ns * 1e3
        },
    )?;
    Ok(match out.map(|t| t.sampled.summary) {
        None => Rate::Stopped,
        Some(s) if s.rests_on_disturbed() => Rate::Disturbed,
        Some(s) => Rate::Given(s),
    })
}

/// Both threads' increments of their own words, plain and atomic, adjacent and then padded;
/// a kind whose adjacent or padded rate is not given is `None`, with why in `not_given`.
fn false_sharing(
    pair: [usize; 2],
    rule: &StopRule,
    sample_ns: f64,
    why: &mut Vec<String>,
) -> Result<Option<FalseSharing>> {
    let mut layouts = |op: Op| -> Result<Option<Option<Layouts>>> {
        let (adjacent, padded) = (Words::adjacent(2), Words::padded(2));
        let adjacent_mops = team_rate(&pair, rule, sample_ns, |i| adjacent.word(i), op)?;
        let padded_mops = team_rate(&pair, rule, sample_ns, |i| padded.word(i), op)?;
        let how = match op {
            Op::Plain => "plain",
            Op::Atomic => "atomic",
        };
        Ok(match (adjacent_mops, padded_mops) {
            (Rate::Stopped, _) | (_, Rate::Stopped) => None,
            (Rate::Given(adjacent_mops), Rate::Given(padded_mops)) => Some(Some(Layouts {
                adjacent_mops,
                padded_mops,
            })),
            _ => {
                why.push(not_given(&format!("false sharing, {how} increments")));
                Some(None)
            }
        })
    };
    let Some(plain) = layouts(Op::Plain)? else {
        return Ok(None);
    };
    let Some(atomic) = layouts(Op::Atomic)? else {
        return Ok(None);
    };
    Ok(Some(FalseSharing {
        cpus: pair,
        plain,
        atomic,
    }))
}

/// Line-sized messages from `pair[0]` to `pair[1]`, GB/s; every payload word is checked.
fn ring(
    pair: [usize; 2],
    slots: usize,
    rule: &StopRule,
    sample_ns: f64,
) -> Result<Option<Summary>> {
    // On the heap, away from the stack lines the calling thread writes.
    let ring = Box::new(Ring::new(slots));
    let wrong = AtomicU64::new(0);
    let out = sample_team(
        &pair,
        rule,
        sample_ns,
        // Each thread's role and the next message it writes or reads: both run the same passes,
        // so the two counts stay equal.
        |i, _| Ok((i == 0, 0u64)),
        |(writer, next), passes| {
            let n = passes * MESSAGES;
            if *writer {
                send(&ring, *next, n);
            } else {
                wrong.fetch_add(receive(&ring, *next, n), Ordering::Relaxed);
            }
            *next += n;
        },
        |passes, ns| (passes * MESSAGES * MESSAGE_BYTES) as f64 / ns,
    )?;
    let wrong = wrong.load(Ordering::Relaxed);
    if wrong > 0 {
        return Err(Error::measurement(format!(
            "the message ring delivered {wrong} messages other than those written: the figures would not be a transfer's"
        )));
    }
    Ok(out.map(|t| t.sampled.summary))
}

/// How it was measured, in words.
fn method(a: &CoherenceSettings, rule: &StopRule, sample_ns: f64) -> String {
    format!(
        "every figure: the median of samples of ≥{:.0} ms (all threads pinned, started together, timed from the first start to the last end) until its 95% CI is within {:.0}%, disturbed samples dropped. Contended increments: each thread of a team of 1, 2, 4 … N adds 1 to one shared 64-bit counter with an atomic fetch-add (relaxed order; lock xadd on x86, ldadd or ldxr/stxr on Arm), {OPS} a pass; figure = the team's increments per second, counted while every thread ran: the first thread to finish its share ends the sample for the others (within {CHUNK} increments), since a thread left running alone would run uncontended and read faster than the machine; for the same reason a contended figure with fewer than 3 samples in which every thread kept its CPU is not given (a disturbed sample would read faster, not slower). False sharing: two threads each add 1 to its own word, {OPS} a pass, with a plain load and store and then with an atomic fetch-add, the words adjacent in one 128-byte-aligned line and then each in a line of its own; slowdown = padded ÷ adjacent. Message ring: the first CPU writes messages of one 64-byte line (seven payload words and a sequence word) into a ring of {} lines and publishes them a quarter of the ring at a time (a count on a line of its own, release order), the second reads the published slots only (so each line moves once, never while it is being filled), checks every word (XORed with what was sent, ORed into one difference a message) and hands slots back a quarter of the ring at a time; figure = 64 bytes a message, per second. No wait loop pauses.",
        sample_ns / 1e6,
        100.0 * rule.target_rel_ci,
        a.ring_slots
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_climbs_in_doublings_to_the_whole_team() {
        assert_eq!(team_sizes(2), [1, 2]);
        assert_eq!(team_sizes(5), [1, 2, 4, 5]);
        assert_eq!(team_sizes(8), [1, 2, 4, 8]);
    }

    #[test]
    fn bad_settings_are_refused_before_measuring() {
        let env = Environment::collect(
            &memsight_core::sysfs::FsRoot::live(),
            memsight_core::topology::Topology::load().unwrap(),
            false,
        );
        for slots in [2, 12, 1 << 17] {
            let a = CoherenceSettings {
                ring_slots: slots,
                cpus: Some(vec![0, 1]),
                ..Default::default()
            };
            let e = check(&a, &env).unwrap_err().to_string();
            assert!(e.contains("power of two"), "{e}");
        }
        let one = CoherenceSettings {
            cpus: Some(vec![0]),
            ..Default::default()
        };
        assert!(check(&one, &env).is_err());
    }
}
