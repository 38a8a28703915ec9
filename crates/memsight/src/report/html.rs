//! HTML building blocks: escaping, the page frame with its inline style, tables and chart frames.
//! Everything a machine supplied (CPU names, part numbers, host names, findings) goes through
//! [`esc`]; charts are SVG produced by plotters, which escapes its own text.

use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's style: system fonts only, no network.
const STYLE: &str = "
body { font-family: system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2a44; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px 0; font-size: 24px; }
header p { margin: 2px 0; color: #c9d3e6; }
main { padding: 8px 28px 40px 28px; max-width: 1240px; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; margin: 18px 0; padding: 10px 18px; }
h2 { font-size: 19px; margin: 8px 0 10px 0; }
h3 { font-size: 15px; margin: 14px 0 6px 0; }
p.method { color: #4a5468; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border-bottom: 1px solid #e4e7ec; padding: 3px 10px; text-align: left; vertical-align: top; }
th { background: #f0f2f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure.chart { display: inline-block; margin: 8px 8px 8px 0; padding: 0; border: 1px solid #0a3d91; background: #fff; }
figure.chart figcaption { font-size: 12px; color: #4a5468; padding: 4px 8px; max-width: 600px; }
ul.findings li { margin: 4px 0; }
.banner { background: #fff4d6; border: 1px solid #e0b84c; padding: 8px 14px; border-radius: 6px; margin: 14px 0; }
.warn { color: #8a4b00; }
.better { color: #0a7a2f; font-weight: 600; }
.worse { color: #b3261e; font-weight: 600; }
.noise { color: #6b7280; }
code { background: #f0f2f5; padding: 0 3px; }
";

/// A page under construction.
pub struct Page {
    body: String,
    title: String,
}

impl Page {
    /// A page with a title (escaped here).
    pub fn new(title: &str) -> Self {
        Page {
            body: String::new(),
            title: title.to_string(),
        }
    }

    /// The header bar: title and lines of context (escaped here).
    pub fn header(&mut self, lines: &[String]) {
        let _ = write!(self.body, "<header><h1>{}</h1>", esc(&self.title));
        for l in lines {
            let _ = write!(self.body, "<p>{}</p>", esc(l));
        }
        self.body.push_str("</header><main>");
    }

    /// Appends trusted HTML (built from escaped parts).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// The finished document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{}</title><style>{STYLE}</style></head><body>{}</main></body></html>\n",
            esc(&self.title),
            self.body
        )
    }
}

/// A section with a heading and an anchor.
pub fn section(id: &str, title: &str, content: &str) -> String {
    format!(
        "<section id=\"{}\"><h2>{}</h2>{content}</section>",
        esc(id),
        esc(title)
    )
}

/// A paragraph describing a method (escaped).
pub fn method(text: &str) -> String {
    format!("<p class=\"method\">{}</p>", esc(text))
}

/// A chart frame: the SVG and its caption (escaped). Every chart of a report is one of these,
/// which is what the browser test counts.
pub fn chart(svg: &str, caption: &str) -> String {
    format!(
        "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>",
        esc(caption)
    )
}

/// A table cell: text (escaped) or a right-aligned number.
pub enum Cell {
    Text(String),
    Num(String),
    /// Pre-built HTML (already escaped).
    Html(String),
}

/// A table of escaped cells.
pub fn table(header: &[&str], rows: &[Vec<Cell>]) -> String {
    let mut s = String::from("<table><thead><tr>");
    for h in header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            match c {
                Cell::Text(t) => {
                    let _ = write!(s, "<td>{}</td>", esc(t));
                }
                Cell::Num(t) => {
                    let _ = write!(s, "<td class=\"num\">{}</td>", esc(t));
                }
                Cell::Html(h) => {
                    let _ = write!(s, "<td>{h}</td>");
                }
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// A bulleted list of escaped items.
pub fn list(class: &str, items: &[String]) -> String {
    let mut s = format!("<ul class=\"{}\">", esc(class));
    for i in items {
        let _ = write!(s, "<li>{}</li>", esc(i));
    }
    s.push_str("</ul>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"M393A4K40CB2-CTD\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;M393A4K40CB2-CTD&quot;"
        );
    }

    #[test]
    fn tables_escape_every_cell() {
        let t = table(
            &["<h>"],
            &[vec![Cell::Text("<b>".into()), Cell::Num("1<2".into())]],
        );
        assert!(!t.contains("<b>") && !t.contains("<h>"));
        assert!(t.contains("&lt;b&gt;") && t.contains("1&lt;2"));
    }
}
