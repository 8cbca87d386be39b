//! What each tool answers, as types: every answer is a `Serialize + JsonSchema`
//! struct, so `tools/list` can advertise its `outputSchema` and a client can
//! check what it gets. Field names and shapes are the wire format of CONTRACT.md
//! section 3 (JSON objects are written with sorted keys, as before the types).
//!
//! Every answer carries `metadata` (protocol v1). The tool fills its own part
//! (`Metadata::extra`, and a freshness it knows better); `finish` in `tools.rs`
//! fills the protocol fields, in one place for every tool.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::store::graph::SymbolRow;

/// Protocol v1 metadata, on every answer and every error.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ProtocolMeta {
    pub cruxe_protocol_version: String,
    /// `fresh`, `stale` or `syncing`.
    pub freshness_status: String,
    /// `not_indexed`, `indexing`, `ready` or `failed`.
    pub indexing_status: String,
    /// `complete`, `partial` or `truncated`.
    pub result_completeness: String,
    pub repo: Option<String>,
    #[serde(rename = "ref")]
    pub ref_name: Option<String>,
    /// `compatible`, `not_indexed` or `reindex_required`.
    pub schema_status: String,
    /// A freshness the tool knows better than the service (a file that changed
    /// since it was indexed, a snapshot behind the graph).
    #[serde(skip)]
    #[schemars(skip)]
    pub freshness_override: Option<&'static str>,
}

/// No metadata beyond protocol v1.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct NoExtra {}

/// An answer's `metadata`: protocol v1 and what the tool adds.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Metadata<X = NoExtra> {
    #[serde(flatten)]
    pub protocol: ProtocolMeta,
    #[serde(flatten)]
    pub extra: X,
}

impl<X> Metadata<X> {
    pub fn with(extra: X) -> Metadata<X> {
        Metadata {
            protocol: ProtocolMeta::default(),
            extra,
        }
    }
}

/// An answer of a tool: its metadata can be filled in.
pub trait Answer: Serialize + JsonSchema {
    fn protocol(&mut self) -> &mut ProtocolMeta;
}

macro_rules! answers {
    ($($t:ty),* $(,)?) => {
        $(impl Answer for $t {
            fn protocol(&mut self) -> &mut ProtocolMeta {
                &mut self.metadata.protocol
            }
        })*
    };
}

answers!(
    HierarchyAnswer,
    RelatedAnswer,
    LocateAnswer,
    OutlineAnswer,
    TreeAnswer,
    NodeAnswer,
    SearchAnswer,
    ContextAnswer,
    CypherAnswer,
    StatusAnswer,
    ErrorAnswer,
);

/// A tool's error (`isError: true`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorAnswer {
    pub error: ErrorBody,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// One of CONTRACT.md's error codes.
    pub code: String,
    pub message: String,
    pub data: Value,
}

/// A symbol as most answers show it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SymbolRef {
    pub symbol_id: String,
    pub symbol_stable_id: String,
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub path: String,
    pub line_start: i64,
    pub line_end: i64,
    pub signature: String,
    pub language: String,
}

impl From<&SymbolRow> for SymbolRef {
    fn from(s: &SymbolRow) -> SymbolRef {
        SymbolRef {
            symbol_id: s.id.clone(),
            symbol_stable_id: s.stable_id.clone(),
            name: s.name.clone(),
            kind: s.kind.clone(),
            qualified_name: s.qualified_name.clone(),
            path: s.path.clone(),
            line_start: s.line_start,
            line_end: s.line_end,
            signature: s.signature.clone(),
            language: s.language.clone(),
        }
    }
}

impl From<crate::store::catalog::Entry<'_>> for SymbolRef {
    fn from(e: crate::store::catalog::Entry<'_>) -> SymbolRef {
        SymbolRef {
            symbol_id: e.id(),
            symbol_stable_id: e.stable_id(),
            name: e.name().to_string(),
            kind: e.kind().to_string(),
            qualified_name: e.qualified_name().to_string(),
            path: e.path().to_string(),
            line_start: e.line_start(),
            line_end: e.line_end(),
            signature: e.signature().to_string(),
            language: e.language().to_string(),
        }
    }
}

// ---------------------------------------------------------------------------
// get_symbol_hierarchy

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HierarchyAnswer {
    /// Ancestors: the symbol (depth 0) and its enclosing symbols, nearest first.
    /// Descendants: one tree rooted at the symbol.
    pub hierarchy: Vec<HierarchyNode>,
    /// `ancestors` or `descendants`.
    pub direction: String,
    /// Symbols in `hierarchy` (all levels).
    pub chain_length: usize,
    /// The file holding the chain (ancestors only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HierarchyNode {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    pub depth: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<HierarchyNode>,
}

// ---------------------------------------------------------------------------
// find_related_symbols

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelatedAnswer {
    pub anchor: Anchor,
    pub related: Vec<RelatedSymbol>,
    /// `file`, `module` or `package`.
    pub scope_used: String,
    pub total_found: usize,
    pub has_more: bool,
    pub metadata: Metadata,
}

/// The symbol the related ones are related to.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Anchor {
    pub symbol_id: String,
    pub symbol_stable_id: String,
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub path: String,
    pub line_start: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelatedSymbol {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// `same_file`, `same_module`, `same_package` or `imported`.
    pub relation: String,
}

// ---------------------------------------------------------------------------
// locate_symbol

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocateAnswer {
    pub results: Vec<LocatedSymbol>,
    pub total_found: usize,
    pub exact: bool,
    /// How the name matched: `exact`, `ignoring_case`, or `search` (no
    /// definition has that name: the best search hits).
    #[serde(rename = "match")]
    pub how: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocatedSymbol {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    pub visibility: String,
    /// The doc comment's first line.
    pub doc: String,
    pub score: f64,
}

// ---------------------------------------------------------------------------
// get_file_outline

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutlineAnswer {
    pub path: String,
    pub language: String,
    pub module: String,
    pub package: String,
    pub line_count: i64,
    pub symbol_count: usize,
    pub symbols: Vec<OutlineNode>,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutlineNode {
    pub symbol_id: String,
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub signature: String,
    pub visibility: String,
    pub line_start: i64,
    pub line_end: i64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineNode>,
}

// ---------------------------------------------------------------------------
// explore_tree

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TreeAnswer {
    /// The tree (a path pattern) or the matches (a name), as nodes.
    pub tree: Vec<TreeNode>,
    pub meta: TreeMeta,
    pub metadata: Metadata,
}

/// What the tree answer says about itself besides its nodes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TreeMeta {
    pub total_nodes: usize,
    pub total_files: usize,
    pub pattern: String,
    /// `path` or `search`.
    pub mode: String,
    pub depth: usize,
    pub truncated: bool,
}

/// A directory, file or symbol node (`node_id` reads it with `get_node`).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TreeNode {
    pub node_id: String,
    pub name: String,
    /// `dir`, `file`, or the symbol's kind.
    #[serde(rename = "type")]
    pub node_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_end: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<TreeNode>,
}

// ---------------------------------------------------------------------------
// get_node

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NodeAnswer {
    pub node_id: String,
    pub name: String,
    /// `dir`, `file`, or the symbol's kind.
    #[serde(rename = "type")]
    pub node_type: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_start: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_end: Option<i64>,
    /// The source of a file or symbol; a directory's entries, one a line.
    pub content: String,
    /// A directory's entries (node ids).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<String>>,
    pub metadata: Metadata<NodeMeta>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct NodeMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docstring: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol_stable_id: Option<String>,
    /// The file changed since it was indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

// ---------------------------------------------------------------------------
// search_code

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchAnswer {
    pub results: Vec<SearchHit>,
    pub total_found: usize,
    pub query: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchHit {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// The doc comment's first line.
    pub doc: String,
    pub score: f64,
    /// A member's enclosing type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentHeader>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ParentHeader {
    pub name: String,
    pub kind: String,
    pub signature: String,
}

// ---------------------------------------------------------------------------
// get_code_context

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContextAnswer {
    /// Items in rank order; their token estimates sum to `estimated_tokens`.
    pub context_items: Vec<ContextItem>,
    pub estimated_tokens: usize,
    pub truncated: bool,
    pub metadata: Metadata<ContextMeta>,
}

/// One symbol of a context answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContextItem {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    pub score: f64,
    /// For a symbol added through the graph: the hit it is context of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_of: Option<String>,
    /// `parent` or `imported`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// The source (strategy `depth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The body was cut to fit `max_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_truncated: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ContextMeta {
    pub total_candidates: usize,
    pub returned: usize,
    /// `breadth` or `depth`.
    pub strategy: String,
    pub max_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining_candidates: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

// ---------------------------------------------------------------------------
// run_cypher

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CypherAnswer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub row_count: usize,
    pub truncated: bool,
    /// The query read a snapshot older than what the other tools answer from.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub snapshot_behind: bool,
    pub metadata: Metadata,
}

// ---------------------------------------------------------------------------
// index_status

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusAnswer {
    pub repos: Vec<RepoStatus>,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RepoStatus {
    pub repo: String,
    pub root: String,
    pub data_dir: String,
    pub default_ref: String,
    pub watching: bool,
    pub watch_error: Option<String>,
    /// The walls `run_cypher`'s workers run in, once one has started.
    pub cypher_sandbox: Option<String>,
    pub indexing_status: String,
    pub error: Option<String>,
    pub job: Option<JobStatus>,
    pub last_run: Option<LastRun>,
    pub refs: Vec<RefStatusAnswer>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct JobStatus {
    pub phase: String,
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LastRun {
    pub parsed_files: usize,
    pub removed_files: usize,
    pub diagnostics: usize,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefStatusAnswer {
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// `working_tree` or `git`.
    pub source: String,
    pub freshness_status: String,
    pub commit: String,
    pub last_indexed: String,
    pub files: i64,
    pub symbols: i64,
    pub import_edges: i64,
    pub unresolved_imports: i64,
}
