//! Running one program under one allocator configuration: spawn it, sample its resident set
//! every few milliseconds from `/proc/PID/status`, read the progress lines it prints (the built-in
//! workload's), stop it at a time limit or a memory cap, and always reap it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memsight_core::{Error, Result, cancel};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arenas::{self, ArenaSample};
use super::configs::AllocConfig;

/// One RSS sample.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct RssSample {
    pub seconds: f64,
    pub rss_bytes: u64,
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Exited with this code.
    Exited(i32),
    /// Killed by a signal it received (not from memsight).
    Signalled(i32),
    /// memsight stopped it at the time limit.
    TimedOut,
    /// memsight stopped it at the memory cap.
    MemoryCap,
    /// Ctrl-C.
    Interrupted,
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Exited(code) => write!(f, "with exit code {code}"),
            Ending::Signalled(sig) => write!(f, "killed by signal {sig}"),
            Ending::TimedOut => f.write_str("at the time limit"),
            Ending::MemoryCap => f.write_str("at the memory cap"),
            Ending::Interrupted => f.write_str("interrupted (Ctrl-C)"),
        }
    }
}

/// What watching a child gave.
#[derive(Debug, Clone)]
pub struct Watched {
    pub samples: Vec<RssSample>,
    /// Lines the child printed on stdout, with the time they arrived.
    pub lines: Vec<(f64, String)>,
    pub ending: Ending,
    pub seconds: f64,
    /// RSS sampled right after the child printed its `freed` line (built-in workload).
    pub rss_after_free: Option<u64>,
    /// glibc arenas and threads, every [`arenas::SAMPLE_EVERY`].
    pub arenas: Vec<ArenaSample>,
}

/// Resident set of a process, bytes (`VmRSS`).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Limits of a watch.
pub struct Limits {
    pub interval: Duration,
    pub timeout: Duration,
    pub max_rss: u64,
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `cmd` (args included) under `config` and watches it. When the child prints a line
/// containing `"event":"freed"`, memsight samples its RSS and then writes a line to its stdin to
/// let it exit (the built-in workload waits for that).
/// With `capture` false the program's stdout is discarded (a user's command).
pub fn watch(
    mut cmd: Command,
    config: &AllocConfig,
    limits: &Limits,
    capture: bool,
) -> Result<Watched> {
    if let Some(lib) = &config.preload {
        let existing = std::env::var("LD_PRELOAD").unwrap_or_default();
        let value = if existing.is_empty() {
            lib.display().to_string()
        } else {
            format!("{}:{existing}", lib.display())
        };
        cmd.env("LD_PRELOAD", value);
    }
    for (k, v) in &config.env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped());
    cmd.stdout(if capture {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::input(format!("cannot start {:?}: {e}", cmd.get_program())))?;
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let (tx, rx) = mpsc::channel::<String>();
    // Detached: a grandchild may keep the pipe open after the child is gone; the watch never
    // waits for the reader.
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    } else {
        drop(tx);
    }
    let mut samples = Vec::new();
    let mut lines = Vec::new();
    let mut rss_after_free = None;
    let mut arena_samples = Vec::new();
    let mut next_arenas = Duration::ZERO;
    let ending = loop {
        let t = started.elapsed().as_secs_f64();
        if started.elapsed() >= next_arenas {
            next_arenas += arenas::SAMPLE_EVERY;
            arena_samples.extend(arenas::sample(pid, t));
        }
        if let Some(r) = rss_bytes(pid) {
            samples.push(RssSample {
                seconds: t,
                rss_bytes: r,
            });
            if r > limits.max_rss {
                stop(&mut child);
                break Ending::MemoryCap;
            }
        }
        while let Ok(line) = rx.try_recv() {
            if line.contains("\"event\":\"freed\"") {
                // Let the allocator settle briefly, then measure what it kept.
                std::thread::sleep(Duration::from_millis(50));
                rss_after_free = rss_bytes(pid);
                arena_samples.extend(arenas::sample(pid, started.elapsed().as_secs_f64()));
                if let Some(mut s) = stdin.take() {
                    let _ = writeln!(s, "exit");
                }
            }
            lines.push((started.elapsed().as_secs_f64(), line));
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                use std::os::unix::process::ExitStatusExt;
                break match (status.code(), status.signal()) {
                    (Some(c), _) => Ending::Exited(c),
                    (None, Some(s)) => Ending::Signalled(s),
                    _ => Ending::Exited(-1),
                };
            }
            Ok(None) => {}
            Err(e) => {
                stop(&mut child);
                return Err(Error::system(format!("waiting for the child failed: {e}")));
            }
        }
        if cancel::requested() {
            stop(&mut child);
            break Ending::Interrupted;
        }
        if started.elapsed() > limits.timeout {
            stop(&mut child);
            break Ending::TimedOut;
        }
        std::thread::sleep(limits.interval);
    };
    drop(stdin);
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
        lines.push((started.elapsed().as_secs_f64(), line));
    }
    Ok(Watched {
        samples,
        lines,
        ending,
        seconds: started.elapsed().as_secs_f64(),
        rss_after_free,
        arenas: arena_samples,
    })
}
