//! The key families read back from their text, and name the dimensions the old templates did.

use super::*;

#[test]
fn keys_read_back_as_typed_labels() {
    let d = dims_of("latency/cpu3/4.75KiB");
    assert_eq!(d.get(Dim::Cpu), Some("3"));
    assert_eq!(d.get(Dim::WorkingSetBytes), Some("4864"));
    assert_eq!(d.get(Dim::Test), Some("latency"));
    let d = dims_of("latency/cpu0/level/L2");
    assert_eq!(d.get(Dim::Level), Some("L2"));
    assert_eq!(d.get(Dim::WorkingSetBytes), None);
    let d = dims_of("bandwidth/write-nt/2t/0x0");
    assert_eq!(
        (d.get(Dim::Test), d.get(Dim::Threads), d.get(Dim::Pattern)),
        (Some("write-nt"), Some("2"), Some("0x0"))
    );
    let d = dims_of("bandwidth/3:1/2t");
    assert_eq!(d.get(Dim::Test), Some("3:1"));
    let d = dims_of("c2c/0-12/modified");
    assert_eq!(
        (d.get(Dim::Cpu), d.get(Dim::PeerCpu)),
        (Some("0"), Some("12"))
    );
    let d = dims_of("numa/node1/interleaved/bandwidth/write-nt");
    assert_eq!(d.get(Dim::CpuNode), Some("1"));
    assert_eq!(d.get(Dim::Node), Some("interleaved"));
    assert_eq!(d.get(Dim::Pattern), Some("write-nt"));
    assert_eq!(
        dims_of("numa/node0/node1/latency").get(Dim::Node),
        Some("1")
    );
    let d = dims_of("tiers/node2/random-read/256B/t4");
    assert_eq!(d.get(Dim::BlockBytes), Some("256"));
    assert_eq!(d.get(Dim::Threads), Some("4"));
    assert_eq!(
        dims_of("pmem/65536/utilisation").get(Dim::ClassBytes),
        Some("65536")
    );
    assert_eq!(dims_of("loaded/2:1-NT/idle").get(Dim::Mix), Some("2:1-NT"));
    assert!(dims_of("something/else/entirely").0.is_empty());
}

use proptest::prelude::*;

/// A segment as keys hold them: no slash, not empty, and not one a family reads otherwise.
fn seg() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9:-]{0,10}"
}

fn size() -> impl Strategy<Value = Size> {
    // Sizes as presenters write them.
    (0u32..40, 0u64..1000).prop_map(|(shift, n)| Size::of((n + 1) << shift))
}

fn key() -> impl Strategy<Value = Key> {
    let n = 0u64..100_000;
    prop_oneof![
        (n.clone(), seg()).prop_map(|(cpu, level)| Key::LatencyLevel { cpu, level }),
        (n.clone(), size()).prop_map(|(cpu, size)| Key::LatencyPoint { cpu, size }),
        (n.clone(), n.clone()).prop_map(|(cpu, chains)| Key::Mlp { cpu, chains }),
        (seg(), n.clone(), proptest::option::of(seg())).prop_map(|(test, threads, pattern)| {
            Key::Bandwidth {
                test,
                threads,
                pattern,
            }
        }),
        (n.clone(), n.clone(), seg()).prop_map(|(cpu, peer, test)| Key::C2c { cpu, peer, test }),
        (n.clone(), seg(), proptest::option::of(seg())).prop_map(|(c, t, kernel)| Key::Numa {
            cpu_node: c,
            node: Place(format!("node{c}")),
            test: t,
            kernel,
        }),
        (seg(), size(), n.clone()).prop_map(|(test, block, threads)| Key::TiersAccess {
            node: Place("node1".into()),
            test,
            block,
            threads,
        }),
        (n.clone(), seg()).prop_map(|(bytes, test)| Key::PmemClass { bytes, test }),
        (seg(), seg(), seg()).prop_map(|(test, placement, statistic)| Key::Rowbuffer {
            test,
            placement,
            statistic,
        }),
        seg().prop_map(|test| Key::Stream { test }),
    ]
}

proptest! {
    #[test]
    fn a_key_reads_back_from_its_text(k in key()) {
        let text = k.to_string();
        prop_assert_eq!(Key::parse(&text), Some(k.clone()), "{}", text);
        let fleet = Key::Fleet { member: "node7".into(), figure: Box::new(k) };
        prop_assert_eq!(Key::parse(&fleet.to_string()), Some(fleet));
    }
}

/// Every family's suite, found by its text's first part: the figures recorded name these, and
/// `check` finds a reference's suites by the same parts.
#[test]
fn every_family_finds_its_suite_by_its_first_part() {
    for (text, suite) in [
        ("latency/cpu0/level/L2", "latency"),
        ("latency/cpu0/64MiB", "latency"),
        ("tlb/cpu0/64MiB", "latency"),
        ("mlp/cpu0/k4", "latency"),
        ("bandwidth/read/2t", "bandwidth"),
        ("bandwidth-sweep/read/1t/64KiB", "bandwidth"),
        ("c2c/0-12/modified", "c2c"),
        ("coherence/counter/4t", "coherence"),
        ("coherence/adjacent-atomic/2t", "coherence"),
        ("dimms/peak", "dimms"),
        ("dimms-plan/1/peak", "dimms-plan"),
        ("health/memory-errors/ce", "health"),
        ("loaded/all-reads/saturation", "loaded-latency"),
        ("numa/node0/node1/latency", "numa"),
        ("pmem/65536/utilisation", "pmem"),
        ("pmem/volume/single/seconds", "pmem"),
        ("pmem/concurrency/single/failure-rate", "pmem"),
        ("rowbuffer/copy/contiguous/peak", "rowbuffer"),
        ("scan/dram-0x100000000/read", "scan"),
        ("stream/triad", "stream"),
        ("tiers/near/4GiB/latency", "tiers"),
        ("tiers/weighted/3-1/read", "tiers"),
        ("tiers/node2/latency-256B", "tiers"),
        ("tiers/node2/random-read/256B/t4", "tiers"),
        ("tiers/node2/latency", "tiers"),
        ("alloc/process/rss-growth", "alloc"),
        ("alloc/tcmalloc/ops", "alloc"),
        ("profile/peak-rss", "profile"),
        ("fleet/node17/bandwidth/read/2t", "fleet"),
    ] {
        let key = Key::parse(text).unwrap_or_else(|| panic!("{text} reads as a key"));
        let first = text.split('/').next().unwrap();
        assert_eq!(key.prefix(), first, "{text}");
        assert_eq!(key.suite(), suite, "{text}");
        assert_eq!(Key::suite_of_prefix(first), Some(suite), "{text}");
    }
    // A suite's name is no key's first part unless a family writes it.
    assert_eq!(Key::suite_of_prefix("loaded-latency"), None);
    assert_eq!(Key::suite_of_prefix("*"), None);
}
