//! `memsight rowbuffer`: sweeps on both memory layouts, detection, prediction from a recorded
//! inventory, the probe, fragmentation, the HTML page, and bad input.

mod common;

use common::memsight;

/// A short study: 5 offsets, 8 MiB arrays, one repetition, one sample.
const SHORT: [&str; 11] = [
    "rowbuffer",
    "--offsets",
    "0..64K/16K",
    "--array-size",
    "8M",
    "--reps",
    "1",
    "--samples",
    "1",
    "--no-progress",
    "--json",
];

#[test]
fn short_study_covers_both_layouts_and_predicts_from_the_inventory() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let dmi = common::fixtures()
        .join("dmidecode/dell-poweredge-r7525-2s-epyc7742-ddr4-rdimm-hynix-hmaa8gr7ajr4n.txt");
    let html = dir.path().join("rb.html");
    let doc = common::json(
        memsight()
            .args(SHORT)
            .args(["--kernels", "copy,triad"])
            .arg("--dmidecode")
            .arg(&dmi)
            .arg("--html")
            .arg(&html),
    );
    common::assert_valid(&doc);
    let r = &doc["results"];
    let curves = r["curves"].as_array().unwrap();
    assert_eq!(
        curves.len(),
        4,
        "copy and triad on contiguous and 4 KiB memory"
    );
    for c in curves {
        let points = c["points"].as_array().unwrap();
        assert_eq!(points.len(), 5);
        let offsets: Vec<u64> = points
            .iter()
            .map(|p| p["offset_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(offsets, vec![0, 16384, 32768, 49152, 65536]);
        for p in points {
            assert!(p["gbs"]["median"].as_f64().unwrap() > 0.1);
        }
        assert!(c["detection"]["baseline_gbs"].as_f64().unwrap() > 0.1);
    }
    let kinds: Vec<&str> = curves
        .iter()
        .map(|c| c["memory"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"contiguous") && kinds.contains(&"paged4k"));
    assert_eq!(r["summaries"].as_array().unwrap().len(), 4);
    // The R7525's 2Rx4 DDR4 RDIMMs, 8 channels: 16 banks × 2 ranks × 8 ch × 8 KiB = 2 MiB cycle.
    let p = &r["prediction"];
    assert_eq!(p["bank_cycle_bytes"], 2u64 << 20);
    assert_eq!(p["offset_period_bytes"], 1u64 << 20);
    // The probe ran (x86_64) and gave a verdict either way; the bits above its huge page were
    // tested across pages (root, pagemap) or are listed as not tested, with the reason.
    if cfg!(target_arch = "x86_64") {
        let probe = &r["probe"];
        assert!(
            probe["pairs_timed"].as_u64().unwrap() > 0
                || !probe["message"].as_str().unwrap().is_empty()
        );
        let tested = probe["high_bit"]
            .as_u64()
            .is_some_and(|b| b > probe["max_bit"].as_u64().unwrap());
        let said = r["skipped"]
            .to_string()
            .contains("row-conflict probe above bit");
        assert!(tested != said, "{probe} {}", r["skipped"]);
        if tested {
            let max = probe["max_bit"].as_u64().unwrap();
            assert!(
                probe["bits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|b| b["bit"].as_u64().unwrap() >= max)
            );
        }
    }
    assert!(
        !r["advice"].as_array().unwrap().is_empty(),
        "huge vs 4 KiB advice"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("<figure class=\"chart\">").count(),
        2,
        "one sweep plot per kernel"
    );
    // In a run's report (as `memsight run --thorough` stores it) the sweep plots join the rest.
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    let mut run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    run["results"]["rowbuffer"] = r.clone();
    let f = dir.path().join("run.json");
    std::fs::write(&f, serde_json::to_string(&run).unwrap()).unwrap();
    let out = memsight()
        .arg("report")
        .arg(&f)
        .arg("--html")
        .arg(dir.path().join("r.html"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert_eq!(page.matches("<figure class=\"chart\">").count(), 13);
    assert!(page.contains("Row-buffer conflicts and page mapping"));
}

/// The default range, from the recorded 2-socket server's DIMMs: three of the longest predicted
/// periods, every STREAM kernel swept and validated (a wrong result fails the sweep).
#[test]
fn the_default_range_holds_three_predicted_periods_for_every_kernel() {
    let _serial = common::measuring();
    let dmi = common::fixtures()
        .join("dmidecode/dell-poweredge-r7525-2s-epyc7742-ddr4-rdimm-hynix-hmaa8gr7ajr4n.txt");
    let doc = common::json(
        memsight()
            .args(["rowbuffer", "--json", "--no-progress", "--no-probe"])
            .args(["--array-size", "4M", "--reps", "1", "--samples", "1"])
            .args(["--points-per-period", "2", "--dmidecode"])
            .arg(&dmi),
    );
    common::assert_valid(&doc);
    let r = &doc["results"];
    let offsets: Vec<u64> = r["config"]["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_u64().unwrap())
        .collect();
    // 2 MiB bank cycle: SCALE's arrays (one stride apart) dip every 2 MiB, COPY's every 1 MiB.
    assert!(*offsets.last().unwrap() >= 3 * (2 << 20), "{offsets:?}");
    assert!(
        offsets[1] <= (1 << 20) / 2,
        "two points per shortest period"
    );
    let range = r["config"]["range"].as_str().unwrap();
    assert!(range.contains("predicted by the DIMM model"), "{range}");
    let curves = r["curves"].as_array().unwrap();
    let mut kernels: Vec<&str> = curves
        .iter()
        .map(|c| c["kernel"].as_str().unwrap())
        .collect();
    kernels.sort();
    kernels.dedup();
    assert_eq!(kernels, ["add", "copy", "hpccg", "scale", "triad"]);
    assert_eq!(curves.len(), 10, "five kernels on two layouts");
    // Memory-controller counters were read per point, or the study says once why not.
    let counted = curves.iter().any(|c| {
        c["points"][0]["counts"]
            .as_object()
            .is_some_and(|m| !m.is_empty())
    });
    let said = r["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s.as_str()
                .unwrap()
                .starts_with("memory-controller counters")
        })
        .count();
    assert!(
        counted != (said == 1),
        "counted {counted}, said {said} times"
    );
    if doc["environment"]["cpu"]["hypervisor"].is_string() {
        assert!(
            r["findings"].to_string().contains("guest's view"),
            "{}",
            r["findings"]
        );
    }
}

/// The Catamount paper's (Ferreira et al., CUG 2008) application case: the HPCCG-style CG solve
/// swept like STREAM, validated in every solve (a wrong residual fails the study), with its own
/// summaries, dips, advice, figures and time per solve; `--stat best` takes the fastest pass of
/// each point, as STREAM and the paper's figures do, and says so.
#[test]
fn the_hpccg_kernel_is_swept_validated_and_advised() {
    let _serial = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rb.json");
    let doc = common::json(
        memsight()
            .args(["rowbuffer", "--json", "--no-progress", "--no-probe"])
            .args(["--array-size", "4M", "--reps", "2", "--samples", "2"])
            .args([
                "--offsets",
                "0..96K/16K",
                "--kernels",
                "hpccg",
                "--stat",
                "best",
            ])
            .arg("-o")
            .arg(&file),
    );
    common::assert_valid(&doc);
    let r = &doc["results"];
    assert!(r["method"].as_str().unwrap().contains("CG iterations"));
    assert_eq!(r["config"]["stat"], "best");
    assert!(r["method"].as_str().unwrap().contains("best pass"));
    // The summaries rest on each point's best pass: the peak is one point's maximum, the
    // highest unless an outlying or disturbed point was left out.
    let maxima: Vec<f64> = r["curves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["memory"] == "contiguous")
        .flat_map(|c| c["points"].as_array().unwrap())
        .map(|p| p["gbs"]["max"].as_f64().unwrap())
        .collect();
    let best = maxima.iter().copied().fold(0.0, f64::max);
    let peak = r["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["memory"] == "contiguous")
        .unwrap()["peak_gbs"]
        .as_f64()
        .unwrap();
    assert!(
        peak <= best && maxima.contains(&peak),
        "{peak} of {maxima:?}"
    );
    // Time per solve: the pass's bytes over its rate, stated for each layout.
    let findings = r["findings"].to_string();
    assert!(
        findings.contains("ms per solve (6 CG iterations, best pass)"),
        "{findings}"
    );
    let curves = r["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 4, "two layouts, two repetitions");
    for c in curves {
        assert_eq!(c["kernel"], "hpccg");
        let points = c["points"].as_array().unwrap();
        assert_eq!(points.len(), 7);
        assert!(
            points
                .iter()
                .all(|p| p["gbs"]["median"].as_f64().unwrap() > 0.1
                    && p["pass_bytes"].as_f64().unwrap() > 0.0)
        );
    }
    assert!(r["advice"].to_string().contains("HPCCG"), "{}", r["advice"]);
    let csv = String::from_utf8(
        memsight()
            .args(["export", "--format", "csv"])
            .arg(&file)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(csv.contains("rowbuffer/hpccg/contiguous/peak"), "{csv}");
}

/// A bank hash given as XOR functions predicts where COPY should dip: the linear 2 MiB-cycle
/// mapping as a hash puts COPY's arrays (two strides of 4 MiB + OFFSET apart) in one bank only at
/// OFFSET 0 of this range.
#[test]
fn a_given_bank_hash_predicts_copy_dips() {
    let _serial = common::measuring();
    let doc = common::json(
        memsight()
            .args(["rowbuffer", "--json", "--no-progress", "--no-probe"])
            .args(["--array-size", "4M", "--reps", "2", "--samples", "1"])
            .args(["--offsets", "0..64K/16K", "--kernels", "copy"])
            .args(["--bank-xor", "13;14;15;16;17;18;19;20", "--row-bit", "21"]),
    );
    let h = &doc["results"]["hash_prediction"];
    assert_eq!(h["dips"], serde_json::json!([0]), "{h}");
    assert!(
        h["verdict"]
            .as_str()
            .unwrap()
            .contains("predicts COPY dips at 0 B")
    );
}

/// Offsets at multiples of 8 B leave the arrays unaligned: the sweep runs on the scalar
/// kernels, validates them, and says so.
#[test]
fn offsets_at_any_multiple_of_8_bytes() {
    let _serial = common::measuring();
    let doc = common::json(
        memsight()
            .args(["rowbuffer", "--json", "--no-progress", "--no-probe"])
            .args(["--array-size", "2M", "--reps", "1", "--samples", "1"])
            .args(["--offsets", "0..64/8", "--kernels", "scale,add"]),
    );
    let r = &doc["results"];
    assert!(r["method"].as_str().unwrap().contains("scalar kernels"));
    for c in r["curves"].as_array().unwrap() {
        let points = c["points"].as_array().unwrap();
        assert_eq!(points.len(), 9);
        assert!(
            points
                .iter()
                .all(|p| p["gbs"]["median"].as_f64().unwrap() > 0.1
                    && p["pass_bytes"].as_f64().unwrap() > 0.0)
        );
    }
}

#[test]
fn fragmentation_adds_a_scattered_layout() {
    let _serial = common::measuring();
    let doc = common::json(memsight().args(SHORT).args([
        "--kernels",
        "copy",
        "--no-probe",
        "--fragment",
        "64M",
    ]));
    let r = &doc["results"];
    let curves = r["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 3);
    let frag = curves
        .iter()
        .find(|c| c["memory"] == "fragmented4k")
        .unwrap();
    assert_eq!(r["fragmentation"]["released_bytes"], 32u64 << 20);
    // As root the frames are visible: the fragmented buffer is made of short runs.
    let phys = &frag["buffer"]["physical"];
    if phys["frames_visible"] == true {
        assert!(
            phys["median_run_bytes"].as_u64().unwrap() <= 64 << 10,
            "{phys}"
        );
    }
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| common::text(f).contains("fragmenting")),
        "the variance change is reported"
    );
}

#[test]
fn bad_input_is_refused_in_one_line() {
    for (args, needle) in [
        (vec!["--offsets", "0..1M/100"], "multiples of 8"),
        (vec!["--points-per-period", "0"], "at least 1"),
        (vec!["--counter", "junk"], "NAME=TERMS"),
        (vec!["--bank-xor", "5,13", "--row-bit", "17"], "bits 6..63"),
        (vec!["--bank-xor", "13,17"], "required"),
        (vec!["--offsets", "junk"], "START..END/STEP"),
        (
            vec!["--kernels", "saxpy"],
            "possible values: copy, scale, add, triad, hpccg",
        ),
        (vec!["--array-size", "100T"], "MemAvailable"),
        // A multiple of 64 B whose share is not whole kernel steps (once a panic).
        (
            vec!["--array-size", "1048640", "--cpus", "0"],
            "multiple of 256 B",
        ),
        (vec!["--offsets", "0..64T/1T"], "MemAvailable"),
        (vec!["--cpus", "999"], "CPU"),
        (vec!["--reps", "0"], "at least 1"),
        (vec!["--banks", "16"], "required"),
    ] {
        let out = memsight().arg("rowbuffer").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: '{needle}' not in {err}");
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn without_root_it_runs_what_it_can_and_says_what_was_skipped() {
    let _serial = common::measuring();
    let Some(nobody) = common::Unprivileged::new() else {
        return;
    };
    let out = nobody
        .memsight()
        .args(SHORT)
        .args(["--kernels", "copy", "--reserve-huge"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"];
    assert_eq!(
        r["curves"].as_array().unwrap().len(),
        2,
        "both layouts still swept"
    );
    let skipped = r["skipped"].to_string();
    assert!(skipped.contains("huge page reservation"), "{skipped}");
    let findings = r["findings"].to_string();
    assert!(findings.contains("are hidden (not root)"), "{findings}");
}
