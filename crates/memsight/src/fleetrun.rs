//! `memsight run --fleet DIR` and `memsight rowbuffer --fleet DIR` (one rank of a fleet) and
//! `memsight fleet DIR` (the report of any
//! directory of results): the command-line side of [`memsight_results::fleet`].

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use memsight_core::env::Environment;
use memsight_core::report::Envelope;

use crate::cli::{FleetArgs, GlobalArgs, RunArgs};
use crate::suite::{Suite, Ui};
use memsight_core::files::write_text;
use memsight_results::document::Document;
use memsight_results::fleet::{FleetOptions, aggregate, analyse};
use memsight_results::fleet_member::Rank;
use memsight_results::fleet_report::FleetResults;
use memsight_results::fleet_report::State;
use memsight_results::launcher;
use memsight_results::present::Present;

/// One rank of `memsight run --fleet DIR`.
pub fn rank(
    a: &RunArgs,
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
) -> anyhow::Result<ExitCode> {
    let dir = a.fleet.fleet.as_deref().expect("fleet mode");
    let fleet = (dir, a.fleet.fleet_timeout);
    rank_with(fleet, env, g, started, "run.json", &|env, out_dir| {
        crate::run::measure(a, env, g, started, out_dir, true)
    })
}

/// One rank of `memsight SUITE --fleet DIR` (the row-buffer study across nodes, as the
/// Catamount paper ran HPCCG on 28 nodes): the suite's result where a run's would go.
pub fn suite_rank(
    s: &dyn Suite,
    f: (&std::path::Path, u64),
    command: &str,
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
) -> anyhow::Result<ExitCode> {
    let file = format!("{command}.json");
    rank_with(f, env, g, started, &file, &|env, _| {
        let out = s.run(&env, &Ui { no_progress: true })?;
        Ok(Envelope::new(
            out.results.command(),
            started,
            env,
            out.results,
            out.complete,
        ))
    })
}

/// One rank: measure, leave the result (as `file`) and status under DIR; rank 0 then waits for
/// the others and writes the fleet report. Only rank 0 prints tables (the ranks share the
/// launcher's terminal); the others print where their result went.
fn rank_with(
    (dir, timeout_s): (&std::path::Path, u64),
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
    file: &str,
    measure: &dyn Fn(Environment, &std::path::Path) -> anyhow::Result<Document>,
) -> anyhow::Result<ExitCode> {
    let place = launcher::detect(&|k| std::env::var(k).ok())?;
    crate::show::require_live(&env)?;
    let host = env.hostname.clone().unwrap_or_else(|| "?".into());
    if let Some(n) = place.local_size.filter(|&n| n > 1) {
        eprintln!(
            "memsight: warning: rank {}: the launcher started {n} ranks on {host}: they measure at the same time and compete for its memory (use srun --ntasks-per-node=1, mpirun --map-by ppr:1:node or mpiexec -ppn 1)",
            place.rank
        );
    }
    let mut me = Rank::claim(dir, place.clone(), &host, file)?;
    let env0 = env.clone();
    let own_error = match measure(env, &me.out_dir) {
        Ok(doc) => {
            crate::run::save_as(&doc, &me.out_dir, file, None, true)?;
            let state = memsight_results::fleet::node::write_beside(&doc, &me.out_dir, file)?;
            me.finish(
                state,
                (!doc.complete).then(|| "interrupted (Ctrl-C)".to_string()),
            )?;
            eprintln!(
                "memsight: rank {} of {} ({host}): {}",
                place.rank,
                place.size,
                me.out_dir.join(file).display()
            );
            None
        }
        Err(e) => {
            let line = e
                .chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            me.finish(State::Failed, Some(line))?;
            Some(e)
        }
    };
    if place.rank != 0 {
        return own_error.map_or(Ok(ExitCode::SUCCESS), Err);
    }
    let timeout = Duration::from_secs(timeout_s);
    let last = std::cell::Cell::new(usize::MAX);
    let still = me.wait_for_others(timeout, &|done, total| {
        if done != last.get() {
            last.set(done);
            eprintln!("memsight: fleet: {done} of {total} ranks finished");
        }
    });
    if still > 0 {
        eprintln!(
            "memsight: fleet: {still} rank(s) still running after {} s: reported as without result",
            timeout_s
        );
    }
    let results = aggregate(&me.job_dir, FleetOptions::DEFAULT, Some(place.size))?;
    let code = report(results, env0, g, started, &me.job_dir)?;
    own_error.map_or(Ok(code), Err)
}

/// `memsight fleet DIR`: the report drawn, written and emitted like any study's.
pub fn fleet(
    a: &FleetArgs,
    env: Environment,
    show: &crate::show::Show,
) -> anyhow::Result<ExitCode> {
    if !a.dir.is_dir() {
        return Err(memsight_core::Error::input(format!(
            "{} is not a directory: give the directory holding the nodes' results",
            a.dir.display()
        ))
        .into());
    }
    let strict = a.strictness()?;
    if let Some(to) = &a.parquet {
        memsight_core::files::check_destination(to)?;
    }
    let analysis = analyse(&a.dir, strict, None)?;
    if let Some(to) = &a.parquet {
        memsight_core::files::write_atomic(to, |f| analysis.write_parquet(f).map(drop))?;
    }
    // The nodes' figures are let go before the report is drawn and written.
    let mut results = analysis.into_results();
    results.all_nodes = a.all_nodes;
    let verdict = results.failure(a.expect, a.fail_on_outliers);
    let code = show.study(env, results.into(), true, a.html.as_deref())?;
    Ok(match verdict {
        Some(why) => crate::show::failing(code, memsight_core::error::Exit::Failed, &why),
        None => code,
    })
}

/// Rank 0's report: fleet.json and fleet.html in the job directory, the view on the terminal.
fn report(
    results: FleetResults,
    env: Environment,
    g: &GlobalArgs,
    started: SystemTime,
    job_dir: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let view = results.view();
    if !g.json {
        crate::output::draw(&view);
    }
    let envelope = Envelope::new("fleet", started, env, results, true);
    write_text(
        &job_dir.join("fleet.json"),
        &serde_json::to_string_pretty(&envelope)?,
    )?;
    write_text(
        &job_dir.join("fleet.html"),
        &crate::report::study_page(&envelope, std::slice::from_ref(&view)),
    )?;
    if !g.json {
        say!("  fleet report: {}", job_dir.join("fleet.json").display());
        say!("  fleet page:   {}", job_dir.join("fleet.html").display());
    }
    crate::show::emit(g, envelope)
}
