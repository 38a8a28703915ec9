//! The kernel's weighted-interleave weights (`/sys/kernel/mm/mempolicy/weighted_interleave`,
//! Linux 6.9+): one file per node holding its weight (1–255), and since Linux 6.16 an `auto` file
//! (`true`: the kernel derives weights from the firmware's bandwidth figures; writing a node's
//! weight turns it off). The tier study changes them and must leave them as it found them: the
//! original values are saved before the first write and written back when the guard is dropped,
//! whether the sweep finished, failed or was interrupted.

use std::path::PathBuf;

use memsight_core::sysfs::FsRoot;
use memsight_core::{Error, Result};

/// The weights directory.
pub const SYSFS: &str = "/sys/kernel/mm/mempolicy/weighted_interleave";

/// Saved weights, restored on drop.
#[derive(Debug)]
pub struct WeightGuard {
    dir: PathBuf,
    /// (file, original contents), in the order they were saved.
    saved: Vec<(String, String)>,
    /// What restoring reported (kept for the results).
    pub problems: Vec<String>,
}

impl WeightGuard {
    /// Saves the weights of `nodes` (and the `auto` switch where it exists).
    pub fn save(fs: &FsRoot, nodes: &[usize]) -> Result<WeightGuard> {
        let dir = fs.path(SYSFS);
        if !dir.is_dir() {
            return Err(Error::input(format!(
                "{SYSFS} does not exist (Linux 6.9+ has weighted interleave): the sweep binds ranges with mbind instead"
            )));
        }
        let mut saved = Vec::new();
        for n in nodes {
            let file = format!("node{n}");
            let v = fs.read(&format!("{SYSFS}/{file}")).ok_or_else(|| {
                Error::input(format!(
                    "{SYSFS}/{file} is missing: node {n} cannot take a weight"
                ))
            })?;
            saved.push((file, v));
        }
        // Restored last: `auto` = true recomputes every weight, which must win over the files.
        if let Some(v) = fs.read(&format!("{SYSFS}/auto")) {
            saved.push(("auto".to_string(), v));
        }
        Ok(WeightGuard {
            dir,
            saved,
            problems: Vec::new(),
        })
    }

    /// Sets one node's weight (1–255).
    pub fn set(&self, node: usize, weight: u32) -> Result<()> {
        if !(1..=255).contains(&weight) {
            return Err(Error::input(format!(
                "weight {weight} for node {node}: the kernel takes 1 to 255"
            )));
        }
        let path = self.dir.join(format!("node{node}"));
        std::fs::write(&path, format!("{weight}\n")).map_err(|e| {
            Error::input(format!(
                "cannot write {}: {e} (setting interleave weights needs root)",
                path.display()
            ))
        })
    }

    /// Checks that weights can be written (root) by writing `node`'s saved weight back.
    pub fn probe_writable(&self, node: usize) -> Result<()> {
        let file = format!("node{node}");
        let weight = self
            .saved
            .iter()
            .find(|(f, _)| *f == file)
            .and_then(|(_, v)| v.parse().ok())
            .ok_or_else(|| Error::input(format!("node {node} has no saved weight")))?;
        self.set(node, weight)
    }

    /// Writes every saved value back; returns what could not be restored.
    pub fn restore(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        for (file, value) in &self.saved {
            // `auto` reads "true"/"false"; writing "false" when it already is has no effect.
            let path = self.dir.join(file);
            if let Err(e) = std::fs::write(&path, format!("{value}\n")) {
                problems.push(format!("could not restore {}: {e}", path.display()));
            }
        }
        self.saved.clear();
        self.problems.extend(problems.iter().cloned());
        problems
    }
}

impl Drop for WeightGuard {
    fn drop(&mut self) {
        if !self.saved.is_empty() {
            for p in self.restore() {
                eprintln!("memsight: {p}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(auto: Option<&str>) -> (tempfile::TempDir, FsRoot) {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join(SYSFS.trim_start_matches('/'));
        std::fs::create_dir_all(&w).unwrap();
        std::fs::write(w.join("node0"), "1\n").unwrap();
        std::fs::write(w.join("node2"), "1\n").unwrap();
        if let Some(a) = auto {
            std::fs::write(w.join("auto"), format!("{a}\n")).unwrap();
        }
        let fs = FsRoot::at(dir.path().to_path_buf());
        (dir, fs)
    }

    fn read(fs: &FsRoot, f: &str) -> String {
        fs.read(&format!("{SYSFS}/{f}")).unwrap()
    }

    #[test]
    fn weights_are_set_and_restored_on_drop() {
        let (_d, fs) = tree(Some("true"));
        {
            let g = WeightGuard::save(&fs, &[0, 2]).unwrap();
            g.set(0, 3).unwrap();
            g.set(2, 1).unwrap();
            // What the kernel does when a weight is written: auto turns off.
            std::fs::write(fs.path(&format!("{SYSFS}/auto")), "false\n").unwrap();
            assert_eq!(read(&fs, "node0"), "3");
        }
        assert_eq!(read(&fs, "node0"), "1");
        assert_eq!(read(&fs, "node2"), "1");
        assert_eq!(read(&fs, "auto"), "true", "auto restored last");
    }

    #[test]
    fn restore_happens_when_the_sweep_fails_midway() {
        let (_d, fs) = tree(None);
        let r: Result<()> = (|| {
            let g = WeightGuard::save(&fs, &[0, 2])?;
            g.set(0, 4)?;
            g.set(2, 0)?; // refused: the kernel takes 1–255
            Ok(())
        })();
        assert!(r.unwrap_err().to_string().contains("1 to 255"));
        assert_eq!(read(&fs, "node0"), "1");
    }

    #[test]
    fn missing_interface_or_node_is_one_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        let e = WeightGuard::save(&fs, &[0]).unwrap_err().to_string();
        assert!(e.contains("mbind instead"), "{e}");
        let (_d, fs) = tree(None);
        let e = WeightGuard::save(&fs, &[5]).unwrap_err().to_string();
        assert!(e.contains("node 5"), "{e}");
    }
}
