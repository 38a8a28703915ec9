//! hugetlb pages end to end. In a test binary of its own: cargo runs test binaries one after
//! another, so no other test's ladder can take pages from the pool this one reserves.

mod common;

use common::{json, memsight};

/// Reserves 2 MiB huge pages for the duration of a test and gives them back on drop.
struct HugePool {
    knob: &'static str,
    before: String,
}

impl HugePool {
    const KNOB: &str = "/proc/sys/vm/nr_hugepages";
    const KNOB_1G: &str = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages";

    fn reserve(pages: u64) -> Option<Self> {
        Self::reserve_at(Self::KNOB, pages)
    }

    fn reserve_at(knob: &'static str, pages: u64) -> Option<Self> {
        let before = std::fs::read_to_string(knob).ok()?;
        let want = before.trim().parse::<u64>().ok()? + pages;
        std::fs::write(knob, want.to_string()).ok()?;
        let got: u64 = std::fs::read_to_string(knob).ok()?.trim().parse().ok()?;
        let pool = HugePool { knob, before };
        (got >= want).then_some(pool)
    }
}

impl Drop for HugePool {
    fn drop(&mut self) {
        let _ = std::fs::write(self.knob, self.before.trim());
    }
}

#[test]
fn hugetlb_pages_are_used_verified_and_bound() {
    let Some(_pool) = HugePool::reserve(24) else {
        eprintln!("cannot reserve 2 MiB huge pages here (not root?): skipping");
        return;
    };
    let doc = json(
        memsight()
            .args([
                "latency",
                "--json",
                "--page-kind",
                "2m",
                "--max-size",
                "32M",
                "--node",
                "0",
            ])
            .args(["--parallel", "1"])
            .args(common::QUICK),
    );
    let b = &doc["results"]["ladders"][0]["main"]["buffer"];
    assert_eq!(b["kind"], "hugetlb_2m");
    assert_eq!(b["kernel_page_bytes"], 2 << 20);
    assert_eq!(b["huge_fraction"], 1.0);
    assert_eq!(b["bound_node"], 0);
    // As root the frames are visible, and a 2 MiB page is 512 consecutive frames at least.
    let phys = &b["physical"];
    assert_eq!(phys["frames_visible"], true);
    assert!(phys["longest_run_bytes"].as_u64().unwrap() >= 2 << 20);
    let on_node: Vec<i64> = b["pages_per_node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_i64().unwrap())
        .collect();
    assert_eq!(on_node, vec![0]);
    // No TLB comparison is run when the main ladder is already on huge pages.
    assert!(doc["results"]["ladders"][0]["huge"].is_null());
}

/// The row-conflict probe on a 1 GiB page flips bits up to 29 inside the whole page (it flipped
/// them inside a 4 MiB slice of it and panicked).
#[test]
fn the_row_conflict_probe_runs_on_a_1_gib_page() {
    let Some(_pool) = HugePool::reserve_at(HugePool::KNOB_1G, 1) else {
        eprintln!("cannot reserve a 1 GiB huge page here (not root, or no 1 GiB pages): skipping");
        return;
    };
    let doc = json(memsight().args([
        "rowbuffer",
        "--json",
        "--kernels",
        "copy",
        "--array-size",
        "1M",
        "--offsets",
        "0..64K/64K",
        "--reps",
        "1",
        "--probe-bases",
        "2",
    ]));
    let probe = &doc["results"]["probe"];
    assert_eq!(probe["page_kind"], "hugetlb_1g", "{probe}");
    assert_eq!(probe["max_bit"], 30, "{probe}");
}
