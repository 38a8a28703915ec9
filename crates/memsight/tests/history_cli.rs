//! `memsight run` leaves run.json, report.html and a history row; `history`, `compare`,
//! `report` and `export` work on stored runs; bad databases and result files are refused
//! without being touched.

mod common;

use std::path::{Path, PathBuf};

use common::{memsight, ok, refused};

/// A real `run` document (thorough level, DIMMs from a recorded Dell R7525) measured on the
/// project's VM: every chart of the report has data.
fn thorough_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json")
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Imports a document (written to `dir/name.json`) into `db`.
fn import(db: &Path, dir: &Path, name: &str, doc: &serde_json::Value) {
    let f = dir.join(format!("{name}.json"));
    std::fs::write(&f, serde_json::to_string(doc).unwrap()).unwrap();
    ok(&memsight()
        .args(["history", "--db"])
        .arg(db)
        .arg("--import")
        .arg(&f)
        .output()
        .unwrap());
}

#[test]
fn quick_run_writes_json_report_and_history_row() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let out_dir = dir.path().join("r");
    let stdout = ok(&memsight()
        .args(["run", "--quick", "--no-progress", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap());
    assert!(stdout.contains("report:") && stdout.contains("history: run 1"));
    let doc = read_json(&out_dir.join("run.json"));
    assert_eq!(doc["schema_version"], 5);
    common::assert_valid(&doc);
    // Samples are stored with every summary, so runs can be compared by rank tests.
    let p0 = &doc["results"]["latency"]["ladders"][0]["main"]["points"][0]["ns"];
    assert_eq!(
        p0["samples"].as_array().unwrap().len() as u64,
        p0["n"].as_u64().unwrap()
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.matches("<figure class=\"chart\">").count() >= 2);
    let hist = common::json(memsight().args(["history", "--json", "--db"]).arg(&db));
    assert_eq!(hist["schema"], "memsight-history");
    assert_eq!(hist["schema_version"], 1);
    let rows = hist["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["level"], "quick");
    assert_eq!(rows[0]["complete"], true);
}

#[test]
fn report_is_self_contained_and_escapes_machine_strings() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = read_json(&thorough_fixture());
    doc["environment"]["cpu"]["model_name"] = "<script>alert(1)</script> EPYC".into();
    doc["environment"]["hostname"] = "host\"><img src=x onerror=alert(2)>".into();
    doc["results"]["dimms"]["inventory"]["devices"][0]["part_number"] = "<b>HMAA8GR7</b>".into();
    // A peak the fixture's two-vCPU curves reach a good share of, so the loaded chart draws it.
    doc["results"]["dimms"]["ceilings"]["system_dram_mbs"] = 102_400.into();
    let f = dir.path().join("evil.json");
    std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
    let html_path = dir.path().join("evil.html");
    ok(&memsight()
        .arg("report")
        .arg(&f)
        .arg("--html")
        .arg(&html_path)
        .output()
        .unwrap());
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(!html.contains("<script"), "no script, injected or ours");
    assert!(!html.contains("<img"));
    assert!(!html.contains("<b>HMAA8GR7"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; EPYC"));
    assert!(
        html.contains("&lt;b&gt;HMAA8GR7"),
        "part number escaped in the DIMM map"
    );
    // Nothing fetched: no external references (the SVG namespace is an identifier, not a fetch).
    let no_ns = html.replace("http://www.w3.org/2000/svg", "");
    for needle in ["http://", "https://", "<link", "@import", "url("] {
        assert!(!no_ns.contains(needle), "external reference {needle}");
    }
    for tag in no_ns
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or(""))
    {
        assert!(
            !tag.contains("src=") && !tag.contains("href="),
            "a tag loads something: <{tag}>"
        );
    }
    // Every chart of the thorough run is there: latency, TLB, MLP, bandwidth, scaling, sweep,
    // loaded latency, two NUMA matrices, core to core, DIMM map.
    assert_eq!(html.matches("<figure class=\"chart\">").count(), 11);
    // The loaded-latency family is labelled by read share and drawn against the inventory's
    // ceiling, as the bandwidth bars are.
    assert!(html.contains("all reads (100% read)") && html.contains("2:1 (67% read)"));
    assert!(html.contains("of DRAM peak %"));
    assert!(
        html.matches("DRAM peak 102.4 GB/s").count() >= 2,
        "bandwidth and loaded charts"
    );
}

#[test]
fn compare_judges_changes_by_the_noise() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let a = read_json(&thorough_fixture());
    import(&db, dir.path(), "a", &a);
    // B: bandwidth samples halved, everything else identical.
    let mut b = a.clone();
    for p in b["results"]["bandwidth"]["points"].as_array_mut().unwrap() {
        let s = &mut p["program_gbs"];
        for k in ["median", "ci_low", "ci_high", "min", "max", "mean"] {
            s[k] = (s[k].as_f64().unwrap() * 0.5).into();
        }
        let halved: Vec<f64> = s["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() * 0.5)
            .collect();
        s["samples"] = halved.into();
    }
    import(&db, dir.path(), "b", &b);
    let html = dir.path().join("cmp.html");
    let c = common::json(
        memsight()
            .args(["compare", "1", "2", "--all-figures", "--json", "--db"])
            .arg(&db)
            .arg("--html")
            .arg(&html),
    );
    let rows = c["rows"].as_array().unwrap();
    assert!(rows.len() > 50);
    // By default only the summary figures: no ladder or sweep point, and it says so.
    let summary = common::json(
        memsight()
            .args(["compare", "1", "2", "--json", "--db"])
            .arg(&db),
    );
    let keys: Vec<&str> = summary["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.len() < rows.len() && keys.contains(&"bandwidth/read/2t"),
        "{keys:?}"
    );
    assert!(
        keys.iter()
            .all(|k| !k.starts_with("bandwidth-sweep/") && !k.starts_with("tlb/")),
        "{keys:?}"
    );
    assert!(summary["curve_points_left_out"].as_u64().unwrap() > 0);
    for r in rows {
        let key = r["key"].as_str().unwrap();
        let verdict = r["verdict"].as_str().unwrap();
        if key.starts_with("bandwidth/") {
            assert_eq!(verdict, "worse", "{key}: halved bandwidth is worse");
            assert!((r["change"].as_f64().unwrap() + 0.5).abs() < 1e-9);
        } else if r["p_value"].is_number() {
            assert_eq!(verdict, "noise", "{key}: identical samples are noise");
        }
    }
    assert!(c["warnings"].as_array().unwrap().is_empty(), "same machine");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("worse") && page.contains("Mann–Whitney"));
    // Terminal form, and --changed keeps only the changed rows.
    let text = ok(&memsight()
        .args(["compare", "latest~1", "latest", "--changed", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    assert!(text.contains("worse") && !text.contains("within noise │"));
}

#[test]
fn compare_warns_about_different_machines_and_older_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = read_json(&thorough_fixture());
    let mut b = a.clone();
    b["environment"]["cpu"]["model_name"] = "Other CPU".into();
    b["environment"]["hostname"] = "elsewhere".into();
    // An older (schema 1) file: no samples anywhere.
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("samples");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut b);
    b["schema_version"] = 1.into();
    let fa = dir.path().join("a.json");
    let fb = dir.path().join("b.json");
    std::fs::write(&fa, serde_json::to_string(&a).unwrap()).unwrap();
    std::fs::write(&fb, serde_json::to_string(&b).unwrap()).unwrap();
    let out = memsight()
        .arg("compare")
        .arg(&fa)
        .arg(&fb)
        .args(["--db", "/nonexistent/never-opened.sqlite"])
        .output()
        .unwrap();
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("different machines"), "{err}");
    assert!(err.contains("predates stored samples"), "{err}");
    // The older file still renders.
    ok(&memsight()
        .arg("report")
        .arg(&fb)
        .arg("--html")
        .arg(dir.path().join("b.html"))
        .output()
        .unwrap());
}

#[test]
fn export_gives_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let a = read_json(&thorough_fixture());
    import(&db, dir.path(), "a", &a);
    let csv_text = ok(&memsight()
        .args(["export", "latest", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    let header = rdr.headers().unwrap().clone();
    assert_eq!(&header[2], "key");
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert!(rows.len() > 50);
    let read = rows
        .iter()
        .find(|r| r[2].starts_with("bandwidth/read/"))
        .expect("a read bandwidth row");
    let value = header.iter().position(|h| h == "value").unwrap();
    assert!(read[value].parse::<f64>().unwrap() > 0.0);
    let threads = header.iter().position(|h| h == "threads").unwrap();
    assert!(read[threads].parse::<u32>().unwrap() >= 1, "typed columns");
    let samples = dir.path().join("s.csv");
    ok(&memsight()
        .args(["export", "1", "--format", "samples-csv", "--db"])
        .arg(&db)
        .arg("--to")
        .arg(&samples)
        .output()
        .unwrap());
    let n = csv::Reader::from_path(&samples).unwrap().records().count();
    assert!(n > rows.len(), "more samples than figures");
    let json_text = ok(&memsight()
        .args(["export", "1", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    let back: serde_json::Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(back["results"]["level"], a["results"]["level"]);
}

#[test]
fn corrupt_foreign_newer_and_missing_databases_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // Not SQLite at all.
    let garbage = dir.path().join("garbage.sqlite");
    let bytes = b"this is not a database, but someone's notes\n".repeat(200);
    std::fs::write(&garbage, &bytes).unwrap();
    let err = common::system_refused(
        &memsight()
            .args(["history", "--db"])
            .arg(&garbage)
            .output()
            .unwrap(),
        "is not a SQLite database",
    );
    assert!(err.contains("mv "), "says how to recover: {err}");
    // `run` refuses it before measuring anything (so this is fast).
    let t = std::time::Instant::now();
    common::system_refused(
        &memsight()
            .args(["run", "--quick", "--no-progress", "--db"])
            .arg(&garbage)
            .arg("--out")
            .arg(dir.path().join("never"))
            .output()
            .unwrap(),
        "is not a SQLite database",
    );
    assert!(t.elapsed().as_secs() < 20);
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes, "left untouched");

    // Another program's SQLite database.
    let foreign = dir.path().join("foreign.sqlite");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let before = std::fs::read(&foreign).unwrap();
    common::system_refused(
        &memsight()
            .args(["history", "--db"])
            .arg(&foreign)
            .output()
            .unwrap(),
        "belongs to another program",
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), before);

    // A database from a newer memsight.
    let db = dir.path().join("h.sqlite");
    import(&db, dir.path(), "a", &read_json(&thorough_fixture()));
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
    common::system_refused(
        &memsight()
            .args(["history", "--db"])
            .arg(&db)
            .output()
            .unwrap(),
        "newer memsight",
    );

    // Missing.
    refused(
        &memsight()
            .args(["history", "--db"])
            .arg(dir.path().join("missing.sqlite"))
            .output()
            .unwrap(),
        "no run history",
    );
    refused(
        &memsight()
            .args(["report", "7", "--db"])
            .arg(dir.path().join("missing.sqlite"))
            .output()
            .unwrap(),
        "no run history",
    );
}

#[test]
fn newer_and_foreign_result_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = read_json(&thorough_fixture());
    doc["schema_version"] = 99.into();
    let f = dir.path().join("new.json");
    std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
    refused(
        &memsight().arg("report").arg(&f).output().unwrap(),
        "upgrade memsight",
    );
    let g = dir.path().join("notes.json");
    std::fs::write(&g, "{\"hello\": 1}").unwrap();
    refused(
        &memsight().arg("report").arg(&g).output().unwrap(),
        "is not a memsight result",
    );
    let h = dir.path().join("text.json");
    std::fs::write(&h, "not json").unwrap();
    refused(
        &memsight().arg("compare").arg(&h).arg(&f).output().unwrap(),
        "not JSON",
    );
}

#[test]
fn unwritable_results_directory_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    // A path below a regular file can never be created, root or not.
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    refused(
        &memsight()
            .args(["run", "--quick", "--no-history", "--no-progress", "--out"])
            .arg(file.join("sub"))
            .output()
            .unwrap(),
        "choose a writable directory with --out",
    );
    // A read-only directory, for an unprivileged user (root writes anywhere): the system
    // refused, exit 3.
    let Some(nobody) = common::Unprivileged::new() else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let ro = nobody.dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = nobody
        .memsight()
        .args(["run", "--quick", "--no-history", "--no-progress", "--out"])
        .arg(&ro)
        .output()
        .unwrap();
    common::system_refused(&out, "Permission denied");
}

/// Every suite a run holds (the recorded thorough run, plus a row-buffer study measured here)
/// gives figures that reach the history, `compare` and both exports.
#[test]
fn every_suite_of_a_run_reaches_history_compare_and_export() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let rb = common::json(memsight().args([
        "rowbuffer",
        "--json",
        "--no-progress",
        "--offsets",
        "0..64K/32K",
        "--kernels",
        "copy",
        "--reps",
        "1",
        "--samples",
        "1",
        "--array-size",
        "4M",
        "--no-probe",
        "--banks",
        "16",
        "--ranks",
        "2",
        "--channels",
        "1",
        "--row-bytes",
        "8K",
    ]));
    let mut doc = read_json(&thorough_fixture());
    doc["results"]["rowbuffer"] = rb["results"].clone();
    import(&db, dir.path(), "a", &doc);
    import(&db, dir.path(), "b", &doc);
    let suites = [
        "latency",
        "bandwidth",
        "loaded-latency",
        "numa",
        "c2c",
        "dimms",
        "rowbuffer",
    ];
    let csv_text = ok(&memsight()
        .args(["export", "latest", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    let col = rdr
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "suite")
        .unwrap();
    let exported: Vec<String> = rdr.records().map(|r| r.unwrap()[col].to_string()).collect();
    let compared = common::json(
        memsight()
            .args(["compare", "1", "2", "--json", "--db"])
            .arg(&db),
    );
    let keys: Vec<&str> = compared["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    for s in suites {
        assert!(exported.iter().any(|x| x == s), "{s}: no exported figure");
    }
    for prefix in [
        "latency/",
        "bandwidth/",
        "loaded/",
        "numa/",
        "c2c/",
        "dimms/",
        "rowbuffer/",
    ] {
        assert!(
            keys.iter().any(|k| k.starts_with(prefix)),
            "{prefix}: not in compare"
        );
    }
    let samples = ok(&memsight()
        .args(["export", "1", "--format", "samples-csv", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    // Scalar figures (row buffer, DIMM peak) have no samples; sampled ones do.
    assert!(samples.contains("latency/") && samples.contains("c2c/"));
}
