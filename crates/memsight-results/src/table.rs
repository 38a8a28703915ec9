//! Figures as one long Parquet table, for the engines analysts already use (DuckDB, pandas,
//! polars, Spark): a row per figure of a machine, its key's dimensions as typed columns, its
//! value with what it rests on. `memsight export --format parquet` writes one result this way,
//! `memsight fleet DIR --parquet FILE` a whole fleet with each node's group and flags.
//!
//! Rows are written in batches, so a fleet's table never sits whole in memory; Snappy is the
//! codec (pure Rust, read by every engine).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use memsight_core::Error;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::dims::{Dim, Dims};
use crate::figure::{Better, Scope};
use crate::fleet_report::Direction;

/// The table's name and version, in the file's key-value metadata (`memsight.schema`).
pub const SCHEMA: &str = "memsight-figures";
pub const VERSION: u32 = 1;

/// Rows gathered before they are written as one batch.
const BATCH: usize = 65_536;

/// One row: a figure of one machine.
pub struct Row<'a> {
    /// The machine: its host name (a fleet's member name, `host#rank` where one host gave
    /// several results). The `node` column is a figure's NUMA node.
    pub host: &'a str,
    /// Its fleet group (the report's number) and what the group's nodes share; none for a
    /// single result.
    pub group: Option<(i32, &'a str)>,
    /// When its run started, microseconds since 1970 (UTC).
    pub started: Option<i64>,
    pub key: &'a str,
    pub label: &'a str,
    pub unit: &'a str,
    pub better: Better,
    pub value: f64,
    pub ci: Option<[f64; 2]>,
    pub scope: Scope,
    pub conditions: &'a str,
    /// It rests on disturbed samples.
    pub disturbed: bool,
    /// Its suite measured while the run's drift probes read the machine slow; unknown for a
    /// node summary written before the mark existed.
    pub slow_phase: Option<bool>,
    /// Its confidence interval stayed wider than ±5% of the median.
    pub not_converged: bool,
    /// Flagged against its group (fleets only).
    pub flagged: Option<Direction>,
}

/// A dimension's column: counts and sizes are integers, the rest text.
enum DimColumn {
    Int(Int64Builder),
    Text(StringBuilder),
}

/// The table being written: builders for the batch in hand, the file writer behind them.
pub struct LongTable<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: Arc<Schema>,
    rows: usize,
    host: StringBuilder,
    group: Int32Builder,
    group_fingerprint: StringBuilder,
    started: TimestampMicrosecondBuilder,
    key: StringBuilder,
    suite: StringBuilder,
    dims: Vec<DimColumn>,
    words: [StringBuilder; 5],
    value: Float64Builder,
    ci: [Float64Builder; 2],
    doubt: [BooleanBuilder; 3],
    flagged: StringBuilder,
    /// Suite and dimensions already read from a key: a fleet repeats its keys on every node.
    parsed: HashMap<String, (String, Dims)>,
}

/// The text columns after the dimensions, in order.
const WORDS: [&str; 5] = ["label", "unit", "better", "scope", "conditions"];

/// The table's columns, in order.
pub fn schema() -> Schema {
    let text = |n: &str| Field::new(n, DataType::Utf8, false);
    let mut fields = vec![
        text("host"),
        // Int32, not unsigned: Spark before 3.2 refuses unsigned columns.
        Field::new("group", DataType::Int32, true),
        Field::new("group_fingerprint", DataType::Utf8, true),
        Field::new(
            "started",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        text("key"),
        text("suite"),
    ];
    fields.extend(Dim::ALL.iter().map(|d| {
        let kind = if d.is_count() {
            DataType::Int64
        } else {
            DataType::Utf8
        };
        Field::new(d.name(), kind, true)
    }));
    fields.extend(WORDS.iter().map(|n| text(n)));
    fields.push(Field::new("value", DataType::Float64, false));
    fields.push(Field::new("ci_low", DataType::Float64, true));
    fields.push(Field::new("ci_high", DataType::Float64, true));
    fields.push(Field::new("disturbed", DataType::Boolean, false));
    fields.push(Field::new("slow_phase", DataType::Boolean, true));
    fields.push(Field::new("not_converged", DataType::Boolean, false));
    fields.push(Field::new("flagged", DataType::Utf8, true));
    let meta = HashMap::from([
        ("memsight.schema".to_string(), SCHEMA.to_string()),
        ("memsight.schema_version".to_string(), VERSION.to_string()),
    ]);
    Schema::new_with_metadata(fields, meta)
}

fn fail(e: impl std::fmt::Display) -> Error {
    Error::system(format!("cannot write Parquet: {e}"))
}

impl<W: Write + Send> LongTable<W> {
    /// A table writing to `out`.
    pub fn new(out: W) -> Result<Self, Error> {
        let schema = Arc::new(schema());
        // The schema's name in the file's own key-value metadata, where every engine sees it
        // (the Arrow schema's copy is read by Arrow readers only); row groups of one batch, so
        // the writer holds a batch, not the table.
        let named = [
            ("memsight.schema", SCHEMA.to_string()),
            ("memsight.schema_version", VERSION.to_string()),
        ];
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(
                named
                    .into_iter()
                    .map(|(k, v)| KeyValue::new(k.to_string(), v))
                    .collect(),
            ))
            .set_max_row_group_row_count(Some(BATCH))
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("memsight {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(fail)?;
        let dims = Dim::ALL
            .iter()
            .map(|d| match d.is_count() {
                true => DimColumn::Int(Int64Builder::new()),
                false => DimColumn::Text(StringBuilder::new()),
            })
            .collect();
        Ok(LongTable {
            writer,
            schema,
            rows: 0,
            host: StringBuilder::new(),
            group: Int32Builder::new(),
            group_fingerprint: StringBuilder::new(),
            started: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            key: StringBuilder::new(),
            suite: StringBuilder::new(),
            dims,
            words: std::array::from_fn(|_| StringBuilder::new()),
            value: Float64Builder::new(),
            ci: std::array::from_fn(|_| Float64Builder::new()),
            doubt: std::array::from_fn(|_| BooleanBuilder::new()),
            flagged: StringBuilder::new(),
            parsed: HashMap::new(),
        })
    }

    /// Adds a row; a full batch is written out.
    pub fn push(&mut self, r: &Row) -> Result<(), Error> {
        self.host.append_value(r.host);
        self.group.append_option(r.group.map(|g| g.0));
        self.group_fingerprint.append_option(r.group.map(|g| g.1));
        self.started.append_option(r.started);
        self.key.append_value(r.key);
        self.push_key_columns(r.key);
        for (b, v) in self.words.iter_mut().zip([
            r.label,
            r.unit,
            r.better.word(),
            r.scope.word(),
            r.conditions,
        ]) {
            b.append_value(v);
        }
        self.value.append_value(r.value);
        self.ci[0].append_option(r.ci.map(|c| c[0]));
        self.ci[1].append_option(r.ci.map(|c| c[1]));
        self.doubt[0].append_value(r.disturbed);
        self.doubt[1].append_option(r.slow_phase);
        self.doubt[2].append_value(r.not_converged);
        self.flagged.append_option(r.flagged.map(Direction::word));
        self.rows += 1;
        if self.rows >= BATCH {
            self.write_batch()?;
        }
        Ok(())
    }

    /// The suite and dimensions the key names.
    fn push_key_columns(&mut self, key: &str) {
        if !self.parsed.contains_key(key) {
            // A key no family reads (a newer memsight's) has its first part's suite and no
            // dimensions.
            let k = crate::key::Key::read(key);
            let read = (k.suite().to_string(), k.dims());
            self.parsed.insert(key.to_string(), read);
        }
        let (suite, dims) = &self.parsed[key];
        self.suite.append_value(suite);
        for (col, d) in self.dims.iter_mut().zip(Dim::ALL) {
            let v = dims.get(d);
            match col {
                // A count that does not read as one (a newer memsight's) is left empty rather
                // than guessed.
                DimColumn::Int(b) => b.append_option(v.and_then(|v| v.parse::<i64>().ok())),
                DimColumn::Text(b) => b.append_option(v),
            }
        }
    }

    /// Writes the rows in hand as one batch.
    fn write_batch(&mut self) -> Result<(), Error> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(self.host.finish()),
            Arc::new(self.group.finish()),
            Arc::new(self.group_fingerprint.finish()),
            Arc::new(self.started.finish()),
            Arc::new(self.key.finish()),
            Arc::new(self.suite.finish()),
        ];
        cols.extend(self.dims.iter_mut().map(|c| -> ArrayRef {
            match c {
                DimColumn::Int(b) => Arc::new(b.finish()),
                DimColumn::Text(b) => Arc::new(b.finish()),
            }
        }));
        cols.extend(
            self.words
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        cols.push(Arc::new(self.value.finish()));
        cols.extend(self.ci.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        cols.extend(
            self.doubt
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        cols.push(Arc::new(self.flagged.finish()));
        let batch = RecordBatch::try_new(self.schema.clone(), cols).map_err(fail)?;
        self.writer.write(&batch).map_err(fail)?;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is left and the file's footer; gives back the output.
    pub fn finish(mut self) -> Result<W, Error> {
        self.write_batch()?;
        self.writer.into_inner().map_err(fail)
    }
}

/// When a run started, in microseconds since 1970, if its RFC 3339 time reads.
pub fn micros(started: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(started).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_micros()).ok()
}

/// One result as the long table: a row per figure, its machine the run's host.
pub fn write_document<W: Write + Send>(
    doc: &crate::document::Document,
    out: W,
) -> Result<W, Error> {
    if matches!(doc.results, crate::document::Results::Fleet(_)) {
        // Its figures are every member's headline, under the analysing machine's name.
        return Err(Error::input(
            "a fleet report's table is written by `memsight fleet DIR --parquet FILE`, a row per figure of every node",
        ));
    }
    let mut t = LongTable::new(out)?;
    let host = doc.environment.hostname.clone().unwrap_or_default();
    let slow = crate::document::slow_suites(doc);
    let started = micros(&doc.started);
    for f in crate::document::figures(doc) {
        let doubt = f.doubt(&slow);
        let key = f.key.to_string();
        t.push(&Row {
            host: &host,
            group: None,
            started,
            key: &key,
            label: &f.label,
            unit: &f.unit,
            better: f.better,
            value: f.value,
            ci: f.summary.as_ref().map(|s| [s.ci_low, s.ci_high]),
            scope: f.scope,
            conditions: &f.conditions,
            disturbed: doubt.disturbed,
            slow_phase: Some(doubt.slow_phase),
            not_converged: doubt.not_converged,
            flagged: None,
        })?;
    }
    t.finish()
}
