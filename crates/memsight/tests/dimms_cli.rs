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
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(
        findings.iter().any(|f| f.contains("4 of 8 channels")),
        "{findings:?}"
    );
}
