//! memsight: parse the command line, collect the environment, dispatch, show.

#![forbid(unsafe_code)]

/// `println!` for what a person reads (tables, findings, summaries): nothing under `--quiet`.
/// Data a script asked for (`--json`, exports, schemas) is printed with `println!`.
macro_rules! say {
    ($($t:tt)*) => {
        if !$crate::output::quiet() {
            println!($($t)*);
        }
    };
}

mod check;
mod cli;
mod fleetrun;
mod meta;
mod output;
mod progress;
mod report;
mod run;
mod show;
mod stored;
mod suite;

use std::process::ExitCode;
use std::time::SystemTime;

use clap::{CommandFactory, FromArgMatches};
use memsight_core::env::Environment;
use memsight_core::error::Exit;
use memsight_core::sysfs::FsRoot;
use memsight_core::topology::Topology;
use memsight_core::{Error, cancel};

use cli::{Cli, Command, GlobalArgs, SuiteCommand};
use show::Show;

fn main() -> ExitCode {
    cancel::end_quietly_when_the_reader_leaves();
    // First of all, so that a stop at any later moment is recorded (cancel.rs); each command
    // then says what a stop does to it.
    let nohup = cancel::hangup_ignored();
    if let Err(e) = ctrlc::set_handler(cancel::on_signal) {
        eprintln!("memsight: error: cannot install the Ctrl-C handler: {e}");
        return ExitCode::from(Exit::System.code());
    }
    if nohup {
        cancel::ignore_hangup();
    }
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return cli::refuse(e),
    };
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return cli::refuse(e),
    };
    // `dimms --plan A --dimm … --plan B --dimm …`: which --dimm belongs to which --plan is only
    // known from the positions on the command line.
    if let (Command::Suite(SuiteCommand::Dimms(a)), Some(("dimms", m))) =
        (&mut cli.command, matches.subcommand())
        && let Err(e) = a.group_plans(m)
    {
        eprintln!("memsight: error: {e}");
        return ExitCode::from(Exit::Input.code());
    }
    output::set_quiet(cli.global.quiet);
    cli.global.no_progress |= cli.global.quiet;
    // A monitoring plugin answers every time: an error is UNKNOWN (exit 3) with its reason on
    // the status line, not a bare exit code the monitoring system would read as CRITICAL.
    let nagios = matches!(&cli.command, Command::Check(a) if a.format == cli::check::CheckFormat::Nagios)
        && !cli.global.json;
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            let code = say_error(&e);
            if nagios {
                println!(
                    "{}",
                    memsight_results::check::nagios::unknown(&format!("{e:#}"))
                );
                return ExitCode::from(memsight_results::check::nagios::status(
                    memsight_results::check::Verdict::Incomplete,
                ));
            }
            ExitCode::from(code.code())
        }
    }
}

/// Says an error on one line (the outermost context and the cause) and gives its exit code: the
/// kind of the first memsight error in the chain; anything else is the system's failure.
fn say_error(e: &anyhow::Error) -> Exit {
    let kind = e
        .chain()
        .find_map(|c| c.downcast_ref::<Error>())
        .map_or(Exit::System, Error::exit);
    if kind == Exit::Interrupted {
        eprintln!("memsight: {e}");
    } else {
        let msg = e.chain().map(|c| c.to_string()).collect::<Vec<_>>();
        eprintln!("memsight: error: {}", msg.join(": "));
    }
    kind
}

/// Dispatch: commands on stored results first, then everything that looks at this machine.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let started = SystemTime::now();
    if let Some(mode) = stops(&cli.command) {
        // Nothing measured, nothing to keep: a stop that came while the arguments were read
        // ends the command now, and any later one at once.
        cancel::on_stop(mode);
        if mode == cancel::OnStop::Exit && cancel::requested() {
            return Err(Error::Interrupted.into());
        }
    }
    if let Some(done) = offline(&cli) {
        return done;
    }
    // Refuse an unwritable output path now, not after minutes of measuring.
    if let Some(path) = &cli.global.output {
        show::check_writable(path, "choose a writable path for -o")?;
    }
    let env = environment(&cli.global)?;
    let show = Show {
        g: &cli.global,
        started,
    };
    match &cli.command {
        Command::Env => show.environment(env),
        Command::Run(a) if a.fleet.fleet.is_some() => fleetrun::rank(a, env, show.g, show.started),
        Command::Run(a) => run::run(a, env, &show),
        Command::Suite(s) => match s.suite().fleet() {
            Some(f) => fleetrun::suite_rank(s.suite(), f, s.name(), env, show.g, show.started),
            None => show.suite(s.suite(), env),
        },
        Command::Fleet(a) => fleetrun::fleet(a, env, &show),
        Command::Check(a) => {
            use memsight_results::check::Reference;
            use memsight_results::check::baseline::{self, Judge};
            let judge = match (a.baseline, &a.reference) {
                (Some(w), _) => Judge::Baseline(baseline::from_history(
                    &a.db.path(),
                    &memsight_results::history::fingerprint(&env),
                    None,
                    w,
                )?),
                (None, Some(r)) => Judge::Reference(Reference::read(r)?),
                (None, None) => unreachable!("clap requires a mode"),
            };
            check::judge_live(a, show.g, &judge, env, show.started)
        }
        _ => unreachable!("handled by offline"),
    }
}

/// What a stop does to a command that does not measure (`None`: it measures, and the stop is
/// recorded for its measurement loops): commands on stored results exit at once, the workers of
/// child processes leave it to their parent.
fn stops(command: &Command) -> Option<cancel::OnStop> {
    match command {
        Command::AllocWorker(_) | Command::PmemWorker(_) => Some(cancel::OnStop::Ignore),
        Command::Schema(_)
        | Command::Completions(_)
        | Command::Manpages(_)
        | Command::History(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Show(_)
        | Command::Export(_) => Some(cancel::OnStop::Exit),
        Command::Check(a) if !check::live(a) => Some(cancel::OnStop::Exit),
        _ => None,
    }
}

/// Commands that read stored results, and the workers of child processes: they need neither
/// the live machine nor Ctrl-C handling. `None` for every other command.
fn offline(cli: &Cli) -> Option<anyhow::Result<ExitCode>> {
    let ok = |r: memsight_core::Result<()>| r.map(|()| ExitCode::SUCCESS).map_err(Into::into);
    Some(match &cli.command {
        Command::Schema(a) => meta::schema(a.of),
        Command::Completions(a) => meta::completions(a.shell),
        Command::Manpages(a) => meta::manpages(&a.dir),
        Command::History(a) => stored::history(a, &cli.global),
        Command::Compare(a) => stored::compare(a, &cli.global),
        Command::Check(a) if !check::live(a) => match (&a.make_reference, &a.reference) {
            (Some(path), _) => check::make_reference(a, path),
            (None, Some(r)) => memsight_results::check::Reference::read(r)
                .map_err(Into::into)
                .and_then(|r| check::judge_stored(a, &cli.global, Some(&r))),
            (None, None) => check::judge_stored(a, &cli.global, None),
        },
        Command::Report(a) => stored::report(a),
        Command::Show(a) => stored::show(a, &cli.global),
        Command::Export(a) => stored::export(a),
        Command::AllocWorker(a) => ok(a
            .workload()
            .and_then(|w| memsight_suites::alloc::worker(&w, a.trim))),
        Command::PmemWorker(a) => ok(a
            .task()
            .and_then(|t| memsight_suites::pmem::worker::main(&t))),
        _ => return None,
    })
}

fn environment(g: &GlobalArgs) -> anyhow::Result<Environment> {
    let fs = FsRoot::from_env();
    let topology = match &g.topology_xml {
        Some(path) => Topology::from_xml_file(path)?,
        None => Topology::load()?,
    };
    Ok(Environment::collect(&fs, topology, true))
}
