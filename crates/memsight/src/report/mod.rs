//! The HTML report of a run (`report.html`) and of a comparison: one self-contained file with
//! inline SVG charts, inline style, no scripts, no fonts, nothing fetched.

pub mod charts;
pub mod grid;
pub mod html;

use memsight_core::units::format_bytes;

use html::{Cell, chart, esc, list, method, section, table};
use memsight_core::report::Envelope;
use memsight_results::document::{Document, Results, RunResults};
use memsight_results::history::compare::{Comparison, Verdict};

use memsight_results::view::num;

/// A link to a file beside the page. Only relative paths become links (no scheme, so no
/// `javascript:` or remote address can be smuggled in through a result file); both parts escaped.
fn link(text: &str, href: &str) -> Cell {
    let relative = !href.contains(':') && !href.starts_with('/') && !href.starts_with("//");
    if relative {
        Cell::Html(format!("<a href=\"{}\">{}</a>", esc(href), esc(text)))
    } else {
        Cell::Text(format!("{text} ({href})"))
    }
}

/// Renders the report of any result: a run's full report, or one command's page.
pub fn render(doc: &Document) -> String {
    match &doc.results {
        Results::Run(r) => render_run(doc, r),
        other => study_page(doc, &other.views(&doc.environment.topology.caches)),
    }
}

/// Renders a run's report.
fn render_run(doc: &Document, r: &RunResults) -> String {
    let env = &doc.environment;
    let host = env
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown host".into());
    let mut page = html::Page::new(&format!("memsight report: {host}"));
    page.header(&[
        format!(
            "{} · {} logical CPUs · {} NUMA node(s) · {}",
            env.cpu.model_name.as_deref().unwrap_or("unknown CPU"),
            env.topology.cpus.len(),
            env.topology.numa_nodes.len(),
            format_bytes(
                env.memory
                    .total_bytes
                    .unwrap_or(env.topology.total_memory_bytes)
            )
        ),
        format!(
            "run started {} · level {} · {:.0} s · memsight {} · result schema {} · machine {}",
            doc.started,
            r.level,
            doc.duration_s,
            doc.tool.version,
            doc.schema_version,
            memsight_results::history::fingerprint(env)
        ),
    ]);
    if !doc.complete {
        page.raw(&format!(
            "<div class=\"banner\">{}</div>",
            esc("This run was interrupted: the report shows what finished before the stop (partial results).")
        ));
    }
    let views = r.views(&env.topology.caches);
    page.raw(&summary(r));
    page.raw(&findings(doc, &views));
    page.raw(&samples(r));
    // Findings have their own section above.
    for v in &views {
        page.raw(&draw(v, false));
    }
    if r.dimms.is_none() {
        page.raw(&no_dimms());
    }

    page.raw(&environment(doc));
    page.finish()
}

/// Samples per suite: kept, dropped as disturbed, figures short of clean samples.
fn samples(r: &RunResults) -> String {
    let rows: Vec<Vec<Cell>> = r
        .tallies()
        .into_iter()
        .filter(|(_, t)| t.figures > 0)
        .map(|(name, t)| {
            vec![
                Cell::Text(name.to_string()),
                Cell::Num(t.figures.to_string()),
                Cell::Num(t.kept.to_string()),
                Cell::Num(t.dropped.to_string()),
                Cell::Num(t.short.to_string()),
                Cell::Num(t.disturbed_kept.to_string()),
            ]
        })
        .collect();
    let mut s = method(
        "Every figure is a median over samples. A sample is disturbed when a measuring thread lost its CPU during it (its CPU time fell short of the wall time: preemption by the guest, or host steal where the guest accounts it) or when a team's threads did not start together; disturbed samples are dropped and counted here. Where fewer than three clean samples were left, the disturbed ones are kept in the figure (they can only make it slower) and the figure is marked ⚠ wherever it is shown; compare and fleet do not judge such figures.",
    );
    s.push_str(&table(
        &[
            "suite",
            "figures",
            "samples kept",
            "dropped",
            "short of clean samples",
            "disturbed samples kept in them",
        ],
        &rows,
    ));
    section("samples", "Samples", &s)
}

/// The page of one command's result, the same whether written live (`memsight rowbuffer
/// --html`) or later (`memsight report` of any result that is not a run): its sections and the
/// environment under a header naming the machine and the start time.
pub fn study_page<T>(doc: &Envelope<T>, views: &[memsight_results::view::View]) -> String {
    let (command, env) = (&doc.command, &doc.environment);
    let host = env
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown host".into());
    let mut page = html::Page::new(&format!("memsight {command}: {host}"));
    page.header(&[
        env.cpu
            .model_name
            .clone()
            .unwrap_or_else(|| "unknown CPU".into()),
        format!(
            "memsight {command} · started {} · machine {}",
            doc.started,
            memsight_results::history::fingerprint(env)
        ),
    ]);
    if !doc.complete {
        page.raw(&format!(
            "<div class=\"banner\">{}</div>",
            esc("This measurement was interrupted: the page shows what finished before the stop (partial results).")
        ));
    }
    for v in views {
        page.raw(&draw(v, true));
    }
    page.raw(&environment(doc));
    page.finish()
}

fn summary(r: &RunResults) -> String {
    let mut s = list("summary", &r.summary);
    if !r.skipped.is_empty() {
        s.push_str("<h3>Not measured</h3>");
        s.push_str(&list("skipped", &r.skipped));
    }
    section("summary", "Summary", &s)
}

/// Every suite's findings, each under its section's title (the evidence is that section).
fn findings(doc: &Document, views: &[memsight_results::view::View]) -> String {
    let mut groups: Vec<(String, Vec<String>)> = views
        .iter()
        .map(|v| {
            (
                format!("{} (evidence: its section below)", v.title),
                v.findings.clone(),
            )
        })
        .collect();
    groups.push((
        "Environment (conditions that distort measurements)".to_string(),
        doc.environment
            .warnings
            .iter()
            .map(|w| w.message.clone())
            .collect(),
    ));
    let mut s = String::new();
    let mut any = false;
    for (title, items) in groups {
        if items.is_empty() {
            continue;
        }
        any = true;
        s.push_str(&format!("<h3>{}</h3>", esc(&title)));
        s.push_str(&list("findings", &items));
    }
    if !any {
        s.push_str("<p>No findings: nothing unusual was detected.</p>");
    }
    section("findings", "Findings", &s)
}

/// A suite's view as an HTML section: method, facts, charts and tables; findings when the page
/// has no findings section of its own.
pub fn draw(v: &memsight_results::view::View, with_findings: bool) -> String {
    use memsight_results::view::Block;
    let mut s = method(&v.method);
    for f in &v.facts {
        s.push_str(&format!("<p>{}</p>", esc(f)));
    }
    for b in &v.blocks {
        match b {
            Block::Table(t) => {
                if !t.caption.is_empty() {
                    s.push_str(&format!("<p class=\"caption\">{}</p>", esc(&t.caption)));
                }
                let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
                let rows: Vec<Vec<Cell>> = t
                    .rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|c| match c {
                                memsight_results::view::Cell::Text(x) => Cell::Text(x.clone()),
                                memsight_results::view::Cell::Num(x) => Cell::Num(x.clone()),
                                memsight_results::view::Cell::Link { text, href } => {
                                    link(text, href)
                                }
                            })
                            .collect()
                    })
                    .collect();
                s.push_str(&table(&header, &rows));
            }
            Block::Lines(l, caption) => s.push_str(&chart(&charts::lines(l), caption)),
            Block::Grid(g, caption) => s.push_str(&chart(&grid::draw(g), caption)),
            Block::Bars(b, caption) => s.push_str(&chart(
                &charts::bars(
                    &b.title,
                    &b.x_desc,
                    (&b.legend.0, &b.legend.1),
                    &b.bars,
                    &b.marks,
                ),
                caption,
            )),
            Block::Heatmap(h) => s.push_str(&chart(
                &charts::heatmap(
                    &h.title,
                    &h.subtitle,
                    &h.rows,
                    &h.cols,
                    &h.values,
                    &h.short,
                    h.low_is_good,
                ),
                &h.caption,
            )),
        }
    }
    if with_findings && !v.findings.is_empty() {
        s.push_str(&list("findings", &v.findings));
    }
    section(v.id, &v.title, &s)
}

/// The DIMM section of a run that could not read the inventory.
fn no_dimms() -> String {
    section(
        "dimms",
        "DIMMs and ceilings",
        "<p>The DIMM inventory was not readable (no SMBIOS tables, or not root): no DIMM map and no theoretical ceilings. <code>memsight run --dmidecode FILE</code> takes a saved <code>dmidecode</code> output.</p>",
    )
}

fn environment<T>(doc: &Envelope<T>) -> String {
    let e = &doc.environment;
    let opt = |x: &Option<String>| x.clone().unwrap_or_else(|| "-".into());
    let caches: Vec<String> = e
        .topology
        .caches
        .iter()
        .map(|c| {
            format!(
                "L{} {} {} ×{}",
                c.level,
                c.kind,
                format_bytes(c.size_bytes),
                c.instances
            )
        })
        .collect();
    let rows = vec![
        ("host", opt(&e.hostname)),
        ("kernel", opt(&e.kernel)),
        ("OS", opt(&e.os)),
        ("CPU", opt(&e.cpu.model_name)),
        ("hypervisor", opt(&e.cpu.hypervisor)),
        (
            "topology",
            format!(
                "{} package(s), {} cores, {} threads, SMT {}",
                e.topology.packages, e.topology.cores, e.topology.threads, e.topology.smt
            ),
        ),
        ("caches", caches.join("; ")),
        ("memory", format_bytes(e.topology.total_memory_bytes)),
        ("transparent huge pages", opt(&e.thp_enabled)),
        ("governors", e.governors.join(", ")),
        ("command", doc.args.join(" ")),
    ];
    let rows: Vec<Vec<Cell>> = rows
        .into_iter()
        .map(|(k, v)| vec![Cell::Text(k.into()), Cell::Text(v)])
        .collect();
    let mut s = table(&["", ""], &rows);
    if !e.warnings.is_empty() {
        s.push_str("<h3>Warnings</h3>");
        s.push_str(&list(
            "warn",
            &e.warnings
                .iter()
                .map(|w| format!("{}: {}", w.code, w.message))
                .collect::<Vec<_>>(),
        ));
    }
    section("environment", "Environment", &s)
}

/// Renders a comparison.
pub fn render_comparison(c: &Comparison) -> String {
    let mut page = html::Page::new(&format!(
        "memsight comparison: {} vs {}",
        c.a.label, c.b.label
    ));
    let side = |i: &memsight_results::history::compare::RunInfo| {
        format!(
            "{} = memsight {}{}: {} {} ({})",
            i.label,
            i.command,
            if i.level.is_empty() {
                String::new()
            } else {
                format!(" {}", i.level)
            },
            i.host,
            i.started,
            i.cpu.as_deref().unwrap_or("?"),
        )
    };
    page.header(&[format!("A: {}", side(&c.a)), format!("B: {}", side(&c.b))]);
    for w in &c.warnings {
        page.raw(&format!("<div class=\"banner\">{}</div>", esc(w)));
    }
    let counts = format!("{}.", c.tally());
    let rows: Vec<Vec<Cell>> = c
        .rows
        .iter()
        .map(|r| {
            let class = match r.verdict {
                Verdict::Better => "better",
                Verdict::Worse => "worse",
                _ => "noise",
            };
            let label = match &r.note {
                Some(n) => format!("{} ({n})", r.label),
                None => r.label.clone(),
            };
            vec![
                Cell::Text(label),
                Cell::Text(r.unit.clone()),
                Cell::Num(r.a.map_or("-".into(), num)),
                Cell::Num(r.b.map_or("-".into(), num)),
                Cell::Num(
                    r.change
                        .map_or("-".into(), |x| format!("{:+.1}%", x * 100.0)),
                ),
                Cell::Num(r.floor.map_or("-".into(), |x| format!("{:.1}%", x * 100.0))),
                Cell::Num(r.p_value.map_or("-".into(), |p| format!("{p:.2e}"))),
                Cell::Html(format!(
                    "<span class=\"{class}\">{}</span>",
                    esc(r.verdict.word())
                )),
            ]
        })
        .collect();
    let body = format!(
        "{}<p>{}</p>{}",
        method(&c.method),
        esc(&counts),
        table(
            &[
                "figure",
                "unit",
                "A",
                "B",
                "change",
                "noise floor",
                "p (Mann–Whitney)",
                "verdict"
            ],
            &rows
        )
    );
    page.raw(&section("comparison", "Figures side by side", &body));
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_paths_become_links_and_both_parts_are_escaped() {
        let html = |c: Cell| match c {
            Cell::Html(h) => h,
            Cell::Text(t) | Cell::Num(t) => format!("text:{t}"),
        };
        assert_eq!(
            html(link("r<1>", "rank-00000/report.html?a=\"x\"")),
            "<a href=\"rank-00000/report.html?a=&quot;x&quot;\">r&lt;1&gt;</a>"
        );
        for bad in [
            "javascript:alert(1)",
            "/etc/passwd",
            "//evil.example/x",
            "https://x",
        ] {
            assert!(html(link("report", bad)).starts_with("text:"), "{bad}");
        }
    }
}
