//! The presentation model: what a suite shows, once, for both renderers. A suite's presenter
//! (`present/<suite>.rs`) turns its results into a [`View`]; `output::draw` prints it on the
//! terminal and `report::draw` writes it as an HTML section. Neither renderer knows a suite.

use memsight_core::stats::Summary;

/// One suite's results as people see them.
pub struct View {
    /// Anchor of the HTML section (`c2c`).
    pub id: &'static str,
    pub title: String,
    /// How it was measured, in words.
    pub method: String,
    /// Short facts under the method (`CPUs: 0, 1 (as given)`).
    pub facts: Vec<String>,
    pub blocks: Vec<Block>,
    pub findings: Vec<String>,
}

/// A table or a chart.
pub enum Block {
    Table(Table),
    /// A line chart, with its caption (HTML only: the terminal shows the tables).
    Lines(Lines, String),
    /// Horizontal bars with whiskers and ceiling lines, with its caption (HTML only).
    Bars(Bars, String),
    /// Labelled boxes in bands and columns (a DIMM map: sockets, channels, slots), with its
    /// caption (HTML only: the terminal shows the same facts as a table).
    Grid(Grid, String),
    /// A matrix of figures: a heatmap in HTML, a table on the terminal.
    Heatmap(Heatmap),
}

/// Boxes of text in bands (drawn one under another), each band in columns of boxes.
pub struct Grid {
    pub title: String,
    pub bands: Vec<GridBand>,
}

/// One band of a grid (a socket), its columns in order.
pub struct GridBand {
    pub name: String,
    pub columns: Vec<GridColumn>,
}

/// One column of boxes (a channel), top to bottom.
pub struct GridColumn {
    pub name: String,
    pub boxes: Vec<GridBox>,
}

/// One box: its lines of text, and how full it is drawn (0 to 1 of the largest, darker the
/// fuller); `None` for an empty box, drawn as an outline.
pub struct GridBox {
    pub lines: Vec<String>,
    pub fill: Option<f64>,
}

/// A table; cells are plain text, right-aligned when numeric.
pub struct Table {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// A table cell.
pub enum Cell {
    Text(String),
    Num(String),
    /// Text linking to a file beside the page (a relative path; the terminal shows the path).
    Link {
        text: String,
        href: String,
    },
}

/// A square or rectangular matrix of figures.
pub struct Heatmap {
    pub title: String,
    /// What a cell holds, with its unit.
    pub subtitle: String,
    /// The terminal table's corner cell (`from \ to`).
    pub corner: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    /// Colour low values as good (latency) rather than high (bandwidth).
    pub low_is_good: bool,
    /// The HTML caption under the chart.
    pub caption: String,
    /// Cells whose figure rests on disturbed samples (`[row][col]`; empty: none): drawn
    /// with the ` ⚠` mark.
    pub short: Vec<Vec<bool>>,
}

impl Table {
    pub fn new(caption: &str, header: &[&str]) -> Self {
        Table {
            caption: caption.into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }
}

// ---- chart specifications (drawn as SVG by report::charts; the terminal shows tables) ----

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Bytes on a log₂ axis labelled 4 KiB, 1 MiB …
    Log2Bytes,
    /// A log₁₀ axis.
    Log10,
    /// Counts (threads, chains): linear, labelled at whole numbers only.
    Count,
}

/// One line of a chart.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Vertical whiskers (x, low, high): the confidence interval of each point.
    pub whiskers: Vec<(f64, f64, f64)>,
    pub dashed: bool,
}

/// A labelled reference line.
#[derive(Debug, Clone)]
pub struct Mark {
    pub at: f64,
    pub label: String,
}

/// A line chart.
#[derive(Debug, Clone)]
pub struct Lines {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    /// Vertical reference lines (e.g. cache sizes); drawn where they fall inside the data's range.
    pub x_marks: Vec<Mark>,
    /// Widen the x axis to take in every x mark (a ceiling far beyond the data is the point).
    pub x_to_marks: bool,
    /// Horizontal reference lines (e.g. a ceiling).
    pub y_marks: Vec<Mark>,
    /// Start the y axis at zero (linear scale).
    pub y_from_zero: bool,
}

impl Heatmap {
    /// ` ⚠` where the cell's figure rests on disturbed samples.
    pub fn mark(&self, i: usize, j: usize) -> &'static str {
        let short = self.short.get(i).and_then(|r| r.get(j)).copied();
        if short == Some(true) { " ⚠" } else { "" }
    }

    /// The matrix as a table (the terminal's form of a heatmap): `·` where a cell has no figure.
    pub fn table(&self) -> Table {
        let mut header = vec![self.corner.as_str()];
        header.extend(self.cols.iter().map(String::as_str));
        let mut t = Table::new(&format!("{}, {}", self.title, self.subtitle), &header);
        for (i, (label, row)) in self.rows.iter().zip(&self.values).enumerate() {
            let mut r = vec![Cell::Text(label.clone())];
            r.extend(row.iter().enumerate().map(|(j, v)| {
                Cell::Num(v.map_or("·".to_string(), |v| {
                    format!("{}{}", num(v), self.mark(i, j))
                }))
            }));
            t.rows.push(r);
        }
        t
    }
}

impl Lines {
    /// A line chart without reference lines; the y axis starts at zero unless it is logarithmic.
    pub fn new(
        title: impl Into<String>,
        x_desc: &str,
        y_desc: &str,
        (x_scale, y_scale): (Scale, Scale),
        series: Vec<Series>,
    ) -> Self {
        Lines {
            title: title.into(),
            x_desc: x_desc.into(),
            y_desc: y_desc.into(),
            x_scale,
            y_scale,
            series,
            x_marks: Vec::new(),
            x_to_marks: false,
            y_marks: Vec::new(),
            y_from_zero: y_scale != Scale::Log10,
        }
    }
}

/// One bar of a bar chart.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// Whisker (confidence interval).
    pub low: f64,
    pub high: f64,
    /// A second, lighter bar below (e.g. estimated DRAM bytes).
    pub secondary: Option<f64>,
}

/// A bar chart.
#[derive(Debug, Clone)]
pub struct Bars {
    pub title: String,
    pub x_desc: String,
    /// Legends of the main and the secondary bars.
    pub legend: (String, String),
    pub bars: Vec<Bar>,
    /// Vertical reference lines (ceilings).
    pub marks: Vec<Mark>,
}

// ---- figure formats shared by every view ----

/// The sentences of findings, as views print them (a doubtful one starts with its ⚠).
pub fn texts(findings: &[memsight_core::finding::Finding]) -> Vec<String> {
    findings.iter().map(|f| f.text.clone()).collect()
}

/// A figure with adaptive precision.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A sampled figure's median, marked ` ⚠` when it rests on disturbed samples: the mark
/// travels with the value wherever a table shows it.
pub fn med(s: &Summary) -> String {
    format!("{}{}", num(s.median), s.mark())
}

/// [`med`] with a fixed number of decimals.
pub fn med_to(s: &Summary, decimals: usize) -> String {
    format!("{:.*}{}", decimals, s.median, s.mark())
}

/// `lo–hi` of a summary's CI.
pub fn ci(s: &Summary) -> String {
    format!("{}–{}", num(s.ci_low), num(s.ci_high))
}

/// A figure's sample count, with the samples dropped as disturbed and a mark when too few clean
/// samples were left (the reason is in the JSON and the HTML report).
pub fn count(s: &Summary) -> String {
    let mut out = s.n.to_string();
    if s.dropped > 0 {
        out.push_str(&format!(" (−{} dropped)", s.dropped));
    }
    if let Some(short) = &s.shortfall {
        out.push_str(&format!(" ⚠ {} clean", short.clean));
    }
    out
}

impl Scale {
    /// Where a value lies on the axis (log2 of bytes, log10, or as is).
    pub fn to_axis(self, v: f64) -> f64 {
        match self {
            Scale::Linear | Scale::Count => v,
            Scale::Log2Bytes => v.max(1.0).log2(),
            Scale::Log10 => v.max(1e-12).log10(),
        }
    }

    /// The tick label at axis position `a`.
    pub fn label(self, a: f64) -> String {
        match self {
            Scale::Linear => trim(a),
            Scale::Log2Bytes => {
                if (a - a.round()).abs() < 1e-6 && a >= 0.0 {
                    memsight_core::units::format_bytes(2f64.powf(a.round()) as u64)
                } else {
                    String::new()
                }
            }
            Scale::Log10 => trim(10f64.powf(a)),
            Scale::Count => {
                if (a - a.round()).abs() < 1e-6 {
                    format!("{}", a.round())
                } else {
                    String::new()
                }
            }
        }
    }
}

/// A fraction as a percentage with one decimal ("12.5"), "-" when absent.
pub fn percent(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}", v * 100.0))
}

/// A number with as few digits as it needs.
pub fn trim(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
