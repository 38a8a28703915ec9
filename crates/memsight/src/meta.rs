//! Commands about memsight itself, derived from its definitions: the JSON Schema of the result
//! files, shell completions and man pages (so that they never disagree with `--help`).

use std::process::ExitCode;

use clap::CommandFactory;
use memsight_core::Error;
use memsight_core::report::Envelope;

use crate::cli::{Cli, SchemaOf};

/// `memsight schema`: one JSON Schema (draft 2020-12) of every result file, which validators
/// take as it is: the envelope, and the results of each command under `$defs/results-COMMAND`,
/// chosen by the envelope's `command` (if/then); `--of reference` and `--of check` describe
/// `memsight check`'s reference files and verdict.
pub fn schema(of: SchemaOf) -> anyhow::Result<ExitCode> {
    let schema = match of {
        SchemaOf::Result => result_schema(),
        SchemaOf::Reference => {
            serde_json::to_value(schemars::schema_for!(memsight_results::check::Reference))?
        }
        SchemaOf::Check => {
            serde_json::to_value(schemars::schema_for!(memsight_results::check::CheckReport))?
        }
    };
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(ExitCode::SUCCESS)
}

fn result_schema() -> serde_json::Value {
    use serde_json::{Value, json};
    let mut root = serde_json::to_value(schemars::schema_for!(Envelope<Value>))
        .expect("the envelope's schema is JSON");
    // No `$id` of its own: memsight has no public home to serve it from, and validators take the
    // document as it is (the per-command resources below are named relative to wherever it is).
    let all = memsight_results::document::Results::schemas();
    let mut choices = Vec::new();
    for (command, mut schema) in all.into_iter().filter(|(_, s)| !s.is_null()) {
        let name = format!("results-{command}");
        // Its own resource: the `#/$defs/…` references inside it resolve within it.
        if let Some(o) = schema.as_object_mut() {
            o.remove("$schema");
            o.insert("$id".into(), json!(format!("{name}.json")));
        }
        root["$defs"][&name] = schema;
        choices.push(json!({
            "if": {"properties": {"command": {"const": command}}, "required": ["command"]},
            "then": {"properties": {"results": {"$ref": format!("#/$defs/{name}")}}}
        }));
    }
    root["allOf"] = Value::Array(choices);
    root
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
