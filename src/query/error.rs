//! The errors a tool answers, with CONTRACT.md's codes: every code is made in
//! exactly one place, `ToolError`'s constructors.

use serde_json::{Value, json};

use super::cypher::AdhocError;
use crate::store::graph::{GraphError, SymbolRow};

/// A symbol an ambiguous name could mean, as the error lists it.
#[derive(Debug, serde::Serialize)]
pub struct Candidate {
    pub symbol_id: String,
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub path: String,
    pub line_start: i64,
}

impl From<&SymbolRow> for Candidate {
    fn from(s: &SymbolRow) -> Self {
        Candidate {
            symbol_id: s.id.to_string(),
            name: s.name.to_string(),
            kind: s.kind.to_string(),
            qualified_name: s.qualified_name.clone(),
            path: s.path.clone(),
            line_start: s.line_start,
        }
    }
}

impl From<crate::store::catalog::Entry<'_>> for Candidate {
    fn from(e: crate::store::catalog::Entry<'_>) -> Self {
        Candidate {
            symbol_id: e.id(),
            name: e.name().to_string(),
            kind: e.kind().to_string(),
            qualified_name: e.qualified_name().to_string(),
            path: e.path().to_string(),
            line_start: e.line_start(),
        }
    }
}

/// A tool error: `{"error": {"code", "message", "data"}}` in a result with `isError`.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub data: Value,
}

impl ToolError {
    pub fn new(code: &'static str, message: impl Into<String>, data: Value) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            data,
        }
    }
    pub fn invalid_input(message: impl Into<String>) -> ToolError {
        Self::new("invalid_input", message, json!({}))
    }
    pub fn invalid_strategy(strategy: &str) -> ToolError {
        Self::new(
            "invalid_strategy",
            format!("strategy must be `breadth` or `depth`, not `{strategy}`"),
            json!({"strategy": strategy}),
        )
    }
    pub fn invalid_max_tokens(max_tokens: i64) -> ToolError {
        Self::new(
            "invalid_max_tokens",
            format!("max_tokens must be at least 1, not {max_tokens}"),
            json!({"max_tokens": max_tokens}),
        )
    }
    /// A page that could hold nothing: the next item alone costs `needed`.
    pub fn max_tokens_too_small(given: usize, needed: usize) -> ToolError {
        Self::new(
            "invalid_max_tokens",
            format!(
                "max_tokens {given} holds none of this answer's items: the next one alone takes {needed} tokens; ask for at least {needed}"
            ),
            json!({"max_tokens": given, "needed": needed}),
        )
    }
    /// `similar`: the names the search index finds closest, best first.
    pub fn symbol_not_found(
        name: &str,
        path: Option<&str>,
        repo: &str,
        ref_name: &str,
        similar: &[Candidate],
    ) -> ToolError {
        let place = path.map(|p| format!(" in {p}")).unwrap_or_default();
        let hint = if similar.is_empty() {
            "try locate_symbol or explore_tree".to_string()
        } else {
            let names: Vec<String> = similar
                .iter()
                .map(|c| format!("`{}` ({}:{})", c.qualified_name, c.path, c.line_start))
                .collect();
            format!("did you mean {}?", names.join(", "))
        };
        let suggestions: Vec<Value> = similar
            .iter()
            .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
            .collect();
        Self::new(
            "symbol_not_found",
            format!("no symbol named `{name}`{place} in {repo}@{ref_name}; {hint}"),
            json!({"symbol_name": name, "path": path, "repo": repo, "ref": ref_name,
                   "suggestions": suggestions}),
        )
    }
    pub fn ambiguous_symbol(name: &str, candidates: &[Candidate]) -> ToolError {
        let list: Vec<Value> = candidates
            .iter()
            .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
            .collect();
        Self::new(
            "ambiguous_symbol",
            format!(
                "`{name}` matches {} symbols; pass `path` (or a qualified name) to choose one",
                candidates.len()
            ),
            json!({"symbol_name": name, "candidates": list}),
        )
    }
    pub fn file_not_found(path: &str, repo: &str, ref_name: &str) -> ToolError {
        Self::new(
            "file_not_found",
            format!("no indexed file {path} in {repo}@{ref_name}"),
            json!({"path": path, "repo": repo, "ref": ref_name}),
        )
    }
    pub fn node_not_found(node_id: &str) -> ToolError {
        Self::new(
            "node_not_found",
            format!("no node {node_id}; node ids come from explore_tree"),
            json!({"node_id": node_id}),
        )
    }
    pub fn repo_not_found(asked: Option<&str>, repos: Vec<String>) -> ToolError {
        let message = match asked {
            Some(r) => format!(
                "no repository `{r}` is served here; served: {}",
                repos.join(", ")
            ),
            None => format!(
                "this server holds several repositories; pass `repo` (one of: {})",
                repos.join(", ")
            ),
        };
        Self::new(
            "repo_not_found",
            message,
            json!({"repo": asked, "repos": repos}),
        )
    }
    pub fn ref_not_indexed(repo: &str, ref_name: &str, indexed: Vec<String>) -> ToolError {
        Self::new(
            "ref_not_indexed",
            format!(
                "ref `{ref_name}` of {repo} is not indexed; indexed refs: {}",
                indexed.join(", ")
            ),
            json!({"repo": repo, "ref": ref_name, "indexed_refs": indexed}),
        )
    }
    /// A replica (`cruxe serve --replica`) that has no generation to serve yet.
    pub fn no_generation() -> ToolError {
        Self::new(
            "index_not_ready",
            "this replica serves no generation yet: none is published in its store, or the store does not answer (index_status and /health say which)".to_string(),
            json!({"indexing_status": "not_indexed"}),
        )
    }

    pub fn index_not_ready(repo: &str, status: &str, error: Option<&str>) -> ToolError {
        let message = match error {
            Some(e) => format!("indexing {repo} failed: {e}"),
            None => format!(
                "{repo} is being indexed for the first time; ask again shortly (index_status shows progress)"
            ),
        };
        Self::new(
            "index_not_ready",
            message,
            json!({"repo": repo, "indexing_status": status}),
        )
    }
    pub fn query(e: GraphError) -> ToolError {
        match e {
            GraphError::NotReadOnly => Self::new(
                "query_not_read_only",
                "the query would write (or touch files or settings); run_cypher only reads the graph",
                json!({}),
            ),
            GraphError::Invalid(m) => Self::new("query_invalid", m, json!({})),
            GraphError::Timeout(ms) => Self::new(
                "query_timeout",
                format!(
                    "the query ran longer than {ms} ms and was stopped; narrow it or add a LIMIT"
                ),
                json!({"timeout_ms": ms}),
            ),
            other => Self::internal(other),
        }
    }
    /// An ad hoc query's failure: every refusal of the guard and the sandbox is
    /// `query_not_read_only`, whatever part of it stopped the query.
    pub fn adhoc(e: AdhocError) -> ToolError {
        match e {
            AdhocError::NotReadOnly(m) => Self::new(
                "query_not_read_only",
                format!("{m}; run_cypher only reads the graph"),
                json!({}),
            ),
            AdhocError::Invalid(m) => Self::new("query_invalid", m, json!({})),
            AdhocError::Timeout(ms) => Self::query(GraphError::Timeout(ms)),
            AdhocError::TooLarge(mb) => Self::new(
                "query_too_large",
                AdhocError::TooLarge(mb).to_string(),
                json!({"memory_limit_mb": mb}),
            ),
            AdhocError::NotReady(m) => Self::new(
                "index_not_ready",
                format!("run_cypher has no graph to read yet ({m}); try again shortly"),
                json!({}),
            ),
            AdhocError::Busy { waited_ms, workers } => Self::new(
                "query_timeout",
                AdhocError::Busy { waited_ms, workers }.to_string(),
                json!({"timeout_ms": waited_ms, "ran": false}),
            ),
            AdhocError::Worker(m) => Self::internal(m),
            AdhocError::Cancelled => Self::cancelled(),
        }
    }
    pub fn internal(e: impl std::fmt::Display) -> ToolError {
        let message = e.to_string();
        // A graph read of a call that was cancelled fails with this: the
        // call's deadline, not a fault.
        if message == GraphError::Cancelled.to_string() {
            return Self::cancelled();
        }
        tracing::error!("internal error in a tool: {message}");
        Self::new(
            "internal_error",
            format!("internal error: {message}"),
            json!({}),
        )
    }
    /// A call stopped at its deadline, `ms` after it came.
    pub fn deadline(ms: u64) -> ToolError {
        Self::new(
            "query_timeout",
            format!(
                "the call took longer than {ms} ms and was stopped; the server is busy or the request too large (a smaller depth, fewer paths)"
            ),
            json!({"timeout_ms": ms}),
        )
    }
    /// The call ran out of time (or the server stops) and its work was
    /// stopped where it ran.
    pub fn cancelled() -> ToolError {
        Self::new(
            "query_timeout",
            "the call was stopped: it ran past its deadline or the server is stopping; narrow it (a smaller depth, fewer paths) or try again",
            json!({"cancelled": true}),
        )
    }
}

impl From<GraphError> for ToolError {
    fn from(e: GraphError) -> Self {
        ToolError::internal(e)
    }
}

impl ToolError {
    pub fn file_not_found_on_disk(path: &str, e: std::io::Error) -> ToolError {
        Self::new(
            "file_not_found",
            format!("{path} is indexed but cannot be read now ({e}); re-index"),
            json!({"path": path}),
        )
    }
}

// search_code and get_code_context
