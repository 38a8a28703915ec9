//! `memsight bandwidth` and `memsight stream` end to end, on small sizes: JSON valid against the
//! schema, byte accounting, patterns, scaling, the sweep's ordering, STREAM validation, bad input.

mod common;

use common::{assert_valid, json, memsight};
use serde_json::Value;

const FAST: [&str; 7] = [
    "--no-progress",
    "--min-samples",
    "3",
    "--point-budget",
    "0.2",
    "--sample-ms",
    "5",
];

fn bandwidth(args: &[&str]) -> Value {
    let _serial = common::measuring();
    let doc = json(
        memsight()
            .args(["bandwidth", "--json"])
            .args(args)
            .args(FAST),
    );
    assert_valid(&doc);
    doc
}

fn points(doc: &Value) -> &Vec<Value> {
    doc["results"]["points"].as_array().unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn bytes_are_counted_both_ways() {
    let doc = bandwidth(&[
        "--test",
        "read,write,write-nt,copy,copy-nt,rmw,3:1,stream-triad-like",
        "--size",
        "8M",
    ]);
    let ps = points(&doc);
    assert_eq!(ps.len(), 8);
    let threads = doc["environment"]["allowed_cpus"].as_array().unwrap().len() as u64;
    for p in ps {
        assert_eq!(
            p["threads"].as_u64().unwrap(),
            threads,
            "all allowed CPUs by default"
        );
        let (prog, dram) = (f(&p["program_gbs"]["median"]), f(&p["dram_gbs"]["median"]));
        assert!(prog > 0.0);
        let want = match p["test"]["name"].as_str().unwrap() {
            "read" | "write-nt" | "copy-nt" | "rmw" | "stream-triad-like" => 1.0,
            "write" => 2.0,
            "copy" => 1.5,
            "3:1" => 4.0 / 3.0,
            other => panic!("unexpected {other}"),
        };
        assert!(
            (dram / prog - want).abs() < 1e-9,
            "{}: DRAM/program {} vs {want}",
            p["test"]["name"],
            dram / prog
        );
        assert!(f(&p["program_gbs"]["max"]) >= prog, "best ≥ median");
    }
    let ratio =
        |name: &str| ps.iter().find(|p| p["test"]["name"] == name).unwrap()["dram_ratio"].clone();
    assert_eq!(ratio("3:1"), "3:1");
    assert_eq!(ratio("copy"), "2:1");
    assert_eq!(ratio("copy-nt"), "1:1");
    assert_eq!(ratio("read"), "1:0");
}

#[test]
fn fills_say_what_they_wrote() {
    let doc = bandwidth(&[
        "--test",
        "write-nt,copy",
        "--size",
        "8M",
        "--pattern",
        "both",
    ]);
    let ps = points(&doc);
    let pats: Vec<&str> = ps
        .iter()
        .filter(|p| p["test"]["name"] == "write-nt")
        .map(|p| p["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(pats, vec!["0xefefefefefefefef", "0x0000000000000000"]);
    // A copy writes its source data: one point, no pattern.
    let copies: Vec<&Value> = ps.iter().filter(|p| p["test"]["name"] == "copy").collect();
    assert_eq!(copies.len(), 1);
    assert!(copies[0]["pattern"].is_null());
    let findings = doc["results"]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            // A finding on disturbed samples starts with its ⚠ (the test runs beside others).
            .any(|x| common::text(x)
                .trim_start_matches("⚠ ")
                .starts_with("write-nt: writing zeros"))
    );
}

#[test]
fn scaling_runs_every_thread_count() {
    let n = std::thread::available_parallelism().unwrap().get();
    if n < 2 {
        return;
    }
    let doc = bandwidth(&["--test", "read", "--size", "8M", "--scaling"]);
    let counts: Vec<u64> = points(&doc)
        .iter()
        .map(|p| p["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(counts.first(), Some(&1));
    assert_eq!(counts.last(), Some(&(n as u64)));
}

#[test]
fn sweep_finds_caches_faster_than_memory() {
    let doc = bandwidth(&[
        "--test",
        "read",
        "--threads",
        "1",
        "--size",
        "4M",
        "--sweep",
    ]);
    let sweep = doc["results"]["sweep"].as_array().unwrap();
    let reads: Vec<&Value> = sweep
        .iter()
        .filter(|p| p["test"]["name"] == "read")
        .collect();
    let first = reads.first().unwrap();
    let last = reads.last().unwrap();
    assert_eq!(first["level"], "L1");
    assert_eq!(last["level"], "memory");
    // Reading from L1 is far faster than from DRAM on any machine.
    assert!(f(&first["program_gbs"]["median"]) > 2.0 * f(&last["program_gbs"]["median"]));
    for name in ["write", "copy"] {
        assert!(sweep.iter().any(|p| p["test"]["name"] == name));
    }
}

#[test]
fn every_width_runs() {
    let widths = ["scalar", "sse2", "avx2", "avx512"];
    for isa in widths {
        let _serial = common::measuring();
        let out = memsight()
            .args([
                "bandwidth",
                "--json",
                "--test",
                "copy",
                "--size",
                "1M",
                "--isa",
                isa,
            ])
            .args(FAST)
            .output()
            .unwrap();
        if out.status.code() == Some(2) {
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("cannot run"),
                "{isa}"
            );
            continue;
        }
        assert!(
            out.status.success(),
            "{isa}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(points(&doc)[0]["isa"], isa);
    }
}

#[test]
fn stream_validates_and_counts_like_stream() {
    let _serial = common::measuring();
    let doc = json(memsight().args([
        "stream",
        "--json",
        "--no-progress",
        "--elements",
        "2000000",
        "--ntimes",
        "5",
        "--offset",
        "64",
    ]));
    assert_valid(&doc);
    let r = &doc["results"];
    assert_eq!(r["validation"]["passed"], true);
    assert!(
        r["label"]
            .as_str()
            .unwrap()
            .contains("not STREAM benchmark results")
    );
    let ks = r["kernels"].as_array().unwrap();
    let names: Vec<&str> = ks.iter().map(|k| k["function"].as_str().unwrap()).collect();
    assert_eq!(names, ["Copy", "Scale", "Add", "Triad"]);
    let n = r["config"]["elements"].as_u64().unwrap();
    assert!(n >= 2_000_000);
    for k in ks {
        let arrays = if ["Copy", "Scale"].contains(&k["function"].as_str().unwrap()) {
            2
        } else {
            3
        };
        assert_eq!(k["bytes"].as_u64().unwrap(), arrays * 8 * n);
        // The first of 5 is excluded; an iteration in which a thread lost its CPU is dropped
        // and counted (kept in the figure only when fewer than 3 are clean).
        let (kept, dropped) = (
            k["gbs"]["n"].as_u64().unwrap(),
            k["gbs"]["dropped"].as_u64().unwrap(),
        );
        assert_eq!(kept + dropped, 4, "first of 5 excluded");
        assert!(
            f(&k["min_time_s"]) <= f(&k["avg_time_s"])
                && f(&k["avg_time_s"]) <= f(&k["max_time_s"])
        );
        let best = f(&k["best_rate_mbs"]);
        assert!(
            (best - k["bytes"].as_u64().unwrap() as f64 / f(&k["min_time_s"]) / 1e6).abs()
                < 1e-6 * best
        );
    }
}

#[test]
fn bad_bandwidth_input_is_refused() {
    let cases: &[(&[&str], &str)] = &[
        (&["bandwidth", "--test", "frob"], "unknown test"),
        (&["bandwidth", "--test", "1:2"], "reads ≥ writes"),
        (
            &["bandwidth", "--isa", "avx9"],
            "invalid value 'avx9' for '--isa",
        ),
        (
            &["bandwidth", "--threads", "4096"],
            "threads requested but only",
        ),
        (
            &["bandwidth", "--cpus", "4000"],
            "outside this process's cpuset",
        ),
        (&["bandwidth", "--size", "0"], "at least 1 byte"),
        (&["bandwidth", "--array-gap", "100"], "multiple of 64 B"),
        (&["bandwidth", "--array-gap", "1G"], "up to 64 MiB"),
        (&["bandwidth", "--size", "100T"], "does not fit"),
        (
            &["bandwidth", "--page-kind", "3m"],
            "possible values: 4k, thp, 2m, 1g",
        ),
        (&["stream", "--offset", "3"], "multiple of 8"),
        (
            &["stream", "--store", "weird"],
            "possible values: regular, nt",
        ),
        (&["stream", "--elements", "100000000000"], "does not fit"),
    ];
    for (args, needle) in cases {
        let out = memsight().args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: '{needle}' not in {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    #[cfg(target_arch = "x86_64")]
    {
        let out = memsight()
            .args(["bandwidth", "--isa", "neon"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
    }
    if !std::fs::read_to_string("/proc/cpuinfo")
        .unwrap()
        .contains(" clzero")
    {
        let out = memsight()
            .args(["bandwidth", "--test", "write-clzero"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
    }
}

#[test]
fn shared_buffer_option_runs_and_says_so() {
    let doc = bandwidth(&["--test", "read,copy", "--size", "8M", "--shared"]);
    assert_eq!(doc["results"]["config"]["shared"], true);
    assert!(
        doc["results"]["method"]
            .as_str()
            .unwrap()
            .contains("one shared buffer")
    );
    assert_eq!(points(&doc).len(), 2);
}

#[test]
fn the_gap_between_arrays_is_the_one_asked_for() {
    let default = bandwidth(&["--test", "copy", "--size", "8M", "--cpus", "0"]);
    assert_eq!(default["results"]["config"]["array_gap"], 2112);
    let method = default["results"]["method"].as_str().unwrap();
    assert!(method.contains("its arrays 2.06 KiB apart;"), "{method}");
    let back_to_back = bandwidth(&[
        "--test",
        "copy",
        "--size",
        "8M",
        "--cpus",
        "0",
        "--array-gap",
        "0",
    ]);
    assert_eq!(back_to_back["results"]["config"]["array_gap"], 0);
    let method = back_to_back["results"]["method"].as_str().unwrap();
    assert!(method.contains("at the same page offset"), "{method}");
    assert_eq!(points(&back_to_back).len(), 1);
}

/// A competitor takes the second CPU 3 ms in every 10 ms while two threads read DRAM. With teams
/// timed per thread, the late thread's bytes were divided by one thread's time and samples read
/// up to 1.8× the undisturbed rate; timed over the team's span, disturbance only costs time. The
/// disturbed run must notice (samples dropped, or a shortfall of clean ones) and no sample it
/// keeps may exceed 1.5× the fastest undisturbed sample of the runs around it (the margin:
/// this machine kind's memory bandwidth itself flips between ~33 and ~50 GB/s within seconds);
/// the measured comparison (≤ 1.01× per round) is bench/stolen-cpu.sh.
#[test]
fn a_stolen_cpu_never_makes_memory_look_faster() {
    let cpus = memsight_core::pin::current_affinity().unwrap();
    if cpus.len() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let list = format!("{},{}", cpus[0], cpus[1]);
    // 512 MiB a thread: in memory on hosts whose caches hold tens of MiB of a guest's data
    // (at 64 MiB the first passes after first touch still read part of the buffer from a cache
    // at 2–4× the memory rate, which says nothing about a stolen CPU).
    let args = ["--test", "read", "--size", "512M", "--cpus", &list];
    // The fastest undisturbed sample around the disturbed run: where other work shares the
    // memory (scripts/test-under-load.sh copies 256 MiB over and over, pausing between copies)
    // undisturbed samples themselves swing 3× (11 GB/s median, 34 GB/s in the pauses), so the
    // median is no bound for a sample.
    let fastest = |d: &Value| f(&points(d)[0]["program_gbs"]["max"]);
    let before = bandwidth(&args);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let stolen = std::thread::scope(|s| {
        s.spawn(|| {
            memsight_core::pin::pin_current_thread(cpus[1]).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let t = std::time::Instant::now();
                while t.elapsed() < std::time::Duration::from_millis(3) {
                    std::hint::spin_loop();
                }
                std::thread::sleep(std::time::Duration::from_millis(7));
            }
        });
        // Twelve samples at least: with three, all could fall between the competitor's bursts
        // (or before the scheduler lets it preempt), and the test would flake.
        let _serial = common::measuring();
        let doc = json(
            memsight()
                .args([
                    "bandwidth",
                    "--json",
                    "--no-progress",
                    "--min-samples",
                    "12",
                ])
                .args(["--point-budget", "0.5", "--sample-ms", "5"])
                .args(args),
        );
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        doc
    });
    let after = bandwidth(&args);
    let calm = fastest(&before).max(fastest(&after));
    let g = &points(&stolen)[0]["program_gbs"];
    let kept_disturbed = g["shortfall"]["disturbed_kept"].as_u64().unwrap_or(0);
    assert!(
        g["dropped"].as_u64().unwrap() + kept_disturbed > 0,
        "the stolen CPU went unnoticed: {g}"
    );
    for s in g["samples"].as_array().unwrap() {
        assert!(
            f(s) <= 1.5 * calm,
            "sample {s} vs fastest undisturbed {calm}: {g}"
        );
    }
    assert!(stolen["samples"]["dropped"].as_u64().unwrap() + kept_disturbed > 0);
}

/// `--rate`: a load held at a set rate. Its seconds never exceed the rate by more than the
/// schedule allows (a thread runs at most its slack ahead of where it fell behind, plus a step),
/// whatever else runs; how close they come to it is the machine's business, not asserted.
#[test]
fn a_held_load_never_runs_faster_than_asked() {
    let _serial = common::measuring();
    for test in ["read", "copy-nt"] {
        let doc = json(memsight().args([
            "bandwidth",
            "--json",
            "--no-progress",
            "--rate",
            "0.5GB/s",
            "--seconds",
            "2",
            "--threads",
            "1",
            "--size",
            "16M",
            "--test",
            test,
        ]));
        assert_valid(&doc);
        let r = &doc["results"];
        assert!(points(&doc).is_empty(), "a held load measures no points");
        let h = &r["held"];
        assert_eq!(f(&h["target_gbs"]), 0.5);
        let seconds = h["per_second_gbs"].as_array().unwrap();
        assert!(!seconds.is_empty() && seconds.len() <= 2, "{h}");
        for s in seconds {
            assert!(
                f(s) > 0.0 && f(s) <= 0.5 * 1.02,
                "{test}: a second moved {s} GB/s"
            );
        }
        assert!(r["method"].as_str().unwrap().contains("Held load"));
        assert_eq!(r["findings"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn a_held_load_refuses_what_it_cannot_hold_in_one_line() {
    for (args, needle) in [
        (vec!["--rate", "fast"], "not a bandwidth"),
        (vec!["--rate=-3GB/s"], "not a bandwidth"),
        (vec!["--rate", "0"], "not a bandwidth"),
        (vec!["--seconds", "5"], "--rate"),
        (vec!["--rate", "1GB/s", "--seconds", "0.5"], "at least 1 s"),
        (vec!["--rate", "1GB/s", "--test", "read,write"], "one test"),
        (vec!["--rate", "1GB/s", "--test", "3:1"], "--rate holds"),
        (vec!["--rate", "1GB/s", "--scaling"], "--scaling"),
    ] {
        let out = memsight().arg("bandwidth").args(&args).output().unwrap();
        common::refused(&out, needle);
    }
}
