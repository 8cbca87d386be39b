//! Reads of the call graph (`CALLS`, `REFERENCES`, `IMPLEMENTS`, `EXTENDS`,
//! `UNRESOLVED`) for the tools `find_references`, `get_call_graph`,
//! `find_implementations` and `analyze_impact`.

/// The queries this module runs, by name (`schema::q` looks here too).
pub const CALL_READ_QUERIES: &[(&str, &str)] = &[];
