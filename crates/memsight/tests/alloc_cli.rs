//! `memsight alloc`: the RocksDB study's effect on the built-in workload, user commands, timeouts, the
//! memory cap, child reaping and bad input.

mod common;

use std::time::{Duration, Instant};

use common::memsight;

/// One run of glibc's default configuration, JSON out.
const ONE_GLIBC_RUN: [&str; 7] = [
    "alloc",
    "--json",
    "--no-progress",
    "--repeat",
    "1",
    "--configs",
    "glibc",
];

fn installed(lib: &str) -> bool {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
    ]
    .iter()
    .any(|d| std::path::Path::new(d).join(lib).exists())
}

#[test]
fn bursty_workload_shows_glibc_arenas_holding_several_times_the_live_heap() {
    let _serial = common::measuring();
    let mut configs = vec!["glibc", "glibc-arena-1"];
    let tcmalloc = installed("libtcmalloc_minimal.so.4");
    if tcmalloc {
        configs.push("tcmalloc");
    } else if std::env::var_os("CI").is_some() {
        panic!("CI must install libtcmalloc-minimal4");
    }
    let jemalloc = installed("libjemalloc.so.2");
    if jemalloc {
        configs.push("jemalloc");
    }
    let doc = common::json(memsight().args([
        "alloc",
        "--json",
        "--no-progress",
        "--repeat",
        "1",
        "--live",
        "64M",
        "--configs",
        &configs.join(","),
    ]));
    common::assert_valid(&doc);
    let r = &doc["results"];
    let get = |name: &str| {
        r["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["config"]["name"] == name)
            .unwrap()
            .clone()
    };
    let ratio = |c: &serde_json::Value| c["peak_rss_over_peak_live"]["median"].as_f64().unwrap();
    let glibc = get("glibc");
    assert_eq!(glibc["runs"][0]["allocator_seen"], "glibc");
    assert_eq!(glibc["runs"][0]["ending"], serde_json::json!({"exited": 0}));
    // Every phase reported its live bytes: the bursty total stays near the live set.
    let phases = glibc["runs"][0]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 8);
    for p in phases {
        let live = p["live_bytes"].as_f64().unwrap();
        assert!((live / (64u64 << 20) as f64 - 1.0).abs() < 0.1, "{p}");
    }
    assert!(ratio(&glibc) > 2.0, "glibc defaults: {}", ratio(&glibc));
    // Arenas counted from outside the process (mappings and heap headers) match what glibc's
    // malloc_info says inside it; MALLOC_ARENA_MAX=1 leaves the main arena alone.
    let arenas = |c: &serde_json::Value| c["arenas"]["median"].as_f64().unwrap();
    let inside = glibc["runs"][0]["stats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0] == "arenas (malloc_info)")
        .map(|s| s[1].as_f64().unwrap())
        .unwrap();
    assert_eq!(arenas(&glibc), inside, "{}", glibc["runs"][0]["arenas"]);
    assert!(arenas(&glibc) > 2.0);
    assert_eq!(arenas(&get("glibc-arena-1")), 1.0);
    assert!(ratio(&get("glibc-arena-1")) < ratio(&glibc));
    if tcmalloc {
        let t = get("tcmalloc");
        assert_eq!(
            t["runs"][0]["allocator_seen"], "tcmalloc",
            "the preload took"
        );
        assert!(
            ratio(&t) < ratio(&glibc) / 1.5,
            "tcmalloc {} vs glibc {}",
            ratio(&t),
            ratio(&glibc)
        );
    }
    assert!(!r["recommendation"].as_array().unwrap().is_empty());
    if tcmalloc {
        // tcmalloc has no arenas: no count is shown for it (glibc's main arena is not its).
        assert!(get("tcmalloc")["arenas"].is_null(), "{}", get("tcmalloc"));
    }
    if jemalloc {
        // jemalloc's arenas are its own count, not glibc's main arena.
        let j = get("jemalloc");
        let narenas = j["runs"][0]["stats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s[0] == "arenas.narenas")
            .map(|s| s[1].as_f64().unwrap())
            .unwrap();
        assert_eq!(arenas(&j), narenas, "{j}");
    }
    // Counts read as counts: the terminal shows arenas without a byte unit, and no arena
    // finding says "with 0 heaps".
    let path = std::env::temp_dir().join(format!("memsight-alloc-{}.json", std::process::id()));
    std::fs::write(&path, doc.to_string()).unwrap();
    let text = common::ok(&memsight().arg("show").arg(&path).output().unwrap());
    let _ = std::fs::remove_file(&path);
    assert!(text.contains("arenas (malloc_info) = "), "{text}");
    assert!(
        !text.contains("(malloc_info) = 9 B") && !text.contains(" B, ordblks"),
        "{text}"
    );
    assert!(!text.contains("with 0 heaps"), "{text}");
}

#[test]
fn a_command_that_never_exits_is_stopped_and_reaped() {
    let t = Instant::now();
    let out = memsight()
        .args(ONE_GLIBC_RUN)
        .args(["--timeout-s", "1", "--", "sleep", "37.25"])
        .output()
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(20));
    // The time limit is the window watched: the samples are kept, not a failure.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &doc["results"]["configs"][0];
    let run = &c["runs"][0];
    assert_eq!(run["ending"], "timed-out");
    assert!(run["rss"].as_array().unwrap().len() > 10);
    assert!(c["peak_rss"]["median"].as_f64().unwrap() > 0.0, "{c}");
    assert!(c["problems"].as_array().unwrap().is_empty(), "{c}");
    assert!(
        doc["results"]["findings"]
            .to_string()
            .contains("still running at the time limit")
    );
    // Nothing left behind.
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains("37.25"));
    assert!(!left, "the child was reaped");
}

#[test]
fn a_running_process_is_watched_without_restarting_it() {
    let mut sleeper = std::process::Command::new("sleep")
        .arg("41.5")
        .spawn()
        .unwrap();
    let pid = sleeper.id().to_string();
    let doc = common::json(memsight().args([
        "alloc",
        "--json",
        "--no-progress",
        "--pid",
        &pid,
        "--for",
        "1s",
        "--interval-ms",
        "50",
    ]));
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "still running, untouched"
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    common::assert_valid(&doc);
    let w = &doc["results"]["process"];
    assert_eq!(w["ending"], "completed");
    assert!(w["command"].as_str().unwrap().contains("sleep 41.5"));
    assert!(w["rss"].as_array().unwrap().len() >= 10, "{w}");
    assert!(!w["arenas"].as_array().unwrap().is_empty());
    assert!(doc["results"]["findings"].to_string().contains("RSS"));
    // A process that is gone, a command beside --pid, --for without --pid: one line each.
    for (args, needle) in [
        (vec!["--pid", "4194305", "--for", "1"], "no such process"),
        (vec!["--for", "5"], "--pid"),
        (vec!["--pid", &pid, "--for", "soon"], "--for"),
        (vec!["--pid", &pid, "--for", "0"], "more than 0"),
        (vec!["--pid", &pid, "--", "true"], "cannot be used with"),
    ] {
        common::refused(
            &memsight().arg("alloc").args(&args).output().unwrap(),
            needle,
        );
    }
}

#[test]
fn failing_commands_and_the_memory_cap_are_reported() {
    let out = memsight()
        .args(ONE_GLIBC_RUN)
        .args(["--", "false"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["results"]["configs"][0]["runs"][0]["ending"],
        serde_json::json!({"exited": 1})
    );
    // A program that grows past the cap is killed there.
    let out = memsight()
        .args(ONE_GLIBC_RUN)
        .args(["--max-rss", "64M", "--"])
        .arg(env!("CARGO_BIN_EXE_memsight"))
        .args([
            "alloc-worker",
            "--preset",
            "steady",
            "--threads",
            "1",
            "--live",
            "1G",
            "--max-size",
            "4K",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["results"]["configs"][0]["runs"][0];
    assert_eq!(run["ending"], "memory-cap");
    assert!(run["peak_rss_bytes"].as_u64().unwrap() > 64 << 20);
}

#[test]
fn bad_input_is_refused_in_one_line() {
    for (args, needle) in [
        (
            vec!["--preset", "nope"],
            "invalid value 'nope' for '--preset",
        ),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--live", "100T"], "available memory"),
        (
            vec!["--min-size", "64K", "--max-size", "1K"],
            "object sizes",
        ),
        (
            vec!["--allocator", "x=/nonexistent/libx.so"],
            "does not exist",
        ),
        (vec!["--configs", "glibc,nosuch"], "unknown configuration"),
        (vec!["--repeat", "0"], "--repeat"),
    ] {
        eprintln!("alloc {args:?}");
        common::refused(
            &memsight().arg("alloc").args(&args).output().unwrap(),
            needle,
        );
    }
    // A command that does not exist.
    let out = memsight()
        .args(["alloc", "--configs", "glibc", "--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot start"));
}
