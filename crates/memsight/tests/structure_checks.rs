//! The structure checks fire: each rule of scripts/check-format.py and scripts/check-layers.py
//! is broken on purpose in a copy of the workspace's sources, and the check must fail naming
//! the file. A check that passes everything would otherwise go unnoticed, as the old ones did
//! (rustfmt skipped the modules declared inside a macro; the layer check stopped reading a file
//! at its first test item and did not follow `super::super::`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A copy of the workspace's manifests and crates (no target/), in a fresh git repository
/// with every file tracked, as the checks see a checkout.
fn copy() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "memsight-structure-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = Command::new("cp")
        .arg("-r")
        .args(["Cargo.toml", "Cargo.lock", "crates"].map(|p| repo().join(p)))
        .arg(&dir)
        .status()
        .unwrap();
    assert!(ok.success());
    for args in [&["init", "-q"][..], &["add", "-A"]] {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(ok.success());
    }
    dir
}

/// Runs a check script over `dir`: (passed, what it printed).
fn check(script: &str, dir: &Path) -> (bool, String) {
    let out = Command::new("python3")
        .arg(repo().join("scripts").join(script))
        .arg(dir)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn append(dir: &Path, file: &str, text: &str) {
    let p = dir.join(file);
    let mut s = std::fs::read_to_string(&p).unwrap();
    s.push_str(text);
    std::fs::write(p, s).unwrap();
}

fn restore(dir: &Path, file: &str) {
    std::fs::copy(repo().join(file), dir.join(file)).unwrap();
}

#[test]
fn a_misformatted_or_unreached_file_fails_the_format_check() {
    let dir = copy();
    let (ok, text) = check("check-format.py", &dir);
    assert!(ok, "{text}");

    let loaded = "crates/memsight/src/cli/loaded.rs";
    append(&dir, loaded, "\nfn  planted ( ) { }\n");
    let (ok, text) = check("check-format.py", &dir);
    assert!(!ok && text.contains("misformatted"), "{text}");
    restore(&dir, loaded);

    // A module declared inside a macro, as the suites' flags once were: rustfmt never sees it.
    let cli = "crates/memsight/src/cli/mod.rs";
    append(
        &dir,
        cli,
        "\nmacro_rules! hidden {\n    () => {\n        mod planted_hidden;\n    };\n}\nhidden!();\n",
    );
    std::fs::write(
        dir.join("crates/memsight/src/cli/planted_hidden.rs"),
        "fn  never_formatted ( ) { }\n",
    )
    .unwrap();
    Command::new("git")
        .args(["add", "-A"])
        .current_dir(&dir)
        .status()
        .unwrap();
    let (ok, text) = check("check-format.py", &dir);
    assert!(
        !ok && text.contains("cli/planted_hidden.rs: rustfmt never reaches it"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn each_layer_rule_fires_where_the_old_check_was_blind() {
    let dir = copy();
    let (ok, text) = check("check-layers.py", &dir);
    assert!(ok, "{text}");
    let planted = [
        // A suite naming another through `super::super::`.
        (
            "crates/memsight-suites/src/numa/rounds.rs",
            "\npub type Planted = super::super::loaded::LoadedSettings;\n",
            "suite numa names suite loaded",
        ),
        // After the file's first test item (a `#[cfg(test)]` function near its top).
        (
            "crates/memsight-suites/src/profile/findings.rs",
            "\npub type Planted = crate::numa::NumaResults;\n",
            "suite profile names suite numa",
        ),
        // Key text spelt or taken apart outside the key module.
        (
            "crates/memsight-results/src/check/judge.rs",
            "\npub fn planted() -> &'static str {\n    \"dimms/peak\"\n}\n",
            "judge.rs:",
        ),
        (
            "crates/memsight-results/src/history/compare.rs",
            "\npub fn planted(f: &crate::figure::Figure) -> bool {\n    f.key.to_string().starts_with(\"numa\")\n}\n",
            "takes key text apart",
        ),
    ];
    for (file, text, expect) in planted {
        append(&dir, file, text);
        let (ok, out) = check("check-layers.py", &dir);
        assert!(!ok && out.contains(expect), "{file}: {out}");
        restore(&dir, file);
    }
    // The same lines inside a test module are test code, and pass.
    append(
        &dir,
        "crates/memsight-suites/src/numa/rounds.rs",
        "\n#[cfg(test)]\nmod planted {\n    pub type P = super::super::loaded::LoadedSettings;\n}\n",
    );
    let (ok, out) = check("check-layers.py", &dir);
    assert!(ok, "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
