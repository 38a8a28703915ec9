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
