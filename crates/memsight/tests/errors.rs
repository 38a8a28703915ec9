//! Bad input: a one-line error naming the problem and the fix, exit code 2, no panic, nothing
//! left allocated.

mod common;

use common::memsight;

fn assert_usage_error(args: &[&str], needle: &str) {
    let out = memsight().args(args).output().expect("memsight runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected, got {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: '{needle}' not in {stderr}"
    );
}

fn nr_gigantic_pages() -> String {
    std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")
        .unwrap_or_default()
}

#[test]
fn size_above_available_memory() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let size = format!("{}K", 2 * kb);
    assert_usage_error(&["latency", "--max-size", &size], "does not fit");
}

#[test]
fn zero_and_negative_sizes() {
    assert_usage_error(&["latency", "--max-size", "0"], "at least 1 byte");
    assert_usage_error(&["latency", "--min-size=-4K"], "invalid size");
    assert_usage_error(&["latency", "--max-size", "lots"], "invalid size");
}

#[test]
fn min_above_max() {
    assert_usage_error(
        &["latency", "--min-size", "1M", "--max-size", "64K"],
        "smaller than --min-size",
    );
}

#[test]
fn unknown_page_kind() {
    assert_usage_error(
        &["latency", "--page-kind", "64k"],
        "possible values: 4k, thp, 2m, 1g",
    );
}

#[test]
fn hugetlb_with_an_empty_pool_leaves_the_pool_alone() {
    let free =
        std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages")
            .unwrap_or_default();
    if free.trim() != "0" {
        eprintln!("1 GiB pool not empty here; skipping");
        return;
    }
    let before = nr_gigantic_pages();
    assert_usage_error(
        &["latency", "--page-kind", "1g", "--max-size", "1G"],
        "the pool has 0 free",
    );
    assert_eq!(nr_gigantic_pages(), before, "reserved huge pages untouched");
}

#[test]
fn more_threads_than_cpus() {
    let n = std::thread::available_parallelism().unwrap().get();
    let list = format!("0-{n}");
    assert_usage_error(&["latency", "--cpu", &list], "threads requested but only");
}

#[test]
fn cpu_outside_the_cpuset() {
    assert_usage_error(
        &["latency", "--cpu", "4000"],
        "outside this process's cpuset",
    );
}

#[test]
fn node_that_does_not_exist() {
    assert_usage_error(
        &["latency", "--node", "63", "--max-size", "1M"],
        "NUMA node 63",
    );
}

#[test]
fn bad_stride_and_ci() {
    assert_usage_error(&["latency", "--stride", "96"], "power of two");
    assert_usage_error(&["latency", "--target-ci", "2"], "--target-ci");
}

#[test]
fn missing_topology_xml() {
    assert_usage_error(
        &["--topology-xml", "/nonexistent.xml", "env"],
        "does not exist",
    );
}

/// A topology file hwloc refuses is bad input (exit 2), said in words: hwloc's error once came
/// out as `errno Some(Errno { code: 22, … })` with exit 1.
#[test]
fn a_topology_file_hwloc_refuses_is_said_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.xml");
    std::fs::write(
        &path,
        r#"<?xml version="1.0"?><topology version="2.0"></topology>"#,
    )
    .unwrap();
    let out = memsight()
        .arg("--topology-xml")
        .arg(&path)
        .arg("env")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("Invalid argument (errno 22)"), "{err}");
    assert!(!err.contains("Errno {") && !err.contains("Some("), "{err}");
}

#[test]
fn clap_errors_are_exit_2_too() {
    let out = memsight()
        .args(["latency", "--parallel", "11"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = memsight().args(["frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unwritable_output_is_refused_before_measuring() {
    assert_usage_error(
        &["latency", "-o", "/nonexistent-dir/r.json"],
        "choose a writable path for -o",
    );
}

/// Every flag is checked before anything is measured: a bad one is refused in one line, where
/// before it was refused only after the pressure curves (profile, about a minute), the reach
/// probe (tiers) or the fills (pmem), or panicked turning an infinite duration into a time.
#[test]
fn bad_flags_are_refused_before_measuring() {
    assert_usage_error(&["profile"], "give a program after `--`");
    assert_usage_error(
        &["profile", "--timeout", "inf", "--", "true"],
        "at most a year",
    );
    assert_usage_error(
        &["alloc", "--preset", "steady", "--timeout-s", "inf"],
        "--timeout-s must be more than 0",
    );
    assert_usage_error(
        &["pmem", "--concurrency", "--seconds", "inf"],
        "--seconds must be positive",
    );
    assert_usage_error(&["tiers", "--latency-size", "100T"], "does not fit");
    assert_usage_error(&["numa", "--latency-size", "100T"], "does not fit");
    assert_usage_error(
        &[
            "run",
            "--quick",
            "--dmidecode",
            "/nonexistent/dmidecode.txt",
        ],
        "cannot read --dmidecode file",
    );
}
