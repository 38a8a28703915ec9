//! The HTML report renders in a real browser: headless Chromium draws it to PNG and the picture
//! is checked for content and for the expected number of chart frames.
//!
//! CI installs Debian's `chromium`; elsewhere the test is skipped with a message when no
//! Chromium is found (set CI=true to make a missing browser a failure).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::memsight;

/// The chart frame colour of the report's style (`figure.chart` border, #0a3d91).
const FRAME: [u8; 3] = [10, 61, 145];

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        })
}

/// The browser, or `None` where there is none (said; in CI a failure).
fn browser_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium (scripts/test.sh does)"
        );
        eprintln!("no chromium here: browser test skipped");
    }
    found
}

/// Runs `cmd` with `html` as its last argument (the page to write): the page and its charts.
fn page(cmd: &mut Command, html: &Path) -> (String, usize) {
    common::ok(&cmd.arg(html).output().unwrap());
    let text = std::fs::read_to_string(html).unwrap();
    let charts = text.matches("<figure class=\"chart\">").count();
    (text, charts)
}

/// Renders `html` to a PNG of 1280 × `height` CSS pixels at scale 1.
fn screenshot(browser: &Path, html: &Path, png: &Path, height: u32) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-extensions",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success() && png.exists(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// RGB pixels of a PNG, with its width and height.
fn pixels(png: &Path) -> (Vec<[u8; 3]>, usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let px = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (px, info.width as usize, info.height as usize)
}

/// Horizontal runs of exactly `color`, at least `min_len` pixels long, whose row above is not
/// part of the same run (the top and bottom edges of each frame).
fn frame_edges(px: &[[u8; 3]], w: usize, h: usize, color: [u8; 3], min_len: usize) -> usize {
    let mut edges = 0;
    for y in 0..h {
        let mut x = 0;
        while x < w {
            if px[y * w + x] == color {
                let start = x;
                while x < w && px[y * w + x] == color {
                    x += 1;
                }
                if x - start >= min_len {
                    let above_same = y > 0 && px[(y - 1) * w + start + 1] == color;
                    if !above_same {
                        edges += 1;
                    }
                }
            } else {
                x += 1;
            }
        }
    }
    edges
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-thorough.json");
    let (_, charts) = page(memsight().arg("report").arg(&fixture).arg("--html"), &html);
    assert_eq!(charts, 11);

    let png = dir.path().join("report.png");
    // Tall enough for the whole run page (every suite draws its tables in HTML too).
    screenshot(&browser, &html, &png, 20000);
    let (px, w, h) = pixels(&png);
    assert_eq!(w, 1280);
    // Not blank: plenty of ink, and many colours (charts, heatmaps, text).
    let page_bg = [246, 247, 249];
    let ink = px
        .iter()
        .filter(|p| **p != page_bg && **p != [255, 255, 255])
        .count();
    assert!(
        ink as f64 / px.len() as f64 > 0.03,
        "rendered page is nearly blank ({ink} of {} pixels)",
        px.len()
    );
    let mut colours: Vec<[u8; 3]> = px.iter().step_by(7).copied().collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 100, "only {} colours", colours.len());
    // Every chart frame was laid out and painted: a top and a bottom edge each.
    let edges = frame_edges(&px, w, h, FRAME, 150);
    assert_eq!(
        edges,
        2 * charts,
        "{edges} frame edges for {charts} charts: a chart did not render"
    );
    // The page ended within the window (otherwise frames could be cut off): the last rows are
    // page background.
    assert!(
        px[(h - 1) * w..]
            .iter()
            .all(|p| *p == page_bg || *p == [255, 255, 255])
    );
}

/// A fleet page beyond 40 nodes (histograms per headline figure, the flagged node's row, each
/// group's distributions) renders whole: every chart frame painted, the page within the window.
#[test]
fn a_large_fleets_page_renders_in_headless_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results/bandwidth.json");
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let mut d = base.clone();
        d["environment"]["hostname"] = serde_json::Value::String(format!("node{i:02}"));
        let f = if i == 17 {
            0.8
        } else {
            1.0 + 0.004 * ((i % 9) as f64 - 4.0) / 4.0
        };
        common::scale(&mut d["results"], f);
        let file = dir.path().join(format!("n{i:02}/bandwidth.json"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, serde_json::to_string(&d).unwrap()).unwrap();
    }
    let html = dir.path().join("fleet.html");
    let (text, charts) = page(
        memsight().args(["fleet"]).arg(dir.path()).arg("--html"),
        &html,
    );
    assert!(charts >= 2, "a histogram per headline figure: {charts}");
    assert!(text.contains("Flagged nodes: 1 of 60") && text.contains("flagged: node17"));
    let png = dir.path().join("fleet.png");
    screenshot(&browser, &html, &png, 9000);
    let (px, w, h) = pixels(&png);
    let edges = frame_edges(&px, w, h, FRAME, 150);
    assert_eq!(edges, 2 * charts, "{edges} frame edges for {charts} charts");
    let page_bg = [246, 247, 249];
    assert!(
        px[(h - 1) * w..]
            .iter()
            .all(|p| *p == page_bg || *p == [255, 255, 255]),
        "the page ran past the window"
    );
}
