//! Commands about memsight itself, derived from its definitions: the JSON Schema of the result
//! files, shell completions and man pages (so that they never disagree with `--help`).

use std::process::ExitCode;

use clap::CommandFactory;
use memsight_core::Error;
use memsight_core::report::Envelope;

use crate::cli::Cli;

/// `memsight schema`: the JSON Schema of the envelope and of every command's results.
pub fn schema() -> anyhow::Result<ExitCode> {
    let commands = serde_json::json!({
        "envelope": schemars::schema_for!(Envelope<serde_json::Value>),
        "results": memsight_results::document::Results::schemas(),
    });
    println!("{}", serde_json::to_string_pretty(&commands)?);
    Ok(ExitCode::SUCCESS)
}

/// `memsight completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    clap_complete::generate(shell, &mut public_cli(), "memsight", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// The command line without its internal commands (the workers of child processes), which
/// completions would otherwise offer: clap_complete lists hidden subcommands too.
pub fn public_cli() -> clap::Command {
    let full = Cli::command();
    let mut public = clap::Command::new("memsight")
        .version(full.get_version().unwrap_or_default().to_string())
        .args(full.get_arguments().cloned());
    if let Some(about) = full.get_about() {
        public = public.about(about.clone());
    }
    public.subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned())
}

/// `memsight manpages DIR`: the man page of memsight and of each visible command, from the CLI
/// definition (so they never disagree with `--help`).
pub fn manpages(dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    let fail = |e: std::io::Error| {
        Error::input(format!("cannot write man pages to {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mut cmd = Cli::command();
    // Building propagates the global options (--json, -o …) into every command's page.
    cmd.build();
    let mut pages = vec![("memsight".to_string(), cmd.clone())];
    // clap's own `help` command gets no page: `man memsight` is the help.
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("memsight-{}", sub.get_name());
        // The page is memsight-run(1); its synopsis shows the command as typed.
        pages.push((
            name.clone(),
            sub.clone()
                .name(name)
                .bin_name(format!("memsight {}", sub.get_name()))
                .version(cmd.get_version().unwrap_or_default().to_string()),
        ));
    }
    for (name, page) in pages {
        let mut roff = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut roff)
            .map_err(fail)?;
        std::fs::write(dir.join(format!("{name}.1")), roff).map_err(fail)?;
    }
    println!("{}", dir.display());
    Ok(ExitCode::SUCCESS)
}
