//! Topology and environment on recorded machines (hwloc's own test snapshots): multi-socket, ARM,
//! cgroup-restricted, many-node, CPU-less memory tiers, CXL and memory-side caches. These are the
//! machines memsight must plan for but this project's 2-vCPU VM is not.

mod common;

use common::{assert_valid, json, memsight, unpack_fsroot, xml_fixture};
use serde_json::Value;

fn env_of_fsroot(name: &str) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    env_of_root(&unpack_fsroot(name, tmp.path()))
}

/// `memsight env` on an unpacked recording.
fn env_of_root(root: &std::path::Path) -> Value {
    let doc = json(
        memsight()
            .args(["env", "--json"])
            .env("HWLOC_FSROOT", root)
            .env("HWLOC_COMPONENTS", "linux,stop"),
    );
    assert_valid(&doc);
    doc["environment"].clone()
}

fn env_of_xml(name: &str) -> Value {
    let file = xml_fixture(name);
    let doc = json(
        memsight()
            .args(["env", "--json", "--topology-xml"])
            .arg(&file),
    );
    assert_valid(&doc);
    doc["environment"].clone()
}

fn warning_codes(env: &Value) -> Vec<&str> {
    env["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

fn nodes(env: &Value) -> &Vec<Value> {
    env["topology"]["numa_nodes"].as_array().unwrap()
}

#[test]
fn four_socket_smt_machine() {
    let env = env_of_fsroot("16em64t-4s2c2t");
    let t = &env["topology"];
    assert_eq!(t["packages"], 4);
    assert_eq!(t["cores"], 8);
    assert_eq!(t["threads"], 16);
    assert_eq!(t["smt"], 2);
    assert_eq!(env["cpu"]["architecture"], "x86_64");
    // Recorded, not live: the SMT warning is there, the hypervisor is not invented.
    let codes = warning_codes(&env);
    assert!(codes.contains(&"smt"), "{codes:?}");
    assert!(env["cpu"]["hypervisor"].is_null());
    // Every CPU names its package.
    assert!(
        t["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["package"].is_u64())
    );
}

#[test]
fn arm_server_with_clusters() {
    let env = env_of_fsroot("128arm-2pa2n8cluster4co");
    assert_eq!(env["cpu"]["architecture"], "aarch64");
    assert_eq!(env["cpu"]["features"]["neon"], true);
    let t = &env["topology"];
    assert_eq!(t["threads"], 128);
    assert_eq!(t["packages"], 2);
    assert_eq!(nodes(&env).len(), 4);
    assert!(
        t["caches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["level"] == 3)
    );
}

#[test]
fn cgroup_restricted_machine() {
    let env = env_of_fsroot("32amd64-4s2n4c-cgroup2");
    let t = &env["topology"];
    assert_eq!(t["threads"], 32);
    let allowed = env["allowed_cpus"].as_array().unwrap();
    assert_eq!(allowed.len(), 6, "cgroup cpuset 0-5");
    let codes = warning_codes(&env);
    assert!(codes.contains(&"cpuset"), "{codes:?}");
}

#[test]
fn cpuset_restricted_nodes() {
    let env = env_of_fsroot("16amd64-8n2c-cpusets");
    assert_eq!(nodes(&env).len(), 8);
    let allowed: Vec<u64> = env["allowed_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(allowed, vec![1, 2, 3, 4]);
    let disallowed = nodes(&env).iter().filter(|n| n["allowed"] == false).count();
    assert_eq!(disallowed, 4);
}

#[test]
fn heterogeneous_memory_tiers_have_cpu_less_nodes() {
    let env = env_of_fsroot("fakeheteromemtiers");
    let ns = nodes(&env);
    assert_eq!(ns.len(), 7);
    let cpu_less: Vec<(u64, &str)> = ns
        .iter()
        .filter(|n| n["cpu_less"] == true)
        .map(|n| (n["os_index"].as_u64().unwrap(), n["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        cpu_less,
        vec![(4, "HBM"), (6, "NVM"), (8, "NVM"), (9, "NVM")]
    );
    // A CPU-less node still says which CPUs it hangs off.
    assert!(
        ns.iter()
            .all(|n| !n["near_cpus"].as_array().unwrap().is_empty())
    );
    // Every CPU's local node is a node with CPUs.
    for c in env["topology"]["cpus"].as_array().unwrap() {
        let node = c["node"].as_u64().unwrap();
        assert!(
            ns.iter()
                .any(|n| n["os_index"] == node && n["cpu_less"] == false)
        );
    }
}

#[test]
fn sixty_four_node_machine() {
    let env = env_of_fsroot("256ia64-64n2s2c");
    assert_eq!(nodes(&env).len(), 64);
    assert_eq!(env["topology"]["threads"], 256);
}

#[test]
fn twenty_four_node_xml() {
    let env = env_of_xml("192em64t-24n8c2t.xml");
    assert_eq!(nodes(&env).len(), 24);
    assert_eq!(env["topology"]["threads"], 384);
    assert_eq!(env["topology"]["smt"], 2);
    // A recorded topology's allowed CPUs are its own, not this process's affinity.
    assert_eq!(env["allowed_cpus"].as_array().unwrap().len(), 384);
}

#[test]
fn hbm_nodes_from_xml_are_cpu_less() {
    let env = env_of_xml("64intel64-heteromem.xml");
    let hbm: Vec<&Value> = nodes(&env).iter().filter(|n| n["kind"] == "HBM").collect();
    assert_eq!(hbm.len(), 4);
    assert!(hbm.iter().all(|n| n["cpu_less"] == true));
}

#[test]
fn cxl_memory_devices_are_listed() {
    let env = env_of_xml("cxlmem+dax.v2.xml");
    let devs = env["topology"]["memory_devices"].as_array().unwrap();
    let cxl = devs.iter().filter(|d| d["subtype"] == "CXLMem").count();
    assert_eq!(cxl, 4);
}

#[test]
fn memory_side_caches_are_reported() {
    let env = env_of_xml("memorysidecaches.xml");
    let msc = env["topology"]["memory_side_caches"].as_array().unwrap();
    assert_eq!(msc.len(), 1);
    assert_eq!(msc[0]["instances"], 4);
    assert_eq!(msc[0]["size_bytes"], 96u64 << 30);
}

#[test]
fn measuring_on_a_recording_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = unpack_fsroot("16em64t-4s2c2t", tmp.path());
    let out = memsight()
        .args(["latency", "--max-size", "1M"])
        .env("HWLOC_FSROOT", &root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("recording"));
}

#[test]
fn memory_errors_from_edac_are_reported_and_warned() {
    let tmp = tempfile::tempdir().unwrap();
    let root = unpack_fsroot("16em64t-4s2c2t", tmp.path());
    // An EDAC controller as the kernel's ABI (sysfs-devices-edac) lays it out, one DIMM with
    // corrected errors.
    let mc = root.join("sys/devices/system/edac/mc/mc0");
    for (file, text) in [
        ("mc_name", "Skylake Socket#0 IMC#0"),
        ("ce_count", "7"),
        ("ue_count", "0"),
        ("dimm0/dimm_label", "CPU_SrcID#0_MC#0_Chan#0_DIMM#0"),
        ("dimm0/dimm_location", "channel 0 slot 0"),
        ("dimm0/size", "16384"),
        ("dimm0/dimm_ce_count", "7"),
        ("dimm0/dimm_ue_count", "0"),
    ] {
        let p = mc.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let env = env_of_root(&root);
    assert_eq!(env["memory_errors"][0]["dimms"][0]["ce"], 7);
    assert!(warning_codes(&env).contains(&"memory_errors"));
    // The clean recording has none.
    assert!(!warning_codes(&env_of_fsroot("16em64t-4s2c2t")).contains(&"memory_errors"));
}
