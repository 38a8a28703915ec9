//! Every figure a recorded result holds has a typed key: its text reads back as a
//! `memsight_results::key::Key`, the key's text form is the text itself, its suite is the
//! figure's, and it names the dimensions exports label it with. The recordings cover every
//! command with results (`results_cli` checks that), so a suite whose presenter wrote a key no
//! family reads fails here instead of exporting figures without labels.

use std::path::{Path, PathBuf};

use memsight_results::document;
use memsight_results::key::Key;

/// Every recorded result: one per command, and a thorough run.
fn recordings() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut out: Vec<PathBuf> = std::fs::read_dir(data.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.push(data.join("run-thorough.json"));
    out.sort();
    out
}

#[test]
fn every_recorded_figure_key_is_typed_and_reads_back_as_written() {
    let mut keys = 0;
    for path in recordings() {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = document::parse(&text, &path.display().to_string()).unwrap();
        for f in document::figures(&doc) {
            let key = f
                .key
                .known()
                .unwrap_or_else(|| panic!("{}: `{}` is no typed key", path.display(), f.key));
            let text = key.to_string();
            assert_eq!(Key::read(&text), *key, "{}: {text}", path.display());
            // Its family's prefix is listed with its suite (without, the key's suite would be
            // the prefix itself, and the key checks would not know the prefix).
            let prefix = text.split('/').next().unwrap();
            assert!(
                Key::suite_of_prefix(prefix).is_some(),
                "{}: `{prefix}` has no suite in Key::suite_of_prefix",
                path.display()
            );
            // As results travel: through JSON and back.
            let json = serde_json::to_string(key).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<Key>(&json).unwrap(), *key);
            assert_eq!(key.suite(), f.suite, "{}: {}", path.display(), f.key);
            assert!(
                !key.dims().0.is_empty(),
                "{}: `{}` names no dimension",
                path.display(),
                f.key
            );
            keys += 1;
        }
    }
    // Not vacuous: the recordings hold figures of every kind.
    assert!(keys > 500, "only {keys} figures in the recordings");
}

#[test]
fn text_no_family_writes_is_no_key() {
    for text in [
        "",
        "latency",
        "latency/cpuX/64MiB",
        "latency/cpu0/level/",
        "bandwidth/read/2",
        "bandwidth/read/two-t",
        "c2c/0/modified",
        "numa/0/node1/latency",
        "tiers/node2/random-read/256B/tx",
        "something/else/entirely",
        "fleet/node1/unknown/key",
    ] {
        assert_eq!(Key::parse(text), None, "{text}");
        // Read anyway, as a newer memsight's key in a fleet directory or history: kept as
        // written, with no dimensions.
        let read = Key::read(text);
        assert_eq!(read, Key::Unread(text.to_string()), "{text}");
        assert_eq!(read.to_string(), text);
        assert!(read.known().is_none() && read.dims().0.is_empty(), "{text}");
    }
    // Its suite is its first part's (`loaded` figures are loaded-latency's).
    assert_eq!(
        Key::read("loaded/new-mix/new-figure").suite(),
        "loaded-latency"
    );
    assert_eq!(Key::read("newsuite/x").suite(), "newsuite");
}
