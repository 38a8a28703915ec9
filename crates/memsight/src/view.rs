//! The presentation model: what a suite shows, once, for both renderers. A suite's presenter
//! (`present/<suite>.rs`) turns its results into a [`View`]; `output::draw` prints it on the
//! terminal and `report::draw` writes it as an HTML section. Neither renderer knows a suite.

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
    /// A matrix of figures: a heatmap in HTML, a table on the terminal.
    Heatmap(Heatmap),
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
}

/// A square or rectangular matrix of figures.
pub struct Heatmap {
    pub title: String,
    /// What a cell holds, with its unit.
    pub subtitle: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    /// Colour low values as good (latency) rather than high (bandwidth).
    pub low_is_good: bool,
    /// The HTML caption under the chart.
    pub caption: String,
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
