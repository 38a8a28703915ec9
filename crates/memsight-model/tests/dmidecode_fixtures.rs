//! Every dmidecode fixture (36 real machines) parses into the inventory INDEX.md describes.

use std::path::{Path, PathBuf};

use memsight_model::dmidecode::parse;

/// `testdata/dmidecode` at the top of this repository (sources in its INDEX.md).
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/dmidecode")
}

/// (file, populated, total) rows of INDEX.md's table.
fn index() -> Vec<(String, usize, usize)> {
    let text = std::fs::read_to_string(fixtures().join("INDEX.md")).unwrap();
    // The first table only: the second ("Expected channels and peaks") is fixture_channels.rs's.
    let first = text
        .split("## Expected channels")
        .next()
        .unwrap_or_default();
    first
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cols[1].trim_matches('`').to_string();
            let (p, t) = cols[4].split_once('/').unwrap();
            (file, p.trim().parse().unwrap(), t.trim().parse().unwrap())
        })
        .collect()
}

#[test]
fn every_fixture_matches_the_index() {
    let rows = index();
    assert_eq!(rows.len(), 36, "INDEX.md lists 36 machines");
    for (file, populated, total) in rows {
        let text =
            String::from_utf8_lossy(&std::fs::read(fixtures().join(&file)).unwrap()).into_owned();
        let inv = parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(inv.devices.len(), total, "{file}: slots");
        assert_eq!(inv.populated().count(), populated, "{file}: populated");
        for d in inv.populated() {
            assert!(d.size_bytes.unwrap() > 0, "{file}: {}", d.handle);
        }
    }
}

#[test]
fn quirks_are_decoded() {
    let read = |f: &str| {
        parse(&String::from_utf8_lossy(
            &std::fs::read(fixtures().join(f)).unwrap(),
        ))
        .unwrap()
    };
    // JEDEC hex manufacturer ids (Dell).
    let inv = read("dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    let d = inv.populated().next().unwrap();
    assert_eq!(d.manufacturer.as_deref(), Some("Samsung"));
    assert_eq!(d.manufacturer_raw.as_deref(), Some("80CE869D80CE"));
    assert_eq!(
        (d.speed_mts, d.configured_mts, d.rank),
        (Some(3200), Some(3200), Some(2))
    );
    assert_eq!((d.total_width, d.data_width), (Some(72), Some(64)));
    assert_eq!(d.part_number.as_deref(), Some("M393A4G43BB4-CWE"));
    // DDR5 printed as <OUT OF SPEC> by an old dmidecode.
    let inv = read("amd-volcano-epyc-es-ddr5-rdimm-micron-mtc20f1045-type-out-of-spec.txt");
    let d = inv.populated().next().unwrap();
    assert!(d.memory_type.is_none());
    assert!(d.inferred_type.as_deref().unwrap().starts_with("DDR5"));
    // Optane persistent memory next to DRAM.
    let inv = read("supermicro-sys-2029u-xeon-gold6240-ddr4-rdimm-plus-optane-pmem.txt");
    assert!(inv.populated().any(|d| d.non_volatile));
    assert!(inv.populated().any(|d| !d.non_volatile));
    // <BAD INDEX> strings become unknown, not text.
    let inv = read("supermicro-sys-6018r-xeon-e5-2643v3-ddr4-bad-index-fields.txt");
    assert!(
        inv.devices
            .iter()
            .all(|d| d.manufacturer.as_deref() != Some("<BAD INDEX>"))
    );
}

#[test]
fn decoded_part_numbers_agree_with_every_bios() {
    use memsight_model::partnum::decode;
    let mut decoded = 0;
    for (file, _, _) in index() {
        let text =
            String::from_utf8_lossy(&std::fs::read(fixtures().join(&file)).unwrap()).into_owned();
        let inv = parse(&text).unwrap();
        for d in inv.populated().filter(|d| !d.non_volatile) {
            let Some(x) = d.part_number.as_deref().and_then(decode) else {
                continue;
            };
            decoded += 1;
            assert_eq!(
                Some(x.capacity_bytes),
                d.size_bytes,
                "{file}: {:?}",
                d.part_number
            );
            if let Some(r) = d.rank {
                assert_eq!(x.ranks, r, "{file}: {:?}", d.part_number);
            }
            // Speeds are not compared: BIOSes print 2667 for 2666, and some rate modules above
            // their bin (a TRX50 board reports 5800 for a 5600 part); `memsight dimms` reports
            // that as a finding.
        }
    }
    assert!(decoded >= 300, "only {decoded} modules decoded");
}

#[test]
fn ceilings_of_recorded_servers() {
    use memsight_model::platform::ceilings;
    let c = |f: &str| {
        let text =
            String::from_utf8_lossy(&std::fs::read(fixtures().join(f)).unwrap()).into_owned();
        ceilings(&parse(&text).unwrap(), None, None)
    };
    // 2 × EPYC 7742, 16 × DDR4-3200 (Dell names slots A1…/B1…): 2 × 8 ch × 25.6 GB/s.
    let r = c("dell-poweredge-r7525-2s-epyc7742-ddr4-rdimm-hynix-hmaa8gr7ajr4n.txt");
    assert_eq!(r.sockets.len(), 2);
    assert_eq!(r.system_dram_mbs, 409_600);
    // 2 × EPYC 9654, 24 × DDR5-4800: platform-limits.md's 921.6 GB/s.
    assert_eq!(
        c("asus-rs720a-e12-2s-epyc9654-ddr5-rdimm-micron-mtc40f204ws1-96gb.txt").system_dram_mbs,
        921_600
    );
    // 1 × EPYC 7502P with 4 of 8 channels populated: half the socket's 204.8 GB/s.
    let r = c("dell-poweredge-r6515-epyc7502p-ddr4-rdimm-samsung-m393a4g43bb4.txt");
    assert_eq!(
        (r.sockets[0].channels_used, r.system_dram_mbs),
        (4, 102_400)
    );
    // 2 × Gold 6148 with two arrays per CPU: 2 sockets of 12 DIMMs on 6 channels at 2666.
    let r = c("dell-precision-7920-xeon-gold6148-ddr4-rdimm-mixed-vendors-full.txt");
    assert_eq!(
        r.sockets.iter().map(|s| s.dimms).collect::<Vec<_>>(),
        vec![12, 12]
    );
    assert_eq!(r.system_dram_mbs, 2 * 6 * 8 * 2666);
    // Ice Lake 2S half populated: 4 of 8 channels per socket.
    let r = c("zvezda-iridium-2s-xeon-gold6326-ddr4-rdimm-samsung-m393a4k40eb3.txt");
    assert!(
        r.sockets
            .iter()
            .all(|s| s.channels_used == 4 && s.channels == Some(8))
    );
}
