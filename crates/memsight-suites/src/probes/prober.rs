//! The reference probe of [`super`], measured on a thread of its own for the whole run.
//!
//! The probe's buffer (the memory working set of the core's latency curve, at most an eighth of
//! what the process may have) is allocated, touched and linked into a pointer chain once, on a
//! thread pinned to the first allowed CPU; the thread then waits for requests. The run asks
//! between suites, when no suite's thread runs, so the probe measures the machine, not the
//! run competing with itself; within a suite it asks only from the run's own thread between
//! points (where the suite's team has finished its point). A probe: three read passes over the
//! whole buffer, then five chase samples of 20 000 loads each, then (with two CPUs or more)
//! three samples of the allowed CPUs (one per 8 MiB of the buffer at most) reading their shares
//! of the buffer at once; a pass or sample in which the thread lost its CPU (wall time beyond its CPU time, as every suite's samples are judged:
//! `memsight_core::cpuclock`) is left out and counted. About 0.1–0.2 s per probe.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_core::stats::{StopRule, median};
use memsight_core::team::sample_team;
use memsight_core::units::{MIB, format_bytes};
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{self as k, Isa};
use memsight_kernels::chain::Pattern;
use memsight_kernels::chase::Chains;

use super::{DriftProbe, DriftSeries, Phase, analyse};

const READ_PASSES: usize = 3;
const CHASE_SAMPLES: usize = 5;
const _: () = assert!((READ_PASSES + CHASE_SAMPLES) as u32 == super::PROBE_PARTS);
const CHASE_LOADS: u64 = 20_000;
const STRIDE: usize = 128;

/// The run's side of the probe thread.
pub struct Prober<'scope> {
    state: Mutex<State>,
    handle: Option<ScopedJoinHandle<'scope, ()>>,
    /// How long within a suite between probes.
    every: Duration,
    cpu: usize,
    bytes: u64,
}

struct State {
    ask: Option<Sender<()>>,
    answers: Receiver<Option<Measured>>,
    t0: Instant,
    last: Instant,
    probes: Vec<DriftProbe>,
    phases: Vec<Phase>,
    open: Option<(String, f64)>,
    /// Why probing stopped, if it did.
    stopped: Option<String>,
}

/// One probe's figures, as the thread measured them.
struct Measured {
    read_gbs: f64,
    team_read_gbs: Option<f64>,
    read_spread: f64,
    latency_ns: f64,
    dropped: u32,
}

impl<'scope> Prober<'scope> {
    /// Starts the probe thread on `cpu` with a `bytes` buffer, and takes the first probe.
    pub fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        env: &'env Environment,
        cpu: usize,
        bytes: u64,
        every: Duration,
    ) -> Self {
        let (ask, asked) = channel::<()>();
        let (answer, answers) = channel::<Option<Measured>>();
        let handle = scope.spawn(move || serve(env, cpu, bytes, &asked, &answer));
        let now = Instant::now();
        let p = Prober {
            state: Mutex::new(State {
                ask: Some(ask),
                answers,
                t0: now,
                last: now,
                probes: Vec::new(),
                phases: Vec::new(),
                open: None,
                stopped: None,
            }),
            handle: Some(handle),
            every,
            cpu,
            bytes,
        };
        p.probe("start");
        p
    }

    /// Takes a probe now, labelled `label`.
    pub fn probe(&self, label: &str) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ask) = &s.ask else { return };
        let m = if ask.send(()).is_ok() {
            s.answers.recv().ok().flatten()
        } else {
            None
        };
        let Some(m) = m else {
            s.ask = None;
            s.stopped = Some(format!(
                "the probe buffer ({}) could not be set up on CPU {}: probing stopped",
                format_bytes(self.bytes),
                self.cpu
            ));
            return;
        };
        let now = Instant::now();
        let at_s = now.duration_since(s.t0).as_secs_f64();
        s.last = now;
        s.probes.push(DriftProbe {
            at_s,
            label: label.to_string(),
            read_gbs: m.read_gbs,
            team_read_gbs: m.team_read_gbs,
            read_spread: m.read_spread,
            latency_ns: m.latency_ns,
            dropped: m.dropped,
        });
    }

    /// Takes a probe within `suite` when the last is older than the interval.
    pub fn maybe(&self, suite: &str) {
        let due = {
            let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            s.last.elapsed() >= self.every
        };
        if due {
            self.probe(&format!("in {suite}"));
        }
    }

    /// `suite` begins measuring.
    pub fn begin(&self, suite: &str) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let at = s.t0.elapsed().as_secs_f64();
        s.open = Some((suite.to_string(), at));
    }

    /// `suite` ended (`ran`: it measured, so its span is kept and a probe follows).
    pub fn end(&self, ran: bool) {
        let open = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let open = s.open.take();
            if let (true, Some((suite, from_s))) = (ran, &open) {
                let to_s = s.t0.elapsed().as_secs_f64();
                s.phases.push(Phase {
                    suite: suite.clone(),
                    from_s: *from_s,
                    to_s,
                });
            }
            open
        };
        if let (true, Some((suite, _))) = (ran, open) {
            self.probe(&format!("after {suite}"));
        }
    }

    /// Stops the thread and reads the series.
    pub fn finish(mut self) -> DriftSeries {
        let mut s = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        s.ask = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let (verdict, mut findings) = analyse(&s.probes, &s.phases);
        findings.extend(s.stopped);
        DriftSeries {
            method: method(self.cpu, self.bytes, self.every),
            cpu: self.cpu,
            buffer_bytes: self.bytes,
            probes: s.probes,
            phases: s.phases,
            verdict,
            findings,
        }
    }
}

/// A run's drift probe as planned.
pub struct Plan {
    /// Its CPU and buffer bytes, if it runs.
    pub probe: Option<(usize, u64)>,
    /// The environment the suites see: less the probe's buffer, held all run.
    pub suite_env: Environment,
    /// When a stop request cut the probe's sizing short, the line that says so.
    pub interrupted: Option<String>,
}

/// Plans a run's drift probe (`off`: none, as `--no-drift` asks): on the first allowed CPU, its
/// buffer sized from the memory working set the machine's reach probe finds. A stop during that
/// probe leaves the run without one, and says so, instead of failing the run.
pub fn plan(
    env: &Environment,
    machine: &crate::measure::machine::Machine,
    off: bool,
) -> Result<Plan> {
    let mut plan = Plan {
        probe: None,
        suite_env: env.clone(),
        interrupted: None,
    };
    if off {
        return Ok(plan);
    }
    let cpu = *env
        .allowed_cpus
        .first()
        .ok_or_else(|| Error::input("this process may not run on any CPU (empty cpuset)"))?;
    let memory = match machine.memory(env) {
        Ok(m) => m,
        Err(e) if memsight_core::cancel::requested() => {
            plan.interrupted = Some(format!("drift: interrupted before its first probe ({e})"));
            return Ok(plan);
        }
        Err(e) => return Err(e),
    };
    let bytes = buffer_bytes(memory.working_set(), env);
    plan.suite_env.memory.reserve(bytes);
    plan.probe = Some((cpu, bytes));
    Ok(plan)
}

/// The probe buffer's size for a memory working set `working_set`: at most an eighth of what
/// the process may have, at least 64 MiB.
pub fn buffer_bytes(working_set: u64, env: &Environment) -> u64 {
    let room = env.memory.usable_bytes().map_or(u64::MAX, |u| u / 8);
    working_set
        .min(room)
        .max(64 * MIB)
        .next_multiple_of(k::GRANULE as u64)
}

fn method(cpu: usize, bytes: u64, every: Duration) -> String {
    format!(
        "Reference probes on CPU {cpu} at the run's start, after every suite, at its end and every {} s within a suite (between its points): one core reads a {} buffer ({READ_PASSES} passes, the best counts, GB/s of program bytes) and chases a pointer chain through it (the chase below), then every CPU of the run (up to one per 8 MiB of the buffer, spread over the allowed list) reads its share of it at once (the team's rate, timed over the team's span, best of {READ_PASSES}; with two CPUs or more). The chase: {STRIDE} B stride, {CHASE_SAMPLES} samples of {CHASE_LOADS} loads, median ns per load. Passes and samples in which the thread lost its CPU are left out. Drift = highest over lowest read rate; it counts from {:.0}% and three times the probes' own spread.",
        every.as_secs(),
        format_bytes(bytes),
        100.0 * super::MIN_DRIFT
    )
}

/// The probe thread: sets up the buffer and chain, then answers each request until the run
/// hangs up. Answers `None` (once) when the buffer cannot be had.
fn serve(
    env: &Environment,
    cpu: usize,
    bytes: u64,
    asked: &Receiver<()>,
    answer: &Sender<Option<Measured>>,
) {
    let set_up = memsight_core::pin::pin_current_thread(cpu).and_then(|()| {
        let req = BufferRequest {
            bytes,
            kind: PageKind::Thp,
            node: None,
            dax: None,
        };
        Buffer::allocate_preferring(req, env)
    });
    let Ok(mut buf) = set_up else {
        if asked.recv().is_ok() {
            let _ = answer.send(None);
        }
        return;
    };
    buf.touch();
    let elements = buf.len() / STRIDE;
    let mut chains = Chains::build(
        buf.as_mut_slice(),
        elements,
        STRIDE,
        Pattern::Window {
            window_bytes: 256 * 1024,
        },
        1,
        0x5eed,
    );
    let isa = Isa::widest();
    while asked.recv().is_ok() {
        let mut m = measure(&mut chains, isa);
        m.team_read_gbs = team_read(&env.allowed_cpus, chains.bytes(), isa);
        if answer.send(Some(m)).is_err() {
            return;
        }
    }
}

/// Each team thread's share of the probe buffer is at least this, so the team reads memory,
/// not the caches of the CPUs it spans (the buffer is sized for one core: 64 MiB or more).
const TEAM_SHARE_MIN: usize = 8 << 20;

/// The team: every allowed CPU, or as many as the buffer gives [`TEAM_SHARE_MIN`] each,
/// spread evenly over the allowed list (so over its cores and sockets, as listed).
fn team_cpus(allowed: &[usize], bytes: usize) -> Vec<usize> {
    let n = allowed.len().min(bytes / TEAM_SHARE_MIN);
    (0..n).map(|i| allowed[i * allowed.len() / n]).collect()
}

/// The team's read rate: every CPU the run may use (up to [`team_cpus`]) reads its share of the probe buffer at the
/// same time, timed over the team's span, best of [`READ_PASSES`] clean samples (GB/s of program
/// bytes). One core's rate does not see what the CPUs can draw together: on a shared host two
/// vCPUs placed on SMT siblings of one core, or on one die, read together at 35 GB/s where on
/// two cores they read 55 (measured on an AMD EPYC Zen 4 guest, minutes apart, one core's rate
/// steady at 30). `None` with one CPU, or when fewer than three samples kept every CPU.
fn team_read(allowed: &[usize], bytes: &[u8], isa: Isa) -> Option<f64> {
    let cpus = team_cpus(allowed, bytes.len());
    if cpus.len() < 2 {
        return None;
    }
    let share = bytes.len() / cpus.len() / k::GRANULE * k::GRANULE;
    if share == 0 {
        return None;
    }
    let rule = StopRule {
        warmup: 0,
        min_samples: READ_PASSES,
        max_samples: READ_PASSES,
        target_rel_ci: 0.0,
        budget_s: 1.0,
    };
    let total = (share * cpus.len()) as f64;
    let out = sample_team(
        &cpus,
        &rule,
        0.0,
        |i, _| Ok(&bytes[i * share..(i + 1) * share]),
        |slice, passes| {
            std::hint::black_box(k::read(isa, slice, passes));
        },
        |passes, span_ns| total * passes as f64 / span_ns,
    )
    .ok()
    .flatten()?;
    let s = &out.sampled.summary;
    (!s.rests_on_disturbed() && s.max.is_finite()).then_some(s.max)
}

fn measure(chains: &mut Chains, isa: Isa) -> Measured {
    use memsight_core::cpuclock::timed;
    let mut dropped = 0;
    let mut rates = Vec::new();
    for _ in 0..READ_PASSES {
        let ((), lap) = timed(|| {
            std::hint::black_box(k::read(isa, chains.bytes(), 1));
        });
        if lap.lost_cpu() {
            dropped += 1;
        } else {
            rates.push(chains.bytes().len() as f64 / lap.wall_ns as f64);
        }
    }
    let mut lat = Vec::new();
    for _ in 0..CHASE_SAMPLES {
        let ((), lap) = timed(|| chains.run(CHASE_LOADS));
        if lap.lost_cpu() {
            dropped += 1;
        } else {
            lat.push(lap.wall_ns as f64 / CHASE_LOADS as f64);
        }
    }
    let best = rates.iter().copied().fold(f64::NAN, f64::max);
    let worst = rates.iter().copied().fold(f64::NAN, f64::min);
    Measured {
        read_gbs: best,
        team_read_gbs: None,
        read_spread: if rates.len() > 1 {
            (best - worst) / best
        } else {
            0.0
        },
        latency_ns: if lat.is_empty() {
            f64::NAN
        } else {
            median(&lat)
        },
        dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_team_reads_memory_not_its_caches() {
        // Two vCPUs and a 256 MiB buffer: both, 128 MiB each.
        assert_eq!(team_cpus(&[0, 1], 256 << 20), [0, 1]);
        // 384 CPUs: one per 8 MiB, spread over the list.
        let many: Vec<usize> = (0..384).collect();
        let team = team_cpus(&many, 256 << 20);
        assert_eq!(team.len(), 32);
        assert_eq!((team[0], team[1], team[31]), (0, 12, 372));
        // A buffer too small for two shares: no team.
        assert!(team_cpus(&many, 12 << 20).len() < 2);
    }
}
