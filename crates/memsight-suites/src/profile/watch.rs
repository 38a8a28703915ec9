//! Starting the program (or finding the process) and reading it from `/proc` until it ends, the
//! time limit passes or Ctrl-C; a started program is always reaped.

use crate::measure::progress::Tick;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memsight_core::sysfs::FsRoot;
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result, cancel};
use memsight_core::{memcg, resctrl};

use super::procfs::{self, Snapshot};
use super::{Ending, ProfileSettings};
use crate::alloc::arenas::{self, ArenaSample};

/// Starts the program, or finds the process, and reads it until it ends.
pub(super) fn watch_target(
    a: &ProfileSettings,
    origin: Instant,
    tick: Tick<'_>,
) -> Result<(Watched, String)> {
    let interval = Duration::from_millis(a.interval_ms);
    let live = FsRoot::live();
    if let Some(pid) = a.pid {
        return watch_pid(a, pid, &live, interval, origin, tick);
    }
    // The program runs in a memory cgroup of its own where one can be made, so that the page
    // cache it brings in is charged to it and can be read; and in a resctrl monitoring group of
    // its own where bandwidth is monitored, so that its own memory traffic is counted.
    let own = memcg::ProgramGroup::create(&live);
    let mon = resctrl::ProgramMon::create(&live, std::process::id());
    let (child, acct) = start_in_groups(a, &own, mon)?;
    let limit = Duration::from_secs_f64(a.timeout_s);
    let w = sample(
        child.id(),
        Some(child),
        &acct,
        limit,
        interval,
        origin,
        tick,
    );
    // The groups go once the program is reaped (sample always reaps it).
    drop((acct, own));
    Ok((w, a.command.join(" ")))
}

/// `--pid`: the running process, read in the memory cgroup it is in and in a resctrl group
/// its threads join, for `--for`.
fn watch_pid(
    a: &ProfileSettings,
    pid: u32,
    live: &FsRoot,
    interval: Duration,
    origin: Instant,
    tick: Tick<'_>,
) -> Result<(Watched, String)> {
    let name = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            Error::input(format!("--pid {pid}: no such process (or a kernel thread)"))
        })?;
    let name = String::from_utf8_lossy(&name)
        .replace('\0', " ")
        .trim()
        .to_string();
    let mon = resctrl::ProgramMon::create(live, pid).and_then(|m| match m.adopt(pid) {
        0 => Err(format!(
            "resctrl memory-bandwidth monitoring: no thread of pid {pid} could join the group"
        )),
        _ => Ok(m),
    });
    let acct = Accounting {
        memory: group_of_pid(live, pid),
        mon,
        _unjoined: None,
    };
    let limit = Duration::from_secs_f64(a.watch_s);
    let w = sample(pid, None, &acct, limit, interval, origin, tick);
    Ok((w, name))
}

/// Starts the program in the groups made for it; where it cannot join them, starts it without
/// and says why nothing is read from them.
fn start_in_groups(
    a: &ProfileSettings,
    own: &std::result::Result<memcg::ProgramGroup, String>,
    mon: std::result::Result<resctrl::ProgramMon, String>,
) -> Result<(std::process::Child, Accounting)> {
    let mut cmd = command(a);
    if let Ok(g) = own {
        g.join_on_exec(&mut cmd);
    }
    if let Ok(m) = &mon {
        m.join_on_exec(&mut cmd);
    }
    match cmd.spawn() {
        Ok(c) => {
            let memory = own.as_ref().map(|g| Found {
                dir: g.group.clone(),
                own: true,
            });
            let acct = Accounting {
                memory: memory.map_err(Clone::clone),
                mon,
                _unjoined: None,
            };
            Ok((c, acct))
        }
        // A hook's write was refused (or the program cannot start: then the second attempt
        // says so).
        Err(e) if own.is_ok() || mon.is_ok() => {
            let why = format!("the program could not join the groups made for it ({e})");
            let acct = Accounting {
                memory: Err(why.clone()),
                mon: Err(why),
                _unjoined: mon.ok(),
            };
            Ok((spawn(a)?, acct))
        }
        Err(e) => Err(cannot_start(a, e)),
    }
}

/// What is read beside `/proc`: a memory cgroup (page cache, swap) and a resctrl monitoring
/// group (the program's own memory traffic), or why not.
struct Accounting {
    memory: std::result::Result<Found, String>,
    mon: std::result::Result<resctrl::ProgramMon, String>,
    /// A monitoring group the program could not join: kept, unread, until the program is
    /// reaped, when the other groups go too.
    _unjoined: Option<resctrl::ProgramMon>,
}

/// The program's command: no stdin, its output on memsight's stderr (so that `--json` stays
/// one document).
fn command(a: &ProfileSettings) -> Command {
    let mut cmd = Command::new(&a.command[0]);
    cmd.args(&a.command[1..]).stdin(Stdio::null());
    if let Ok(err) = std::os::fd::AsFd::as_fd(&std::io::stderr()).try_clone_to_owned() {
        cmd.stdout(Stdio::from(err));
    }
    cmd
}

fn spawn(a: &ProfileSettings) -> Result<std::process::Child> {
    command(a).spawn().map_err(|e| cannot_start(a, e))
}

fn cannot_start(a: &ProfileSettings, e: std::io::Error) -> Error {
    Error::input(format!("profile: cannot start {}: {e}", a.command[0]))
}

/// The memory cgroup whose page cache and swap are read.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub(super) dir: memcg::GroupDir,
    /// Made for the program by memsight (else the group a watched process is in, which other
    /// processes may share).
    pub(super) own: bool,
}

/// A running process's memory cgroup, unless it is a hierarchy's root (the whole machine).
fn group_of_pid(fs: &FsRoot, pid: u32) -> std::result::Result<Found, String> {
    match memcg::group_of(fs, Some(pid)) {
        Some(g) if g.is_root() => Err(format!(
            "page cache charged to pid {pid} is not separable: it is in the root memory cgroup, whose figures are the whole machine's (run it under systemd-run --scope, Slurm or a container to give it a group)"
        )),
        Some(dir) => Ok(Found { dir, own: false }),
        None => Err(format!(
            "no memory cgroup readable for pid {pid} (no memory controller mounted): page cache it brought in is not counted"
        )),
    }
}

/// What sampling gave.
pub(super) struct Watched {
    pub(super) pid: u32,
    pub(super) timeline: Vec<Snapshot>,
    /// Thread readings per CPU.
    pub(super) cpus: BTreeMap<usize, u64>,
    pub(super) arenas: Vec<ArenaSample>,
    pub(super) ending: Ending,
    pub(super) seconds: f64,
    /// The memory cgroup read, and the most processes seen in it; or why none was.
    pub(super) group: std::result::Result<(Found, usize), String>,
    /// The program's own memory traffic counted by resctrl over the watch; or why not.
    pub(super) monitored: std::result::Result<super::MonitoredTraffic, String>,
}

/// Reads `pid` every `interval` until it ends, `limit` passes or Ctrl-C; a started `child` is
/// stopped at the limit and always reaped.
fn sample(
    pid: u32,
    mut child: Option<std::process::Child>,
    acct: &Accounting,
    limit: Duration,
    interval: Duration,
    origin: Instant,
    tick: Tick<'_>,
) -> Watched {
    let mut r = Readings::new(origin);
    let started = r.started;
    let ending = loop {
        let t = started.elapsed();
        if let Some(e) = child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
            break exit_ending(e);
        }
        if !r.snapshot(pid, t, acct, tick) && child.is_none() {
            break Ending::ProcessExited;
        }
        r.threads_and_arenas(pid, t, interval);
        if cancel::requested() {
            break Ending::Interrupted;
        }
        if t >= limit {
            break if child.is_some() {
                Ending::TimedOut
            } else {
                Ending::Completed
            };
        }
        // Short sleeps, so that the program's exit and Ctrl-C are answered within 20 ms.
        let wake = t + interval;
        while started.elapsed() < wake.min(limit) && !cancel::requested() {
            if child
                .as_mut()
                .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
            {
                break;
            }
            std::thread::sleep(
                Duration::from_millis(20).min(wake.saturating_sub(started.elapsed())),
            );
        }
    };
    if let Some(mut c) = child {
        if matches!(ending, Ending::TimedOut | Ending::Interrupted) {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
    Watched {
        pid,
        timeline: r.timeline,
        cpus: r.cpus,
        arenas: r.arenas,
        ending,
        seconds: started.elapsed().as_secs_f64(),
        group: acct.memory.clone().map(|g| (g, r.members)),
        monitored: monitored(&acct.mon, r.unreadable),
    }
}

/// What the readings so far gave.
struct Readings {
    origin: Instant,
    started: Instant,
    timeline: Vec<Snapshot>,
    cpus: BTreeMap<usize, u64>,
    arenas: Vec<ArenaSample>,
    next_arenas: Duration,
    numa: procfs::NumaMaps,
    /// Why the monitoring group could not be read at the last reading that failed.
    unreadable: Option<String>,
    /// The most processes seen in the memory cgroup.
    members: usize,
}

impl Readings {
    fn new(origin: Instant) -> Self {
        Readings {
            origin,
            started: Instant::now(),
            timeline: Vec::new(),
            cpus: BTreeMap::new(),
            arenas: Vec::new(),
            next_arenas: Duration::ZERO,
            numa: procfs::NumaMaps::default(),
            unreadable: None,
            members: 0,
        }
    }

    /// Seconds since `origin` of a reading `t` after the start.
    fn since(&self, t: Duration) -> f64 {
        (self.started - self.origin + t).as_secs_f64()
    }

    /// One reading of the process, with its cgroup and monitored traffic; false when the
    /// process could not be read (gone).
    fn snapshot(&mut self, pid: u32, t: Duration, acct: &Accounting, tick: Tick<'_>) -> bool {
        let Some(mut s) = procfs::snapshot(pid, self.since(t), &mut self.numa) else {
            return false;
        };
        if let Some(d) = acct.memory.as_ref().ok().map(|f| &f.dir) {
            s.group = d.memory();
            self.members = self.members.max(d.processes().len());
        }
        match acct.mon.as_ref().ok().map(|m| m.since_start()) {
            Some(Ok(c)) => s.monitored_bytes = Some(c.total),
            Some(Err(why)) => self.unreadable = Some(why),
            None => {}
        }
        tick(&format!("{} resident", format_bytes(s.held.rss)));
        self.timeline.push(s);
        true
    }

    /// The CPUs its threads are on, and its glibc arenas when due.
    fn threads_and_arenas(&mut self, pid: u32, t: Duration, interval: Duration) {
        for c in procfs::thread_cpus(pid) {
            *self.cpus.entry(c).or_insert(0u64) += 1;
        }
        if t >= self.next_arenas {
            self.next_arenas = t + arenas::SAMPLE_EVERY.max(interval);
            let at = self.since(t);
            self.arenas.extend(arenas::sample(pid, at));
        }
    }
}

/// The traffic the monitoring group counted from its making to now, or why there is none.
fn monitored(
    made: &std::result::Result<resctrl::ProgramMon, String>,
    unreadable: Option<String>,
) -> std::result::Result<super::MonitoredTraffic, String> {
    let m = made.as_ref().map_err(Clone::clone)?;
    if let Some(why) = unreadable {
        return Err(why);
    }
    let c = m.since_start()?;
    let seconds = m.made.elapsed().as_secs_f64();
    Ok(super::MonitoredTraffic {
        gbs: c.total as f64 / seconds / 1e9,
        local_share: c.local.map(|l| l as f64 / c.total.max(1) as f64),
        bytes: c.total,
        seconds,
        group: m.mon.dir.display().to_string(),
    })
}

fn exit_ending(e: std::process::ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (e.code(), e.signal()) {
        (Some(c), _) => Ending::Exited(c),
        (None, Some(s)) if cancel::stopped_with_us(s) => Ending::Interrupted,
        (None, Some(s)) => Ending::Signalled(s),
        (None, None) => Ending::Exited(-1),
    }
}
