//! The MCP tools as plain functions: input types (with their JSON Schemas), the
//! JSON each tool answers, protocol v1 metadata and the error envelope. Every error
//! code of CONTRACT.md section 3 is produced here, in `ToolError`'s constructors.
//!
//! Architecture invariant: no transport here. `server.rs` calls these functions
//! on a blocking thread and wraps what they return as MCP tool results.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::mcp::answers::*;
use crate::model::names::is_secondary_path;
use crate::query::cypher::{self, AdhocError};
use crate::query::nav::{self, NavError, Scope};
use crate::service::{IndexingStatus, Served, Service};
use crate::store::catalog::{self, Catalog};
use crate::store::graph::{FileInfo, FileSymbol, GraphError, GraphStore, SymbolRow};
use crate::store::search::Filters;

pub const PROTOCOL_VERSION: &str = "1.0";

// ---------------------------------------------------------------------------
// Inputs

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[default]
    Ancestors,
    Descendants,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RelatedScope {
    #[default]
    File,
    Module,
    Package,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    #[default]
    Min,
    Max,
}

/// A tool's input: its own fields, then `repo` and `ref`, which every tool takes.
/// Unknown fields are refused (`invalid_input`), so a misspelt argument is not
/// silently ignored.
macro_rules! tool_input {
    ($(#[$m:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($body)*
            /// Repository name; needed only when the server holds several.
            #[serde(default)]
            pub repo: Option<String>,
            /// Branch/ref scope; defaults to the ref the served working tree is indexed as.
            #[serde(default, rename = "ref")]
            pub ref_name: Option<String>,
        }
    };
}

tool_input! {
pub struct HierarchyInput {
    /// Symbol name to start from: a plain name (`validate`) or a qualified one (`auth::handler::AuthHandler::validate`).
    pub symbol_name: String,
    /// File path (repo-relative) to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `ancestors` (leaf to root, the default) or `descendants` (the tree below).
    #[serde(default)]
    pub direction: Direction,
}
}

tool_input! {
pub struct RelatedInput {
    /// Anchor symbol name (plain or qualified).
    pub symbol_name: String,
    /// File path to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `file` (default), `module` (adds sibling files of the same directory/module) or `package` (adds the rest of the package).
    #[serde(default)]
    pub scope: RelatedScope,
    /// Max results (default 20, at most 500).
    #[serde(default)]
    pub limit: Option<i64>,
}
}

tool_input! {
pub struct LocateInput {
    /// Symbol name (exact, else ignoring case) or qualified name.
    pub name: String,
    /// Only this kind (`fn`, `method`, `struct`, `class`, `interface`, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only under this path (a file or a directory, repo-relative).
    #[serde(default)]
    pub path: Option<String>,
    /// Only this language (`rust`, `python`, `typescript`, `javascript`, `go`).
    #[serde(default)]
    pub language: Option<String>,
    /// Max results (default 10, at most 500).
    #[serde(default)]
    pub limit: Option<i64>,
}
}

tool_input! {
pub struct OutlineInput {
    /// Repo-relative file path.
    pub path: String,
}
}

tool_input! {
pub struct ExploreInput {
    /// A directory or file path (`.` for the root, the default), or else a name to search: files and symbols whose name contains it.
    #[serde(default)]
    pub pattern: Option<String>,
    /// Levels below the pattern's node to show: 0 = unlimited, 1 = direct children only. Default 2.
    #[serde(default)]
    pub max_depth: Option<i64>,
    /// `min` (name and type) or `max` (plus signature, qualified name and lines).
    #[serde(default)]
    pub detail: Detail,
    /// Max nodes in the answer (default 500, at most 5000); more sets `result_completeness: truncated`.
    #[serde(default)]
    pub limit: Option<i64>,
}
}

tool_input! {
pub struct NodeInput {
    /// A node id from `explore_tree`: `file:src/a.rs`, `dir:src`, `fn:src/a.rs:auth::validate`.
    pub node_id: String,
}
}

tool_input! {
pub struct CypherInput {
    /// One read-only Cypher query. `$repo` and `$ref` are bound to the call's repo and ref unless given in `params`.
    pub query: String,
    /// Query parameters by name.
    #[serde(default)]
    pub params: Option<Map<String, Value>>,
    /// Max rows returned (default 100).
    #[serde(default)]
    pub limit: Option<i64>,
}
}

tool_input! {
pub struct SearchInput {
    /// What to look for: identifiers (split at case and `_` changes), words of signatures and docs.
    pub query: String,
    /// Only this language (`rust`, `python`, `typescript`, `javascript`, `go`).
    #[serde(default)]
    pub language: Option<String>,
    /// Only this kind (`fn`, `method`, `struct`, `class`, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only under this path (a directory or file, repo-relative).
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Max results (default 10, at most 200).
    #[serde(default)]
    pub limit: Option<i64>,
}
}

tool_input! {
pub struct ContextInput {
    /// Search query (as for search_code).
    pub query: String,
    /// Token budget of the answer's items (default 4000, at least 1).
    #[serde(default)]
    pub max_tokens: Option<i64>,
    /// `breadth` (many symbols, signatures only; the default) or `depth` (fewer symbols with their bodies).
    #[serde(default)]
    pub strategy: Option<String>,
    /// Only this language.
    #[serde(default)]
    pub language: Option<String>,
}
}

tool_input! {
/// `repo` narrows the answer to one repository; every ref is listed.
pub struct StatusInput {}
}

// ---------------------------------------------------------------------------
// Errors

/// A tool error: `{"error": {"code", "message", "data"}}` in a result with `isError`.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub data: Value,
}

impl ToolError {
    fn new(code: &'static str, message: impl Into<String>, data: Value) -> ToolError {
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
    fn symbol_not_found(name: &str, path: Option<&str>, repo: &str, ref_name: &str) -> ToolError {
        let place = path.map(|p| format!(" in {p}")).unwrap_or_default();
        Self::new(
            "symbol_not_found",
            format!(
                "no symbol named `{name}`{place} in {repo}@{ref_name}; try locate_symbol or explore_tree"
            ),
            json!({"symbol_name": name, "path": path, "repo": repo, "ref": ref_name}),
        )
    }
    fn ambiguous_symbol(name: &str, candidates: &[SymbolRow]) -> ToolError {
        let list: Vec<Value> = candidates
            .iter()
            .map(|c| {
                json!({"symbol_id": c.id, "name": c.name, "kind": c.kind,
                "qualified_name": c.qualified_name, "path": c.path, "line_start": c.line_start})
            })
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
    fn file_not_found(path: &str, repo: &str, ref_name: &str) -> ToolError {
        Self::new(
            "file_not_found",
            format!("no indexed file {path} in {repo}@{ref_name}"),
            json!({"path": path, "repo": repo, "ref": ref_name}),
        )
    }
    fn node_not_found(node_id: &str) -> ToolError {
        Self::new(
            "node_not_found",
            format!("no node {node_id}; node ids come from explore_tree"),
            json!({"node_id": node_id}),
        )
    }
    fn repo_not_found(asked: Option<&str>, repos: Vec<String>) -> ToolError {
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
    fn ref_not_indexed(repo: &str, ref_name: &str, indexed: Vec<String>) -> ToolError {
        Self::new(
            "ref_not_indexed",
            format!(
                "ref `{ref_name}` of {repo} is not indexed; indexed refs: {}",
                indexed.join(", ")
            ),
            json!({"repo": repo, "ref": ref_name, "indexed_refs": indexed}),
        )
    }
    fn index_not_ready(served: &Served) -> ToolError {
        let status = served.status();
        let message = match served.error() {
            Some(e) => format!("indexing {} failed: {e}", served.name),
            None => format!(
                "{} is being indexed for the first time; ask again shortly (index_status shows progress)",
                served.name
            ),
        };
        Self::new(
            "index_not_ready",
            message,
            json!({"repo": served.name, "indexing_status": status.as_str()}),
        )
    }
    fn query(e: GraphError) -> ToolError {
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
    fn adhoc(e: AdhocError) -> ToolError {
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
        }
    }
    pub fn internal(e: impl std::fmt::Display) -> ToolError {
        tracing::error!("internal error in a tool: {e}");
        Self::new("internal_error", format!("internal error: {e}"), json!({}))
    }
}

impl From<GraphError> for ToolError {
    fn from(e: GraphError) -> Self {
        ToolError::internal(e)
    }
}

/// What a tool call answers: the JSON object and whether it is an error.
pub struct Reply {
    pub body: Value,
    pub is_error: bool,
}

/// The answer to arguments that do not match a tool's input schema.
pub fn invalid_arguments(svc: &Service, message: &str) -> Value {
    finish::<ErrorAnswer>(
        svc,
        None,
        None,
        Err(ToolError::invalid_input(format!(
            "{message}; see the tool's input schema (tools/list)"
        ))),
    )
    .body
}

// ---------------------------------------------------------------------------
// Context: which repo, ref and graph a call is about, and the metadata it gets.

struct Ctx {
    served: Arc<Served>,
    graph: Arc<GraphStore>,
    ref_name: String,
    /// The catalog this call answers from, taken once: every part of one answer
    /// (files, symbols) comes from the same index state.
    catalog: std::sync::OnceLock<Arc<Catalog>>,
}

impl Ctx {
    /// Where this ref's files are read from.
    fn root(&self) -> PathBuf {
        self.served.source_root(&self.ref_name)
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            repo: &self.served.name,
            ref_name: &self.ref_name,
        }
    }
    fn catalog(&self) -> Result<Arc<Catalog>, ToolError> {
        if let Some(c) = self.catalog.get() {
            return Ok(c.clone());
        }
        let c = self
            .served
            .store
            .catalog(&self.graph, &self.served.name, &self.ref_name)?;
        Ok(self.catalog.get_or_init(|| c).clone())
    }
    fn files(&self) -> Result<Arc<Vec<FileInfo>>, ToolError> {
        Ok(self.catalog()?.files())
    }
}

/// Whether a call on `repo`/`ref_name` would find what it reads already loaded
/// (the catalog; with `search`, the search index too): then it is CPU work of a
/// few milliseconds at most (`get_code_context` also reads the source files of
/// its five best hits, from the page cache as a rule), which the server runs
/// without a thread hand-off.
pub fn is_warm(svc: &Service, repo: Option<&str>, ref_name: Option<&str>, search: bool) -> bool {
    let Some(served) = svc.repo(repo) else {
        return true; // answered at once with `repo_not_found`
    };
    let ref_name = ref_name
        .filter(|r| !r.is_empty())
        .unwrap_or(&served.ref_name);
    served.store.is_cached(&served.name, ref_name, search)
}

fn ctx(svc: &Service, repo: Option<&str>, ref_name: Option<&str>) -> Result<Ctx, ToolError> {
    let served = svc
        .repo(repo)
        .cloned()
        .ok_or_else(|| ToolError::repo_not_found(repo, svc.repo_names()))?;
    let ref_name = ref_name
        .filter(|r| !r.is_empty())
        .unwrap_or(&served.ref_name)
        .to_string();
    let Some(graph) = served.store.graph() else {
        return Err(ToolError::index_not_ready(&served));
    };
    let refs: Vec<String> = served
        .store
        .refs()
        .into_iter()
        .filter(|r| r.repo == served.name)
        .map(|r| r.ref_name)
        .collect();
    if !refs.contains(&ref_name) {
        if ref_name == served.ref_name && served.status() != IndexingStatus::Ready {
            return Err(ToolError::index_not_ready(&served));
        }
        return Err(ToolError::ref_not_indexed(&served.name, &ref_name, refs));
    }
    Ok(Ctx {
        served,
        graph,
        ref_name,
        catalog: std::sync::OnceLock::new(),
    })
}

/// Fills protocol v1 metadata for an answer about `repo`/`ref`: the one place it
/// is made, for answers and errors alike.
fn fill_protocol(
    p: &mut ProtocolMeta,
    svc: &Service,
    repo: Option<&str>,
    ref_name: Option<&str>,
    completeness: &str,
) {
    let served = svc.repo(repo);
    let status = served.map_or(IndexingStatus::NotIndexed, |s| s.status());
    let has_graph = served.is_some_and(|s| s.store.graph().is_some());
    let freshness = match (p.freshness_override, served) {
        (Some(f), _) => f,
        (None, Some(s)) => s.freshness(ref_name.unwrap_or(&s.ref_name)).as_str(),
        (None, None) => "stale",
    };
    p.cruxe_protocol_version = PROTOCOL_VERSION.to_string();
    p.freshness_status = freshness.to_string();
    p.indexing_status = status.as_str().to_string();
    p.result_completeness = completeness.to_string();
    p.repo = served.map(|s| s.name.clone()).or(repo.map(str::to_string));
    p.ref_name = ref_name
        .map(str::to_string)
        .or(served.map(|s| s.ref_name.clone()));
    p.schema_status = if has_graph {
        "compatible"
    } else {
        "not_indexed"
    }
    .to_string();
}

/// Wraps a tool's outcome: the answer gets its protocol metadata; an error
/// becomes the envelope (`error` and `metadata`).
fn finish<T: Answer>(
    svc: &Service,
    repo: Option<&str>,
    ref_name: Option<&str>,
    out: Result<(T, &'static str), ToolError>,
) -> Reply {
    match out {
        Ok((mut answer, completeness)) => {
            fill_protocol(answer.protocol(), svc, repo, ref_name, completeness);
            Reply {
                body: to_json(&answer),
                is_error: false,
            }
        }
        Err(e) => {
            let mut answer = ErrorAnswer {
                error: ErrorBody {
                    code: e.code.to_string(),
                    message: e.message,
                    data: e.data,
                },
                metadata: Metadata::default(),
            };
            fill_protocol(answer.protocol(), svc, repo, ref_name, "partial");
            Reply {
                body: to_json(&answer),
                is_error: true,
            }
        }
    }
}

/// An answer as the JSON object the transports send.
fn to_json(answer: &impl serde::Serialize) -> Value {
    serde_json::to_value(answer).unwrap_or_else(|e| {
        json!({"error": {"code": "internal_error", "message": format!("internal error: {e}"), "data": {}}})
    })
}

// ---------------------------------------------------------------------------
// Shared shapes and input checks

/// A repo-relative path as given by a client, normalised by its text alone:
/// `.`, `..` within the repo and `\` are resolved; absolute paths and any `..`
/// that would climb above the root are refused (nothing outside the repo is
/// ever named). Symlinks are checked where files are read.
fn clean_path(p: &str) -> Result<String, ToolError> {
    let p = p.trim().replace('\\', "/");
    if p.starts_with('/') || p.get(1..2) == Some(":") {
        return Err(ToolError::invalid_input(format!(
            "`{p}` is absolute; paths are relative to the repository root"
        )));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(ToolError::invalid_input(format!(
                        "`{p}` leaves the repository; paths are relative to its root"
                    )));
                }
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

fn clean_opt_path(p: Option<&str>) -> Result<Option<String>, ToolError> {
    match p {
        None => Ok(None),
        Some(p) => clean_path(p).map(|c| Some(c).filter(|c| !c.is_empty())),
    }
}

fn limit(v: Option<i64>, default: usize, max: usize) -> Result<usize, ToolError> {
    match v {
        None => Ok(default),
        Some(n) if n >= 1 && n as u64 <= max as u64 => Ok(n as usize),
        Some(n) => Err(ToolError::invalid_input(format!(
            "limit must be between 1 and {max}, not {n}"
        ))),
    }
}

fn non_empty<'a>(field: &str, v: &'a str) -> Result<&'a str, ToolError> {
    let t = v.trim();
    if t.is_empty() {
        Err(ToolError::invalid_input(format!(
            "`{field}` must not be empty"
        )))
    } else {
        Ok(t)
    }
}

/// The one symbol meant by `name` (and `path`), as its catalog index.
fn resolve_one(c: &Ctx, cat: &Catalog, name: &str, path: Option<&str>) -> Result<usize, ToolError> {
    let row = nav::choose(cat.find(name, path), &c.scope(), name, path).map_err(|e| match e {
        NavError::SymbolNotFound { .. } => {
            ToolError::symbol_not_found(name, path, &c.served.name, &c.ref_name)
        }
        NavError::Ambiguous { candidates, .. } => ToolError::ambiguous_symbol(name, &candidates),
        NavError::Graph(g) => ToolError::internal(g),
    })?;
    cat.by_id(&row.id)
        .ok_or_else(|| ToolError::internal("the catalog lost a symbol it just found"))
}

/// The tree under catalog entry `i` (a Rust type's tree also holds its impl blocks
/// in the same file, as in [`nav::descendants`]).
fn catalog_tree(cat: &Catalog, i: usize) -> nav::TreeNode {
    fn node(cat: &Catalog, i: usize, depth: i64, seen: &mut HashSet<usize>) -> nav::TreeNode {
        let children = if depth as usize >= catalog::MAX_DEPTH {
            Vec::new()
        } else {
            let fresh: Vec<usize> = cat
                .entry(i)
                .children
                .iter()
                .copied()
                .filter(|c| seen.insert(*c))
                .collect();
            fresh
                .into_iter()
                .map(|c| node(cat, c, depth + 1, seen))
                .collect()
        };
        nav::TreeNode {
            symbol: cat.entry(i).row.clone(),
            depth,
            children,
        }
    }
    let mut seen = HashSet::from([i]);
    let mut tree = node(cat, i, 0, &mut seen);
    let sym = &cat.entry(i).row;
    if sym.language == "rust" && sym.kind != "impl" {
        for &j in cat.named(&sym.name) {
            let other = &cat.entry(j).row;
            if other.kind == "impl"
                && other.qualified_name == sym.qualified_name
                && other.path == sym.path
                && seen.insert(j)
            {
                tree.children.push(node(cat, j, 1, &mut seen));
            }
        }
    }
    tree
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

// ---------------------------------------------------------------------------
// get_symbol_hierarchy

pub fn get_symbol_hierarchy(svc: &Service, input: HierarchyInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let name = non_empty("symbol_name", &input.symbol_name)?;
        let path = clean_opt_path(input.path.as_deref())?;
        let cat = c.catalog()?;
        let i = resolve_one(&c, &cat, name, path.as_deref())?;
        let body = match input.direction {
            Direction::Ancestors => {
                let chain: Vec<usize> = std::iter::once(i).chain(cat.ancestors(i)).collect();
                let hierarchy: Vec<HierarchyNode> = chain
                    .iter()
                    .enumerate()
                    .map(|(depth, &j)| HierarchyNode {
                        symbol: SymbolRef::from(&cat.entry(j).row),
                        depth,
                        children: Vec::new(),
                    })
                    .collect();
                HierarchyAnswer {
                    chain_length: hierarchy.len(),
                    hierarchy,
                    direction: "ancestors".into(),
                    file: Some(cat.entry(i).row.path.clone()),
                    metadata: Metadata::default(),
                }
            }
            Direction::Descendants => {
                let tree = catalog_tree(&cat, i);
                HierarchyAnswer {
                    chain_length: tree.size(),
                    hierarchy: vec![tree_node(&tree)],
                    direction: "descendants".into(),
                    file: None,
                    metadata: Metadata::default(),
                }
            }
        };
        Ok((body, "complete"))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

fn tree_node(n: &nav::TreeNode) -> HierarchyNode {
    HierarchyNode {
        symbol: SymbolRef::from(&n.symbol),
        depth: n.depth as usize,
        children: n.children.iter().map(tree_node).collect(),
    }
}

// ---------------------------------------------------------------------------
// find_related_symbols

pub fn find_related_symbols(svc: &Service, input: RelatedInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let name = non_empty("symbol_name", &input.symbol_name)?;
        let path = clean_opt_path(input.path.as_deref())?;
        let limit = limit(input.limit, 20, 500)?;
        let cat = c.catalog()?;
        let anchor = cat
            .entry(resolve_one(&c, &cat, name, path.as_deref())?)
            .row
            .clone();
        let files = c.files()?;
        let anchor_file = files.iter().find(|f| f.path == anchor.path);

        let mut out = Related {
            seen: HashSet::from([anchor.id.clone()]),
            items: Vec::new(),
            limit,
            more: false,
        };
        if let Some(af) = anchor_file {
            for (i, _) in cat.file_all(&af.path) {
                if !out.push(&cat.entry(i).row, "same_file") {
                    break;
                }
            }
            let dir = dir_of(&af.path);
            let same_module = |f: &FileInfo| f.id != af.id && dir_of(&f.path) == dir;
            let same_package = |f: &FileInfo| {
                !af.package.is_empty() && f.package == af.package && dir_of(&f.path) != dir
            };
            let scopes: [(&str, FileFilter<'_>); 2] = [
                ("same_module", &same_module),
                ("same_package", &same_package),
            ];
            let wanted = match input.scope {
                RelatedScope::File => 0,
                RelatedScope::Module => 1,
                RelatedScope::Package => 2,
            };
            'scopes: for (relation, keep) in scopes.iter().take(wanted) {
                // Top-level definitions of the other files.
                for f in files.iter().filter(|f| keep(f)) {
                    for &i in cat.file_top(&f.path) {
                        if !out.push(&cat.entry(i).row, relation) {
                            break 'scopes;
                        }
                    }
                }
            }
            if !out.more {
                for (row, _line) in c.graph.imported_symbols(&af.id)? {
                    if !out.push(&row, "imported") {
                        break;
                    }
                }
            }
        }
        let (related, more) = (out.items, out.more);
        let scope_used = match input.scope {
            RelatedScope::File => "file",
            RelatedScope::Module => "module",
            RelatedScope::Package => "package",
        };
        let body = RelatedAnswer {
            anchor: Anchor {
                symbol_id: anchor.id.clone(),
                symbol_stable_id: anchor.stable_id.clone(),
                name: anchor.name.clone(),
                kind: anchor.kind.clone(),
                qualified_name: anchor.qualified_name.clone(),
                path: anchor.path.clone(),
                line_start: anchor.line_start,
            },
            total_found: related.len(),
            related,
            scope_used: scope_used.into(),
            has_more: more,
            metadata: Metadata::default(),
        };
        Ok((body, if more { "truncated" } else { "complete" }))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

type FileFilter<'a> = &'a dyn Fn(&FileInfo) -> bool;

/// Related symbols in priority order, each once, up to a limit.
struct Related {
    seen: HashSet<String>,
    items: Vec<RelatedSymbol>,
    limit: usize,
    more: bool,
}

impl Related {
    /// Adds `row` unless seen; false once the limit is reached (and more exist).
    fn push(&mut self, row: &SymbolRow, relation: &str) -> bool {
        if !self.seen.insert(row.id.clone()) {
            return true;
        }
        if self.items.len() >= self.limit {
            self.more = true;
            return false;
        }
        self.items.push(RelatedSymbol {
            symbol: SymbolRef::from(row),
            relation: relation.into(),
        });
        true
    }
}

// ---------------------------------------------------------------------------
// locate_symbol

pub fn locate_symbol(svc: &Service, input: LocateInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let name = non_empty("name", &input.name)?;
        let under = clean_opt_path(input.path.as_deref())?;
        let limit = limit(input.limit, 10, 500)?;
        let cat = c.catalog()?;
        let mut found = cat.find(name, None);
        let mut exact = true;
        if found.is_empty() {
            exact = false;
            found = cat
                .named_ignoring_case(crate::model::names::last_segment(name))
                .iter()
                .map(|&i| cat.entry(i).row.clone())
                .collect();
        }
        found.retain(|s| {
            input.kind.as_deref().is_none_or(|k| s.kind == k)
                && input
                    .language
                    .as_deref()
                    .is_none_or(|l| s.language.eq_ignore_ascii_case(l))
                && under
                    .as_deref()
                    .is_none_or(|u| s.path == u || s.path.starts_with(&format!("{u}/")))
        });
        let mut scored: Vec<(f64, SymbolRow)> = found
            .into_iter()
            .map(|s| {
                let n = cat.by_id(&s.id).map_or(0, |i| cat.imported_by(i));
                (locate_score(&s, exact, n), s)
            })
            .collect();
        let mut how = if exact { "exact" } else { "ignoring_case" };
        if scored.is_empty() {
            // No definition has that name: the best search hits instead.
            how = "search";
            let s = search_state(&c)?;
            let filters = Filters {
                language: input.language.as_deref(),
                kind: input.kind.as_deref(),
                path_prefix: under.as_deref(),
            };
            scored = s
                .index
                .search(&s.catalog, name, &filters, limit)
                .map_err(ToolError::internal)?
                .into_iter()
                .map(|h| (f64::from(h.score), s.catalog.entry(h.entry).row.clone()))
                .collect();
        }
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.path.cmp(&b.1.path))
                .then_with(|| a.1.line_start.cmp(&b.1.line_start))
        });
        let total = scored.len();
        let results: Vec<LocatedSymbol> = scored
            .iter()
            .take(limit)
            .map(|(score, s)| LocatedSymbol {
                symbol: SymbolRef::from(s),
                visibility: s.visibility.clone(),
                doc: first_line(&s.doc).to_string(),
                score: (score * 1000.0).round() / 1000.0,
            })
            .collect();
        let completeness = if total > limit {
            "truncated"
        } else {
            "complete"
        };
        Ok((
            LocateAnswer {
                results,
                total_found: total,
                exact,
                how: how.into(),
                metadata: Metadata::default(),
            },
            completeness,
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// Definitions over declarations and tests: exact names first, types over the
/// impl blocks that repeat their names, code over tests, vendored and generated files.
/// Among same-named definitions, one that many files import comes first.
fn locate_score(s: &SymbolRow, exact: bool, imported_by: u32) -> f64 {
    let mut score = if exact { 1.0 } else { 0.8 };
    score *= 1.0 + 0.05 * (1.0 + f64::from(imported_by)).ln();
    if s.kind == "impl" {
        score *= 0.9;
    }
    if is_secondary_path(&s.path) {
        score *= 0.5;
    }
    score
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

// ---------------------------------------------------------------------------
// get_file_outline

pub fn get_file_outline(svc: &Service, input: OutlineInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let path = clean_path(non_empty("path", &input.path)?)?;
        let files = c.files()?;
        let Some(file) = files
            .binary_search_by(|f| f.path.as_str().cmp(&path))
            .ok()
            .map(|i| &files[i])
        else {
            return Err(ToolError::file_not_found(
                &path,
                &c.served.name,
                &c.ref_name,
            ));
        };
        let symbols = c.catalog()?.file_symbols(&file.path, &file.id);
        let count = symbols.len();
        let tree = outline_tree(&file.id, &symbols);
        Ok((
            OutlineAnswer {
                path: file.path.clone(),
                language: file.language.clone(),
                module: file.module.clone(),
                package: file.package.clone(),
                line_count: file.line_count,
                symbol_count: count,
                symbols: tree,
                metadata: Metadata::default(),
            },
            "complete",
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

fn outline_tree(parent: &str, all: &[FileSymbol]) -> Vec<OutlineNode> {
    let mut by_parent: HashMap<&str, Vec<&FileSymbol>> = HashMap::new();
    for s in all {
        by_parent.entry(s.parent_id.as_str()).or_default().push(s);
    }
    fn build(
        id: &str,
        by_parent: &HashMap<&str, Vec<&FileSymbol>>,
        seen: &mut HashSet<String>,
    ) -> Vec<OutlineNode> {
        let Some(children) = by_parent.get(id) else {
            return Vec::new();
        };
        let fresh: Vec<&&FileSymbol> = children
            .iter()
            .filter(|s| seen.insert(s.symbol.id.clone()))
            .collect();
        fresh
            .into_iter()
            .map(|s| OutlineNode {
                symbol_id: s.symbol.id.clone(),
                name: s.symbol.name.clone(),
                kind: s.symbol.kind.clone(),
                qualified_name: s.symbol.qualified_name.clone(),
                signature: s.symbol.signature.clone(),
                visibility: s.symbol.visibility.clone(),
                line_start: s.symbol.line_start,
                line_end: s.symbol.line_end,
                children: build(&s.symbol.id, by_parent, seen),
            })
            .collect()
    }
    build(parent, &by_parent, &mut HashSet::new())
}

// ---------------------------------------------------------------------------
// explore_tree and get_node

/// Node ids: `dir:{path}`, `file:{path}`, `{kind}:{path}:{qualified_name}`, with
/// `#n` appended for the n-th (n ≥ 2) symbol of the same kind and qualified name
/// in a file (a Rust type's several impl blocks).
fn node_id(cat: &Catalog, i: usize) -> String {
    let row = &cat.entry(i).row;
    let base = format!("{}:{}:{}", row.kind, row.path, row.qualified_name);
    let n = 1 + cat
        .named(&row.name)
        .iter()
        .take_while(|&&j| j != i)
        .filter(|&&j| {
            let o = &cat.entry(j).row;
            o.kind == row.kind && o.path == row.path && o.qualified_name == row.qualified_name
        })
        .count();
    if n == 1 { base } else { format!("{base}#{n}") }
}

struct TreeBuild<'a> {
    cat: &'a Catalog,
    detail: Detail,
    max_depth: usize,
    limit: usize,
    nodes: usize,
    truncated: bool,
    files_shown: usize,
}

impl TreeBuild<'_> {
    fn room(&mut self) -> bool {
        if self.nodes >= self.limit {
            self.truncated = true;
            false
        } else {
            self.nodes += 1;
            true
        }
    }
    /// Whether nodes at `level` have their children shown.
    fn expands(&self, level: usize) -> bool {
        (self.max_depth == 0 || level < self.max_depth) && level < catalog::MAX_DEPTH
    }

    fn symbol_node(&mut self, i: usize, level: usize) -> Option<TreeNode> {
        if !self.room() {
            return None;
        }
        let cat = self.cat;
        let row = &cat.entry(i).row;
        let max = self.detail == Detail::Max;
        let mut node = TreeNode {
            node_id: node_id(cat, i),
            name: row.name.clone(),
            node_type: row.kind.clone(),
            qualified_name: max.then(|| row.qualified_name.clone()),
            signature: max.then(|| row.signature.clone()),
            line: max.then_some(row.line_start),
            line_end: max.then_some(row.line_end),
            ..TreeNode::default()
        };
        if self.expands(level) {
            node.children = cat
                .entry(i)
                .children
                .iter()
                .map_while(|&c| self.symbol_node(c, level + 1))
                .collect();
        }
        Some(node)
    }

    fn file_node(
        &mut self,
        f: &FileInfo,
        level: usize,
        only: Option<&[usize]>,
    ) -> Option<TreeNode> {
        if !self.room() {
            return None;
        }
        self.files_shown += 1;
        let max = self.detail == Detail::Max;
        let mut node = TreeNode {
            node_id: format!("file:{}", f.path),
            name: f.path.rsplit('/').next().unwrap_or(&f.path).to_string(),
            node_type: "file".into(),
            path: Some(f.path.clone()),
            language: max.then(|| f.language.clone()),
            line_count: max.then_some(f.line_count),
            ..TreeNode::default()
        };
        if self.expands(level) {
            let cat = self.cat;
            let top: &[usize] = only.unwrap_or_else(|| cat.file_top(&f.path));
            node.children = top
                .iter()
                .map_while(|&i| self.symbol_node(i, level + 1))
                .collect();
        }
        Some(node)
    }

    fn dir_node(&mut self, dir: &str, files: &[FileInfo], level: usize) -> Option<TreeNode> {
        if !self.room() {
            return None;
        }
        let mut node = TreeNode {
            node_id: format!("dir:{dir}"),
            name: dir.rsplit('/').next().unwrap_or(dir).to_string(),
            node_type: "dir".into(),
            path: Some(dir.to_string()),
            ..TreeNode::default()
        };
        if self.expands(level) {
            node.children = self.dir_children(dir, files, level + 1);
        }
        Some(node)
    }

    /// The entries directly in `dir` ("" = the root) at `level`: directories first.
    fn dir_children(&mut self, dir: &str, files: &[FileInfo], level: usize) -> Vec<TreeNode> {
        let (subdirs, direct) = entries(dir, files);
        let mut out = Vec::new();
        for d in subdirs {
            match self.dir_node(&d, files, level) {
                Some(n) => out.push(n),
                None => return out,
            }
        }
        for f in direct {
            match self.file_node(f, level, None) {
                Some(n) => out.push(n),
                None => return out,
            }
        }
        out
    }
}

/// Subdirectories and files directly inside `dir` ("" = root), each sorted.
fn entries<'a>(dir: &str, files: &'a [FileInfo]) -> (Vec<String>, Vec<&'a FileInfo>) {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut subdirs: Vec<String> = Vec::new();
    let mut direct = Vec::new();
    let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
    for f in &files[start..] {
        let Some(rest) = f.path.strip_prefix(&prefix) else {
            break;
        };
        match rest.split_once('/') {
            Some((sub, _)) => {
                let d = format!("{prefix}{sub}");
                if subdirs.last() != Some(&d) {
                    subdirs.push(d);
                }
            }
            None => direct.push(f),
        }
    }
    subdirs.dedup();
    (subdirs, direct)
}

pub fn explore_tree(svc: &Service, input: ExploreInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let raw = input.pattern.clone().unwrap_or_else(|| ".".into());
        let pattern = clean_path(&raw)?;
        let max_depth = match input.max_depth {
            None => 2,
            Some(d) if d >= 0 => d as usize,
            Some(d) => {
                return Err(ToolError::invalid_input(format!(
                    "max_depth must be 0 or more, not {d}"
                )));
            }
        };
        let limit = limit(input.limit, 500, 5000)?;
        let files = c.files()?;
        let cat = c.catalog()?;
        let is_file = files
            .binary_search_by(|f| f.path.as_str().cmp(&pattern))
            .ok();
        let dir_prefix = format!("{pattern}/");
        let is_dir = pattern.is_empty()
            || files[files.partition_point(|f| f.path.as_str() < dir_prefix.as_str())..]
                .first()
                .is_some_and(|f| f.path.starts_with(&dir_prefix));
        let mut build = TreeBuild {
            cat: &cat,
            detail: input.detail,
            max_depth,
            limit,
            nodes: 0,
            truncated: false,
            files_shown: 0,
        };
        let (mode, tree): (&str, Vec<TreeNode>) = if let Some(i) = is_file {
            (
                "path",
                build.file_node(&files[i], 0, None).into_iter().collect(),
            )
        } else if pattern.is_empty() {
            ("path", build.dir_children("", &files, 1))
        } else if is_dir {
            (
                "path",
                build.dir_node(&pattern, &files, 0).into_iter().collect(),
            )
        } else {
            let needle = raw.trim().to_lowercase();
            if needle.is_empty() {
                return Err(ToolError::invalid_input("`pattern` must not be empty"));
            }
            ("search", search_tree(&mut build, &files, &needle))
        };
        let body = TreeAnswer {
            tree,
            meta: TreeMeta {
                total_nodes: build.nodes,
                total_files: build.files_shown,
                pattern: raw,
                mode: mode.into(),
                depth: max_depth,
                truncated: build.truncated,
            },
            metadata: Metadata::default(),
        };
        Ok((
            body,
            if build.truncated {
                "truncated"
            } else {
                "complete"
            },
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// A name search: each file whose name matches, whole; otherwise, per file, the
/// matching symbols (outermost ones: a match inside a match shows in its subtree).
fn search_tree(build: &mut TreeBuild<'_>, files: &[FileInfo], needle: &str) -> Vec<TreeNode> {
    let cat = build.cat;
    let hits: HashSet<usize> = cat.matching(needle, 1000).into_iter().collect();
    let mut by_path: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut outer: Vec<usize> = hits
        .iter()
        .copied()
        .filter(|&i| !cat.ancestors(i).iter().any(|a| hits.contains(a)))
        .collect();
    outer.sort_unstable();
    for i in outer {
        by_path
            .entry(cat.entry(i).row.path.as_str())
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for f in files {
        let name_hit = f
            .path
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_lowercase()
            .contains(needle);
        let matched = by_path.get(f.path.as_str());
        if !name_hit && matched.is_none() {
            continue;
        }
        let node = if name_hit {
            build.file_node(f, 0, None)
        } else {
            build.file_node(f, 0, matched.map(Vec::as_slice))
        };
        match node {
            Some(n) => out.push(n),
            None => break,
        }
    }
    out
}

pub fn get_node(svc: &Service, input: NodeInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let node_id = non_empty("node_id", &input.node_id)?;
        let Some((kind, rest)) = node_id.split_once(':') else {
            return Err(ToolError::invalid_input(format!(
                "`{node_id}` is not a node id; expected `{{type}}:{{path}}[:{{symbol}}]` as explore_tree gives"
            )));
        };
        let files = c.files()?;
        let find_file = |p: &str| {
            files
                .binary_search_by(|f| f.path.as_str().cmp(p))
                .ok()
                .map(|i| &files[i])
        };
        match kind {
            "dir" => {
                let dir = clean_path(rest)?;
                let (subdirs, direct) = entries(&dir, &files);
                if subdirs.is_empty() && direct.is_empty() {
                    return Err(ToolError::node_not_found(node_id));
                }
                let children: Vec<String> = subdirs
                    .iter()
                    .map(|d| format!("dir:{d}"))
                    .chain(direct.iter().map(|f| format!("file:{}", f.path)))
                    .collect();
                Ok((
                    NodeAnswer {
                        node_id: node_id.to_string(),
                        name: dir.rsplit('/').next().unwrap_or(&dir).to_string(),
                        node_type: "dir".into(),
                        content: children.join("\n"),
                        children: Some(children),
                        path: dir,
                        line_start: None,
                        line_end: None,
                        metadata: Metadata::default(),
                    },
                    "complete",
                ))
            }
            "file" => {
                let path = clean_path(rest)?;
                let Some(f) = find_file(&path) else {
                    return Err(ToolError::node_not_found(node_id));
                };
                let (text, stale) = read_source(&c.root(), f)?;
                let meta = NodeMeta {
                    language: Some(f.language.clone()),
                    module: Some(f.module.clone()),
                    package: Some(f.package.clone()),
                    ..NodeMeta::default()
                };
                Ok((
                    NodeAnswer {
                        node_id: node_id.to_string(),
                        name: path.rsplit('/').next().unwrap_or(&path).to_string(),
                        node_type: "file".into(),
                        path: path.clone(),
                        line_start: Some(1),
                        line_end: Some(f.line_count),
                        content: text,
                        children: None,
                        metadata: stale_if(Metadata::with(meta), stale),
                    },
                    "complete",
                ))
            }
            _ => {
                // The path ends at the first `:` after which a known file path stops.
                let (path, qn) = rest
                    .match_indices(':')
                    .map(|(i, _)| (&rest[..i], &rest[i + 1..]))
                    .find(|(p, _)| find_file(p).is_some())
                    .ok_or_else(|| ToolError::node_not_found(node_id))?;
                let (qn, nth) = match qn.rsplit_once('#') {
                    Some((q, n)) if n.parse::<usize>().is_ok_and(|n| n >= 2) => {
                        (q, n.parse::<usize>().unwrap_or(1))
                    }
                    _ => (qn, 1),
                };
                let Some(f) = find_file(path) else {
                    return Err(ToolError::node_not_found(node_id));
                };
                let cat = c.catalog()?;
                let Some(entry) = cat
                    .file_all(&f.path)
                    .into_iter()
                    .map(|(i, _)| i)
                    .filter(|&i| {
                        let row = &cat.entry(i).row;
                        row.kind == kind && row.qualified_name == qn
                    })
                    .nth(nth - 1)
                    .map(|i| cat.entry(i))
                else {
                    return Err(ToolError::node_not_found(node_id));
                };
                let (row, start, end) = (&entry.row, entry.byte_start, entry.byte_end);
                let (text, stale) = read_source(&c.root(), f)?;
                let content = text
                    .get(start.min(text.len())..end.min(text.len()))
                    .unwrap_or("")
                    .to_string();
                let meta = NodeMeta {
                    signature: Some(row.signature.clone()),
                    docstring: Some(row.doc.clone()),
                    language: Some(row.language.clone()),
                    qualified_name: Some(row.qualified_name.clone()),
                    visibility: Some(row.visibility.clone()),
                    symbol_id: Some(row.id.clone()),
                    symbol_stable_id: Some(row.stable_id.clone()),
                    ..NodeMeta::default()
                };
                Ok((
                    NodeAnswer {
                        node_id: node_id.to_string(),
                        name: row.name.clone(),
                        node_type: row.kind.clone(),
                        path: row.path.clone(),
                        line_start: Some(row.line_start),
                        line_end: Some(row.line_end),
                        content,
                        children: None,
                        metadata: stale_if(Metadata::with(meta), stale),
                    },
                    "complete",
                ))
            }
        }
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// A node read from a file that changed since it was indexed says so.
fn stale_if(mut meta: Metadata<NodeMeta>, stale: bool) -> Metadata<NodeMeta> {
    if stale {
        meta.protocol.freshness_override = Some("stale");
        meta.extra.warning = Some(
            "the file changed since it was indexed: lines and content may not match; re-index"
                .into(),
        );
    }
    meta
}

/// Reads an indexed file from the working tree, refusing anything that resolves
/// outside the repository (a path replaced by a symlink since indexing). Returns
/// the text and whether it differs from what was indexed.
fn read_source(root: &Path, f: &FileInfo) -> Result<(String, bool), ToolError> {
    let root = root.canonicalize().map_err(ToolError::internal)?;
    let full = root.join(&f.path);
    let real = full
        .canonicalize()
        .map_err(|e| ToolError::file_not_found_on_disk(&f.path, e))?;
    if !real.starts_with(&root) {
        return Err(ToolError::invalid_input(format!(
            "{} now resolves outside the repository; refusing to read it",
            f.path
        )));
    }
    let bytes = std::fs::read(&real).map_err(|e| ToolError::file_not_found_on_disk(&f.path, e))?;
    let stale = blake3::hash(&bytes).to_hex().as_str() != f.content_hash;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), stale))
}

/// An indexed file's text for context bodies: as `read_source` but without the
/// staleness hash (the answer's budget matters more than that check here).
fn read_text(root: &Path, path: &str) -> Option<String> {
    let root = root.canonicalize().ok()?;
    let real = root.join(path).canonicalize().ok()?;
    if !real.starts_with(&root) {
        return None;
    }
    std::fs::read_to_string(real).ok()
}

impl ToolError {
    fn file_not_found_on_disk(path: &str, e: std::io::Error) -> ToolError {
        Self::new(
            "file_not_found",
            format!("{path} is indexed but cannot be read now ({e}); re-index"),
            json!({"path": path}),
        )
    }
}

// ---------------------------------------------------------------------------
// search_code and get_code_context

fn search_state(c: &Ctx) -> Result<Arc<crate::service::Search>, ToolError> {
    let root = c.root();
    c.served
        .store
        .search(&c.graph, &c.served.name, &c.ref_name, Some(&root))
        .map_err(ToolError::internal)
}

pub fn search_code(svc: &Service, input: SearchInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let query = non_empty("query", &input.query)?;
        crate::store::search::check_query(query).map_err(ToolError::invalid_input)?;
        let limit = limit(input.limit, 10, 200)?;
        let prefix = clean_opt_path(input.path_prefix.as_deref())?;
        let s = search_state(&c)?;
        let filters = Filters {
            language: input.language.as_deref(),
            kind: input.kind.as_deref(),
            path_prefix: prefix.as_deref(),
        };
        let hits = s
            .index
            .search(&s.catalog, query, &filters, limit)
            .map_err(ToolError::internal)?;
        let results: Vec<SearchHit> = hits
            .iter()
            .map(|h| {
                let entry = s.catalog.entry(h.entry);
                let row = &entry.row;
                SearchHit {
                    symbol: SymbolRef::from(row),
                    doc: first_line(&row.doc).to_string(),
                    score: round3(h.score),
                    // A member comes with its enclosing type's header.
                    parent: entry.parent.map(|p| {
                        let parent = &s.catalog.entry(p).row;
                        ParentHeader {
                            name: parent.name.clone(),
                            kind: parent.kind.clone(),
                            signature: parent.signature.clone(),
                        }
                    }),
                }
            })
            .collect();
        Ok((
            SearchAnswer {
                total_found: results.len(),
                results,
                query: query.to_string(),
                metadata: Metadata::default(),
            },
            "complete",
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

fn round3(x: f32) -> f64 {
    (f64::from(x) * 1000.0).round() / 1000.0
}

/// The contract's token estimate of one item: `ceil(words × 1.3)` over the
/// whitespace-separated pieces of its compact JSON.
pub fn estimate_tokens(item: &impl serde::Serialize) -> usize {
    let mut counter = WordCounter::default();
    // Writing into the counter cannot fail; the JSON is never built as a string.
    let _ = serde_json::to_writer(&mut counter, item);
    counter.flush_pending();
    (counter.words * 13).div_ceil(10)
}

/// Counts what `str::split_whitespace` would yield over the bytes written to it.
#[derive(Default)]
struct WordCounter {
    words: usize,
    in_word: bool,
    /// The start of a character split between two writes.
    pending: Vec<u8>,
}

impl WordCounter {
    fn take_char(&mut self, c: char) {
        if c.is_whitespace() {
            self.in_word = false;
        } else if !self.in_word {
            self.words += 1;
            self.in_word = true;
        }
    }

    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.take_char(char::REPLACEMENT_CHARACTER);
        }
    }
}

impl std::io::Write for WordCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let joined;
        let mut bytes: &[u8] = if self.pending.is_empty() {
            buf
        } else {
            self.pending.extend_from_slice(buf);
            joined = std::mem::take(&mut self.pending);
            &joined
        };
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    text.chars().for_each(|c| self.take_char(c));
                    break;
                }
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    // `valid` is the part just checked to be UTF-8.
                    std::str::from_utf8(valid)
                        .unwrap_or_default()
                        .chars()
                        .for_each(|c| self.take_char(c));
                    match e.error_len() {
                        None => {
                            self.pending.extend_from_slice(rest);
                            break;
                        }
                        Some(n) => {
                            self.take_char(char::REPLACEMENT_CHARACTER);
                            bytes = &rest[n..];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn get_code_context(svc: &Service, input: ContextInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let max_tokens = input.max_tokens.unwrap_or(4000);
        if max_tokens < 1 {
            return Err(ToolError::invalid_max_tokens(max_tokens));
        }
        let strategy = input.strategy.as_deref().unwrap_or("breadth");
        let depth = match strategy {
            "breadth" => false,
            "depth" => true,
            other => return Err(ToolError::invalid_strategy(other)),
        };
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let query = non_empty("query", &input.query)?;
        crate::store::search::check_query(query).map_err(ToolError::invalid_input)?;
        let s = search_state(&c)?;
        let cat = &s.catalog;
        let filters = Filters {
            language: input.language.as_deref(),
            ..Filters::default()
        };
        let hits = s
            .index
            .search(cat, query, &filters, 100)
            .map_err(ToolError::internal)?;
        let files = c.files()?;
        let root = c.root();
        // Each file is read once per call; handing it out is a reference count.
        let mut sources: HashMap<String, Option<std::rc::Rc<str>>> = HashMap::new();
        let mut source_of = |path: &str| -> Option<std::rc::Rc<str>> {
            sources
                .entry(path.to_string())
                .or_insert_with(|| {
                    files
                        .binary_search_by(|f| f.path.as_str().cmp(path))
                        .ok()
                        .and_then(|k| read_text(&root, &files[k].path))
                        .map(std::rc::Rc::from)
                })
                .clone()
        };
        let text_of = |source: &Option<std::rc::Rc<str>>,
                       e: &crate::store::catalog::Entry|
         -> Option<String> {
            source
                .as_deref()
                .and_then(|t| t.get(e.byte_start..e.byte_end.min(t.len())))
                .map(str::to_string)
        };

        // The hits, then (graph expansion) for the best ones: the type enclosing
        // each, and the definitions its file imports that its code mentions.
        let mut candidates: Vec<(usize, f32, Option<Via>)> =
            hits.iter().map(|h| (h.entry, h.score, None)).collect();
        let mut seen: HashSet<usize> = hits.iter().map(|h| h.entry).collect();
        for h in hits.iter().take(EXPAND_HITS) {
            let hit = cat.entry(h.entry);
            if let Some(p) = hit.parent
                && seen.insert(p)
            {
                candidates.push((p, h.score * 0.5, Some(("parent", h.entry))));
            }
            let imports = cat.imports_of(&hit.row.path);
            if imports.is_empty() {
                continue;
            }
            let Some(code) = text_of(&source_of(&hit.row.path), hit) else {
                continue;
            };
            let mut added = 0;
            for &imp in imports {
                if added == EXPAND_IMPORTS {
                    break;
                }
                let target = &cat.entry(imp).row;
                if filters.language.is_some() && target.language != hit.row.language {
                    continue; // the hit passed the filter; its language is the one asked for
                }
                if mentions(&code, &target.name) && seen.insert(imp) {
                    candidates.push((imp, h.score * 0.4, Some(("imported", h.entry))));
                    added += 1;
                }
            }
        }

        let budget = max_tokens as usize;
        let mut used = 0usize;
        let mut items: Vec<ContextItem> = Vec::new();
        for &(i, score, via) in &candidates {
            if used >= budget {
                break;
            }
            let entry = cat.entry(i);
            let row = &entry.row;
            let body = if depth {
                text_of(&source_of(&row.path), entry)
            } else {
                None
            };
            let item = ContextItem {
                symbol: SymbolRef::from(row),
                score: round3(score),
                context_of: via.map(|(_, hit)| cat.entry(hit).row.qualified_name.clone()),
                relation: via.map(|(relation, _)| relation.to_string()),
                body: body.clone(),
                body_truncated: None,
            };
            let cost = estimate_tokens(&item);
            if used + cost <= budget {
                used += cost;
                items.push(item);
                continue;
            }
            // The best candidate's body is cut to fit rather than dropped.
            if let (Some(b), true) = (&body, items.is_empty())
                && let Some((cut, cost)) = cut_to_fit(&item, b, budget - used)
            {
                used += cost;
                items.push(cut);
            }
        }
        let returned = items.len();
        let total = candidates.len();
        let truncated = returned < total;
        let meta = ContextMeta {
            total_candidates: total,
            returned,
            strategy: strategy.to_string(),
            max_tokens: budget,
            remaining_candidates: truncated.then_some(total - returned),
            suggestion: truncated.then(|| {
                if returned == 0 {
                    "No candidate fits this budget: increase max_tokens, or use locate_symbol for specific symbols"
                } else {
                    "Use locate_symbol for specific symbols, or increase max_tokens"
                }
                .to_string()
            }),
        };
        Ok((
            ContextAnswer {
                context_items: items,
                estimated_tokens: used,
                truncated,
                metadata: Metadata::with(meta),
            },
            if truncated { "partial" } else { "complete" },
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// How a get_code_context candidate came in through the graph: the relation
/// (`parent`, `imported`) and the hit it was reached from.
type Via = (&'static str, usize);

/// How many of the best hits get_code_context expands through the graph, and how
/// many imported definitions it adds per hit.
const EXPAND_HITS: usize = 5;
const EXPAND_IMPORTS: usize = 3;

/// Whether `code` uses the identifier `name` (a whole word, not part of a longer one).
fn mentions(code: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// `base` with the longest head of `body` (whole lines) that keeps the item within
/// `room` tokens, marked as cut; `None` if not even the first line fits.
fn cut_to_fit(base: &ContextItem, body: &str, room: usize) -> Option<(ContextItem, usize)> {
    let lines: Vec<&str> = body.lines().collect();
    let make = |n: usize| {
        let mut text = lines[..n].join("\n");
        text.push_str("\n… [cut to fit max_tokens]");
        ContextItem {
            body: Some(text),
            body_truncated: Some(true),
            ..base.clone()
        }
    };
    let (mut lo, mut hi) = (0usize, lines.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if estimate_tokens(&make(mid)) <= room {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return None;
    }
    let item = make(lo);
    let cost = estimate_tokens(&item);
    Some((item, cost))
}

// ---------------------------------------------------------------------------
// run_cypher and index_status

pub fn run_cypher(svc: &Service, input: CypherInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = ctx(svc, repo.as_deref(), rf.as_deref())?;
        let query = non_empty("query", &input.query)?;
        if query.len() > MAX_CYPHER_BYTES {
            return Err(ToolError::invalid_input(format!(
                "the query is {} bytes; at most {MAX_CYPHER_BYTES} are accepted",
                query.len()
            )));
        }
        let max_rows = limit(input.limit, 100, svc.cfg.max_rows)?;
        let mut params: Vec<(String, Value)> = input
            .params
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect();
        for (name, value) in [("repo", &c.served.name), ("ref", &c.ref_name)] {
            if query.contains(&format!("${name}")) && !params.iter().any(|(k, _)| k == name) {
                params.push((name.to_string(), json!(value)));
            }
        }
        let store = &c.served.store;
        let request = cypher::Request {
            query: query.to_string(),
            params,
            max_rows,
            timeout_ms: svc.cfg.query_timeout_ms,
            max_bytes: store.cypher.limits().max_answer_bytes,
        };
        let (answer, source) = store.cypher.run(&request).map_err(ToolError::adhoc)?;
        let n = answer.rows.len();
        let behind = source.version != store.version();
        let mut body = CypherAnswer {
            columns: answer.columns,
            rows: answer.rows,
            row_count: n,
            truncated: answer.truncated,
            snapshot_behind: behind,
            metadata: Metadata::default(),
        };
        // Read from a snapshot older than what the other tools read: say so.
        if behind {
            body.metadata.protocol.freshness_override = Some("syncing");
        }
        Ok((
            body,
            if answer.truncated {
                "truncated"
            } else {
                "complete"
            },
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// Longest `run_cypher` query accepted.
const MAX_CYPHER_BYTES: usize = 64 * 1024;

pub fn index_status(svc: &Service, input: StatusInput) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let repos: Vec<&Arc<Served>> = match repo.as_deref() {
            Some(name) => vec![
                svc.repo(Some(name))
                    .ok_or_else(|| ToolError::repo_not_found(Some(name), svc.repo_names()))?,
            ],
            None => svc.repos.iter().collect(),
        };
        let list: Vec<RepoStatus> = repos.iter().map(|s| repo_status(svc, s)).collect();
        Ok((
            StatusAnswer {
                repos: list,
                metadata: Metadata::default(),
            },
            "complete",
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// One served repo as `index_status` shows it.
fn repo_status(svc: &Service, s: &Served) -> RepoStatus {
    let (phase, done, total) = s.progress.snapshot();
    let status = s.status();
    let refs = s
        .store
        .refs()
        .into_iter()
        .filter(|r| r.repo == s.name)
        .map(|r| RefStatusAnswer {
            source: if r.ref_name == s.ref_name {
                "working_tree"
            } else {
                "git"
            }
            .into(),
            freshness_status: s.freshness(&r.ref_name).as_str().into(),
            ref_name: r.ref_name,
            commit: r.commit,
            last_indexed: r.indexed_at,
            files: r.files,
            symbols: r.symbols,
            import_edges: r.import_edges,
            unresolved_imports: r.unresolved_imports,
        })
        .collect();
    RepoStatus {
        repo: s.name.clone(),
        root: s.root.to_string_lossy().into_owned(),
        data_dir: s.store.data.root().to_string_lossy().into_owned(),
        default_ref: s.ref_name.clone(),
        watching: svc.cfg.watch && s.watch_error().is_none(),
        cypher_sandbox: s.store.cypher.sandbox(),
        watch_error: s.watch_error(),
        indexing_status: status.as_str().into(),
        error: s.error(),
        job: (status == IndexingStatus::Indexing).then_some(JobStatus { phase, done, total }),
        last_run: s.last_run().map(|l| LastRun {
            parsed_files: l.parsed,
            removed_files: l.removed,
            diagnostics: l.diagnostics,
            seconds: (l.seconds * 1000.0).round() / 1000.0,
        }),
        refs,
    }
}

#[cfg(test)]
mod tests {
    use super::{WordCounter, estimate_tokens};
    use serde_json::json;
    use std::io::Write;

    #[test]
    fn the_token_estimate_counts_the_words_of_the_compact_json() {
        let items = [
            json!({"name": "validate", "signature": "fn validate(&self, token: &str) -> bool"}),
            json!({"body": "def f():\n\treturn  1\u{a0}+\u{3000}2 # é ü 中文", "n": 3}),
            json!({"s": " leading and trailing ", "empty": "", "list": [1, 2, "a b"]}),
        ];
        for item in &items {
            let words = item.to_string().split_whitespace().count();
            assert_eq!(estimate_tokens(item), (words * 13).div_ceil(10), "{item}");
        }
    }

    #[test]
    fn a_character_split_between_writes_is_counted_once() {
        // "a\u{3000}b": the ideographic space (3 bytes) arrives in two writes.
        let text = "a\u{3000}b";
        let (head, tail) = text.as_bytes().split_at(2);
        let mut counter = WordCounter::default();
        counter.write_all(head).expect("write");
        counter.write_all(tail).expect("write");
        counter.flush_pending();
        assert_eq!(counter.words, 2);
    }
}
