//! Reading files that users name on the command line: bounded, and only things that end.
//!
//! A device such as `/dev/zero` never ends and a mistyped path can name a directory or a disk, so
//! every input file goes through [`read_bounded`]: regular files up to a size limit, named pipes
//! and standard input (`-`) read up to the same limit, everything else refused with one line.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::error::{Error, Result};

/// Inputs larger than this are refused: the largest real input (a `memsight run --thorough`
/// result with every sample) is a few MiB; dmidecode text of a 32-socket server is below 1 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads `path` (or standard input for `-`) whole, refusing what is not a regular file, a named
/// pipe or stdin, and anything beyond `limit` bytes. `what` names the input in messages.
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let shown = path.display();
    let too_big = || {
        Error::input(format!(
            "{what} '{shown}' is larger than {} MiB: not a file memsight reads",
            limit >> 20
        ))
    };
    if path.as_os_str() == "-" {
        return read_capped(std::io::stdin().lock(), limit).ok_or_else(too_big);
    }
    let unreadable = |e: std::io::Error| match Error::io("read", path, e) {
        // A path that is not there is the user's input: say which input it was.
        Error::Input(_) => Error::input(format!("cannot read {what} '{shown}': no such file")),
        other => other,
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(Error::input(format!(
            "{what} '{shown}' is a directory, not a file"
        )));
    }
    if kind.is_file() && meta.len() > limit {
        return Err(too_big());
    }
    if !(kind.is_file() || kind.is_fifo()) {
        return Err(Error::input(format!(
            "{what} '{shown}' is not a regular file (a device or socket): give a file, a named pipe or - for standard input"
        )));
    }
    let file = std::fs::File::open(path).map_err(unreadable)?;
    read_capped(file, limit).ok_or_else(too_big)
}

/// Reads to the end, or `None` once more than `limit` bytes arrived (so an endless pipe stops).
fn read_capped(r: impl Read, limit: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    r.take(limit + 1).read_to_end(&mut out).ok()?;
    (out.len() as u64 <= limit).then_some(out)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String> {
    String::from_utf8(read_bounded(path, limit, what)?)
        .map_err(|_| Error::input(format!("{what} '{}' is not text (UTF-8)", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20, "input").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_bounded(Path::new("/"), 1 << 20, "input").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 4096]).unwrap();
        let e = read_bounded(&big, 1024, "input").unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        assert_eq!(read_bounded(&big, 4096, "input").unwrap().len(), 4096);
        let e = read_bounded(&dir.path().join("missing"), 1024, "input").unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
    }

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        let endless = std::io::repeat(b'y');
        assert!(read_capped(endless, 1 << 16).is_none());
        assert_eq!(read_capped(&b"abc"[..], 3).unwrap(), b"abc");
    }
}
