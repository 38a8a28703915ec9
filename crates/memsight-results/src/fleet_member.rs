//! One rank of `memsight run --fleet DIR` (or a suite's `--fleet DIR`): claim the rank, say when it runs, finishes or fails,
//! and — on rank 0 — wait for the others and write the fleet report.
//!
//! Layout: `DIR/JOB/rank-NNNNN.status.json` (the rank's state, written atomically: a temporary
//! file renamed over it) and `DIR/JOB/rank-NNNNN/` (the usual run directory: run.json,
//! report.html), where JOB is the launcher's job id (`1.0` for Slurm job 1 step 0), or `fleet`.
//! The status file is created exclusively, so a second process claiming the same rank — the
//! sign that the launcher's variables did not reach it — is refused instead of overwriting.
//! Rank 0 writes `DIR/JOB/fleet.json` and `fleet.html`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memsight_core::{Error, cancel};

use crate::fleet_report::{State, Status};
use crate::launcher::Place;

/// A claimed rank.
pub struct Rank {
    pub place: Place,
    /// DIR/JOB.
    pub job_dir: PathBuf,
    /// This rank's run directory.
    pub out_dir: PathBuf,
    /// The result's file name in `out_dir` (`run.json`, `rowbuffer.json`).
    file: String,
    status: Status,
}

fn status_path(job_dir: &Path, rank: usize) -> PathBuf {
    job_dir.join(format!("rank-{rank:05}.status.json"))
}

impl Rank {
    /// Claims this process's rank under `dir`.
    pub fn claim(dir: &Path, place: Place, host: &str, file: &str) -> Result<Rank, Error> {
        let job = place
            .job
            .clone()
            .map(|j| j.replace(['/', '\\'], "_"))
            .unwrap_or_else(|| "fleet".into());
        let job_dir = dir.join(job);
        let out_dir = job_dir.join(format!("rank-{:05}", place.rank));
        std::fs::create_dir_all(&out_dir).map_err(|e| {
            Error::input(format!(
                "cannot create {}: {e}; --fleet needs a directory every node can write (a shared file system)",
                out_dir.display()
            ))
        })?;
        let status = Status {
            rank: place.rank,
            size: place.size,
            host: host.to_string(),
            pid: std::process::id(),
            launcher: place.launcher,
            local_size: place.local_size,
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            state: State::Running,
            reason: None,
            result: None,
        };
        let path = status_path(&job_dir, place.rank);
        let text = serde_json::to_string_pretty(&status).expect("status serialises");
        // create_new: the rank is ours alone.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                let who = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Status>(&t).ok())
                    .map_or("another process".to_string(), |s| format!("{} (pid {})", s.host, s.pid));
                Error::input(format!(
                    "rank {} in {} is already taken by {who} ({e}): several processes think they are rank {} — the launcher's rank variables did not reach them, or DIR holds an earlier fleet of the same job; use a fresh directory",
                    place.rank,
                    job_dir.display(),
                    place.rank
                ))
            })?;
        use std::io::Write;
        f.write_all(text.as_bytes())
            .map_err(|e| Error::io("write", &path, e))?;
        Ok(Rank {
            place,
            job_dir,
            out_dir,
            file: file.to_string(),
            status,
        })
    }

    /// Records how the rank ended.
    pub fn finish(&mut self, state: State, reason: Option<String>) -> Result<(), Error> {
        self.status.state = state;
        self.status.reason = reason;
        if state != State::Failed {
            self.status.result = Some(format!("rank-{:05}/{}", self.place.rank, self.file));
        }
        let text = serde_json::to_string_pretty(&self.status).expect("status serialises");
        memsight_core::files::write_text(&status_path(&self.job_dir, self.place.rank), &text)
    }

    /// Rank 0: waits until every rank has finished (or failed) or `timeout` passes or Ctrl-C
    /// comes; returns how many were still running.
    pub fn wait_for_others(&self, timeout: Duration, tick: &dyn Fn(usize, usize)) -> usize {
        let start = Instant::now();
        loop {
            let running = (0..self.place.size)
                .filter(|&r| {
                    let s = std::fs::read_to_string(status_path(&self.job_dir, r))
                        .ok()
                        .and_then(|t| serde_json::from_str::<Status>(&t).ok());
                    s.is_none_or(|s| s.state == State::Running)
                })
                .count();
            tick(self.place.size - running, self.place.size);
            if running == 0 || start.elapsed() >= timeout || cancel::requested() {
                return running;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
