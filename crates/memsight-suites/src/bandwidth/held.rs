//! A load held at a set rate (`memsight bandwidth --rate R --seconds N`): one test's kernel on
//! every CPU of the team, paced so that the team moves R GB/s of program bytes for N seconds. It
//! is a program of known bandwidth, for checking what `memsight profile` infers, and a tenant of
//! a set size beside other measurements.
//!
//! Each thread works through its arrays in chunks of [`CHUNK`] bytes and, after each, waits until
//! its share of the rate says the next chunk is due. The traffic is therefore steady at the scale
//! of tens of microseconds, not bursts at full speed between pauses (which would raise latency
//! during the bursts beyond what the average rate does). A thread that falls behind (it lost its
//! CPU, or the rate is beyond the memory) does not catch up in a burst: its schedule restarts
//! from where it is once it is more than [`SLACK`] late.

use crate::measure::progress::Completed;
use crate::measure::progress::Tick;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::stats::{Summary, summarize};
use memsight_core::{Error, Result, cancel};
use memsight_kernels::bandwidth::{self as k, Isa};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BandwidthResults;
use crate::measure::rate::{Arrays, BandwidthConfig, NONZERO, Op, TestSpec};

/// Bytes of one paced step of a thread (a multiple of the kernels' granule): at 1 GB/s per
/// thread a step is due every 64 µs.
pub const CHUNK: usize = 64 << 10;

/// How late a thread may fall before its schedule restarts from now.
pub const SLACK: Duration = Duration::from_millis(5);

/// Within this share of the target, the median second counts as the rate held.
const HELD_WITHIN: f64 = 0.02;

/// What a held load did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Held {
    /// The rate asked for, GB/s of program bytes (all threads together).
    pub target_gbs: f64,
    /// The rate of each whole second, GB/s of program bytes (all threads together).
    pub per_second_gbs: Vec<f64>,
    /// Over the whole seconds: median, CI, min and max.
    pub program_gbs: Summary,
    /// The median second in estimated DRAM bytes (program bytes plus read-for-ownership of
    /// regular stores).
    pub dram_gbs: f64,
    /// Whether the median second came within 2% of the target.
    pub held: bool,
    /// How long the load ran, s.
    pub seconds: f64,
    /// Times a thread fell more than the slack behind its schedule and restarted it.
    pub restarts: u64,
}

/// Which tests can be held: those whose work splits into chunks of one array or a pair.
pub fn holdable(spec: &TestSpec) -> Result<()> {
    match spec.op {
        Op::Read | Op::Write | Op::Copy => Ok(()),
        _ => Err(Error::input(format!(
            "--rate holds read, read-nta, read-movntdqa, write, write-nt, write-clzero, copy or copy-nt, not {}",
            spec.name
        ))),
    }
}

/// One chunk of the test over the arrays `v` (split once per thread): `at` is the chunk's offset
/// within each array.
fn step(spec: &TestSpec, isa: Isa, v: &mut [&mut [u8]], at: usize, len: usize) {
    match (spec.op, v) {
        (Op::Read, [src, ..]) => {
            std::hint::black_box(k::read_with(isa, spec.load, &src[at..at + len], 1));
        }
        (Op::Write, [dst, ..]) => {
            k::write(isa, spec.store, &mut dst[at..at + len], NONZERO, 1);
            std::hint::black_box(dst);
        }
        (Op::Copy, [src, dst, ..]) => {
            k::copy(
                isa,
                spec.store,
                &mut dst[at..at + len],
                &src[at..at + len],
                1,
            );
        }
        _ => unreachable!("holdable() admits read, write and copy only, with their arrays"),
    }
}

/// One thread's paced loop until `end` or Ctrl-C; adds its program bytes to the second they
/// were moved in. Returns how often it restarted its schedule.
fn pace(
    spec: &TestSpec,
    isa: Isa,
    a: &mut Arrays,
    per_thread_gbs: f64,
    origin: Instant,
    end: Instant,
    seconds: &[AtomicU64],
) -> u64 {
    let len = a.len;
    let chunk = CHUNK.min(len);
    let mut v = a.split(spec.arrays());
    let program = spec.bytes(chunk as u64).program();
    // ns per chunk at this thread's share of the rate.
    let every = Duration::from_nanos((program as f64 / per_thread_gbs) as u64);
    let (mut due, mut at, mut restarts) = (Instant::now(), 0usize, 0u64);
    while !cancel::requested() {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if now < due {
            // Sleep when far ahead; otherwise spin: a sleep wakes tens of microseconds late.
            let ahead = due - now;
            if ahead > Duration::from_micros(200) {
                std::thread::sleep(ahead - Duration::from_micros(100));
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        if now - due > SLACK {
            due = now;
            restarts += 1;
        }
        step(spec, isa, &mut v, at, chunk);
        let second = (Instant::now() - origin).as_secs() as usize;
        if let Some(s) = seconds.get(second) {
            s.fetch_add(program, Ordering::Relaxed);
        }
        at = if at + 2 * chunk <= len { at + chunk } else { 0 };
        due += every;
    }
    restarts
}

/// Holds `spec` at `target_gbs` (program bytes, the team together) on the config's CPUs, each
/// thread over `cfg.bytes_per_thread`, for `seconds` or until Ctrl-C. Returns the results and
/// whether it ran its whole time.
pub fn run(
    cfg: &BandwidthConfig,
    target_gbs: f64,
    seconds: f64,
    env: &Environment,
    tick: Tick<'_>,
) -> Result<Completed<BandwidthResults>> {
    let [spec] = cfg.tests.as_slice() else {
        return Err(Error::input("--rate holds one test: give one with --test"));
    };
    holdable(spec)?;
    if seconds.is_nan() || seconds < 1.0 {
        return Err(Error::input(
            "--seconds must be at least 1 s: the held rate is reported per whole second",
        ));
    }
    if target_gbs <= 0.0 || !target_gbs.is_finite() {
        return Err(Error::input(
            "--rate must be a positive bandwidth, e.g. 10GB/s",
        ));
    }
    let cpus = &cfg.cpus;
    let whole = seconds.ceil() as usize;
    let counts: Vec<AtomicU64> = (0..whole + 1).map(|_| AtomicU64::new(0)).collect();
    let per_thread = target_gbs / cpus.len() as f64;
    tick(&format!("holding {} at {target_gbs:.1} GB/s", spec.name));
    // One origin for the team: the seconds are the team's, not each thread's.
    let origin = std::sync::OnceLock::new();
    let threads = memsight_core::pin::run_team(cpus, |_, _, barrier| -> Result<(u64, f64)> {
        let a = crate::measure::rate::setup(spec, cfg, env, cfg.bytes_per_thread, None);
        // Everyone starts together, with its arrays ready, whether or not setting them up failed.
        barrier.wait();
        let origin = *origin.get_or_init(Instant::now);
        let mut a = a?;
        let end = origin + Duration::from_secs_f64(seconds);
        let restarts = pace(spec, cfg.isa, &mut a, per_thread, origin, end, &counts);
        Ok((restarts, origin.elapsed().as_secs_f64()))
    })?
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    let restarts = threads.iter().map(|t| t.0).sum();
    // The team ran together until its first thread stopped.
    let ran = threads.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let complete = !cancel::requested();
    // Whole seconds only: the last, partial one would read low.
    let full = (ran.floor() as usize).min(whole);
    let per_second: Vec<f64> = counts[..full]
        .iter()
        .map(|c| c.load(Ordering::Relaxed) as f64 / 1e9)
        .collect();
    if per_second.is_empty() {
        return Err(Error::system(
            "the held load ran less than a second: no whole second to report",
        ));
    }
    let program = summarize(&per_second);
    let per_pass = spec.bytes(1 << 20);
    let dram = program.median * per_pass.dram() as f64 / per_pass.program() as f64;
    let held = (program.median - target_gbs).abs() <= HELD_WITHIN * target_gbs;
    let h = Held {
        target_gbs,
        per_second_gbs: per_second,
        program_gbs: program,
        dram_gbs: dram,
        held,
        seconds: ran,
        restarts,
    };
    Ok(Completed::new(results(cfg, spec, h), complete))
}

/// The held load as the bandwidth command's results: no measured points, the load and a finding.
fn results(cfg: &BandwidthConfig, spec: &TestSpec, h: Held) -> BandwidthResults {
    let finding = if h.held {
        format!(
            "held {} at {:.1} GB/s of program bytes ({:.1} GB/s of estimated DRAM bytes) on {} thread(s) for {:.0} s; seconds ranged {:.1}–{:.1} GB/s",
            spec.name,
            h.program_gbs.median,
            h.dram_gbs,
            cfg.cpus.len(),
            h.seconds,
            h.program_gbs.min,
            h.program_gbs.max
        )
    } else {
        format!(
            "could not hold {} at {:.1} GB/s: the median second moved {:.1} GB/s of program bytes on {} thread(s) (the memory, the CPUs or other tenants set the limit; more threads with --threads, or a lower rate)",
            spec.name,
            h.target_gbs,
            h.program_gbs.median,
            cfg.cpus.len()
        )
    };
    // Each second's program bytes, counted, not sampled against a disturbance check.
    let cites = vec![
        Cited::of("held program bytes per second", "GB/s", &h.program_gbs),
        Cited::value("estimated DRAM bytes per second", h.dram_gbs, "GB/s", false),
    ];
    let method = format!(
        "Held load: {} ({} vectors) on CPUs {:?}, {} per thread, paced to {:.2} GB/s of program bytes for the team ({:.2} per thread): each thread works through its arrays in {} KiB steps and waits until its share of the rate makes the next step due (sleeping when more than 200 µs early, spinning otherwise); a thread more than {} ms behind restarts its schedule instead of catching up in a burst. Reported: the program bytes of each whole second, all threads together, and the median second in estimated DRAM bytes.",
        spec.name,
        cfg.isa.name(),
        cfg.cpus,
        memsight_core::units::format_bytes(cfg.bytes_per_thread),
        h.target_gbs,
        h.target_gbs / cfg.cpus.len() as f64,
        CHUNK >> 10,
        SLACK.as_millis(),
    );
    BandwidthResults {
        method,
        config: cfg.clone(),
        points: Vec::new(),
        sweep: Vec::new(),
        l1_read: None,
        memory: None,
        dram: None,
        held: Some(h),
        findings: vec![Finding::citing(finding, cites)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandwidth::spec::Named;
    use crate::measure::rate::Region;

    #[test]
    fn reads_writes_and_copies_can_be_held_mixes_cannot() {
        for n in [
            Named::Read,
            Named::Write,
            Named::WriteNt,
            Named::Copy,
            Named::CopyNt,
        ] {
            assert!(holdable(&n.spec()).is_ok(), "{}", n.name());
        }
        for n in [Named::Rmw, Named::StreamTriad, Named::AllReads] {
            assert!(holdable(&n.spec()).is_err(), "{}", n.name());
        }
    }

    /// The schedule never runs ahead: by any time, a thread has moved at most its rate times the
    /// time since it started, plus its slack and one step. (A late thread moves less; how much
    /// less is the machine's business, not asserted.)
    #[test]
    fn a_paced_thread_never_moves_more_than_its_rate_allows() {
        let spec = Named::Copy.spec();
        let len = 4 * CHUNK;
        let mut memory = vec![0u8; 2 * len + 128];
        // The kernels take 64-byte aligned arrays.
        let skip = memory.as_ptr().align_offset(64);
        let mut a = Arrays {
            region: Region::Shared(&mut memory[skip..]),
            len,
            gap: 64,
        };
        let gbs = 0.25;
        let seconds: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
        let origin = Instant::now();
        let end = origin + Duration::from_millis(300);
        pace(&spec, Isa::Scalar, &mut a, gbs, origin, end, &seconds);
        let ran = origin.elapsed().as_secs_f64();
        let moved: u64 = seconds.iter().map(|s| s.load(Ordering::Relaxed)).sum();
        let step = spec.bytes(CHUNK as u64).program() as f64;
        let allowed = gbs * 1e9 * (ran + SLACK.as_secs_f64()) + step;
        assert!(moved > 0);
        assert!(moved as f64 <= allowed, "{moved} B in {ran} s");
    }
}
