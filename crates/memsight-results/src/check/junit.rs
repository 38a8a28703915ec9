//! The verdict as JUnit XML, which CI systems (GitLab, Jenkins, GitHub's test reporters) and
//! ReFrame's consumers read: one test suite per reference, one test case per check; a failure
//! carries the value, the limit and why; a skipped check is `<skipped>`.

use std::io::Write;

use memsight_core::Error;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use super::{CheckReport, Status};

/// Writes `report` as a JUnit XML document.
pub fn write(report: &CheckReport, out: impl Write) -> Result<(), Error> {
    emit(report, out).map_err(|e| Error::system(format!("cannot write JUnit XML: {e}")))
}

fn emit(report: &CheckReport, out: impl Write) -> std::io::Result<()> {
    let mut w = Writer::new_with_indent(out, b' ', 2);
    let (_, failed, skipped) = report.counts();
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let errors = usize::from(!report.incomplete.is_empty());
    let tests = (report.checks.len() + errors).to_string();
    let errors = errors.to_string();
    let (failures, skips) = (failed.to_string(), skipped.to_string());
    let suite_name = format!("memsight check: {}", report.reference);
    let mut suites = BytesStart::new("testsuites");
    suites.push_attribute(("name", "memsight"));
    suites.push_attribute(("tests", tests.as_str()));
    suites.push_attribute(("failures", failures.as_str()));
    w.write_event(Event::Start(suites))?;
    let mut suite = BytesStart::new("testsuite");
    suite.push_attribute(("name", suite_name.as_str()));
    suite.push_attribute(("hostname", report.host.as_str()));
    suite.push_attribute(("timestamp", report.started.as_str()));
    suite.push_attribute(("tests", tests.as_str()));
    suite.push_attribute(("failures", failures.as_str()));
    suite.push_attribute(("skipped", skips.as_str()));
    suite.push_attribute(("errors", errors.as_str()));
    w.write_event(Event::Start(suite))?;
    for c in &report.checks {
        let mut case = BytesStart::new("testcase");
        case.push_attribute(("classname", "memsight.check"));
        case.push_attribute(("name", c.name.as_str()));
        w.write_event(Event::Start(case))?;
        let value = c
            .value
            .map_or("no value".to_string(), |v| format!("{v} {}", c.unit));
        let text = format!("{}: {value}, expected {}", c.label, c.expected);
        match c.status {
            Status::Pass => {}
            Status::Fail => {
                let mut f = BytesStart::new("failure");
                f.push_attribute(("message", c.reason.as_str()));
                f.push_attribute(("type", "memsight.check"));
                w.write_event(Event::Start(f))?;
                w.write_event(Event::Text(BytesText::new(&text)))?;
                w.write_event(Event::End(BytesEnd::new("failure")))?;
            }
            Status::Skip => {
                let mut s = BytesStart::new("skipped");
                s.push_attribute(("message", c.reason.as_str()));
                w.write_event(Event::Empty(s))?;
            }
        }
        let mut out = BytesStart::new("system-out");
        out.clear_attributes();
        w.write_event(Event::Start(out))?;
        w.write_event(Event::Text(BytesText::new(&text)))?;
        w.write_event(Event::End(BytesEnd::new("system-out")))?;
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    // A result that is not whole: one erroring case, so a CI system never shows it green.
    if !report.incomplete.is_empty() {
        let mut case = BytesStart::new("testcase");
        case.push_attribute(("classname", "memsight.check"));
        case.push_attribute(("name", "verdict"));
        w.write_event(Event::Start(case))?;
        let mut e = BytesStart::new("error");
        e.push_attribute(("message", "INCOMPLETE"));
        e.push_attribute(("type", "memsight.incomplete"));
        w.write_event(Event::Start(e))?;
        w.write_event(Event::Text(BytesText::new(&report.incomplete.join("; "))))?;
        w.write_event(Event::End(BytesEnd::new("error")))?;
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    w.into_inner().write_all(b"\n")
}
