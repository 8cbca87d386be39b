//! Kuzu values to and from Rust: what every read decodes and every write binds.

use kuzu::{LogicalType, Value};

pub(super) fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

pub(super) fn string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null(_) => String::new(),
        other => other.to_string(),
    }
}

pub(super) fn int(v: &Value) -> i64 {
    match v {
        Value::Int64(i) => *i,
        Value::Int32(i) => i64::from(*i),
        Value::Int16(i) => i64::from(*i),
        Value::Int8(i) => i64::from(*i),
        Value::UInt64(i) => *i as i64,
        Value::UInt32(i) => i64::from(*i),
        Value::Int128(i) => *i as i64,
        Value::Double(d) => *d as i64,
        _ => 0,
    }
}

pub(super) fn list_of_strings(items: impl Iterator<Item = String>) -> Value {
    Value::List(LogicalType::String, items.map(Value::String).collect())
}
