//! `memsight alloc --pid PID --for DURATION`: watch a process that is already running — its
//! resident set, glibc arenas and threads over time — without restarting or touching it, as
//! Cloudflare's RocksDB study (Vorobev, 2020) watched a service's RSS grow over days.

use std::time::{Duration, Instant};

use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arenas::{self, ArenaSample};
use super::child::{RssSample, rss_bytes};

/// How a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WatchEnding {
    /// The duration asked for passed.
    Completed,
    /// The process exited during the watch.
    ProcessExited,
    /// Ctrl-C.
    Interrupted,
}

/// A running process, watched.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProcessWatch {
    pub pid: u32,
    /// Its command line (`/proc/PID/cmdline`).
    pub command: String,
    pub ending: WatchEnding,
    pub seconds: f64,
    pub rss: Vec<RssSample>,
    pub arenas: Vec<ArenaSample>,
    /// Least-squares slope of RSS over the watch, bytes per hour.
    pub rss_growth_per_hour: Option<f64>,
}

impl ProcessWatch {
    pub fn first_rss(&self) -> Option<u64> {
        self.rss.first().map(|s| s.rss_bytes)
    }
    pub fn last_rss(&self) -> Option<u64> {
        self.rss.last().map(|s| s.rss_bytes)
    }
    pub fn peak_rss(&self) -> Option<u64> {
        self.rss.iter().map(|s| s.rss_bytes).max()
    }
}

fn command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if args.is_empty() {
        // A kernel thread has no command line; its name is in `comm`.
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        return Some(format!("[{}]", comm.trim()));
    }
    Some(args.join(" "))
}

/// Least-squares slope of (seconds, bytes), per hour; `None` under two samples or no spread.
pub fn growth_per_hour(samples: &[RssSample]) -> Option<f64> {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return None;
    }
    let mx = samples.iter().map(|s| s.seconds).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.rss_bytes as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for s in samples {
        sxy += (s.seconds - mx) * (s.rss_bytes as f64 - my);
        sxx += (s.seconds - mx).powi(2);
    }
    (sxx > 0.0).then(|| sxy / sxx * 3600.0)
}

/// Watches `pid` for `duration`, sampling its RSS every `interval` and its arenas every
/// [`arenas::SAMPLE_EVERY`] (or every interval, when that is longer).
pub fn watch(pid: u32, duration: Duration, interval: Duration) -> Result<ProcessWatch> {
    let command =
        command_line(pid).ok_or_else(|| Error::input(format!("--pid {pid}: no such process")))?;
    if rss_bytes(pid).is_none() {
        return Err(Error::input(format!(
            "--pid {pid} ({command}): no resident set to watch (a kernel thread, or its status cannot be read)"
        )));
    }
    let started = Instant::now();
    let (mut rss, mut arena_samples) = (Vec::new(), Vec::new());
    let mut next_arenas = Duration::ZERO;
    let ending = loop {
        let t = started.elapsed();
        match rss_bytes(pid) {
            Some(r) => rss.push(RssSample {
                seconds: t.as_secs_f64(),
                rss_bytes: r,
            }),
            None => break WatchEnding::ProcessExited,
        }
        if t >= next_arenas {
            next_arenas = t + arenas::SAMPLE_EVERY.max(interval);
            arena_samples.extend(arenas::sample(pid, t.as_secs_f64()));
        }
        if cancel::requested() {
            break WatchEnding::Interrupted;
        }
        if t >= duration {
            break WatchEnding::Completed;
        }
        // Sleep in short steps so Ctrl-C is answered at once even with a long interval.
        let wake = t + interval;
        while started.elapsed() < wake.min(duration) && !cancel::requested() {
            std::thread::sleep(
                (wake - started.elapsed().min(wake)).min(Duration::from_millis(100)),
            );
        }
    };
    Ok(ProcessWatch {
        pid,
        command,
        ending,
        seconds: started.elapsed().as_secs_f64(),
        rss_growth_per_hour: growth_per_hour(&rss),
        rss,
        arenas: arena_samples,
    })
}

/// The watch in words: RSS from first to last and its trend, arenas against threads.
pub fn findings(w: &ProcessWatch, cpus: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(a), Some(b), Some(peak)) = (w.first_rss(), w.last_rss(), w.peak_rss()) {
        out.push(format!(
            "pid {}: RSS {} → {} over {:.0} s (peak {}; trend {} per hour, least squares over {} samples){}",
            w.pid,
            format_bytes(a),
            format_bytes(b),
            w.seconds,
            format_bytes(peak),
            w.rss_growth_per_hour.map_or("-".into(), |g| {
                let sign = if g < 0.0 { "−" } else { "+" };
                format!("{sign}{}", format_bytes(g.abs() as u64))
            }),
            w.rss.len(),
            match w.ending {
                WatchEnding::ProcessExited => "; the process exited during the watch",
                WatchEnding::Interrupted => "; interrupted",
                WatchEnding::Completed => "",
            }
        ));
    }
    out.extend(arena_finding(&w.arenas, cpus));
    out
}

/// glibc arenas against threads and glibc's default cap (8 per CPU on 64-bit).
pub fn arena_finding(samples: &[ArenaSample], cpus: usize) -> Option<String> {
    let last = samples.last()?;
    let threads = samples.iter().filter_map(|s| s.threads).max();
    let thr = threads.map_or(String::new(), |t| {
        format!(
            "; at most {t} thread{} seen at the samples",
            if t == 1 { "" } else { "s" }
        )
    });
    let cap = 8 * cpus.max(1);
    Some(match samples.iter().filter_map(|s| s.arenas).max() {
        Some(1) => {
            format!("glibc arenas: the main one only (or another allocator serves malloc){thr}")
        }
        Some(a) => format!(
            "glibc arenas: up to {a} (the main one and {} more), in at most {} heaps of 64 MiB ({} at the end){thr}; glibc's default cap here is {cap} (8 per CPU): more arenas than threads, or a count near the cap, is where memory freed by one thread stays out of another's reach (MALLOC_ARENA_MAX bounds it)",
            a - 1,
            samples.iter().map(|s| s.heaps).max().unwrap_or(0),
            match last.heaps {
                0 => "none".to_string(),
                h => h.to_string(),
            }
        ),
        None if last.heaps > 0 => format!(
            "glibc arena heaps: {} of 64 MiB{thr} (from the mappings; the process's memory could not be read to confirm them or count arenas: run as root)",
            last.heaps
        ),
        None => format!("glibc arena heaps: none{thr}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(seconds: f64, rss_bytes: u64) -> RssSample {
        RssSample { seconds, rss_bytes }
    }

    #[test]
    fn growth_is_a_least_squares_slope_per_hour() {
        let g = growth_per_hour(&[s(0.0, 100), s(1.0, 200), s(2.0, 300)]).unwrap();
        assert!((g - 360_000.0).abs() < 1e-6, "{g}");
        assert!(growth_per_hour(&[s(0.0, 1)]).is_none());
        assert!(growth_per_hour(&[s(1.0, 1), s(1.0, 2)]).is_none());
    }

    #[test]
    fn arenas_are_put_against_threads_and_the_cap() {
        let a = |arenas, heaps, threads| ArenaSample {
            seconds: 0.0,
            heaps,
            arenas,
            threads: Some(threads),
        };
        let f = arena_finding(&[a(Some(70), 80, 25), a(Some(64), 75, 24)], 16).unwrap();
        assert!(
            f.contains("up to 70") && f.contains("25 threads") && f.contains("128"),
            "{f}"
        );
        // Heaps at most and at the end, never "with 0 heaps"; counts in words.
        assert!(
            f.contains("in at most 80 heaps of 64 MiB (75 at the end)"),
            "{f}"
        );
        let f = arena_finding(&[a(Some(9), 8, 1), a(Some(9), 0, 1)], 2).unwrap();
        assert!(
            f.contains("(none at the end)") && f.contains("1 thread seen"),
            "{f}"
        );
        assert!(
            !f.contains("with 0 heaps") && !f.contains("1 threads"),
            "{f}"
        );
        let f = arena_finding(&[a(None, 12, 9)], 2).unwrap();
        assert!(f.contains("12 of 64 MiB") && f.contains("root"), "{f}");
        assert!(arena_finding(&[], 2).is_none());
    }

    #[test]
    fn a_running_process_is_watched_and_a_missing_one_refused() {
        let me = std::process::id();
        let w = watch(me, Duration::from_millis(300), Duration::from_millis(50)).unwrap();
        assert_eq!(w.ending, WatchEnding::Completed);
        assert!(w.rss.len() >= 3, "{}", w.rss.len());
        assert!(!w.arenas.is_empty());
        assert!(w.seconds >= 0.3);
        let e = watch(u32::MAX, Duration::from_secs(1), Duration::from_millis(10)).unwrap_err();
        assert!(e.to_string().contains("no such process"), "{e}");
    }
}
