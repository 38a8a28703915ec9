//! How a command's results leave memsight: the terminal view, the HTML page when asked, the
//! JSON envelope on stdout or in a file, and the exit code.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use memsight_core::Error;
use memsight_core::env::Environment;
use memsight_core::error::Exit;
use memsight_core::report::Envelope;
use memsight_core::topology::TopologySource;
use memsight_results::document::Results;
use serde::Serialize;

use crate::cli::GlobalArgs;
use crate::suite::{Suite, Ui};
use crate::{output, report};

/// Exit code after Ctrl-C (128 + SIGINT), with partial results written.
pub const EXIT_INTERRUPTED: u8 = Exit::Interrupted as u8;

/// Where and how results are shown.
pub struct Show<'a> {
    pub g: &'a GlobalArgs,
    pub started: SystemTime,
}

impl Show<'_> {
    /// `memsight env`: the environment report alone.
    pub fn environment(&self, env: Environment) -> anyhow::Result<ExitCode> {
        if !self.g.json {
            output::env::print(&env);
        }
        emit(
            self.g,
            Envelope::new("env", self.started, env, serde_json::Value::Null, true),
        )
    }

    /// Any suite's command: checked, run under a progress display, shown; exit 3 after the
    /// results are written when they carry a failure.
    pub fn suite(&self, s: &dyn Suite, env: Environment) -> anyhow::Result<ExitCode> {
        if s.live() {
            require_live(&env)?;
        }
        if let Some(page) = s.html() {
            // Refused now, not after minutes of measuring.
            check_writable(page, "choose a writable path for --html")?;
        }
        let out = s.run(&env, &self.ui())?;
        if s.warns() && !self.g.json {
            output::env::print_warnings(&env);
        }
        let code = self.study(env, out.results, out.complete, s.html())?;
        Ok(match out.failure {
            Some(why) => failing(code, Exit::System, &why),
            None => code,
        })
    }

    /// Results of any command: view, page, envelope.
    pub fn study(
        &self,
        env: Environment,
        results: Results,
        complete: bool,
        html: Option<&Path>,
    ) -> anyhow::Result<ExitCode> {
        let views = results.views(&env.topology.caches);
        if !self.g.json {
            for v in &views {
                output::draw(v);
            }
        }
        let envelope = Envelope::new(results.command(), self.started, env, results, complete);
        write_html(html, || report::study_page(&envelope, &views))?;
        emit(self.g, envelope)
    }

    /// The progress display the flags ask for.
    pub fn ui(&self) -> Ui {
        Ui {
            no_progress: self.g.no_progress,
        }
    }
}

/// After the results were written: `exit`'s code with one line saying why, unless `code` already
/// says something else (an interruption). Checks and outliers exit 1; a measurement the results
/// show to have failed (STREAM's validation, failed allocator runs) exits 3.
pub fn failing(code: ExitCode, exit: Exit, what: &str) -> ExitCode {
    if code == ExitCode::SUCCESS {
        eprintln!("memsight: error: {what}");
        ExitCode::from(exit.code())
    } else {
        code
    }
}

/// Refuses a path that cannot be written, with `fix` saying what to do (a file already there is
/// left as it is until the result replaces it whole).
pub fn check_writable(path: &Path, fix: &str) -> anyhow::Result<()> {
    memsight_core::files::check_writable(path).map_err(|e| match e {
        Error::Input(why) => Error::input(format!("{why}; {fix}")),
        other => other,
    })?;
    Ok(())
}

/// Writes the page `html` renders to `path`, if one was asked for, whole or not at all.
pub fn write_html(path: Option<&Path>, html: impl FnOnce() -> String) -> anyhow::Result<()> {
    if let Some(path) = path {
        memsight_core::files::write_text(path, &html())?;
    }
    Ok(())
}

/// Measurements need the live machine, not a recorded topology.
pub fn require_live(env: &Environment) -> anyhow::Result<()> {
    if env.topology.source != TopologySource::Live {
        return Err(Error::input(
            "this topology is a recording (HWLOC_FSROOT or --topology-xml): measurements need the live machine; unset it",
        )
        .into());
    }
    Ok(())
}

/// The envelope as JSON (stdout with --json, the file of -o), the sample count, and the exit
/// code: 130 when the results are partial.
pub fn emit<T: Serialize>(g: &GlobalArgs, envelope: Envelope<T>) -> anyhow::Result<ExitCode> {
    let text = serde_json::to_string_pretty(&envelope)?;
    if g.json {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
    }
    if let Some(path) = &g.output {
        memsight_core::files::write_text(path, &format!("{text}\n"))?;
    }
    if !g.json && envelope.samples.figures > 0 {
        say!("\nSamples: {}", envelope.samples.describe());
    }
    exit_code(envelope.complete)
}

/// 0 for a complete result; 130 for a partial one, and for a complete one whose command was
/// asked to stop after its measurements ended (what it wrote is whole, and says so).
pub fn exit_code(complete: bool) -> anyhow::Result<ExitCode> {
    if !complete {
        eprintln!("memsight: interrupted: partial results written");
    } else if memsight_core::cancel::requested() {
        eprintln!(
            "memsight: interrupted after the measurements ended: the results written are complete"
        );
    } else {
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::from(EXIT_INTERRUPTED))
}
