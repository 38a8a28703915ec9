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
    for (file, needle) in [
        (&empty, "empty"),
        (&garbage, "not text"),
        (&other, "no SMBIOS memory records"),
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
