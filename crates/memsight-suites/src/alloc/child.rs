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
    configure(&mut cmd, config, capture);
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::input(format!("cannot start {:?}: {e}", cmd.get_program())))?;
    let pid = child.id();
    let stdin = child.stdin.take();
    let rx = forward_stdout(&mut child);
    let mut w = Watch {
        pid,
        started,
        stdin,
        rx,
        samples: Vec::new(),
        lines: Vec::new(),
        rss_after_free: None,
        arenas: Vec::new(),
        next_arenas: Duration::ZERO,
    };
    let ending = w.until_end(&mut child, limits)?;
    drop(w.stdin.take());
    while let Ok(line) = w.rx.recv_timeout(Duration::from_millis(100)) {
        w.lines.push((started.elapsed().as_secs_f64(), line));
    }
    Ok(Watched {
        samples: w.samples,
        lines: w.lines,
        ending,
        seconds: started.elapsed().as_secs_f64(),
        rss_after_free: w.rss_after_free,
        arenas: w.arenas,
    })
}

/// The configuration's preload and environment, a stdin pipe for the `exit` line, and stdout
/// piped or discarded.
fn configure(cmd: &mut Command, config: &AllocConfig, capture: bool) {
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
}

/// The child's stdout lines, as they come. The reader is detached: a grandchild may keep the
/// pipe open after the child is gone; the watch never waits for it.
fn forward_stdout(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel::<String>();
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
    rx
}

/// A watch in progress: what has been sampled and read so far.
struct Watch {
    pid: u32,
    started: Instant,
    stdin: Option<std::process::ChildStdin>,
    rx: mpsc::Receiver<String>,
    samples: Vec<RssSample>,
    lines: Vec<(f64, String)>,
    rss_after_free: Option<u64>,
    arenas: Vec<ArenaSample>,
    next_arenas: Duration,
}

impl Watch {
    /// Samples and reads every `limits.interval` until the child ends or is stopped.
    fn until_end(&mut self, child: &mut Child, limits: &Limits) -> Result<Ending> {
        loop {
            if let Some(ending) = self.sample(child, limits) {
                return Ok(ending);
            }
            self.read_lines();
            match child.try_wait() {
                Ok(Some(status)) => {
                    use std::os::unix::process::ExitStatusExt;
                    return Ok(match (status.code(), status.signal()) {
                        (Some(c), _) => Ending::Exited(c),
                        (None, Some(s)) if cancel::stopped_with_us(s) => Ending::Interrupted,
                        (None, Some(s)) => Ending::Signalled(s),
                        _ => Ending::Exited(-1),
                    });
                }
                Ok(None) => {}
                Err(e) => {
                    stop(child);
                    return Err(Error::system(format!("waiting for the child failed: {e}")));
                }
            }
            if cancel::requested() {
                stop(child);
                return Ok(Ending::Interrupted);
            }
            if self.started.elapsed() > limits.timeout {
                stop(child);
                return Ok(Ending::TimedOut);
            }
            std::thread::sleep(limits.interval);
        }
    }

    /// One RSS sample (and the arenas when due); stops the child past the memory cap.
    fn sample(&mut self, child: &mut Child, limits: &Limits) -> Option<Ending> {
        let t = self.started.elapsed().as_secs_f64();
        if self.started.elapsed() >= self.next_arenas {
            self.next_arenas += arenas::SAMPLE_EVERY;
            self.arenas.extend(arenas::sample(self.pid, t));
        }
        let r = rss_bytes(self.pid)?;
        self.samples.push(RssSample {
            seconds: t,
            rss_bytes: r,
        });
        if r > limits.max_rss {
            stop(child);
            return Some(Ending::MemoryCap);
        }
        None
    }

    /// The lines printed since the last read; on the workload's `freed` line, what the
    /// allocator kept, then the `exit` that lets the workload end.
    fn read_lines(&mut self) {
        while let Ok(line) = self.rx.try_recv() {
            if line.contains("\"event\":\"freed\"") {
                // Let the allocator settle briefly, then measure what it kept.
                std::thread::sleep(Duration::from_millis(50));
                self.rss_after_free = rss_bytes(self.pid);
                let t = self.started.elapsed().as_secs_f64();
                self.arenas.extend(arenas::sample(self.pid, t));
                if let Some(mut s) = self.stdin.take() {
                    let _ = writeln!(s, "exit");
                }
            }
            self.lines
                .push((self.started.elapsed().as_secs_f64(), line));
        }
    }
}
