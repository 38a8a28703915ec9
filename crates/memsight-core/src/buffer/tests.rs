//! Tests of `buffer`.

use super::*;
use crate::sysfs::FsRoot;
use crate::topology::Topology;

fn env() -> Environment {
    Environment::collect(&FsRoot::live(), Topology::load().unwrap(), false)
}

#[test]
fn page_kinds_parse() {
    assert_eq!("4k".parse::<PageKind>().unwrap(), PageKind::Base4K);
    assert_eq!("THP".parse::<PageKind>().unwrap(), PageKind::Thp);
    assert_eq!("2m".parse::<PageKind>().unwrap(), PageKind::Huge2M);
    assert_eq!("1g".parse::<PageKind>().unwrap(), PageKind::Huge1G);
    assert!("64k".parse::<PageKind>().is_err());
}

#[test]
fn base_pages_are_verified_small() {
    let env = env();
    let req = BufferRequest {
        bytes: 8 * MIB,
        kind: PageKind::Base4K,
        node: None,
        dax: None,
    };
    let mut b = Buffer::allocate(req, &env).unwrap();
    b.touch();
    assert_eq!(b.len(), 8 * MIB as usize);
    assert_eq!(b.as_ptr() as usize % (2 * MIB as usize), 0);
    assert_eq!(b.report().kernel_page_bytes, Some(4096));
    assert_eq!(b.report().huge_fraction, Some(0.0));
    let phys = b.report().physical.as_ref().unwrap();
    assert_eq!(phys.pages, 2048);
    assert_eq!(phys.present, 2048, "every page was touched");
    // Frame numbers are visible exactly when the effective uid is 0.
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    assert_eq!(phys.frames_visible, root);
    if root {
        let runs = phys.runs.unwrap();
        assert!((1..=2048).contains(&runs));
        assert!(phys.longest_run_bytes.unwrap() >= 4096);
    } else {
        assert!(phys.runs.is_none());
    }
}

#[test]
fn thp_is_verified_when_enabled() {
    let env = env();
    if env.thp_enabled.as_deref() == Some("never") {
        return;
    }
    let req = BufferRequest {
        bytes: 16 * MIB,
        kind: PageKind::Thp,
        node: None,
        dax: None,
    };
    let mut b = Buffer::allocate(req, &env).unwrap();
    b.touch();
    // The kernel may not grant every huge page, but the fraction must be measured.
    assert!(b.report().huge_fraction.is_some());
}

#[test]
fn oversized_and_empty_pool_requests_are_refused() {
    let env = env();
    let too_big = BufferRequest {
        bytes: 1 << 50,
        kind: PageKind::Base4K,
        node: None,
        dax: None,
    };
    assert!(matches!(
        Buffer::allocate(too_big, &env),
        Err(Error::DoesNotFit(_))
    ));
    if env.huge_pages_free(1 << 30) == 0 {
        let req = BufferRequest {
            bytes: 1 << 30,
            kind: PageKind::Huge1G,
            node: None,
            dax: None,
        };
        let e = Buffer::allocate(req, &env).err().unwrap().to_string();
        assert!(e.contains("echo"), "{e}");
        // Preferring falls back to something that works, and says so.
        let req = BufferRequest {
            bytes: 4 * MIB,
            kind: PageKind::Huge1G,
            node: None,
            dax: None,
        };
        let b = Buffer::allocate_preferring(req, &env).unwrap();
        assert_ne!(b.report().kind, PageKind::Huge1G);
        assert!(!b.report().warnings.is_empty());
    }
}

#[test]
fn interleaving_over_the_allowed_nodes_places_pages_on_them() {
    let env = env();
    let req = BufferRequest {
        bytes: 8 * MIB,
        kind: PageKind::Base4K,
        node: None,
        dax: None,
    };
    let mut b = Buffer::allocate(req, &env).unwrap();
    b.interleave(&env.allowed_nodes).unwrap();
    b.touch();
    assert_eq!(b.report().interleaved, env.allowed_nodes);
    for (node, _) in &b.report().pages_per_node {
        assert!(
            env.allowed_nodes.contains(&(*node as usize)),
            "page on node {node}"
        );
    }
}

#[test]
fn binding_to_a_missing_node_is_refused() {
    let env = env();
    let req = BufferRequest {
        bytes: MIB,
        kind: PageKind::Base4K,
        node: Some(4095),
        dax: None,
    };
    assert!(matches!(Buffer::allocate(req, &env), Err(Error::Input(_))));
}

/// THP is every suite's default: a machine with THP switched off measures on 4 KiB pages and
/// says so, instead of refusing to measure at all.
#[test]
fn a_thp_request_falls_back_to_4k_pages_where_thp_is_off() {
    let mut env = env();
    env.thp_enabled = Some("never".into());
    let req = BufferRequest {
        bytes: 4 * MIB,
        kind: PageKind::Thp,
        node: None,
        dax: None,
    };
    let b = Buffer::allocate(req, &env).unwrap();
    let r = b.report();
    assert_eq!(r.requested, PageKind::Thp);
    assert_eq!(r.kind, PageKind::Base4K);
    assert!(
        r.warnings.iter().any(|w| w.contains("fell back")),
        "{:?}",
        r.warnings
    );
}
