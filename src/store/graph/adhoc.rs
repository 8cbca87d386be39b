//! What ad hoc Cypher needs of Kuzu: a statement's compile errors, its printed
//! plan (`EXPLAIN`), a run inside a read-only transaction, and values to and
//! from JSON. The policy (what may run) is `query::cypher`'s.

use kuzu::{Connection, LogicalType, Value};

use super::rows::QueryRows;
use super::{GraphError, GraphStore, Result};

impl GraphStore {
    /// Runs one query inside a read-only transaction; `timeout_ms` 0 means no
    /// limit. Only for queries this code trusts (and tests): a read-only
    /// transaction still lets `LOAD FROM`, `COPY … TO` and settings through, so
    /// ad hoc Cypher goes through `adhoc`, which checks the plan first and runs
    /// in a sandboxed worker process.
    pub fn query_read_only(
        &self,
        cypher: &str,
        params: Vec<(String, serde_json::Value)>,
        max_rows: usize,
        timeout_ms: u64,
    ) -> Result<(QueryRows, bool)> {
        let conn = self.conn()?;
        if timeout_ms > 0 {
            conn.set_query_timeout(timeout_ms);
        }
        conn.query("BEGIN TRANSACTION READ ONLY")?;
        let result = run_read_only(&conn, cypher, params, max_rows, timeout_ms);
        let _ = conn.query("COMMIT");
        result
    }

    /// Compiles one statement without running it: its syntax and binder errors
    /// (with Kuzu's position) as `Invalid`.
    pub fn check_statement(&self, cypher: &str) -> Result<()> {
        let conn = self.conn()?;
        conn.prepare(cypher)
            .map(|_| ())
            .map_err(classify_query_error)
    }

    /// Kuzu's printed physical plan of one statement (`EXPLAIN`: nothing runs).
    pub fn explain(&self, cypher: &str, params: &[(String, serde_json::Value)]) -> Result<String> {
        let conn = self.conn()?;
        let mut stmt = conn
            .prepare(&format!("EXPLAIN {cypher}"))
            .map_err(classify_query_error)?;
        let mut bound = Vec::with_capacity(params.len());
        for (k, v) in params {
            bound.push((k.as_str(), json_to_value(v)?));
        }
        let result = conn
            .execute(&mut stmt, bound)
            .map_err(classify_query_error)?;
        let mut plan = String::new();
        for row in result {
            for v in row {
                if let Value::String(s) = v {
                    plan.push_str(&s);
                    plan.push('\n');
                }
            }
        }
        Ok(plan)
    }
}

/// What a failed ad hoc query was: a write Kuzu refused, an attempt on the file
/// system (refused by the sandbox, or a file that is not there), a timeout, or a
/// mistake in the query. Decided by the fixed head of Kuzu's message: the rest
/// may quote the query, whose text is anyone's.
fn classify_query_error(e: kuzu::Error) -> GraphError {
    let m = e.to_string();
    let head = m.trim_start_matches("Query execution failed: ");
    const WRITES: &[&str] = &[
        "Connection exception: Cannot execute write operations in a read-only database!",
        "Transaction manager exception: Can not execute a write query inside a read-only transaction.",
    ];
    if head.starts_with("Interrupted.") {
        GraphError::Timeout(0)
    } else if WRITES.iter().any(|w| head.starts_with(w)) {
        GraphError::NotReadOnly
    } else if head.starts_with("IO exception: ")
        || head.starts_with("Binder exception: No file found that matches the pattern")
        || head.starts_with("Binder exception: Cannot infer the format of the given file")
        // Kuzu checks a file's existence before opening it; saying which of
        // the two failed would tell a caller which paths exist.
        || head.starts_with("Binder exception: File ")
    {
        GraphError::OutsideGraph
    } else if head
        .starts_with("Connection Exception: We do not support prepare multiple statements")
    {
        GraphError::Invalid("one statement at a time, please: `;` may only end the query".into())
    } else {
        GraphError::Invalid(head.to_string())
    }
}

fn run_read_only(
    conn: &Connection<'_>,
    cypher: &str,
    params: Vec<(String, serde_json::Value)>,
    max_rows: usize,
    timeout_ms: u64,
) -> Result<(QueryRows, bool)> {
    let classify = |e: kuzu::Error| match classify_query_error(e) {
        GraphError::Timeout(_) => GraphError::Timeout(timeout_ms),
        other => other,
    };
    let mut stmt = conn.prepare(cypher).map_err(classify)?;
    let mut bound = Vec::with_capacity(params.len());
    for (k, v) in &params {
        bound.push((k.as_str(), json_to_value(v)?));
    }
    let result = conn.execute(&mut stmt, bound).map_err(classify)?;
    let columns = result.get_column_names();
    let mut rows = Vec::new();
    let mut truncated = false;
    for row in result {
        if rows.len() >= max_rows {
            truncated = true;
            break;
        }
        rows.push(row.iter().map(value_to_json).collect());
    }
    Ok((QueryRows { columns, rows }, truncated))
}

pub(super) fn json_to_value(v: &serde_json::Value) -> Result<Value> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => Value::Null(LogicalType::String),
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::Int64(i),
            None => Value::Double(n.as_f64().unwrap_or(0.0)),
        },
        J::String(s) => Value::String(s.clone()),
        J::Array(items) => json_list(items)?,
        J::Object(_) => {
            return Err(GraphError::Invalid(
                "map parameters are not supported; pass scalars or lists".into(),
            ));
        }
    })
}

/// A JSON array as a Kuzu list of one element type: the type its items share,
/// integers widened to doubles beside doubles, nulls of that type. Items of
/// other mixes are refused: Kuzu reads every element as the list's type, so a
/// string in a list of integers was read as the address of its bytes.
fn json_list(items: &[serde_json::Value]) -> Result<Value> {
    let values = items
        .iter()
        .map(json_to_value)
        .collect::<Result<Vec<_>>>()?;
    let mut elem: Option<LogicalType> = None;
    for v in values.iter().filter(|v| !matches!(v, Value::Null(_))) {
        let t = LogicalType::from(v);
        elem = Some(match elem {
            None => t,
            Some(e) if e == t => e,
            Some(LogicalType::Int64) if t == LogicalType::Double => LogicalType::Double,
            Some(LogicalType::Double) if t == LogicalType::Int64 => LogicalType::Double,
            Some(e) => {
                return Err(GraphError::Invalid(format!(
                    "a list parameter holds values of one type (numbers, strings, booleans, or lists of one type); this one mixes {} and {}",
                    type_word(&e),
                    type_word(&t)
                )));
            }
        });
    }
    let elem = elem.unwrap_or(LogicalType::String);
    let values = values
        .into_iter()
        .map(|v| match v {
            Value::Null(_) => Value::Null(elem.clone()),
            Value::Int64(i) if elem == LogicalType::Double => Value::Double(i as f64),
            v => v,
        })
        .collect();
    Ok(Value::List(elem, values))
}

/// A parameter type as a person would name it.
fn type_word(t: &LogicalType) -> &'static str {
    match t {
        LogicalType::Int64 | LogicalType::Double => "numbers",
        LogicalType::String => "strings",
        LogicalType::Bool => "booleans",
        LogicalType::List { .. } => "lists",
        _ => "other values",
    }
}

fn internal_id(id: &kuzu::InternalID) -> String {
    format!("{}:{}", id.table_id, id.offset)
}

/// A Kuzu value as JSON for ad hoc query output.
fn value_to_json(v: &Value) -> serde_json::Value {
    use serde_json::{Value as J, json};
    match v {
        Value::Null(_) => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int64(i) => json!(i),
        Value::Int32(i) => json!(i),
        Value::Int16(i) => json!(i),
        Value::Int8(i) => json!(i),
        Value::UInt64(i) => json!(i),
        Value::UInt32(i) => json!(i),
        Value::UInt16(i) => json!(i),
        Value::UInt8(i) => json!(i),
        Value::Int128(i) => json!(i.to_string()),
        Value::Double(d) => json!(d),
        Value::Float(f) => json!(f),
        Value::String(s) => J::String(s.clone()),
        Value::List(_, items) | Value::Array(_, items) => {
            J::Array(items.iter().map(value_to_json).collect())
        }
        Value::Struct(fields) => J::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), value_to_json(v)))
                .collect(),
        ),
        // Nodes and relationships carry Kuzu's internal ids (`table:offset`),
        // so a client can draw them as a graph: a node's `_id`, a
        // relationship's `_src` and `_dst`.
        Value::Node(n) => {
            let mut m = serde_json::Map::new();
            m.insert("_id".into(), J::String(internal_id(n.get_node_id())));
            m.insert("_label".into(), J::String(n.get_label_name().clone()));
            for (k, v) in n.get_properties() {
                m.insert(k.clone(), value_to_json(v));
            }
            J::Object(m)
        }
        Value::Rel(r) => {
            let mut m = serde_json::Map::new();
            m.insert("_label".into(), J::String(r.get_label_name().clone()));
            m.insert("_src".into(), J::String(internal_id(r.get_src_node())));
            m.insert("_dst".into(), J::String(internal_id(r.get_dst_node())));
            for (k, v) in r.get_properties() {
                m.insert(k.clone(), value_to_json(v));
            }
            J::Object(m)
        }
        // A path of a variable-length pattern: its inner nodes (not its ends)
        // and its relationships, in order.
        Value::RecursiveRel { nodes, rels } => json!({
            "_nodes": nodes.iter().map(|n| value_to_json(&Value::Node(n.clone()))).collect::<Vec<_>>(),
            "_rels": rels.iter().map(|r| value_to_json(&Value::Rel(r.clone()))).collect::<Vec<_>>(),
        }),
        other => J::String(other.to_string()),
    }
}
