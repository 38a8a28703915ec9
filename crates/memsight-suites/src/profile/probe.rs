//! The probe chase that reads memory latency while the program runs: one thread pinned on a CPU
//! of its own chases a DRAM-sized chain (the loaded-latency curves' method) in samples of about
//! 2 ms, and hands on one reading per window: the median of the window's clean samples (those in
//! which it kept its CPU), and how many it dropped.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_core::stats::Taken;
use memsight_core::{Error, Result};

/// One window's latency.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Since the probe's origin, at the window's end, s.
    pub seconds: f64,
    /// Median of the clean samples, ns per load (`None`: every sample was disturbed).
    pub ns: Option<f64>,
    pub clean: usize,
    pub dropped: usize,
}

/// A running probe.
pub struct Probe {
    stop: std::sync::Arc<AtomicBool>,
    windows: std::sync::Arc<Mutex<Vec<Window>>>,
    handle: Option<std::thread::JoinHandle<()>>,
    /// Latency with the program not yet started: the windows of the first `idle` seconds.
    pub idle: Vec<Window>,
}

impl Probe {
    /// Starts the probe on `cpu` over `bytes` and returns once it has read the idle latency for
    /// `idle` (before the program starts).
    pub fn start(
        cpu: usize,
        bytes: u64,
        env: &Environment,
        window: Duration,
        idle: Duration,
        origin: Instant,
    ) -> Result<Probe> {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let windows = std::sync::Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let env = env.clone();
        let (s, w) = (stop.clone(), windows.clone());
        let handle = std::thread::spawn(move || {
            let run = || -> Result<Buffer> {
                memsight_core::pin::pin_current_thread(cpu)?;
                Buffer::allocate(
                    BufferRequest {
                        bytes,
                        kind: PageKind::Thp,
                        node: None,
                        dax: None,
                    },
                    &env,
                )
            };
            let mut buf = match run() {
                Ok(b) => b,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let (mut chains, per_sample) = crate::measure::chase::sampling_chain(
                &mut buf.as_mut_slice()[..bytes as usize],
                0x9806e,
            );
            let _ = ready_tx.send(Ok(()));
            while !s.load(Ordering::Relaxed) {
                let end = Instant::now() + window;
                let mut taken: Vec<Taken> = Vec::new();
                while Instant::now() < end && !s.load(Ordering::Relaxed) {
                    taken.push(crate::measure::chase::chase_sample(&mut chains, per_sample));
                }
                w.lock()
                    .expect("probe windows")
                    .push(summarise(&taken, origin.elapsed().as_secs_f64()));
            }
        });
        ready_rx
            .recv()
            .map_err(|_| Error::system("the probe thread ended before it was ready"))??;
        std::thread::sleep(idle);
        let idle = std::mem::take(&mut *windows.lock().expect("probe windows"));
        Ok(Probe {
            stop,
            windows,
            handle: Some(handle),
            idle,
        })
    }

    /// The windows read since the last call.
    pub fn take(&self) -> Vec<Window> {
        std::mem::take(&mut *self.windows.lock().expect("probe windows"))
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A window's reading from its samples: the median of the clean ones.
fn summarise(taken: &[Taken], seconds: f64) -> Window {
    let mut clean: Vec<f64> = taken
        .iter()
        .filter(|t| t.disturbed.is_none())
        .map(|t| t.value)
        .collect();
    clean.sort_by(f64::total_cmp);
    Window {
        seconds,
        ns: (!clean.is_empty()).then(|| clean[clean.len() / 2]),
        clean: clean.len(),
        dropped: taken.len() - clean.len(),
    }
}

/// The median of windows' latencies, ns.
pub fn median_ns(windows: &[Window]) -> Option<f64> {
    let mut v: Vec<f64> = windows.iter().filter_map(|w| w.ns).collect();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_the_median_of_its_clean_samples() {
        let d = Some(memsight_core::cpuclock::Disturbance::LostCpu);
        let t = |value, disturbed| Taken { value, disturbed };
        let w = summarise(
            &[t(100.0, None), t(900.0, d), t(110.0, None), t(105.0, None)],
            1.0,
        );
        assert_eq!((w.ns, w.clean, w.dropped), (Some(105.0), 3, 1));
        assert_eq!(summarise(&[t(900.0, d)], 1.0).ns, None);
    }
}
