//! memsight: parse the command line, collect the environment, run the suite, print and export.

#![forbid(unsafe_code)]

mod cli;
mod fleetrun;
mod member;
mod output;
mod progress;
mod report;
mod run;

// The suites live in memsight-suites; `crate::latency` and kin keep naming them here.
use memsight_suites::{
    alloc, bandwidth, c2c, dimms, latency, loaded, numa, pmem, rowbuffer, sampling, stream, tiers,
};

use std::io::Write;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches};
use memsight_core::env::Environment;
use memsight_core::report::Envelope;
use memsight_core::sysfs::FsRoot;
use memsight_core::topology::{Topology, TopologySource};
use memsight_core::{Error, cancel, timer};
use serde::Serialize;

use cli::{Cli, Command, GlobalArgs, LatencyArgs};

mod stored;

use memsight_results::{document as results, history, present};

/// Exit code for bad input (clap uses the same).
const EXIT_USAGE: u8 = 2;
/// Exit code after Ctrl-C (128 + SIGINT), with partial results written.
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    // `dimms --plan A --dimm … --plan B --dimm …`: which --dimm belongs to which --plan is only
    // known from the positions on the command line.
    if let (Command::Dimms(a), Some(("dimms", m))) = (&mut cli.command, matches.subcommand())
        && let Err(e) = a.group_plans(m)
    {
        eprintln!("memsight: error: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) if matches!(e.downcast_ref::<Error>(), Some(Error::Interrupted)) => {
            eprintln!("memsight: {e}");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => {
            let usage = e
                .downcast_ref::<Error>()
                .is_some_and(|e| matches!(e, Error::Input(_)));
            // One line: the outermost context and the cause.
            let msg = e
                .chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            eprintln!("memsight: error: {msg}");
            ExitCode::from(if usage { EXIT_USAGE } else { 1 })
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let started = SystemTime::now();
    if let Some(done) = offline(&cli) {
        return done;
    }
    ctrlc::set_handler(cancel::request).context("cannot install the Ctrl-C handler")?;
    // Refuse an unwritable output path now, not after minutes of measuring.
    if let Some(path) = &cli.global.output {
        check_writable(path, "choose a writable path for -o")?;
    }
    let env = environment(&cli.global)?;
    let g = &cli.global;
    let show = Show { g, started };
    match &cli.command {
        Command::Env => show.environment(env),
        Command::Latency(a) => {
            let (results, complete) = run_latency(a, &env, g)?;
            show.measured("latency", env, results, complete, None)
        }
        Command::Run(a) => run_all(a, env, g, started),
        Command::Bandwidth(a) => {
            require_live(&env)?;
            let cfg = a.config(&env)?;
            let (results, complete) =
                progress::with_progress(Some(cfg.total_points()), g.no_progress, |tick| {
                    bandwidth::run(&cfg, &env, tick)
                })?;
            show.measured("bandwidth", env, results, complete, None)
        }
        Command::Stream(a) => {
            require_live(&env)?;
            let cfg = a.config(&env)?;
            let clock = timer::calibrate();
            let (results, complete) =
                progress::with_progress(Some(cfg.ntimes as u64), g.no_progress, |tick| {
                    stream::run(&cfg, &env, &clock, tick)
                })?;
            let failed = results.validation.as_ref().is_some_and(|v| !v.passed);
            let code = show.measured("stream", env, results, complete, None)?;
            Ok(failing(
                code,
                failed,
                "STREAM validation failed: the kernels computed wrong results (see above)",
            ))
        }
        Command::C2c(a) => {
            require_live(&env)?;
            let cfg = a.config(&env)?;
            let (results, complete) =
                progress::with_progress(None, g.no_progress, |tick| c2c::run(&cfg, &env, tick))?;
            show.measured("c2c", env, results, complete, None)
        }
        Command::Numa(a) => {
            require_live(&env)?;
            let cfg = a.config()?;
            let (results, complete) =
                progress::with_progress(None, g.no_progress, |tick| numa::run(&cfg, &env, tick))?;
            show.measured("numa", env, results, complete, None)
        }
        Command::Tiers(a) => run_tiers(a, env, &show),
        Command::Fleet(a) => fleetrun::fleet(a, env, &show),
        Command::LoadedLatency(a) => {
            require_live(&env)?;
            let cfg = a.config(&env)?;
            let (results, complete) =
                progress::with_progress(None, g.no_progress, |tick| loaded::run(&cfg, &env, tick))?;
            show.measured("loaded-latency", env, results, complete, None)
        }
        Command::Pmem(a) => {
            check_html(a.html.as_deref())?;
            let cfg = a.config()?;
            let (results, complete) =
                progress::with_progress(None, g.no_progress, |tick| pmem::run(&cfg, &env, tick))?;
            show.study("pmem", env, results, complete, a.html.as_deref())
        }
        Command::Alloc(a) => {
            require_live(&env)?;
            check_html(a.html.as_deref())?;
            let cfg = a.config()?;
            let (results, complete) =
                progress::with_progress(None, g.no_progress, |tick| alloc::run(&cfg, &env, tick))?;
            let failed = results.configs.iter().any(|c| !c.problems.is_empty());
            let code = show.study("alloc", env, results, complete, a.html.as_deref())?;
            Ok(failing(
                code,
                failed,
                "some runs failed or were stopped (see the problems column)",
            ))
        }
        Command::Rowbuffer(a) => {
            require_live(&env)?;
            check_html(a.html.as_deref())?;
            let cfg = a.config(&env)?;
            let (results, complete) =
                progress::with_progress(Some(cfg.total_steps()), g.no_progress, |tick| {
                    rowbuffer::run(&cfg, &env, tick)
                })?;
            show.measured("rowbuffer", env, results, complete, a.html.as_deref())
        }
        Command::Dimms(a) if !a.plans.is_empty() => {
            let results = dimms::plans(&a.plans)?;
            show.study("dimms-plan", env, results, true, None)
        }
        Command::Dimms(a) => {
            let results = dimms::run(&a.config())?;
            show.study("dimms", env, results, true, None)
        }
        Command::Schema
        | Command::Completions(_)
        | Command::Manpages(_)
        | Command::History(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Export(_)
        | Command::AllocWorker(_)
        | Command::PmemWorker(_) => unreachable!("handled above"),
    }
}

/// Commands that read stored results, and the workers of child processes: they need neither
/// the live machine nor Ctrl-C handling. `None` for every other command.
fn offline(cli: &Cli) -> Option<anyhow::Result<ExitCode>> {
    Some(match &cli.command {
        Command::Schema => schema(),
        Command::Completions(a) => {
            clap_complete::generate(
                a.shell,
                &mut public_cli(),
                "memsight",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Manpages(a) => manpages(&a.dir),
        Command::History(a) => stored::history(a, &cli.global),
        Command::Compare(a) => stored::compare(a, &cli.global),
        Command::Report(a) => stored::report(a),
        Command::Export(a) => stored::export(a),
        Command::AllocWorker(a) => a
            .workload()
            .and_then(|w| alloc::worker(&w, a.trim))
            .map(|()| ExitCode::SUCCESS)
            .map_err(Into::into),
        Command::PmemWorker(a) => a
            .task()
            .and_then(|t| pmem::worker::main(&t))
            .map(|()| ExitCode::SUCCESS)
            .map_err(Into::into),
        _ => return None,
    })
}

/// `memsight schema`: the JSON Schema of the envelope and of every command's results.
fn schema() -> anyhow::Result<ExitCode> {
    let commands = serde_json::json!({
        "envelope": schemars::schema_for!(Envelope<serde_json::Value>),
        "results": results::Results::schemas(),
    });
    println!("{}", serde_json::to_string_pretty(&commands)?);
    Ok(ExitCode::SUCCESS)
}

/// The command line without its internal commands (the workers of child processes), which
/// completions would otherwise offer: clap_complete lists hidden subcommands too.
fn public_cli() -> clap::Command {
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
fn manpages(dir: &std::path::Path) -> anyhow::Result<ExitCode> {
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

/// How a command's results leave memsight: the terminal view, the HTML page when asked, the
/// JSON envelope.
struct Show<'a> {
    g: &'a GlobalArgs,
    started: SystemTime,
}

impl Show<'_> {
    /// `memsight env`: the environment report alone.
    fn environment(&self, env: Environment) -> anyhow::Result<ExitCode> {
        if !self.g.json {
            output::env::print(&env);
        }
        emit(
            self.g,
            Envelope::new("env", self.started, env, serde_json::Value::Null, true),
        )
    }

    /// A measurement: the environment's warnings come first (they can distort the figures).
    fn measured<R: Serialize + present::Present>(
        &self,
        command: &str,
        env: Environment,
        results: R,
        complete: bool,
        html: Option<&std::path::Path>,
    ) -> anyhow::Result<ExitCode> {
        if !self.g.json {
            output::env::print_warnings(&env);
        }
        self.study(command, env, results, complete, html)
    }

    /// Any command: view, page, envelope.
    fn study<R: Serialize + present::Present>(
        &self,
        command: &str,
        env: Environment,
        results: R,
        complete: bool,
        html: Option<&std::path::Path>,
    ) -> anyhow::Result<ExitCode> {
        let view = results.view();
        if !self.g.json {
            output::draw(&view);
        }
        let envelope = Envelope::new(command, self.started, env, results, complete);
        write_html(html, || {
            report::study_page(&envelope, std::slice::from_ref(&view))
        })?;
        emit(self.g, envelope)
    }
}

/// `memsight tiers`: the plan alone (`--plan`), or the study.
fn run_tiers(a: &cli::TiersArgs, env: Environment, show: &Show) -> anyhow::Result<ExitCode> {
    let cfg = a.config()?;
    if a.plan {
        let results = tiers::planned(&cfg, &env)?;
        return show.study("tiers", env, results, true, None);
    }
    require_live(&env)?;
    let (results, complete) = progress::with_progress(None, show.g.no_progress, |tick| {
        tiers::run(&cfg, &env, tick)
    })?;
    show.measured("tiers", env, results, complete, None)
}

/// `memsight run`: every suite under one progress display, the tables at the end, the results
/// saved to a directory and the history. With `--fleet DIR`, one rank of a fleet.
fn run_all(
    a: &cli::RunArgs,
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
) -> anyhow::Result<ExitCode> {
    if a.fleet.is_some() {
        return fleetrun::rank(a, env, g, started);
    }
    let dir = run::out_dir(a, &env);
    run::check_out_dir(&dir)?;
    // A database that cannot be used is refused now, before minutes of measuring.
    let mut history = if a.no_history {
        None
    } else {
        Some(history::History::open(&a.db.path(), true)?)
    };
    let envelope = measure_run(a, env, g, started, &dir, g.json)?;
    run::save(&envelope, &dir, history.as_mut(), g.json)?;
    emit(g, envelope)
}

/// The measurements of `memsight run`, printed as they are shown, as a document for `dir`.
fn measure_run(
    a: &cli::RunArgs,
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
    dir: &std::path::Path,
    quiet: bool,
) -> anyhow::Result<results::Document> {
    if !quiet {
        output::env::print(&env);
    }
    require_live(&env)?;
    let lat_cfg = run::latency_args(a).config(&env)?;
    let clock = timer::calibrate();
    let (mut results, done) = progress::with_progress(None, g.no_progress, |tick| {
        let lat_tick = |m: &str| tick(&format!("latency ladder: {m}"));
        let (latency, lat_done) = latency::run(&lat_cfg, &env, clock, &lat_tick)?;
        if lat_done {
            run::rest(a, &env, latency, tick)
        } else {
            Ok((results::RunResults::interrupted(latency), false))
        }
    })?;
    results.directory = Some(dir.display().to_string());
    if !quiet {
        for view in results.views(&env.topology.caches) {
            output::draw(&view);
        }
        output::heading("Summary");
        for line in &results.summary {
            println!("  {line}");
        }
        for s in &results.skipped {
            println!("  skipped: {s}");
        }
    }
    Ok(Envelope::new(
        "run",
        started,
        env,
        results::Results::Run(Box::new(results)),
        done,
    ))
}

/// Exit code 1 with one line when results were written but show a failure (STREAM validation,
/// failed allocator runs); `code` otherwise.
fn failing(code: ExitCode, failed: bool, what: &str) -> ExitCode {
    if failed && code == ExitCode::SUCCESS {
        eprintln!("memsight: error: {what}");
        ExitCode::from(1)
    } else {
        code
    }
}

/// Refuses a path that cannot be written, with `fix` saying what to do.
fn check_writable(path: &std::path::Path, fix: &str) -> anyhow::Result<()> {
    std::fs::File::create(path).map_err(|e| {
        Error::input(format!(
            "cannot write results to '{}': {e}; {fix}",
            path.display()
        ))
    })?;
    Ok(())
}

/// Refuses an unwritable `--html` path now, not after minutes of measuring.
fn check_html(path: Option<&std::path::Path>) -> anyhow::Result<()> {
    if let Some(path) = path {
        std::fs::File::create(path)
            .map_err(|e| Error::input(format!("cannot write '{}': {e}", path.display())))?;
    }
    Ok(())
}

/// Writes the page `html` renders to `path`, if one was asked for.
fn write_html(path: Option<&std::path::Path>, html: impl FnOnce() -> String) -> anyhow::Result<()> {
    if let Some(path) = path {
        std::fs::write(path, html())
            .map_err(|e| Error::input(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

fn environment(g: &GlobalArgs) -> anyhow::Result<Environment> {
    let fs = FsRoot::from_env();
    let topology = match &g.topology_xml {
        Some(path) => Topology::from_xml_file(path)?,
        None => Topology::load()?,
    };
    Ok(Environment::collect(&fs, topology, true))
}

fn run_latency(
    a: &LatencyArgs,
    env: &Environment,
    g: &GlobalArgs,
) -> anyhow::Result<(latency::LatencyResults, bool)> {
    require_live(env)?;
    let cfg = a.config(env)?;
    let timer = timer::calibrate();
    let out = progress::with_progress(
        Some(latency::ladder::total_steps(&cfg)),
        g.no_progress,
        |tick| latency::run(&cfg, env, timer, tick),
    )?;
    Ok(out)
}

/// Measurements need the live machine, not a recorded topology.
fn require_live(env: &Environment) -> anyhow::Result<()> {
    if env.topology.source != TopologySource::Live {
        return Err(Error::input(
            "this topology is a recording (HWLOC_FSROOT or --topology-xml): measurements need the live machine; unset it",
        )
        .into());
    }
    Ok(())
}

fn emit<T: Serialize>(g: &GlobalArgs, envelope: Envelope<T>) -> anyhow::Result<ExitCode> {
    let text = serde_json::to_string_pretty(&envelope)?;
    if g.json {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
    }
    if let Some(path) = &g.output {
        std::fs::write(path, format!("{text}\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !g.json && envelope.samples.figures > 0 {
        println!("\nSamples: {}", envelope.samples.describe());
    }
    if envelope.complete {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("memsight: interrupted: partial results written");
        Ok(ExitCode::from(EXIT_INTERRUPTED))
    }
}
