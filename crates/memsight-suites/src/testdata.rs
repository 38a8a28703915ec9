//! Recorded machines for the suites' tests.

use memsight_core::topology::Topology;
use std::path::Path;

/// A recorded hwloc topology from testdata/ at the top of this repository (sources in
/// testdata/README.md).
pub fn fixture(name: &str) -> Topology {
    let xml = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hwloc/xml")
        .join(name);
    Topology::from_xml_file(&xml).unwrap()
}
