//! Recorded machines for the suites' tests.

use memsight_core::topology::Topology;
use std::path::Path;

/// A recorded hwloc topology from testdata/ at the top of this repository (sources in
/// testdata/README.md).
pub fn fixture(name: &str) -> Topology {
    let xml = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hwloc/xml")
        .join(name);
    // hwloc 3 exports say version="3.0"; Debian's hwloc 2.9 reads them once that is rewritten.
    let text = std::fs::read_to_string(&xml)
        .unwrap()
        .replace("<topology version=\"3.0\">", "<topology version=\"2.0\">");
    let tmp = tempfile::Builder::new().suffix(".xml").tempfile().unwrap();
    std::fs::write(tmp.path(), text).unwrap();
    Topology::from_xml_file(tmp.path()).unwrap()
}
