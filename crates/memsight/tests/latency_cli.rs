//! The latency ladder end to end, on small sizes: JSON valid against the schema, and orderings
//! that hold on any machine (no absolute timings).

mod common;

use common::{assert_valid, json, memsight};

fn small_ladder() -> serde_json::Value {
    json(memsight().args([
        "latency",
        "--json",
        "--no-progress",
        "--min-size",
        "4K",
        "--max-size",
        "64M",
        "--points-per-octave",
        "1",
        "--parallel",
        "3",
        "--min-samples",
        "5",
        "--point-budget",
        "0.1",
        "--sample-ms",
        "1",
    ]))
}

#[test]
fn ladder_json_is_valid_and_ordered() {
    let _serial = common::measuring();
    let plateaus = |d: &serde_json::Value| {
        d["results"]["ladders"][0]["levels"]["plateaus"]
            .as_array()
            .map_or(0, Vec::len)
    };
    let mut doc = small_ladder();
    // One point per octave and 1 ms samples: on this shared VM a burst of host noise can blur
    // the curve of one short ladder (seen once in CI: fewer than two plateaus); the properties
    // are checked on a second ladder then, never asserted on a blurred one.
    if plateaus(&doc) < 2 {
        eprintln!(
            "the first ladder showed {} plateau(s): measuring again",
            plateaus(&doc)
        );
        doc = small_ladder();
    }
    assert_valid(&doc);
    assert_eq!(doc["schema"], "memsight-result");
    assert_eq!(doc["schema_version"], 5);
    assert_eq!(doc["command"], "latency");
    assert_eq!(doc["complete"], true);
    let l = &doc["results"]["ladders"][0];
    let points = l["main"]["points"].as_array().unwrap();
    // 4 KiB … 64 MiB at one point per octave: 15 sizes.
    assert_eq!(points.len(), 15);
    let sizes: Vec<u64> = points
        .iter()
        .map(|p| p["size_bytes"].as_u64().unwrap())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]));
    for p in points {
        let s = &p["ns"];
        let (lo, med, hi) = (
            s["ci_low"].as_f64().unwrap(),
            s["median"].as_f64().unwrap(),
            s["ci_high"].as_f64().unwrap(),
        );
        assert!(lo <= med && med <= hi, "{p}");
        // At least the minimum of clean samples, or a figure that says why not.
        assert!(
            s["n"].as_u64().unwrap() >= 5 || s["shortfall"].is_object(),
            "{s}"
        );
        assert!(p["cycles"].as_f64().unwrap() > 0.0);
    }
    // A 64 MiB working set (beyond any LLC of this machine kind) is far slower than 4 KiB (L1).
    let l1 = points[0]["ns"]["median"].as_f64().unwrap();
    let dram = points.last().unwrap()["ns"]["median"].as_f64().unwrap();
    assert!(dram > 3.0 * l1, "DRAM {dram} ns vs L1 {l1} ns");
    // L1 latency in cycles is a handful (3-6 on current cores), never below 2.
    let l1_cycles = points[0]["cycles"].as_f64().unwrap();
    assert!((2.0..20.0).contains(&l1_cycles), "{l1_cycles}");
    // The main buffer is on verified 4 KiB pages.
    assert_eq!(l["main"]["buffer"]["kind"], "4k");
    assert_eq!(l["main"]["buffer"]["kernel_page_bytes"], 4096);
    // MLP: k = 1..3, and more chains never take less time per round than one... but do overlap.
    let mlp = l["mlp"]["points"].as_array().unwrap();
    assert_eq!(mlp.len(), 3);
    let o3 = mlp[2]["overlap"].as_f64().unwrap();
    assert!(o3 > 1.5, "3 independent misses should overlap: {o3}");
    // The sweep runs on a set in memory (at least the smallest memory working set, past the
    // ladder's last size), and no point claims more misses in flight than it has chains.
    let mlp_size = l["mlp"]["size_bytes"].as_u64().unwrap();
    assert!(mlp_size >= 256 << 20, "{mlp_size}");
    for p in mlp {
        let k = p["k"].as_f64().unwrap();
        let impossible = p["impossible"].as_bool().unwrap();
        assert_eq!(
            impossible,
            p["overlap"].as_f64().unwrap() > k / memsight_suites_round_floor(),
            "{p}"
        );
    }
    // Plateaus were found, fastest first.
    let plateaus = l["levels"]["plateaus"].as_array().unwrap();
    assert!(plateaus.len() >= 2);
    assert!(plateaus[0]["ns"].as_f64().unwrap() < plateaus.last().unwrap()["ns"].as_f64().unwrap());
    // The environment travels with the result.
    assert!(doc["environment"]["topology"]["threads"].as_u64().unwrap() >= 1);
}

#[test]
fn huge_page_ladder_gives_tlb_cost_when_thp_is_available() {
    let _serial = common::measuring();
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.contains("[never]") || thp.is_empty() {
        eprintln!("THP disabled here: nothing to compare");
        return;
    }
    let doc = json(
        memsight()
            .args([
                "latency",
                "--json",
                "--min-size",
                "1M",
                "--max-size",
                "32M",
                "--parallel",
                "1",
            ])
            .args(common::QUICK),
    );
    let l = &doc["results"]["ladders"][0];
    let huge = &l["huge"];
    assert!(huge.is_object(), "a huge-page ladder ran");
    assert!(huge["buffer"]["huge_fraction"].as_f64().unwrap() > 0.5);
    assert_eq!(
        l["tlb"].as_array().unwrap().len(),
        l["main"]["points"].as_array().unwrap().len()
    );
}

#[test]
fn text_output_has_units_method_and_spread() {
    let _serial = common::measuring();
    let out = memsight()
        .args([
            "latency",
            "--max-size",
            "256K",
            "--parallel",
            "1",
            "--no-tlb",
        ])
        .args(common::QUICK)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "ns/load (median)",
        "95% CI",
        "cycles",
        "min–max ns",
        "CV %",
        "Pointer chase",
        "CLOCK_MONOTONIC",
        "core clock",
    ] {
        assert!(text.contains(needle), "missing '{needle}' in:\n{text}");
    }
}

#[test]
fn two_cpus_give_two_ladders() {
    let _serial = common::measuring();
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if cpus < 2 {
        return;
    }
    let doc = json(
        memsight()
            .args([
                "latency",
                "--json",
                "--cpu",
                "0,1",
                "--max-size",
                "64K",
                "--parallel",
                "1",
                "--no-tlb",
            ])
            .args(common::QUICK),
    );
    let ladders = doc["results"]["ladders"].as_array().unwrap();
    assert_eq!(ladders.len(), 2);
    assert_eq!(ladders[0]["cpu"], 0);
    assert_eq!(ladders[1]["cpu"], 1);
}

#[test]
fn output_file_matches_stdout_schema() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let st = memsight()
        .args(["env", "--no-progress", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(st.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_valid(&doc);
    assert_eq!(doc["command"], "env");
}

#[test]
fn run_quick_writes_a_valid_run_document() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let doc = json(
        memsight()
            .args([
                "run",
                "--quick",
                "--json",
                "--no-progress",
                "--max-size",
                "8M",
                "--min-samples",
                "3",
                "--point-budget",
                "0.05",
                "--out",
            ])
            .arg(dir.path()),
    );
    assert_valid(&doc);
    assert_eq!(doc["command"], "run");
    // The same document is in the run's directory.
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(saved["results"]["summary"], doc["results"]["summary"]);
    let r = &doc["results"];
    assert_eq!(r["level"], "quick");
    assert!(r["bandwidth"]["points"].as_array().unwrap().len() >= 3);
    assert!(r["summary"].as_array().unwrap().len() >= 2);
    assert!(
        !r["skipped"].as_array().unwrap().is_empty(),
        "a quick run skips the long suites and says so"
    );
    let l = &doc["results"]["latency"]["ladders"][0];
    // --quick: 2 points per octave (4 over the three octaves above the L2 where the machine
    // reports an L2 below its last level), no TLB ladder, no MLP sweep.
    assert!(l["huge"].is_null());
    assert!(l["mlp"].is_null());
    let sizes: Vec<u64> = l["main"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["size_bytes"].as_u64().unwrap())
        .collect();
    let l2 = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index2/size")
        .ok()
        .and_then(|s| s.trim().strip_suffix('K')?.parse::<u64>().ok())
        .map(|k| k * 1024);
    let l3 = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache/index3").exists();
    match l2 {
        Some(l2) if l3 => {
            // (Over the octaves the ladder reached: it ends once memory has held for two
            // octaves, which on a host whose other tenants fill the L3 can be 4 × the L2.)
            let top = sizes.iter().copied().max().unwrap_or(0).min(8 * l2);
            let octaves = (top as f64 / l2 as f64).log2().floor() as usize;
            let dense = sizes.iter().filter(|&&s| s >= l2 && s <= top).count();
            assert!(
                octaves >= 2,
                "the ladder reached two octaves above the L2: {sizes:?}"
            );
            assert!(
                dense > 4 * octaves,
                "4 points an octave above the L2: {sizes:?}"
            );
        }
        _ => assert!(sizes.len() >= 20, "{sizes:?}"),
    }
}

#[test]
fn env_text_names_every_section() {
    let out = memsight().args(["env"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "cpu ",
        "isa ",
        "hypervisor",
        "topology",
        "allowed",
        "memory",
        "governor",
        "THP",
        "huge pages",
        "NUMA balancing",
        "DAMON",
        "load",
        "Caches",
        "NUMA nodes",
    ] {
        assert!(text.contains(needle), "missing '{needle}' in:\n{text}");
    }
}

#[test]
fn works_without_root_and_says_frames_are_hidden() {
    let _serial = common::measuring();
    let Some(nobody) = common::Unprivileged::new() else {
        return;
    };
    let out = nobody
        .memsight()
        .args([
            "latency",
            "--json",
            "--max-size",
            "256K",
            "--parallel",
            "1",
            "--no-tlb",
        ])
        .args(common::QUICK)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let phys = &doc["results"]["ladders"][0]["main"]["buffer"]["physical"];
    assert_eq!(phys["frames_visible"], false);
    assert!(
        phys["runs"].is_null(),
        "no contiguity figure from hidden frames"
    );
}

/// The share of one chain's round below which a k-chain round is refused (MLP_ROUND_FLOOR).
fn memsight_suites_round_floor() -> f64 {
    0.9
}
