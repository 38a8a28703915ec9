//! The version agrees everywhere it is written: Cargo.toml, the changelog's latest release (from
//! which the packages' changelogs are made) and `memsight --version`.

mod common;

use std::path::Path;

#[test]
fn the_changelog_names_this_version_as_its_latest_release() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let log = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
    assert!(
        log.contains("## [Unreleased]"),
        "Keep a Changelog's Unreleased section"
    );
    let latest = log
        .lines()
        .find(|l| l.starts_with("## [") && !l.starts_with("## [Unreleased]"))
        .expect("a released version");
    let version = env!("CARGO_PKG_VERSION");
    let rest = latest
        .strip_prefix(&format!("## [{version}] - "))
        .unwrap_or_else(|| panic!("latest release {latest:?}, Cargo.toml says {version}"));
    let date: Vec<&str> = rest.split('-').collect();
    assert!(
        date.len() == 3 && date[0].len() == 4 && date.iter().all(|p| p.parse::<u32>().is_ok()),
        "an ISO date: {rest:?}"
    );
    let out = common::ok(&common::memsight().arg("--version").output().unwrap());
    assert_eq!(out.trim(), format!("memsight {version}"));
}

/// The packages' changelogs (debian/changelog, the spec's %changelog and Version) are made from
/// CHANGELOG.md, and Debian's copyright file and the spec's bundled crates from Cargo.lock: all
/// kept current in the repository, which the release refuses otherwise.
#[test]
fn the_packaging_files_made_from_the_changelog_and_the_lock_file_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for args in [
        &["scripts/changelogs.py", "--check"][..],
        &["scripts/notices.py", "debian-copyright", "--check"][..],
        &["scripts/notices.py", "rpm-provides", "--check"][..],
    ] {
        let out = match std::process::Command::new("python3")
            .args(args)
            .current_dir(&root)
            .output()
        {
            Ok(out) => out,
            Err(e) => {
                eprintln!("skipped: python3 cannot be started ({e})");
                return;
            }
        };
        assert!(
            out.status.success(),
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
