//! Writing rows in batches (`UNWIND $rows`) or row by row, and how a graph
//! finds symbols by id (`Keyed`, which picks between the two): shared by the
//! writes of a run (`write`, `sites`).

use kuzu::{LogicalType, Value};

use super::readers::Session;
use super::schema::q;
use super::values::int;
use super::{BATCH, Result};

/// How symbols are found by id in this graph (see `Keyed::decide`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keyed {
    /// Row by row through the primary-key index, not by batch.
    pub(super) symbols: bool,
    /// The symbols in the graph when the run began.
    pub(super) in_graph: u64,
    /// Big batches may find symbols by a hash join (`join_pays`); not when
    /// every lookup is to go row by row (tests of that way).
    joins: bool,
}

/// A statement per row costs about as much as a scan of this many nodes: ~1.1
/// ms an edge by key against ~0.1 µs a node of a table a hash join scans
/// (648k symbols of the crates corpus).
const ROW_COSTS_NODES: u64 = 10_000;

impl Keyed {
    /// Kuzu 0.11 plans a lookup of nodes by a field of UNWIND rows
    /// (`{id: r.id}`) as a filtered cross product with the whole table: each
    /// batch row costs a scan of every symbol (3,077 edges into a 600k-symbol
    /// graph: 5.6 s). A statement per row, its ids bound as parameters, is an
    /// index lookup instead (~0.2-0.35 ms each). So symbols are looked up row
    /// by row once the graph holds more than `above` of them; the files,
    /// packages and externals, far fewer, are still looked up by batch.
    pub(super) fn decide(conn: &mut Session<'_, '_>, above: u64) -> Result<Keyed> {
        if above == u64::MAX {
            return Ok(Keyed {
                symbols: false,
                in_graph: 0,
                joins: true,
            });
        }
        let n = conn
            .exec(q("symbol_count"), vec![])?
            .next()
            .map_or(0, |r| int(&r[0]).max(0) as u64);
        Ok(Keyed {
            symbols: n > above,
            in_graph: n,
            joins: above > 0,
        })
    }

    /// Whether `rows` go cheaper in one statement that finds the symbols by a
    /// hash join (`insert_site_edges`: a variable as the key, not a field),
    /// scanning the symbols `scans` times, than a statement each.
    pub(super) fn join_pays(self, rows: usize, scans: u64) -> bool {
        !self.symbols || (self.joins && rows as u64 * ROW_COSTS_NODES > scans * self.in_graph)
    }
}

/// A STRUCT type whose fields are STRING except the INT64 ones at `int_fields`.
pub(super) fn struct_type(fields: &[&str], int_fields: &[usize]) -> LogicalType {
    LogicalType::Struct {
        fields: fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let t = if int_fields.contains(&i) {
                    LogicalType::Int64
                } else {
                    LogicalType::String
                };
                (f.to_string(), t)
            })
            .collect(),
    }
}

/// Runs `query` once per batch of rows, bound as `$rows` (a list of structs).
pub(super) fn write_batches(
    conn: &mut Session<'_, '_>,
    query: &'static str,
    row_type: &LogicalType,
    fields: &[&str],
    rows: impl Iterator<Item = Vec<Value>>,
    extra: impl Fn(&mut Vec<(&str, Value)>),
) -> Result<()> {
    let started = std::time::Instant::now();
    let mut count = 0usize;
    let mut batch: Vec<Value> = Vec::with_capacity(BATCH);
    let mut flush = |batch: &mut Vec<Value>| -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let list = Value::List(row_type.clone(), std::mem::take(batch));
        let mut params = vec![("rows", list)];
        extra(&mut params);
        conn.exec(query, params)?;
        Ok(())
    };
    for row in rows {
        // Kuzu reads a struct of the wrong shape out of bounds (a SIGSEGV,
        // not an error): a row must fill the layout exactly.
        assert_eq!(row.len(), fields.len(), "a row for {fields:?}");
        let value = Value::Struct(fields.iter().map(|f| f.to_string()).zip(row).collect());
        batch.push(value);
        count += 1;
        if batch.len() >= BATCH {
            flush(&mut batch)?;
        }
    }
    flush(&mut batch)?;
    log_write(query, count, started, "batched write");
    Ok(())
}

/// Runs `query` once per row, each value bound to the parameter its field
/// names (see `Keyed`).
pub(super) fn write_each(
    conn: &mut Session<'_, '_>,
    query: &'static str,
    fields: &[&str],
    rows: impl Iterator<Item = Vec<Value>>,
) -> Result<()> {
    let started = std::time::Instant::now();
    let mut count = 0usize;
    for row in rows {
        conn.exec(query, fields.iter().copied().zip(row).collect())?;
        count += 1;
    }
    log_write(query, count, started, "write row by row");
    Ok(())
}

/// The debug line of a write: its rows, time and statement (its CREATE or
/// DELETE line).
fn log_write(query: &str, rows: usize, started: std::time::Instant, how: &'static str) {
    tracing::debug!(
        rows,
        ms = started.elapsed().as_millis() as u64,
        query = query
            .lines()
            .find(|l| l.contains("CREATE") || l.contains("DELETE"))
            .unwrap_or(""),
        "{how}"
    );
}
