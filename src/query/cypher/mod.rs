//! Ad hoc Cypher (`run_cypher`, `cruxe cypher`): a query someone typed, which
//! cruxe must run without trusting it.
//!
//! Four walls, each enough on its own for what it guards:
//! 1. **The plan guard** (`guard`): Kuzu `EXPLAIN`s the statement and every
//!    operator and table function of the plan must be on a read-only allowlist.
//! 2. **A read-only database and transaction:** the worker opens a database file
//!    read-only and runs inside `BEGIN TRANSACTION READ ONLY`.
//! 3. **A sandboxed worker process** (`worker`): before it opens the database the
//!    worker restricts itself with Landlock to reading that one file (no other
//!    file, no TCP), and once it is open it cannot make a new file descriptor at
//!    all (`RLIMIT_NOFILE`). Its environment is empty; it dies with its parent.
//! 4. **Bounds enforced from outside** (`pool`): the parent watches the worker's
//!    resident memory and its deadline while a query runs and kills it past
//!    either — Kuzu has no per-query memory cap and its own timeout is only
//!    checked between steps. A killed worker is replaced; the server is untouched.
//!
//! What the worker reads: in a server, a *snapshot* of the graph (the data dir's
//! crash-safety copy of the last checkpoint, hard-linked aside when it is made),
//! because Kuzu lets no other process open a database that a writer holds. Answers
//! say when that snapshot is older than the graph the other tools read. The CLI,
//! with no server running, reads the current database file itself.
//!
//! Architecture invariant: this module never names a Kuzu type; the worker talks
//! to the graph through `graph::GraphStore`.

pub mod guard;
mod pool;
mod worker;

pub use pool::{CypherPool, Limits, Source};
pub use worker::{WorkerArgs, worker_main};

use serde::{Deserialize, Serialize};

/// Binds `$repo` and `$ref` to the repository and ref a query is asked of,
/// when the query uses them and the caller did not bind them itself: the
/// example queries scope themselves with them.
pub fn bind_scope(
    query: &str,
    params: &mut Vec<(String, serde_json::Value)>,
    repo: &str,
    ref_name: &str,
) {
    for (name, value) in [("repo", repo), ("ref", ref_name)] {
        if uses_param(query, name) && !params.iter().any(|(k, _)| k == name) {
            params.push((name.to_string(), value.into()));
        }
    }
}

/// Why a parameter cannot be bound as given, if it cannot: a list must hold
/// values of one kind (numbers, strings, booleans, or lists of one kind;
/// nulls anywhere), and maps are not taken. Kuzu reads every element of a
/// list as the list's one type: a string among integers came back as the
/// address of its bytes.
pub fn param_error(params: &[(String, serde_json::Value)]) -> Option<String> {
    fn kind(v: &serde_json::Value) -> Result<Option<String>, String> {
        use serde_json::Value as J;
        Ok(match v {
            J::Null => None,
            J::Bool(_) => Some("booleans".into()),
            J::Number(_) => Some("numbers".into()),
            J::String(_) => Some("strings".into()),
            J::Object(_) => {
                return Err("maps are not taken as parameters; pass scalars or lists".into());
            }
            J::Array(items) => {
                let mut inner: Option<String> = None;
                for item in items {
                    match (kind(item)?, &inner) {
                        (None, _) => {}
                        (Some(k), None) => inner = Some(k),
                        (Some(k), Some(i)) if &k == i => {}
                        (Some(k), Some(i)) => {
                            return Err(format!(
                                "a list holds values of one kind (numbers, strings, booleans, or lists of one kind); this one mixes {i} and {k}"
                            ));
                        }
                    }
                }
                Some(format!(
                    "lists of {}",
                    inner.unwrap_or_else(|| "anything".into())
                ))
            }
        })
    }
    params.iter().find_map(|(name, v)| {
        kind(v)
            .err()
            .map(|why| format!("parameter `{name}`: {why}"))
    })
}

/// Whether `query` names the parameter `$name` (not merely one it begins).
pub fn uses_param(query: &str, name: &str) -> bool {
    let needle = format!("${name}");
    query.match_indices(&needle).any(|(at, _)| {
        !query[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// One query for a worker (one JSON line on its stdin).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub query: String,
    #[serde(default)]
    pub params: Vec<(String, serde_json::Value)>,
    pub max_rows: usize,
    /// Kuzu's own timeout (the parent's deadline is the hard one).
    pub timeout_ms: u64,
    /// Stop adding rows once the answer's JSON would pass this many bytes.
    pub max_bytes: usize,
}

/// A worker's answer (one JSON line on its stdout).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    Ready {
        sandbox: String,
    },
    Rows {
        columns: Vec<String>,
        rows: Vec<Vec<serde_json::Value>>,
        truncated: bool,
    },
    Refused {
        kind: RefusalKind,
        message: String,
    },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RefusalKind {
    NotReadOnly,
    Invalid,
    Timeout,
    Internal,
}

/// The rows of a query that ran.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
    /// Rows were left out (the row limit or the size limit).
    pub truncated: bool,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum AdhocError {
    #[error("refused: {0}")]
    NotReadOnly(String),
    #[error("invalid query: {0}")]
    Invalid(String),
    #[error("the query ran longer than {0} ms and was stopped")]
    Timeout(u64),
    #[error(
        "the query needed more than {0} MiB of memory and was stopped; narrow it, or raise the limit (`cypher_memory_mb`, `cruxe cypher --memory-mb`)"
    )]
    TooLarge(u64),
    #[error("no graph to query yet: {0}")]
    NotReady(String),
    #[error(
        "no query worker became free within {waited_ms} ms ({workers} queries run at once); the query did not run, try again"
    )]
    Busy { waited_ms: u64, workers: usize },
    #[error("the query worker failed: {0}")]
    Worker(String),
    /// The call was abandoned (its deadline passed, the server stops): the
    /// query did not run, or its worker was killed.
    #[error("the query was cancelled: its call was abandoned or the server is stopping")]
    Cancelled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_parameters_are_bound_only_where_used_and_not_given() {
        let mut params = Vec::new();
        bind_scope(
            "MATCH (f:File {repo: $repo}) RETURN f",
            &mut params,
            "r",
            "main",
        );
        assert_eq!(params, vec![("repo".to_string(), "r".into())]);
        let mut params = vec![("ref".to_string(), "dev".into())];
        bind_scope("RETURN $ref, $repo", &mut params, "r", "main");
        assert_eq!(
            params,
            vec![
                ("ref".to_string(), "dev".into()),
                ("repo".to_string(), "r".into())
            ]
        );
        let mut params = Vec::new();
        bind_scope("RETURN $repository, $refs", &mut params, "r", "main");
        assert!(params.is_empty(), "{params:?}");
        assert!(uses_param("RETURN $repo", "repo"));
        assert!(!uses_param("RETURN $repo_name", "repo"));
    }
}
