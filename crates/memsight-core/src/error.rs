//! Errors with a class: bad input from the user (exit code 2) or a refusal by the system.

/// An error that memsight reports on one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something that cannot be done as asked (exit code 2). The message names
    /// the problem and the fix.
    #[error("{0}")]
    Input(String),
    /// The operating system refused or failed something that should have worked.
    #[error("{0}")]
    System(String),
    /// Ctrl-C (or SIGTERM) came before there was anything to keep (exit code 130).
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

    /// The last OS error (`errno`) with context.
    pub fn last_os(context: &str) -> Self {
        Error::System(format!("{context}: {}", std::io::Error::last_os_error()))
    }
}

/// Result with memsight's error.
pub type Result<T> = std::result::Result<T, Error>;
