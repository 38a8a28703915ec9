//! `memsight dimms` on recorded dmidecode outputs, and its bad input.

mod common;

use common::{assert_valid, fixtures, json, memsight};

#[test]
fn inventory_from_a_recorded_server() {
    let f = fixtures()
        .join("dmidecode/dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    let doc = json(memsight().args(["dimms", "--json", "--dmidecode"]).arg(&f));
    assert_valid(&doc);
    let r = &doc["results"];
    assert_eq!(
        (r["populated"].as_u64(), r["slots"].as_u64()),
        (Some(4), Some(16))
    );
    assert_eq!(r["total_bytes"].as_u64(), Some(128 << 30));
    let d = r["inventory"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["populated"] == true)
        .unwrap();
    assert_eq!(d["manufacturer"], "Samsung");
}

/// A two-socket Dell names its slots A1… and B1…: socket B's slot scheme is not called "A<n>",
/// and the system peak names each socket.
#[test]
fn both_sockets_of_a_dell_are_named_for_themselves() {
    let f = fixtures()
        .join("dmidecode/dell-poweredge-r7525-2s-epyc7742-ddr4-rdimm-hynix-hmaa8gr7ajr4n.txt");
    let out = common::ok(
        &memsight()
            .args(["dimms", "--dmidecode"])
            .arg(&f)
            .output()
            .unwrap(),
    );
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("socket B")).collect();
    assert!(!rows.is_empty(), "{out}");
    assert!(rows.iter().all(|l| !l.contains("Dell A<n>")), "{rows:?}");
    assert!(
        out.contains("socket A: 8 ch") && out.contains("socket B: 8 ch"),
        "{out}"
    );
}

#[test]
fn bad_dmidecode_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage.bin");
    std::fs::write(&garbage, [0xffu8, 0xfe, 0x00, 0x81, 0x92]).unwrap();
    let other = dir.path().join("other.txt");
    std::fs::write(
        &other,
        "Handle 0x0001, DMI type 4, 48 bytes\nProcessor Information\n",
    )
    .unwrap();
    let bad_ep = dir.path().join("bad.bin");
    std::fs::write(&bad_ep, b"_SM3_\x00\x18\x03\x02").unwrap();
    for (file, needle) in [
        (&empty, "empty"),
        (&garbage, "neither dmidecode text nor a --dump-bin"),
        (&other, "no SMBIOS memory records"),
        (&bad_ep, "not a 'dmidecode --dump-bin' file"),
    ] {
        let out = memsight()
            .args(["dimms", "--dmidecode"])
            .arg(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(needle) && err.lines().count() == 1, "{err}");
    }
}

#[test]
fn fabric_limit_and_channel_findings() {
    let f = fixtures()
        .join("dmidecode/dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    let doc = json(
        memsight()
            .args([
                "dimms",
                "--json",
                "--ccds",
                "4",
                "--fclk",
                "1600",
                "--dmidecode",
            ])
            .arg(&f),
    );
    let c = &doc["results"]["ceilings"];
    assert_eq!(c["fabric_read_mbs"], 4 * 32 * 1600);
    assert_eq!(c["fabric_write_mbs"], 4 * 16 * 1600);
    // DRAM 102 400 MB/s binds reads (fabric 204 800); the fabric binds writes (102 400 = DRAM).
    assert_eq!(c["binding_read_mbs"], 102_400);
    let findings: Vec<&str> = doc["results"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(common::text)
        .collect();
    assert!(
        findings.iter().any(|f| f.contains("4 of 8 channels")),
        "{findings:?}"
    );
}

#[test]
fn efficiency_against_a_measured_bandwidth() {
    let dir = tempfile::tempdir().unwrap();
    let bw = dir.path().join("bw.json");
    let out = memsight()
        .args([
            "bandwidth",
            "--no-progress",
            "--test",
            "read,write-nt",
            "--size",
            "8M",
            "--min-samples",
            "3",
            "--point-budget",
            "0.1",
            "-o",
        ])
        .arg(&bw)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = fixtures()
        .join("dmidecode/dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    let doc = json(
        memsight()
            .args(["dimms", "--json", "--dmidecode"])
            .arg(&f)
            .arg("--bandwidth")
            .arg(&bw),
    );
    let e = doc["results"]["efficiency"].as_array().unwrap();
    assert_eq!(e.len(), 2);
    for x in e {
        assert_eq!(x["ceiling_mbs"], 102_400);
        assert!(x["efficiency"].as_f64().unwrap() > 0.0);
    }
    // Not a bandwidth result: refused.
    let env_json = dir.path().join("env.json");
    assert!(
        memsight()
            .args(["env", "-o"])
            .arg(&env_json)
            .output()
            .unwrap()
            .status
            .success()
    );
    let out = memsight()
        .args(["dimms", "--dmidecode"])
        .arg(&f)
        .arg("--bandwidth")
        .arg(&env_json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn live_tables_or_a_clear_refusal() {
    let out = memsight().args(["dimms", "--json"]).output().unwrap();
    if std::path::Path::new("/sys/firmware/dmi/tables/DMI").exists() && out.status.success() {
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_valid(&doc);
    } else {
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("SMBIOS") || err.contains("root"), "{err}");
    }
}

#[test]
fn dump_bin_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dmi.bin");
    std::fs::write(&f, memsight_model::smbios::example::synthetic_dump_bin()).unwrap();
    let doc = json(memsight().args(["dimms", "--json", "--dmidecode"]).arg(&f));
    assert_valid(&doc);
    let r = &doc["results"];
    assert_eq!(
        (r["populated"].as_u64(), r["slots"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(r["source"].as_str().unwrap().contains("dump-bin"));
    let m = &r["modules"][0];
    assert_eq!(m["decoded"]["vendor"], "Samsung");
    assert_eq!(m["chips"], 36);
    // One DIMM on an 8-channel EPYC 7502P.
    assert_eq!(r["ceilings"]["system_dram_mbs"], 25_600);
}

#[test]
fn optane_mode_and_timings() {
    let findings = |file: &str| -> Vec<String> {
        let doc = json(
            memsight()
                .args(["dimms", "--json", "--dmidecode"])
                .arg(fixtures().join("dmidecode").join(file)),
        );
        doc["results"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| common::text(x).to_string())
            .collect()
    };
    let mm = findings("dell-precision-7920-xeon-platinum8280-ddr4-rdimm-optane-memory-mode.txt");
    assert!(mm.iter().any(|f| f.contains("Memory Mode")), "{mm:?}");
    let ad = findings("supermicro-sys-2029u-xeon-gold6240-ddr4-rdimm-plus-optane-pmem.txt");
    assert!(
        ad.iter().any(|f| f.contains("App Direct or unconfigured")),
        "{ad:?}"
    );
    // Timings of a decoded DDR4-3200 2Rx8 16 Gb module: tFAW 34 nCK = 21.25 ns.
    let f = fixtures()
        .join("dmidecode/dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    let doc = json(memsight().args(["dimms", "--json", "--dmidecode"]).arg(&f));
    let m = &doc["results"]["modules"][0];
    assert!((m["tfaw_ns"].as_f64().unwrap() - 21.25).abs() < 1e-9);
    assert_eq!(m["timings"]["trfc1_ns"], 550.0);
}

/// Devices and directories are refused at once (`/dev/zero` once read forever); standard input
/// (`-`) and named pipes are read, up to a size limit.
#[test]
fn endless_and_non_file_inputs_are_refused_and_stdin_is_read() {
    use std::io::Write;
    use std::process::Stdio;
    // Runs with a deadline, so a regression fails instead of hanging the suite.
    let bounded = |args: &[&str]| {
        let mut child = memsight()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("memsight {args:?} did not return within 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    };
    for (path, needle) in [("/dev/zero", "not a regular file"), ("/", "a directory")] {
        common::refused(&bounded(&["dimms", "--dmidecode", path]), needle);
    }
    common::refused(
        &bounded(&["compare", "/dev/zero", "/dev/zero"]),
        "not a regular file",
    );
    let f = fixtures()
        .join("dmidecode/dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    let mut child = memsight()
        .args(["dimms", "--json", "--dmidecode", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&f).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"]["populated"].as_u64(), Some(4));
}

/// Xeon SP boards name the memory controller in the bank locator (`P0_Node1_Channel0_Dimm0`):
/// each controller numbers its channels from 0, so controller and channel together are the
/// channel. Counting `ChannelN` alone merged both controllers' channel 0 (Cascade Lake with
/// Optane: 3 of 6 channels and 127968 MB/s instead of 4 and 170624).
#[test]
fn xeon_sp_channels_count_both_memory_controllers() {
    for (file, channels, system_mbs) in [
        (
            "supermicro-sys-2029u-xeon-gold6240-ddr4-rdimm-plus-optane-pmem.txt",
            4,
            170624,
        ),
        (
            "supermicro-sys-751a-xeon-silver4410y-ddr5-rdimm-samsung-m321r4ga3bb6-at-4000.txt",
            8,
            512000,
        ),
        (
            "supermicro-x11dpi-n-xeon-gold6248r-ddr4-lrdimm-samsung-m386aag40am3-128gb.txt",
            2,
            93888,
        ),
    ] {
        let doc = json(
            memsight()
                .args(["dimms", "--json", "--dmidecode"])
                .arg(fixtures().join("dmidecode").join(file)),
        );
        let c = &doc["results"]["ceilings"];
        for s in c["sockets"].as_array().unwrap() {
            assert_eq!(s["channels_used"].as_u64(), Some(channels), "{file}");
        }
        assert_eq!(c["system_dram_mbs"].as_u64(), Some(system_mbs), "{file}");
    }
}

/// DRAM and persistent capacity are reported apart, and in Memory Mode the persistent capacity
/// is what the OS sees.
#[test]
fn dram_and_persistent_capacity_apart() {
    for (file, dram_gib, pmem_gib, memory_mode, says) in [
        (
            "supermicro-sys-2029u-xeon-gold6240-ddr4-rdimm-plus-optane-pmem.txt",
            128,
            1011,
            false,
            "the OS sees the 128 GiB DRAM",
        ),
        (
            "dell-precision-7920-xeon-platinum8280-ddr4-rdimm-optane-memory-mode.txt",
            192,
            1011,
            true,
            "Memory Mode: the OS sees the 1011 GiB persistent",
        ),
        (
            "dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt",
            128,
            0,
            false,
            "128 GiB DRAM installed",
        ),
    ] {
        let path = fixtures().join("dmidecode").join(file);
        let doc = json(
            memsight()
                .args(["dimms", "--json", "--dmidecode"])
                .arg(&path),
        );
        let r = &doc["results"];
        let gib = |k: &str| r[k].as_u64().unwrap() >> 30;
        assert_eq!(
            (gib("dram_bytes"), gib("persistent_bytes")),
            (dram_gib, pmem_gib),
            "{file}"
        );
        assert_eq!(
            r["dram_bytes"].as_u64().unwrap() + r["persistent_bytes"].as_u64().unwrap(),
            r["total_bytes"].as_u64().unwrap()
        );
        assert_eq!(r["memory_mode"].as_bool(), Some(memory_mode), "{file}");
        let out = memsight()
            .args(["dimms", "--dmidecode"])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(says), "{file}: {text}");
    }
}

/// Cloudflare's DDR4 study's (Shen, 2020) question without hardware: 8 × 32 GB 2Rx4 against 8 × 32 GB 2Rx8 on a
/// 2-socket Xeon, side by side, each --dimm with the --plan before it.
#[test]
fn plans_compare_alternatives_side_by_side() {
    let args = [
        "dimms",
        "--plan",
        "2x Xeon Gold 6248",
        "--dimm",
        "M393A4K40EB3-CWE=8",
        "--plan",
        "2x Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
        "--dimm",
        "M393A4G43BB4-CWE=4",
        "--dimm",
        "M393A4K40EB3-CWE=8",
    ];
    let doc = json(memsight().arg("--json").args(args));
    assert_valid(&doc);
    assert_eq!(doc["command"], "dimms-plan");
    let plans = doc["results"]["plans"].as_array().unwrap();
    assert_eq!(plans.len(), 2);
    assert_eq!(plans[0]["dimms"], 8);
    assert_eq!(plans[1]["dimms"], 12);
    assert_eq!(plans[1]["parts"].as_array().unwrap().len(), 2);
    assert_eq!(plans[0]["parts"][0]["decoded"]["device_width"], 4);
    assert_eq!(plans[0]["peak_mbs"], 8 * 8 * 2933);
    assert_eq!(plans[1]["peak_mbs"], 12 * 8 * 2933);
    let text = memsight().args(args).output().unwrap();
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success());
    for needle in [
        "plan 1: 2x Xeon Gold 6248",
        "2Rx4",
        "2Rx8",
        "4 of 6 channels",
        "x4 and x8",
    ] {
        assert!(out.contains(needle), "{needle} missing:\n{out}");
    }
}

/// The DRAM model behind Shen's figures 1–3 (banks, bank groups, rows, columns, depth, page,
/// the tFAW-bound activate ceiling) is in the JSON, the terminal and the report, not only in
/// the library's tests.
#[test]
fn plans_show_the_dram_organisation_of_each_part() {
    let args = [
        "dimms",
        "--plan",
        "EPYC 7713",
        "--dimm",
        "M393A4G43BB4-CWE=8",
        "--plan",
        "EPYC 7713",
        "--dimm",
        "M393A4K40EB3-CWECQ=8",
    ];
    let doc = json(memsight().arg("--json").args(args));
    assert_valid(&doc);
    let part = |i: usize| doc["results"]["plans"][i]["parts"][0].clone();
    // 16 Gb x8: 4 bank groups of 4 banks, 128 K rows of 1 K columns, 2 G deep, 1 KiB page.
    let o = &part(0)["organisation"];
    assert_eq!(
        (
            &o["bank_groups"],
            &o["banks_per_group"],
            &o["rows"],
            &o["columns"]
        ),
        (&4.into(), &4.into(), &131072.into(), &1024.into())
    );
    assert_eq!(o["depth"], 2u64 << 30);
    assert_eq!(o["page_bytes"], 1024);
    assert_eq!(part(1)["organisation"]["page_bytes"], 512);
    assert_eq!(part(0)["timings"]["mts"], 3200);
    let out = common::ok(&memsight().args(args).output().unwrap());
    for needle in [
        "DRAM organisation per part",
        "4 × 4",
        "131072 × 1024",
        "2G × 8",
        "2G × 4",
        "12.0 GB/s",
        "25.6 GB/s",
        "random (closed-page) traffic is bound by activates",
    ] {
        assert!(out.contains(needle), "{needle} missing:\n{out}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (file, html) = (dir.path().join("plan.json"), dir.path().join("plan.html"));
    common::ok(&memsight().args(args).arg("-o").arg(&file).output().unwrap());
    common::ok(
        &memsight()
            .arg("report")
            .arg(&file)
            .arg("--html")
            .arg(&html)
            .output()
            .unwrap(),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("DRAM organisation per part") && page.contains("131072 × 1024"));
}

#[test]
fn bad_plans_are_refused_in_one_line() {
    for (args, needle) in [
        (
            &[
                "dimms",
                "--plan",
                "Pentium 4",
                "--dimm",
                "M393A4K40EB3-CWE=1",
            ][..],
            "no platform known",
        ),
        (
            &["dimms", "--plan", "EPYC 7713", "--dimm", "NOT-A-PART=2"][..],
            "can decode",
        ),
        (
            &[
                "dimms",
                "--plan",
                "EPYC 7713",
                "--dimm",
                "M393A4K40EB3-CWE=0",
            ][..],
            "count from 1",
        ),
        (
            &["dimms", "--plan", "EPYC 7713", "--dimm", "M393A4K40EB3-CWE"][..],
            "PART=COUNT",
        ),
        (
            &[
                "dimms",
                "--plan",
                "EPYC 7713",
                "--dimm",
                "M393A4K40EB3-CWE=17",
            ][..],
            "do not fit",
        ),
        (
            &[
                "dimms",
                "--plan",
                "EPYC 9654",
                "--dimm",
                "M393A4K40EB3-CWE=4",
            ][..],
            "takes DDR5",
        ),
        (&["dimms", "--plan", "EPYC 7713"][..], "--dimm PART=COUNT"),
        (
            &[
                "dimms",
                "--plan",
                "Core Ultra 7 258V",
                "--dimm",
                "M393A4K40EB3-CWE=1",
            ][..],
            "soldered",
        ),
        (
            &[
                "dimms",
                "--dimm",
                "M393A4K40EB3-CWE=1",
                "--plan",
                "EPYC 7713",
            ][..],
            "before any --plan",
        ),
    ] {
        let out = memsight().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.trim_end().lines().count() <= 3, "{args:?}: {err}");
    }
}

/// libnvdimm's regions as a 2-socket Optane machine in App Direct publishes them (one
/// interleaved region per socket), written under `root`.
fn nd_regions(root: &std::path::Path, domain: &str) {
    for (region, node) in [("region0", 0), ("region1", 1)] {
        let dir = root.join("sys/bus/nd/devices").join(region);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in [
            ("persistence_domain", domain.to_string()),
            ("size", "811748818944".to_string()),
            ("numa_node", node.to_string()),
            ("target_node", (node + 2).to_string()),
            ("devtype", "nd_pmem_region".to_string()),
        ] {
            std::fs::write(dir.join(file), text).unwrap();
        }
    }
}

#[test]
fn the_persistence_domain_is_reported_with_what_it_means() {
    let dump = fixtures()
        .join("dmidecode/supermicro-sys-2029u-xeon-gold6240-ddr4-rdimm-plus-optane-pmem.txt");
    for (domain, needle) in [
        ("memory_controller", "ADR (memory controller"),
        ("cpu_cache", "eADR"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        nd_regions(tmp.path(), domain);
        let doc = json(
            memsight()
                .args(["dimms", "--json", "--dmidecode"])
                .arg(&dump)
                .env("HWLOC_FSROOT", tmp.path()),
        );
        common::assert_valid(&doc);
        let r = &doc["results"];
        assert_eq!(r["persistence"].as_array().unwrap().len(), 2);
        assert_eq!(r["persistence"][1]["target_node"], 3);
        let f = r["findings"].to_string();
        assert!(f.contains(needle) && f.contains("region1"), "{f}");
    }
    // A dump of another machine on the live root: this machine's regions are not its.
    let doc = json(
        memsight()
            .args(["dimms", "--json", "--dmidecode"])
            .arg(&dump),
    );
    assert!(doc["results"]["persistence"].as_array().unwrap().is_empty());
}
