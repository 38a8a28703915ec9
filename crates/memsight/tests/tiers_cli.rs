//! `memsight tiers`: plans on recorded multi-tier machines (HBM + DRAM + NVM, Optane Memory Mode
//! with memory-side caches, CXL with DAX, KNL-style flat HBM), and measurements on this machine's
//! one node, emulated DAX included. Assertions are on structure and orderings, never on timings.

mod common;

use common::{assert_valid, fixtures, json, measuring, memsight, unpack_fsroot, xml_fixture};
use serde_json::Value;

fn plan_of_fsroot(name: &str, extra: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let root = unpack_fsroot(name, tmp.path());
    let doc = json(
        memsight()
            .args(["tiers", "--plan", "--json"])
            .args(extra)
            .env("HWLOC_FSROOT", &root)
            .env("HWLOC_COMPONENTS", "linux,stop"),
    );
    assert_valid(&doc);
    doc["results"].clone()
}

fn plan_of_xml(name: &str) -> Value {
    let file = xml_fixture(name);
    let doc = json(
        memsight()
            .args(["tiers", "--plan", "--json", "--topology-xml"])
            .arg(&file),
    );
    assert_valid(&doc);
    doc["results"].clone()
}

fn tier_kinds(r: &Value) -> Vec<Vec<String>> {
    r["plan"]["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["kind"].as_str().unwrap_or("-").to_string())
                .collect()
        })
        .collect()
}

fn findings(r: &Value) -> String {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(common::text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn hbm_dram_and_nvm_make_three_tiers_fastest_first() {
    let r = plan_of_fsroot("fakeheteromemtiers", &[]);
    let kinds = tier_kinds(&r);
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert!(kinds[0].iter().all(|k| k == "HBM"));
    assert!(kinds[1].iter().all(|k| k == "DRAM"));
    assert!(kinds[2].iter().all(|k| k == "NVM"));
    // Every CPU-less node is measured from the CPUs hwloc places it beside.
    for t in r["plan"]["tiers"].as_array().unwrap() {
        for n in t["nodes"].as_array().unwrap() {
            assert!(!n["cpus"].as_array().unwrap().is_empty(), "{n}");
            if n["cpu_less"] == false {
                assert_eq!(n["initiator"], n["node"]);
            }
        }
    }
    // One node per tier, as `memsight run` measures by default.
    let one = plan_of_fsroot("fakeheteromemtiers", &["--one-per-tier"]);
    assert!(tier_kinds(&one).iter().all(|t| t.len() == 1));
    assert_eq!(tier_kinds(&one).len(), 3);
    let w = &r["plan"]["weighted"];
    assert_eq!(w["ratios"][0], serde_json::json!({"near": 1, "far": 0}));
    assert_ne!(w["fast"], w["slow"]);
    assert!(r["targets"].as_array().unwrap().is_empty(), "plan only");
    // The plan is presented too: a line per node with its kind, CPUs and tier.
    let tmp = tempfile::tempdir().unwrap();
    let root = unpack_fsroot("fakeheteromemtiers", tmp.path());
    let out = memsight()
        .args(["tiers", "--plan", "--no-progress"])
        .env("HWLOC_FSROOT", &root)
        .env("HWLOC_COMPONENTS", "linux,stop")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("node 6 (NVM, 384 MiB, CPU-less) measured from CPUs"),
        "{text}"
    );
    assert!(text.contains("weighted interleave: node"), "{text}");
}

#[test]
fn memory_side_caches_plan_the_near_memory_sweep() {
    // Dell R740 in Optane Memory Mode: 96 GiB of DRAM caches each node's 372 GiB.
    let r = plan_of_fsroot("memorysidecaches", &[]);
    let near = &r["plan"]["near"];
    assert_eq!(near["bytes"], 96u64 << 30);
    assert_eq!(near["source"], "sysfs");
    let sizes: Vec<u64> = near["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(sizes[0], 12u64 << 30, "an eighth of the near memory");
    assert!(sizes.windows(2).all(|w| w[0] < w[1]));
    assert!(
        *sizes.last().unwrap() < 4 * (96u64 << 30),
        "capped by the node"
    );
    assert!(near["capped"].as_str().unwrap().contains("far plateau"));
    // The same machine as hwloc exports it: the near memory comes from its memory-side caches,
    // and this VM's own memory does not cap the recorded machine's sweep.
    let r = plan_of_xml("memorysidecaches.xml");
    assert_eq!(r["plan"]["near"]["source"], "hwloc");
    assert_eq!(r["plan"]["near"]["bytes"], 96u64 << 30);
    let last = r["plan"]["near"]["sizes"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_u64()
        .unwrap();
    assert!(last > 300u64 << 30, "{last}");
    // --near-size overrides what the firmware says.
    let r = plan_of_fsroot("memorysidecaches", &["--near-size", "8G"]);
    assert_eq!(r["plan"]["near"]["source"], "given");
    assert_eq!(r["plan"]["near"]["sizes"][0], 1u64 << 30);
}

#[test]
fn smbios_memory_mode_gives_the_near_size() {
    let dmi = fixtures()
        .join("dmidecode/dell-precision-7920-xeon-platinum8280-ddr4-rdimm-optane-memory-mode.txt");
    let r = plan_of_xml_with(
        "8intel64-4n2t-memattrs.xml",
        &["--dmidecode", dmi.to_str().unwrap()],
    );
    let near = &r["plan"]["near"];
    assert_eq!(near["source"], "memory_mode", "{near}");
    // 192 GiB of DRAM over the dump's two sockets: no node is credited more than one socket's.
    let bytes = near["bytes"].as_u64().unwrap();
    assert!(bytes > 0 && bytes <= 96 << 30, "{near}");
    let node = near["node"].as_u64().unwrap();
    let held = r["plan"]["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["nodes"].as_array().unwrap())
        .find(|n| n["node"].as_u64() == Some(node))
        .map(|n| n["memory_bytes"].as_u64().unwrap())
        .unwrap();
    for s in near["sizes"].as_array().unwrap() {
        assert!(
            s.as_u64().unwrap() <= held,
            "{s} beyond node {node}'s {held} B"
        );
    }
}

fn plan_of_xml_with(name: &str, extra: &[&str]) -> Value {
    let file = xml_fixture(name);
    let doc = json(
        memsight()
            .args(["tiers", "--plan", "--json", "--topology-xml"])
            .arg(&file)
            .args(extra),
    );
    doc["results"].clone()
}

#[test]
fn flat_hbm_is_the_fast_tier_and_cxl_devices_are_named() {
    let r = plan_of_xml("64intel64-heteromem.xml");
    let kinds = tier_kinds(&r);
    assert_eq!(kinds.len(), 2);
    assert_eq!(kinds[0], vec!["HBM"; 4]);
    assert_eq!(kinds[1], vec!["DRAM"; 4]);
    let r = plan_of_xml("cxlmem+dax.v2.xml");
    let f = findings(&r);
    assert!(f.contains("--dax /dev/dax0.0"), "{f}");
    assert!(f.contains("CXL memory device mem1"), "{f}");
    assert!(f.contains("one memory tier"), "{f}");
}

#[test]
fn measures_this_node_and_emulated_dax_with_every_figure_labelled() {
    let _m = measuring();
    let doc = json(memsight().args([
        "tiers",
        "--json",
        "--no-progress",
        "--dax",
        "/dev/shm",
        "--latency-size",
        "32M",
        "--bandwidth-size",
        "16M",
        "--granularity-size",
        "32M",
        "--blocks",
        "64,256,4096",
        "--latency-blocks",
        "64,256",
        "--skip",
        "loaded",
        "--min-samples",
        "3",
        "--point-budget",
        "0.05",
    ]));
    assert_valid(&doc);
    let r = &doc["results"];
    let targets = r["targets"].as_array().unwrap();
    let dax = targets
        .iter()
        .find(|t| t["target"]["kind"] == "dax")
        .unwrap();
    assert_eq!(dax["target"]["backing"]["kind"], "emulated");
    assert_eq!(dax["target"]["backing"]["filesystem"], "tmpfs");
    for t in targets {
        for k in [
            "read_latency_ns",
            "write_latency_ns",
            "read_gbs",
            "write_gbs",
        ] {
            assert!(t[k]["median"].as_f64().unwrap() > 0.0, "{k}");
        }
        let g = t["granularity"].as_array().unwrap();
        // 3 blocks × 4 accesses × (1 thread, every CPU), deduplicated when one CPU.
        assert!(g.len() == 12 || g.len() == 24, "{}", g.len());
        // Idle latency by access size: one point per block. (No ordering here: this 32 MiB
        // working set sits partly in a large L3, where the block chases' different strides
        // hit differently; in memory the larger block costs more, see docs/methods/tiers.md.)
        let b = t["block_latency"].as_array().unwrap();
        assert_eq!(b.len(), 2, "{t}");
        assert_eq!(b[1]["block_bytes"], 256);
        assert!(b.iter().all(|x| x["ns"]["median"].as_f64().unwrap() > 0.0));
        // Persisting every line is never cheaper than not persisting.
        assert!(t["persist_cost"].as_f64().unwrap() > 1.0);
        // Larger random blocks never move fewer bytes per second than 64-byte ones (wide margin).
        let at = |b: u64| {
            g.iter()
                .filter(|p| p["access"] == "read" && p["block_bytes"] == b)
                .map(|p| p["gbs"]["median"].as_f64().unwrap())
                .fold(0.0, f64::max)
        };
        assert!(
            at(4096) > 0.8 * at(64),
            "4 KiB {} vs 64 B {}",
            at(4096),
            at(64)
        );
    }
    let f = findings(r);
    assert!(f.contains("EMULATED"), "{f}");
    assert!(f.contains("one memory tier"), "{f}");
    assert!(r["method"].as_str().unwrap().contains("multichase incr"));
}

#[test]
fn the_near_sweep_runs_against_a_given_size() {
    let _m = measuring();
    let doc = json(memsight().args([
        "tiers",
        "--json",
        "--no-progress",
        "--near-size",
        "4M",
        "--skip",
        "latency,bandwidth,loaded,granularity,weighted",
        "--min-samples",
        "3",
        "--point-budget",
        "0.05",
    ]));
    assert_valid(&doc);
    let n = &doc["results"]["near"];
    let pts = n["points"].as_array().unwrap();
    assert!(pts.len() >= 8, "{}", pts.len());
    assert_eq!(pts[0]["size_bytes"], 1u64 << 20);
    for p in pts {
        let ideal = p["miss_ideal"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&ideal));
        // Reads and the 2:1 mix at every point; the one-CPU level where there are several.
        assert!(p["mix_gbs"]["median"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["read_gbs"]["median"].as_f64().unwrap() > 0.0, "{p}");
        if let Some(m) = p["miss_latency"].as_f64() {
            assert!((0.0..=1.0).contains(&m));
        }
    }
    assert_eq!(n["analysis"]["near_bytes"], 4u64 << 20);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let file = tempfile::NamedTempFile::new().unwrap();
    for args in [
        vec!["tiers", "--dax", file.path().to_str().unwrap()],
        vec!["tiers", "--dax", "/nonexistent/dir"],
        // A character device that is not a devdax device.
        vec!["tiers", "--dax", "/dev/null"],
        vec!["tiers", "--skip", "everything"],
        vec!["tiers", "--blocks", "100"],
        vec!["tiers", "--latency-blocks", "96"],
        vec!["tiers", "--node", "7"],
        vec!["latency", "--dax", "/dev/shm", "--node", "0"],
    ] {
        let out = memsight()
            .args(&args)
            .arg("--no-progress")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn latency_bandwidth_and_loaded_latency_take_dax_and_the_write_chase() {
    let _m = measuring();
    let doc = json(memsight().args([
        "latency",
        "--json",
        "--no-progress",
        "--write",
        "--dax",
        "/dev/shm",
        "--min-size",
        "8M",
        "--max-size",
        "8M",
        "--parallel",
        "1",
        "--min-samples",
        "3",
        "--point-budget",
        "0.05",
    ]));
    let r = &doc["results"];
    assert_eq!(r["method"]["write"], true);
    assert!(
        r["method"]["description"]
            .as_str()
            .unwrap()
            .contains("EMULATED DAX")
    );
    assert_eq!(
        r["ladders"][0]["main"]["buffer"]["file"]["kind"],
        "emulated"
    );
    let doc = json(memsight().args([
        "bandwidth",
        "--json",
        "--no-progress",
        "--dax",
        "/dev/shm",
        "--test",
        "read",
        "--size",
        "8M",
        "--min-samples",
        "3",
        "--point-budget",
        "0.05",
    ]));
    assert!(
        doc["results"]["points"][0]["program_gbs"]["median"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Every command says when its figures are emulated DAX.
    assert_eq!(doc["results"]["memory"]["kind"], "emulated");
    let said = |d: &Value| {
        d["results"]["findings"]
            .to_string()
            .contains("EMULATED DAX")
    };
    assert!(said(&doc));
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        let doc = json(memsight().args([
            "loaded-latency",
            "--json",
            "--no-progress",
            "--dax",
            "/dev/shm",
            "--mix",
            "reads",
            "--points",
            "2",
            "--size",
            "16M",
            "--load-size",
            "8M",
            "--min-samples",
            "3",
            "--point-budget",
            "0.05",
        ]));
        assert!(!doc["results"]["curves"].as_array().unwrap().is_empty());
        assert_eq!(doc["results"]["memory"]["kind"], "emulated");
    }
}

#[test]
fn persistence_domains_of_a_recorded_machine_are_in_the_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let root = unpack_fsroot("fakeheteromemtiers", tmp.path());
    for (region, domain) in [("region0", "memory_controller"), ("region1", "cpu_cache")] {
        let dir = root.join("sys/bus/nd/devices").join(region);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("persistence_domain"), domain).unwrap();
        std::fs::write(dir.join("size"), "402653184").unwrap();
        std::fs::write(dir.join("target_node"), "6").unwrap();
    }
    let doc = json(
        memsight()
            .args(["tiers", "--plan", "--json"])
            .env("HWLOC_FSROOT", &root)
            .env("HWLOC_COMPONENTS", "linux,stop"),
    );
    assert_valid(&doc);
    let plan = &doc["results"]["plan"];
    let domains: Vec<&str> = plan["persistence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["persistence_domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["memory-controller", "cpu-cache"]);
    let notes = plan["notes"].to_string();
    assert!(
        notes.contains("region0") && notes.contains("clwb"),
        "{notes}"
    );
    assert!(
        notes.contains("region1") && notes.contains("not needed"),
        "{notes}"
    );
}
