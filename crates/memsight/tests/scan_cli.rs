//! `memsight scan` on this machine: by physical range as root, by virtual range without root,
//! every range measured and mapped, the page with its heat strip, and bad input. Assertions are
//! on structure, never on timings.

mod common;

use common::{Unprivileged, assert_valid, is_root, json, measuring, memsight, refused};

const SMALL: [&str; 9] = [
    "--size",
    "512M",
    "--granule",
    "64M",
    "--min-samples",
    "3",
    "--point-budget",
    "0.05",
    "--no-progress",
];

#[test]
fn scans_by_physical_range_as_root_and_maps_every_range() {
    if !is_root() {
        eprintln!("needs root to read frame numbers: skipping");
        return;
    }
    let _m = measuring();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("scan.html");
    let doc = json(
        memsight()
            .args(["scan", "--json"])
            .args(SMALL)
            .arg("--html")
            .arg(&html),
    );
    assert_valid(&doc);
    let r = &doc["results"];
    assert_eq!(r["frames_visible"], true);
    let ranges = r["ranges"].as_array().unwrap();
    assert!(!ranges.is_empty());
    let scanned: u64 = ranges.iter().map(|x| x["bytes"].as_u64().unwrap()).sum();
    assert_eq!(scanned, r["scanned_bytes"].as_u64().unwrap());
    assert!(
        scanned >= 500 << 20,
        "almost all of the 512 MiB is present: {scanned}"
    );
    let mut starts: Vec<u64> = Vec::new();
    for x in ranges {
        let start = x["start"].as_u64().unwrap();
        assert_eq!(start % (64 << 20), 0, "ranges start on the granule");
        starts.push(start);
        assert!(x["read_gbs"]["median"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["latency_ns"]["median"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["node"].as_u64().is_some(), "every range has a node: {x}");
    }
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "address order");
    // Memory blocks are published on this kernel: every range maps to some.
    if std::path::Path::new("/sys/devices/system/memory/block_size_bytes").exists() {
        assert!(
            ranges
                .iter()
                .all(|x| !x["blocks"].as_array().unwrap().is_empty())
        );
    }
    assert!(
        r["method"]
            .as_str()
            .unwrap()
            .contains("physical range of 64 MiB")
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Read bandwidth by address range"));
}

#[test]
fn scans_by_virtual_range_without_root() {
    let _m = measuring();
    let doc = match Unprivileged::new() {
        Some(u) => json(u.memsight().args(["scan", "--json"]).args(SMALL)),
        None if !is_root() => json(memsight().args(["scan", "--json"]).args(SMALL)),
        None => return,
    };
    let r = &doc["results"];
    assert_eq!(r["frames_visible"], false);
    let ranges = r["ranges"].as_array().unwrap();
    assert_eq!(ranges.len(), 8, "512 MiB in 64 MiB virtual ranges");
    assert!(
        r["findings"]
            .to_string()
            .contains("frame numbers are hidden")
    );
}

#[test]
fn bad_input_is_one_line() {
    for (args, needle) in [
        (vec!["--granule", "3M"], "power of two"),
        (vec!["--granule", "1M"], "at least 2 MiB"),
        (vec!["--size", "100T"], "more than 90%"),
        (
            vec!["--size", "16M", "--granule", "64M"],
            "at least one --granule",
        ),
        (vec!["--cpus", "4095"], "not one this process may run on"),
    ] {
        let out = memsight()
            .arg("scan")
            .args(&args)
            .arg("--no-progress")
            .output()
            .unwrap();
        refused(&out, needle);
    }
}
