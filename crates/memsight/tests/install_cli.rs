//! What the Debian package ships, generated from the CLI definition: shell completions
//! (`memsight completions SHELL`) and man pages (`memsight manpages DIR`); and what users read:
//! the README, the docs, and every string the binary can print.

mod common;

use common::{memsight, ok, refused};

#[test]
fn completions_for_every_shell_name_the_commands() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef memsight"),
        ("fish", "complete -c memsight"),
        ("elvish", "memsight"),
        ("powershell", "memsight"),
    ] {
        let text = ok(&memsight().args(["completions", shell]).output().unwrap());
        assert!(text.contains(marker), "{shell}: no {marker}");
        for cmd in ["run", "compare", "loaded-latency", "rowbuffer"] {
            assert!(text.contains(cmd), "{shell}: {cmd} missing");
        }
        // Internal workers are not offered.
        assert!(
            !text.contains("alloc-worker"),
            "{shell}: internal command offered"
        );
    }
    let bash = ok(&memsight().args(["completions", "bash"]).output().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("memsight.bash");
    std::fs::write(&f, bash).unwrap();
    let st = std::process::Command::new("bash")
        .arg("-n")
        .arg(&f)
        .status()
        .unwrap();
    assert!(st.success(), "the bash completion does not parse");
    // An unknown shell: clap's usage error, naming the shells there are.
    let out = memsight().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash, elvish, fish, powershell, zsh"));
}

#[test]
fn man_pages_cover_every_visible_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man");
    ok(&memsight().arg("manpages").arg(&out).output().unwrap());
    let main = std::fs::read_to_string(out.join("memsight.1")).unwrap();
    assert!(main.starts_with(".ie") || main.contains(".TH memsight 1"));
    for cmd in [
        "run",
        "compare",
        "history",
        "bandwidth",
        "dimms",
        "completions",
    ] {
        let page = std::fs::read_to_string(out.join(format!("memsight-{cmd}.1")))
            .unwrap_or_else(|_| panic!("no page for {cmd}"));
        assert!(page.contains(&format!(".TH memsight-{cmd} 1")), "{cmd}");
        // The synopsis shows the command as typed, and the global options are there.
        assert!(page.contains(&format!("memsight {cmd}")), "{cmd}: synopsis");
        assert!(page.contains("\\-\\-json"), "{cmd}: --json missing");
        assert!(
            main.contains(&format!("memsight\\-{cmd}(1)")),
            "{cmd} not listed"
        );
    }
    assert!(!out.join("memsight-alloc-worker.1").exists());
    // A directory below a regular file cannot be made: one line, exit 2.
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    refused(
        &memsight()
            .arg("manpages")
            .arg(file.join("man"))
            .output()
            .unwrap(),
        "cannot write man pages",
    );
}

/// The repository's top directory.
fn top() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_under(dir: &std::path::Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Phrases that speak of the machine memsight was developed on, or of its sources as "the seed",
/// rather than of the user's machine and the published studies.
const BANNED: [&str; 8] = [
    "this project",
    "this vm",
    "epyc guest",
    "the seed",
    "seed's",
    "our machine",
    "our vm",
    "development machine",
];

fn banned_in(text: &str) -> Option<&'static str> {
    let t = text.to_lowercase();
    BANNED.iter().copied().find(|b| {
        t.match_indices(b).any(|(i, _)| {
            // Whole words only ("your machine" is what users should read).
            let before = t[..i].chars().next_back();
            let after = t[i + b.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

/// Every finding, method and message the suites and the binary can print is a string literal in
/// their sources (outside the test modules), and `--help` and the man pages come from the doc
/// comments of the flag definitions; the README and docs/ ship in the package. None may speak of
/// the development machine: measured examples name their host and date instead.
#[test]
fn what_users_read_speaks_of_their_machine_only() {
    let literal = regex::Regex::new(r#""(?:[^"\\]|\\.)*""#).unwrap();
    let mut offenders = Vec::new();
    let mut sources = Vec::new();
    files_under(&top().join("crates"), "rs", &mut sources);
    for f in sources
        .iter()
        .filter(|f| f.components().all(|c| c.as_os_str() != "tests"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let help = f.components().any(|c| c.as_os_str() == "cli");
        for (n, line) in code.lines().enumerate() {
            let doc = help && line.trim_start().starts_with("///");
            for m in literal.find_iter(line) {
                if let Some(b) = banned_in(m.as_str()) {
                    offenders.push(format!("{}:{}: {b}", f.display(), n + 1));
                }
            }
            if doc && let Some(b) = banned_in(line) {
                offenders.push(format!("{}:{}: {b}", f.display(), n + 1));
            }
        }
    }
    let mut docs = vec![top().join("README.md")];
    files_under(&top().join("docs"), "md", &mut docs);
    for f in &docs {
        for (n, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            if let Some(b) = banned_in(line) {
                offenders.push(format!("{}:{}: {b}", f.display(), n + 1));
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
    assert!(docs.len() > 10, "the docs were not found");
}

/// Every command the README gives works as typed: the scripts it names can be run directly.
#[test]
fn the_scripts_the_readme_names_are_executable() {
    use std::os::unix::fs::PermissionsExt;
    let readme = std::fs::read_to_string(top().join("README.md")).unwrap();
    let named = regex::Regex::new(r"(?:\./)?((?:scripts|bench)/[\w.-]+\.(?:sh|py))").unwrap();
    let mut checked = 0;
    for c in named.captures_iter(&readme) {
        let path = top().join(&c[1]);
        let mode = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "{} is not executable", path.display());
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} scripts named");
}

/// Every command the studies page gives exists with the flags it names, and the page maps each
/// of the six studies.
#[test]
fn the_studies_page_gives_real_commands() {
    let page = std::fs::read_to_string(top().join("docs/studies.md")).unwrap();
    let span = regex::Regex::new(r"`(?:srun )?memsight ([a-z-]+)([^`]*)`").unwrap();
    let flag = regex::Regex::new(r"(--[a-z][a-z0-9-]*)").unwrap();
    let mut helps = std::collections::HashMap::new();
    let mut checked = 0;
    for c in span.captures_iter(&page) {
        let sub = c[1].to_string();
        let help = helps.entry(sub.clone()).or_insert_with(|| {
            let out = memsight().args([sub.as_str(), "--help"]).output().unwrap();
            assert!(out.status.success(), "memsight {sub} is not a command");
            String::from_utf8_lossy(&out.stdout).into_owned()
        });
        for f in flag.captures_iter(&c[2]) {
            assert!(
                help.contains(&format!("{} ", &f[1])) || help.contains(&format!("{}\n", &f[1])),
                "memsight {sub} has no {}",
                &f[1]
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} flags checked");
    for study in [
        "Shen 2020",
        "Vorobev 2020",
        "Ferreira et al. 2008",
        "Li and Kang 2019",
        "EPYC 7002 review",
        "Looi and Xu 2019",
    ] {
        assert!(
            page.contains(&format!("## {study}")),
            "{study} has no section"
        );
    }
}

/// Every file or directory of the repository the README and docs/ cite (in backticks, a path
/// starting with a top-level folder) exists: the studies page cited a fixtures folder that
/// never did.
#[test]
fn the_docs_cite_paths_that_exist() {
    let cited = regex::Regex::new(
        r"`((?:crates|docs|testdata|bench|scripts|packaging|debian)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])`",
    )
    .unwrap();
    let mut docs = vec![top().join("README.md")];
    files_under(&top().join("docs"), "md", &mut docs);
    let mut missing = Vec::new();
    let mut checked = 0;
    for f in &docs {
        let text = std::fs::read_to_string(f).unwrap();
        for c in cited.captures_iter(&text) {
            let path = c[1].trim_end_matches('/');
            // Placeholders (`<Dell R7525>`, `foo`, globs) are not paths.
            if path.contains(['<', '*']) || path.contains("foo") {
                continue;
            }
            checked += 1;
            if !top().join(path).exists() {
                missing.push(format!("{}: {path}", f.display()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(checked > 10, "only {checked} paths checked");
}
