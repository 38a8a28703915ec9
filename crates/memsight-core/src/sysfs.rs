//! Reading `/proc` and `/sys`, optionally under another root.
//!
//! When `HWLOC_FSROOT` is set (as for hwloc's recorded machine snapshots), hwloc reads the topology
//! from that directory and memsight reads its own `/proc` and `/sys` files from the same place, so
//! the environment report of a recorded machine is consistent. Live-only facts (CPUID, affinity of
//! this process, steal time sampling) are then left out.

use std::path::{Path, PathBuf};

/// Where `/proc` and `/sys` are.
#[derive(Debug, Clone)]
pub struct FsRoot {
    root: PathBuf,
    live: bool,
}

impl FsRoot {
    /// The root this process should read: `HWLOC_FSROOT` if set and not `/`, else `/`.
    pub fn from_env() -> Self {
        match std::env::var_os("HWLOC_FSROOT") {
            Some(r) if !r.is_empty() && Path::new(&r) != Path::new("/") => {
                Self::at(PathBuf::from(r))
            }
            _ => Self::live(),
        }
    }

    /// This machine.
    pub fn live() -> Self {
        FsRoot {
            root: PathBuf::from("/"),
            live: true,
        }
    }

    /// A recorded tree.
    pub fn at(root: PathBuf) -> Self {
        FsRoot { root, live: false }
    }

    /// True when this is the running machine, not a recorded tree.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// An absolute path (`/sys/...`) under this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// Writes a file at an absolute path under this root, with its directories: how tests and
    /// recordings build a tree. Refused on the live root.
    pub fn put(&self, abs: &str, text: &str) -> std::io::Result<()> {
        if self.live {
            return Err(std::io::Error::other(
                "refusing to write to the running machine's /sys",
            ));
        }
        let p = self.path(abs);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(p, text)
    }

    /// A file's contents, trimmed; `None` when missing or unreadable.
    pub fn read(&self, abs: &str) -> Option<String> {
        std::fs::read_to_string(self.path(abs))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// A file holding one integer.
    pub fn read_u64(&self, abs: &str) -> Option<u64> {
        self.read(abs)?.split_whitespace().next()?.parse().ok()
    }

    /// Names in a directory, sorted; empty when missing.
    pub fn list(&self, abs: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(abs))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// The bracketed choice in a sysfs selector file such as `always [madvise] never`.
pub fn selected(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// A `key: value kB` field of `/proc/meminfo` or `/proc/self/status`, in bytes when it has a kB
/// unit, raw otherwise.
pub fn kv_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let mut it = v.split_whitespace();
        let n: u64 = it.next()?.parse().ok()?;
        Some(if it.next() == Some("kB") { n * 1024 } else { n })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_and_fields() {
        assert_eq!(
            selected("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(selected("none"), None);
        let m = "MemTotal:       24608340 kB\nHugePages_Total:       0\n";
        assert_eq!(kv_field(m, "MemTotal"), Some(24608340 * 1024));
        assert_eq!(kv_field(m, "HugePages_Total"), Some(0));
        assert_eq!(kv_field(m, "Nope"), None);
    }
}
