//! Allocator configurations: glibc with its knobs (Cloudflare's RocksDB study's (Vorobev, 2020) MALLOC_ARENA_MAX,
//! malloc_trim and M_MMAP_THRESHOLD) and the preloadable allocators Debian packages
//! (`libtcmalloc-minimal4`, `libjemalloc2`, `libmimalloc2.0`), found in the standard library
//! directories, plus any `NAME=PATH` the user names.

use std::path::{Path, PathBuf};

use memsight_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How to run a program with one allocator setting.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AllocConfig {
    pub name: String,
    /// Library put in LD_PRELOAD, if any.
    pub preload: Option<PathBuf>,
    /// Environment variables set for the program.
    pub env: Vec<(String, String)>,
    /// The built-in workload calls `malloc_trim(0)` after every phase.
    pub trim_each_phase: bool,
    pub description: String,
}

/// Library directories searched for allocators.
fn lib_dirs() -> Vec<PathBuf> {
    let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
    [
        format!("/usr/lib/{triple}"),
        format!("/lib/{triple}"),
        "/usr/lib64".into(),
        "/usr/lib".into(),
        "/usr/local/lib".into(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

fn find(names: &[&str]) -> Option<PathBuf> {
    lib_dirs()
        .iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

fn glibc(name: &str, env: &[(&str, &str)], trim: bool, description: &str) -> AllocConfig {
    AllocConfig {
        name: name.into(),
        preload: None,
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        trim_each_phase: trim,
        description: description.into(),
    }
}

/// Every built-in configuration, with the reason when one cannot run here.
pub fn builtin() -> Vec<(AllocConfig, Option<String>)> {
    let mut out: Vec<_> = glibc_configs().into_iter().map(|c| (c, None)).collect();
    out.extend(preloaded());
    out
}

/// glibc's malloc under the settings that change how much it holds: always available.
fn glibc_configs() -> [AllocConfig; 5] {
    [
        glibc(
            "glibc",
            &[],
            false,
            "glibc malloc, defaults (up to 8 arenas per core)",
        ),
        glibc(
            "glibc-arena-1",
            &[("MALLOC_ARENA_MAX", "1")],
            false,
            "glibc, MALLOC_ARENA_MAX=1: one arena for all threads",
        ),
        glibc(
            "glibc-arena-2",
            &[("MALLOC_ARENA_MAX", "2")],
            false,
            "glibc, MALLOC_ARENA_MAX=2",
        ),
        glibc(
            "glibc-trim",
            &[],
            true,
            "glibc, malloc_trim(0) after every phase",
        ),
        glibc(
            "glibc-mmap-64k",
            &[("MALLOC_MMAP_THRESHOLD_", "65536")],
            false,
            "glibc, M_MMAP_THRESHOLD=64 KiB (MALLOC_MMAP_THRESHOLD_): larger blocks are mmapped and always returned",
        ),
    ]
}

/// The allocators memsight preloads, each with the package to install where it is missing.
fn preloaded() -> Vec<(AllocConfig, Option<String>)> {
    let mut out = Vec::new();
    for (name, files, package, description) in [
        (
            "tcmalloc",
            &["libtcmalloc_minimal.so.4", "libtcmalloc.so.4"][..],
            "libtcmalloc-minimal4",
            "TCMalloc (gperftools)",
        ),
        (
            "jemalloc",
            &["libjemalloc.so.2"][..],
            "libjemalloc2",
            "jemalloc",
        ),
        (
            "mimalloc",
            &["libmimalloc.so.2", "libmimalloc.so.2.0", "libmimalloc.so"][..],
            "libmimalloc2.0",
            "mimalloc",
        ),
    ] {
        let found = find(files);
        let reason = found.is_none().then(|| {
            format!("{name}: not installed (apt install {package}, or --allocator {name}=PATH)")
        });
        out.push((
            AllocConfig {
                name: name.into(),
                preload: found,
                env: Vec::new(),
                trim_each_phase: false,
                description: description.into(),
            },
            reason,
        ));
    }
    out
}

/// Parses `NAME=PATH` for a user-named allocator library.
pub fn custom(spec: &str) -> Result<AllocConfig> {
    let (name, path) = spec.split_once('=').ok_or_else(|| {
        Error::input(format!(
            "--allocator '{spec}': write NAME=PATH to a shared library"
        ))
    })?;
    let path = Path::new(path);
    if !path.is_file() {
        return Err(Error::input(format!(
            "--allocator {name}: {} does not exist",
            path.display()
        )));
    }
    Ok(AllocConfig {
        name: name.into(),
        preload: Some(path.to_path_buf()),
        env: Vec::new(),
        trim_each_phase: false,
        description: format!("{name} preloaded from {}", path.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_name_every_configuration_of_the_issue() {
        let names: Vec<String> = builtin().into_iter().map(|(c, _)| c.name).collect();
        for n in [
            "glibc",
            "glibc-arena-1",
            "glibc-arena-2",
            "glibc-trim",
            "glibc-mmap-64k",
            "tcmalloc",
            "jemalloc",
            "mimalloc",
        ] {
            assert!(names.iter().any(|x| x == n), "{n}");
        }
        // A missing library is a reason, not a failure.
        for (c, reason) in builtin() {
            assert_eq!(
                c.preload.is_none() && !c.name.starts_with("glibc"),
                reason.is_some()
            );
        }
    }

    #[test]
    fn custom_allocators_need_an_existing_file() {
        assert!(custom("x=/nonexistent/lib.so").is_err());
        assert!(custom("no-equals-sign").is_err());
        let c = custom("self=/proc/self/exe").unwrap();
        assert_eq!(c.name, "self");
    }
}
