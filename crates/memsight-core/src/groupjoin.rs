//! Putting a program memsight starts into a kernel group (a memory cgroup, a resctrl monitoring
//! group) before its first instruction: the child writes its own pid to the group's task file
//! between fork and exec, so that nothing it allocates, caches or moves escapes the group.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::Command;

/// Makes the program started by `cmd` write its pid to `tasks` (a group's `cgroup.procs` or
/// `tasks`, kept open by the caller until the spawn) between fork and exec. A refused write
/// fails the spawn with its error, so the caller can start the program without the group.
pub fn on_exec(cmd: &mut Command, tasks: &File) {
    use std::os::unix::process::CommandExt;
    let fd = tasks.as_raw_fd();
    // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe calls
    // are allowed: it calls getpid and write on an fd the parent keeps open, formats into a
    // stack buffer and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let mut buf = [0u8; 24];
            let n = decimal(libc::getpid() as u64, &mut buf);
            if libc::write(fd, buf.as_ptr().cast(), n) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `<pid>` for a process's first group, `<pid>-<n>` after: two profiles in one process (tests,
/// a library user) do not collide.
pub(crate) fn unique_suffix() -> String {
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    match MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
        0 => std::process::id().to_string(),
        n => format!("{}-{n}", std::process::id()),
    }
}

/// Writes `n` in decimal, then a newline, into `buf`; returns the length. No allocation: it
/// runs between fork and exec.
fn decimal(mut n: u64, buf: &mut [u8; 24]) -> usize {
    let mut digits = [0u8; 20];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[i] = digits[len - 1 - i];
    }
    buf[len] = b'\n';
    len + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_written_without_allocating() {
        let mut buf = [0u8; 24];
        let n = decimal(4_194_304, &mut buf);
        assert_eq!(&buf[..n], b"4194304\n");
        let n = decimal(0, &mut buf);
        assert_eq!(&buf[..n], b"0\n");
    }
}
