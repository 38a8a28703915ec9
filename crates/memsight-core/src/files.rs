//! Files written whole or not at all: beside their final path, then renamed into place, so a
//! reader (node_exporter's textfile collector, a dashboard, a query engine) sees the old file or
//! the new one, never part of one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::Error;

/// The directory a file goes into (`.` for a bare name).
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Refuses, in one line and before any work, a destination whose directory does not exist or
/// that is itself a directory.
pub fn check_destination(path: &Path) -> Result<(), Error> {
    let dir = directory(path);
    if path.is_dir() || !dir.is_dir() {
        let which = if path.is_dir() { path } else { dir };
        return Err(Error::input(format!(
            "cannot write {}: {} is {}",
            path.display(),
            which.display(),
            if path.is_dir() {
                "a directory"
            } else {
                "not a directory"
            }
        )));
    }
    Ok(())
}

/// Where `path` leads: a symbolic link's target (the link is kept, its target written), else
/// the path itself.
fn destination(path: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `path` exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO): such a
/// destination is written in place, never renamed over.
fn special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Writes `path` with `fill`, atomically; the file is readable by others (mode 0644), as one
/// written with the default umask would be, and on disk before it is renamed into place. A
/// symbolic link's target is written; a destination that is not a regular file is written in
/// place (renaming over `/dev/null` as root would replace the device).
pub fn write_atomic<E: From<Error>>(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), E> {
    let target = destination(path);
    let path = target.as_path();
    let io = |e| Error::io("write", path, e);
    if special(path) {
        let mut out = BufWriter::new(File::options().write(true).open(path).map_err(io)?);
        fill(&mut out)?;
        return out.flush().map_err(|e| io(e).into());
    }
    let tmp = tempfile::Builder::new()
        .prefix(".memsight-")
        .tempfile_in(directory(path))
        .map_err(io)?;
    let mut out = BufWriter::new(tmp.reopen().map_err(io)?);
    fill(&mut out)?;
    out.flush().map_err(io)?;
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Writes `text` to `path` whole or not at all ([`write_atomic`]).
pub fn write_text(path: &Path, text: &str) -> Result<(), Error> {
    write_atomic(path, |w| {
        w.write_all(text.as_bytes())
            .map_err(|e| Error::io("write", path, e))
    })
}

/// Refuses, before any work, a destination [`write_atomic`] could not write: its directory
/// missing, not a directory, or not writable. Unlike opening the file, this leaves a file
/// already there as it was (a run stopped before it writes its result leaves no empty stub).
pub fn check_writable(path: &Path) -> Result<(), Error> {
    let target = destination(path);
    let io = |e| Error::io("write", &target, e);
    if special(&target) {
        return File::options()
            .write(true)
            .open(&target)
            .map(drop)
            .map_err(io);
    }
    check_destination(&target)?;
    if target.exists() {
        // (Opened for writing, not truncated: a file this user may not write is refused now.)
        File::options().write(true).open(&target).map_err(io)?;
    }
    tempfile::Builder::new()
        .prefix(".memsight-")
        .tempfile_in(directory(&target))
        .map(drop)
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::FileTypeExt;

    /// `-o /dev/null` and a symbolic link are written through, never renamed over.
    #[test]
    fn special_files_and_links_are_written_through() {
        check_writable(Path::new("/dev/null")).unwrap();
        write_text(Path::new("/dev/null"), "x").unwrap();
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        let link = d.path().join("link.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        check_writable(&link).unwrap();
        write_text(&link, "new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_file_is_written_whole_or_left_as_it_was() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        write_atomic::<Error>(&p, |w| {
            w.write_all(b"one").map_err(|e| Error::io("write", &p, e))
        })
        .unwrap();
        let failed = write_atomic(&p, |w| {
            w.write_all(b"half").unwrap();
            Err(Error::input("stopped"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
        assert!(check_destination(&p).is_ok());
        assert!(check_destination(d.path()).is_err());
        assert!(check_destination(&d.path().join("no/such/file")).is_err());
    }
}
