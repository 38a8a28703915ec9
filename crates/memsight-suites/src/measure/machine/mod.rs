//! What the suites learn about the machine itself before they measure what they were asked:
//! where memory begins for a core ([`crate::measure::reach`]) and where one core streaming reaches
//! memory ([`crate::measure::reach::stream`]).
//!
//! A [`Machine`] is a value the caller owns and passes to every suite that sizes a memory
//! working set, beside the [`Environment`]: `memsight run` holds one for the whole run, so the
//! facts are found once (from the latency ladder when it ran, else by a short probe) and every
//! suite of the run sizes from the same ones; a single command holds its own. Nothing is kept
//! between values, so what a suite measures depends only on what it was given.

pub mod probe;
pub mod streaming;

use std::sync::Mutex;

use memsight_core::env::Environment;
use memsight_core::topology::TopologySource;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result};

use crate::measure::chase::{Point, curve};
use crate::measure::reach::{MemoryReach, ReachSource, largest_reported, memory_start};

/// The machine facts found so far (none when new).
#[derive(Debug, Default)]
pub struct Machine {
    reach: Mutex<Option<MemoryReach>>,
}

impl Machine {
    /// Nothing known yet: each fact is found when a suite first needs it.
    pub fn new() -> Self {
        Self::default()
    }

    /// A machine whose reach is already known (from a recorded run, or a test's).
    pub fn with_reach(r: MemoryReach) -> Self {
        Machine {
            reach: Mutex::new(Some(r)),
        }
    }

    /// A machine to predict times with, and the seconds the run's streaming check will take
    /// (none once made): the reach known so far, else what the reported caches say, with the
    /// streaming check's largest answer where it is not made yet ([`streaming::predicted`]).
    /// Nothing asked of it measures.
    pub fn for_planning(&self, env: &Environment) -> (Machine, f64) {
        let cpu = env.allowed_cpus.first().copied().unwrap_or(0);
        let known = self.known().unwrap_or_else(|| probe::reported(env, cpu));
        let (stream, seconds) = match known.stream {
            Some(s) => (s, 0.0),
            None => streaming::predicted(env, &known),
        };
        let planning = Machine::with_reach(MemoryReach {
            source: ReachSource::Reported,
            stream: Some(stream),
            ..known
        });
        (planning, seconds)
    }

    /// The reach known so far, if any.
    pub fn known(&self) -> Option<MemoryReach> {
        *self.reach.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, r: MemoryReach) {
        *self.reach.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    }

    /// Learns the reach from a latency ladder's first complete curve that reached memory (the
    /// ladder measures the curve more finely than the probe would). A streaming check already
    /// made is kept.
    pub fn learn_from_ladder<'a>(
        &self,
        ladders: impl IntoIterator<Item = (usize, &'a [Point])>,
        env: &Environment,
    ) {
        let found = ladders.into_iter().find_map(|(cpu, points)| {
            memory_start(&curve(points), largest_reported(env)).map(|memory| MemoryReach {
                cpu,
                memory,
                source: ReachSource::Ladder,
                stream: self.known().and_then(|k| k.stream),
            })
        });
        if let Some(reach) = found {
            self.set(reach);
        }
    }

    /// Where memory begins: the reach known, else a short probe on the first allowed CPU (the
    /// reported caches on a recorded machine, where nothing can be measured).
    pub fn memory(&self, env: &Environment) -> Result<MemoryReach> {
        if let Some(r) = self.known() {
            return Ok(r);
        }
        let cpu = *env
            .allowed_cpus
            .first()
            .ok_or_else(|| Error::input("this process may not run on any CPU (empty cpuset)"))?;
        let r = if env.topology.source == TopologySource::Live {
            probe::probe(env, cpu)?
        } else {
            probe::reported(env, cpu)
        };
        self.set(r);
        Ok(r)
    }

    /// The reach with the streaming check made ([`streaming`]; once per
    /// value). A reach taken from the reported caches of a recorded machine is not checked.
    pub fn streaming(&self, env: &Environment) -> Result<MemoryReach> {
        let r = self.memory(env)?;
        if r.stream.is_some() || r.source == ReachSource::Reported {
            return Ok(r);
        }
        let r = MemoryReach {
            stream: Some(streaming::check(env, &r)?),
            ..r
        };
        self.set(r);
        Ok(r)
    }

    /// A suite's memory working set: the size given, or the default from the reach
    /// ([`MemoryReach::working_set`]), with the sentence its method carries about it.
    pub fn working_set(&self, given: Option<u64>, env: &Environment) -> Result<(u64, String)> {
        match given {
            Some(b) => Ok((
                b,
                format!(
                    "{} as given (not checked against the latency curve)",
                    format_bytes(b)
                ),
            )),
            None => {
                let r = self.memory(env)?;
                let b = r.working_set();
                Ok((b, r.describe(b)))
            }
        }
    }
}
