//! Errors with a kind, and the one table that turns a kind into an exit code.
//!
//! Every command exits with one of [`Exit`]'s codes: scripts, health checks (NHC, Slurm's
//! `HealthCheckProgram`) and CI read them, so each means one thing. The code is derived from the
//! error's kind here, never chosen at a call site.

use std::path::{Path, PathBuf};

/// What an exit code says. `docs/operations.md` has the same table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked for was done.
    Ok = 0,
    /// A check, a regression threshold or a fleet outlier test failed (the command itself ran).
    Failed = 1,
    /// Bad input: a flag, a value, a file's content or a path that is not there.
    Input = 2,
    /// The system refused (permissions, no space, a corrupt database, a missing kernel feature)
    /// or a measurement could not be made.
    System = 3,
    /// Ctrl-C or SIGTERM before anything could be kept.
    Interrupted = 130,
}

impl Exit {
    /// The process exit status.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// An error that memsight reports on one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something that cannot be done as asked. The message names the problem
    /// and the fix.
    #[error("{0}")]
    Input(String),
    /// A buffer larger than this process may have (MemAvailable, its cgroup's limit). Bad input
    /// when the size was asked for; a default that cannot fit lets `memsight run` skip the suite
    /// with this reason instead of failing the run.
    #[error("{0}")]
    DoesNotFit(String),
    /// Reading or writing a file failed for a reason of the system (permission, space, a device
    /// error). A path that does not exist is bad input instead ([`Error::io`] decides).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The history database cannot be opened, read or written (corrupt, locked, read-only).
    #[error("{0}")]
    Storage(String),
    /// The operating system refused or failed something that should have worked.
    #[error("{0}")]
    System(String),
    /// A measurement ran but gave nothing usable (every sample disturbed, a kernel that could not
    /// be verified).
    #[error("{0}")]
    Measurement(String),
    /// Ctrl-C (or SIGTERM) came before there was anything to keep.
    #[error("interrupted before anything was measured")]
    Interrupted,
}

impl Error {
    /// Bad input: a one-line message naming the problem and the fix.
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }

    /// A failure of the system, with the OS error appended.
    pub fn system(msg: impl Into<String>) -> Self {
        Error::System(msg.into())
    }

    /// The history database failed.
    pub fn storage(msg: impl Into<String>) -> Self {
        Error::Storage(msg.into())
    }

    /// A measurement that gave nothing usable.
    pub fn measurement(msg: impl Into<String>) -> Self {
        Error::Measurement(msg.into())
    }

    /// An I/O failure on `path` (`action` is "read", "write", "create" …). A path that does not
    /// exist, or a directory where a file was wanted, is the user's input and is said as such.
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        use std::io::ErrorKind::{IsADirectory, NotADirectory, NotFound};
        match source.kind() {
            NotFound | IsADirectory | NotADirectory => {
                Error::Input(format!("cannot {action} {}: {source}", path.display()))
            }
            _ => Error::Io {
                action,
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// The last OS error (`errno`) with context.
    pub fn last_os(context: &str) -> Self {
        Error::System(format!("{context}: {}", std::io::Error::last_os_error()))
    }

    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Input(_) | Error::DoesNotFit(_) => Exit::Input,
            Error::Io { .. } | Error::Storage(_) | Error::System(_) | Error::Measurement(_) => {
                Exit::System
            }
            Error::Interrupted => Exit::Interrupted,
        }
    }
}

/// Result with memsight's error.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_one_code() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let p = Path::new("/x");
        assert_eq!(Error::input("x").exit().code(), 2);
        assert_eq!(Error::io("write", p, denied).exit().code(), 3);
        assert_eq!(Error::io("read", p, missing).exit().code(), 2);
        assert_eq!(Error::DoesNotFit("x".into()).exit().code(), 2);
        assert_eq!(Error::storage("x").exit().code(), 3);
        assert_eq!(Error::system("x").exit().code(), 3);
        assert_eq!(Error::measurement("x").exit().code(), 3);
        assert_eq!(Error::Interrupted.exit().code(), 130);
        assert_eq!(Exit::Failed.code(), 1);
        assert_eq!(Exit::Ok.code(), 0);
    }
}
