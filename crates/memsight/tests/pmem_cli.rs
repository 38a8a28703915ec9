//! `memsight pmem`: the PMDK talk's utilisation pattern, class search, the concurrency study, pools
//! always removed, and bad input. Skipped with a message where PMDK is not installed (CI
//! installs it).

mod common;

use common::memsight;

fn pmdk() -> bool {
    let found = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ]
    .iter()
    .any(|d| std::path::Path::new(d).join("libpmemobj.so.1").exists());
    if !found && std::env::var_os("CI").is_some() {
        panic!("CI must install libpmemobj-dev");
    }
    if !found {
        eprintln!("PMDK not installed: skipped");
    }
    found
}

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect()
}

#[test]
fn utilisation_search_and_concurrency_on_a_small_pool() {
    if !pmdk() {
        return;
    }
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let html = out_dir.path().join("pmem.html");
    let doc = common::json(
        memsight()
            .args([
                "pmem",
                "--json",
                "--no-progress",
                "--pool-size",
                "64M",
                "--sizes",
                "4K,1M",
                "--search",
                "--verify",
                "2",
                "--concurrency",
                "--seconds",
                "0.5",
                "--strategies",
                "default,retry",
            ])
            .arg("--dir")
            .arg(dir.path())
            .arg("--html")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<figure class=\"chart\">").count(), 1);
    assert!(page.contains("heap.alloc_class.new.desc"));
    common::assert_valid(&doc);
    let r = &doc["results"];
    let fills = r["fills"].as_array().unwrap();
    assert_eq!(fills.len(), 2);
    let one_mib = &fills[1];
    // The PMDK talk's explanation: 1 MiB objects land in 135296-byte units, 31 per run, and runs
    // of 16 chunks hold only 24 objects: about three quarters of the pool.
    assert_eq!(one_mib["class"]["unit_size"], 135296);
    assert_eq!(one_mib["class"]["units_per_block"], 31);
    let u = one_mib["utilisation"].as_f64().unwrap();
    assert!((0.6..0.8).contains(&u), "{u}");
    // Every byte of the pool is accounted for.
    let b = &one_mib["breakdown"];
    let sum: u64 = [
        "objects_bytes",
        "header_bytes",
        "rounding_bytes",
        "run_metadata_bytes",
        "empty_slot_bytes",
        "free_chunk_bytes",
        "other_bytes",
    ]
    .iter()
    .map(|k| b[*k].as_u64().unwrap_or(0))
    .sum();
    assert_eq!(sum, 64 << 20);
    // The search finds a class that beats PMDK's for 1 MiB, verified by a real fill.
    let s = &r["search"][1];
    let best = s["best"]["utilisation"].as_f64().unwrap();
    assert!(best > u + 0.1, "custom {best} vs default {u}");
    assert!(
        s["ctl_set"]
            .as_str()
            .unwrap()
            .contains("heap.alloc_class.new.desc")
    );
    // Concurrency: both strategies ran and allocated.
    let c = r["concurrency"].as_array().unwrap();
    assert_eq!(c.len(), 2);
    for x in c {
        assert!(x["error"].is_null(), "{x}");
        assert!(x["allocations"].as_u64().unwrap() > 0);
        // Every failure is told apart: another arena had room, or none had.
        let n = |k: &str| x[k].as_u64().unwrap();
        assert_eq!(n("imbalance") + n("exhausted"), n("failures"), "{x}");
        assert_eq!(x["free_at_failure"].is_null(), n("failures") == 0, "{x}");
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "pools removed: {:?}",
        leftovers(dir.path())
    );
}

/// A live target the pool cannot hold (95% of it in objects of which PMDK's classes fit 75–98%)
/// fails for want of room: the study calls those failures exhaustion, never arena imbalance,
/// and says the pool ran out.
#[test]
fn a_pool_that_runs_out_is_not_called_arena_imbalance() {
    if !pmdk() {
        return;
    }
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let doc = common::json(
        memsight()
            .args([
                "pmem",
                "--json",
                "--no-progress",
                "--pool-size",
                "64M",
                "--sizes",
                "4K",
                "--concurrency",
                "--seconds",
                "0.5",
                "--strategies",
                "single",
                "--live-fraction",
                "0.95",
                "--builtin-classes",
                "--mixed-sizes",
                "1M",
            ])
            .arg("--dir")
            .arg(dir.path()),
    );
    let x = &doc["results"]["concurrency"][0];
    let n = |k: &str| x[k].as_u64().unwrap();
    assert!(n("exhausted") > 0, "{x}");
    assert!(n("exhausted") > n("imbalance"), "{x}");
    let findings = doc["results"]["findings"].to_string();
    assert!(
        findings.contains("mostly the pool running out"),
        "{findings}"
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("not-a-pool");
    std::fs::write(&existing, "hello").unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    for (args, needle) in [
        (vec!["--pool", existing.to_str().unwrap()], "exists"),
        (vec!["--dir", &d, "--pool-size", "4M"], "minimum pool"),
        (vec!["--dir", &d, "--sizes", "0"], "at least 1 byte"),
        (
            vec!["--dir", &d, "--pool-size", "64M", "--sizes", "1G"],
            "not a usable object size",
        ),
        (vec!["--dir", &d, "--pool-size", "100T"], "not enough"),
        (vec!["--dir", "/nonexistent/dir"], "does not exist"),
        (
            vec!["--dir", &d, "--concurrency", "--strategies", "magic"],
            "invalid value 'magic' for '--strategies",
        ),
    ] {
        eprintln!("pmem {args:?}");
        common::refused(
            &memsight().arg("pmem").args(&args).output().unwrap(),
            needle,
        );
    }
    assert_eq!(
        std::fs::read(&existing).unwrap(),
        b"hello",
        "an existing file is never touched"
    );
    assert_eq!(leftovers(dir.path()), vec!["not-a-pool".to_string()]);
    // Without libpmemobj the command says so.
    let out = memsight()
        .env("MEMSIGHT_PMEMOBJ_LIB", "/nonexistent/libpmemobj.so.1")
        .args(["pmem", "--dir", &d])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not available"));
}

#[test]
fn class_table_a_class_of_ones_own_and_the_volume_workload() {
    if !pmdk() {
        return;
    }
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let doc = common::json(
        memsight()
            .args([
                "pmem",
                "--json",
                "--no-progress",
                "--pool-size",
                "256M",
                "--sizes",
                "4K,1M",
                // MemVerge's class (1 MiB units, no header, page aligned) with runs a 256 MiB
                // pool holds whole: 16 MiB rather than the 256 MiB of its 4 GiB pool.
                "--class",
                "unit=1M,units=16,align=4K,header=none",
                "--volume",
                "--volume-total",
                "256M",
                "--volume-max",
                "4M",
                "--volume-rounds",
                "2",
                "--volume-seconds",
                "60",
                "--strategies",
                "single,retry",
            ])
            .arg("--dir")
            .arg(dir.path()),
    );
    common::assert_valid(&doc);
    let r = &doc["results"];
    // The pool's class table alone: the huge class 0 and PMDK's run classes.
    let table = common::json(
        memsight()
            .args([
                "pmem",
                "--json",
                "--no-progress",
                "--classes",
                "--pool-size",
                "64M",
            ])
            .arg("--dir")
            .arg(dir.path()),
    );
    common::assert_valid(&table);
    // Under its own title and method, not the utilisation study's.
    let out_dir = tempfile::tempdir().unwrap();
    let shown = out_dir.path().join("classes.json");
    std::fs::write(&shown, table.to_string()).unwrap();
    let text = common::ok(&memsight().arg("show").arg(&shown).output().unwrap());
    assert!(
        text.contains("Persistent-memory pool: allocation classes"),
        "{text}"
    );
    assert!(!text.contains("utilisation = objects"), "{text}");
    let classes = table["results"]["classes"].as_array().unwrap();
    assert!(classes.len() > 40, "{}", classes.len());
    assert_eq!(classes[0]["id"], 0);
    assert!(classes.iter().any(|c| c["unit_size"] == 128));
    // The class given: 1 MiB objects fill far more than PMDK's class, 4 KiB objects almost
    // nothing (each takes a whole 1 MiB unit), as the talk showed.
    let own = |i: usize| r["fills"][i]["utilisation"].as_f64().unwrap();
    let custom = |i: usize| r["custom"][i]["utilisation"].as_f64().unwrap();
    assert!(custom(1) > own(1) + 0.1, "{} vs {}", custom(1), own(1));
    assert!(custom(0) < 0.02, "{}", custom(0));
    assert_eq!(r["custom"][1]["class"]["unit_size"], 1 << 20);
    // The volume workload finished under both strategies, twice each, and freed everything.
    let v = r["volume"].as_array().unwrap();
    assert_eq!(v.len(), 2);
    for x in v {
        assert!(x["error"].is_null(), "{x}");
        assert_eq!(x["finished"], true, "{x}");
        assert!(x["allocated_bytes"].as_u64().unwrap() >= 256 << 20);
        assert_eq!(x["round_seconds"].as_array().unwrap().len(), 2);
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn classes_pmdk_cannot_serve_are_explained() {
    if !pmdk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    // An object of a whole unit plus a compact header needs two units; a run holds one.
    let doc = common::json(memsight().args([
        "pmem",
        "--json",
        "--no-progress",
        "--dir",
        &d,
        "--pool-size",
        "64M",
        "--sizes",
        "4M",
        "--class",
        "unit=4M,units=1",
    ]));
    let findings = doc["results"]["findings"].to_string();
    assert!(findings.contains("need 2 units"), "{findings}");
    // A run that holds no unit once aligned is refused in one line.
    common::refused(
        &memsight()
            .args(["pmem", "--dir", &d, "--sizes", "2M", "--pool-size", "64M"])
            .args(["--class", "unit=2M,units=1,header=none,align=4K"])
            .output()
            .unwrap(),
        "holds no unit",
    );
    for (args, needle) in [
        (vec!["--class", "unit=4K,foo=1"], "the keys are"),
        (vec!["--class", "unit=4K,units=8,align=3"], "a power of two"),
        (
            vec!["--volume", "--volume-rounds", "0"],
            "--volume-rounds ≥ 1",
        ),
        (vec!["--volume", "--volume-min", "1G"], "no power of two"),
        (vec!["--classes", "--volume"], "cannot be used with"),
    ] {
        common::refused(
            &memsight()
                .args(["pmem", "--dir", &d])
                .args(&args)
                .output()
                .unwrap(),
            needle,
        );
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}
