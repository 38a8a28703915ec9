//! Every dmidecode fixture's channels and peak against the hand-worked table in
//! `testdata/dmidecode/INDEX.md` ("Expected channels and peaks").

use memsight_model::dmidecode::parse;
use memsight_model::platform::ceilings;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dmidecode");

struct Expected {
    file: String,
    scheme: String,
    channels: String,
    bits: String,
    mts: String,
    peak: u64,
}

fn expected() -> Vec<Expected> {
    let index = std::fs::read_to_string(format!("{DIR}/INDEX.md")).unwrap();
    let table = index
        .split("## Expected channels and peaks")
        .nth(1)
        .expect("INDEX.md has the expected table");
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            Expected {
                file: c[1].trim_matches('`').to_string(),
                scheme: c[2].to_string(),
                channels: c[3].to_string(),
                bits: c[4].to_string(),
                mts: c[5].to_string(),
                peak: c[6].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn every_fixture_gives_its_channels_and_peak() {
    let rows = expected();
    let mut files: Vec<String> = std::fs::read_dir(DIR)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.ends_with(".txt"))
        .collect();
    files.sort();
    let listed: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    for f in &files {
        assert!(listed.contains(&f.as_str()), "{f} has no row in INDEX.md");
    }
    for r in &rows {
        let text = std::fs::read_to_string(format!("{DIR}/{}", r.file)).unwrap();
        let c = ceilings(&parse(&text).unwrap(), None, None);
        let channels: Vec<String> = c
            .sockets
            .iter()
            .map(|s| s.channels_used.to_string())
            .collect();
        let got = if c.sockets.is_empty() {
            (
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
            )
        } else {
            (
                format!("{:?}", c.sockets[0].scheme),
                channels.join("+"),
                c.sockets[0].channel_bits.to_string(),
                c.sockets.iter().map(|s| s.mts).min().unwrap().to_string(),
            )
        };
        assert_eq!(
            (
                got.0.as_str(),
                got.1.as_str(),
                got.2.as_str(),
                got.3.as_str(),
                c.system_dram_mbs
            ),
            (
                r.scheme.as_str(),
                r.channels.as_str(),
                r.bits.as_str(),
                r.mts.as_str(),
                r.peak
            ),
            "{}",
            r.file
        );
    }
}
