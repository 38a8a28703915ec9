//! What the Debian package ships, generated from the CLI definition: shell completions
//! (`memsight completions SHELL`) and man pages (`memsight manpages DIR`).

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
