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
    /// On a replica: the generation that answered, when it was published, and
    /// how many newer ones the replica has seen in its store (`cruxe serve
    /// --replica`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generations_behind: Option<u64>,
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
    ReferencesAnswer,
    CallGraphAnswer,
    ImplementationsAnswer,
    ImpactAnswer,
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

/// A symbol as most answers show it. Its `symbol_id` is what the other tools
/// take (`get_node`, the call graph); the long content-hash id is left out of
/// lists (it cost an agent ~40 tokens an item) and shown by `get_node`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SymbolRef {
    pub symbol_id: String,
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
            symbol_id: s.id.to_string(),
            name: s.name.to_string(),
            kind: s.kind.to_string(),
            qualified_name: s.qualified_name.clone(),
            path: s.path.clone(),
            line_start: s.line_start,
            line_end: s.line_end,
            signature: s.signature.clone(),
            language: s.language.to_string(),
        }
    }
}

impl From<crate::store::catalog::Entry<'_>> for SymbolRef {
    fn from(e: crate::store::catalog::Entry<'_>) -> SymbolRef {
        SymbolRef {
            symbol_id: e.id(),
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
    /// Symbols in the whole answer (all levels, all pages).
    pub chain_length: usize,
    /// Symbols on this page.
    pub returned: usize,
    /// Descendants: the tree did not fit `max_tokens`; `next_cursor` gives the rest.
    pub truncated: bool,
    /// Pass as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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
    /// On a page after the first, a symbol whose parent was on an earlier
    /// page: the parent's `symbol_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<HierarchyNode>,
}

impl crate::query::budget::Paged for HierarchyNode {
    fn take_children(&mut self) -> Vec<Self> {
        std::mem::take(&mut self.children)
    }
    fn push_child(&mut self, child: Self) {
        self.children.push(child);
    }
    fn page_id(&self) -> String {
        self.symbol.symbol_id.clone()
    }
    fn set_parent(&mut self, parent: String) {
        self.parent = Some(parent);
    }
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
    /// How it relates, closest first: `parent` (the symbol enclosing the
    /// anchor), `same_type` (a member of that parent, or of the anchor),
    /// `callee`, `caller`, `imported` (by the anchor's file), `same_file`,
    /// `same_module`, `same_package`.
    pub relation: String,
}

// ---------------------------------------------------------------------------
// locate_symbol

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocateAnswer {
    pub results: Vec<LocatedSymbol>,
    /// Definitions found; `results` holds the best that fit `limit` and `max_tokens`.
    pub total_found: usize,
    pub truncated: bool,
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
    /// Symbols in the file; `returned` of them are on this page.
    pub symbol_count: usize,
    pub returned: usize,
    /// Symbols in source order (nested); a page holds what fits `max_tokens`.
    pub symbols: Vec<OutlineNode>,
    pub truncated: bool,
    /// Pass as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub metadata: Metadata,
}

/// A symbol of an outline. Its qualified name is left out: the nesting and
/// the file's module give it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutlineNode {
    pub symbol_id: String,
    pub name: String,
    pub kind: String,
    pub signature: String,
    pub visibility: String,
    pub line_start: i64,
    pub line_end: i64,
    /// On a page after the first, a symbol whose parent was on an earlier
    /// page: the parent's `symbol_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineNode>,
}

impl crate::query::budget::Paged for OutlineNode {
    fn take_children(&mut self) -> Vec<Self> {
        std::mem::take(&mut self.children)
    }
    fn push_child(&mut self, child: Self) {
        self.children.push(child);
    }
    fn page_id(&self) -> String {
        self.symbol_id.clone()
    }
    fn set_parent(&mut self, parent: String) {
        self.parent = Some(parent);
    }
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
    /// Nodes in the whole tree (`total_exact: false`: at least this many; the
    /// tree is built only as far as the cursor plus `limit`).
    pub total_nodes: usize,
    pub total_exact: bool,
    /// Nodes on this page.
    pub returned: usize,
    pub total_files: usize,
    pub pattern: String,
    /// `path` or `search`.
    pub mode: String,
    pub depth: usize,
    pub truncated: bool,
    /// Pass as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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
    /// On a page after the first, a node whose parent was on an earlier page:
    /// the parent's `node_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<TreeNode>,
}

impl crate::query::budget::Paged for TreeNode {
    fn take_children(&mut self) -> Vec<Self> {
        std::mem::take(&mut self.children)
    }
    fn push_child(&mut self, child: Self) {
        self.children.push(child);
    }
    fn page_id(&self) -> String {
        self.node_id.clone()
    }
    fn set_parent(&mut self, parent: String) {
        self.parent = Some(parent);
    }
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
    /// Long content comes in pages of whole lines (`max_tokens`).
    pub content: String,
    /// The lines `content` holds (a directory's: entry numbers), 1-based.
    pub content_line_start: i64,
    pub content_line_end: i64,
    /// Content was left out: from `next_line` on (or a line longer than the
    /// budget, cut).
    pub truncated: bool,
    /// Pass as `line_start` to read on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_line: Option<i64>,
    /// A directory's entries on this page (node ids).
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
    /// Hits found (at most `limit`); `results` holds those that fit `max_tokens`.
    pub total_found: usize,
    pub truncated: bool,
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
    /// `parent`, `imported`, `callee` (the hit calls it) or `caller` (it
    /// calls the hit).
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

// ---------------------------------------------------------------------------
// find_references

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReferencesAnswer {
    /// The definition.
    pub symbol: SymbolRef,
    /// This page of the uses, by file (path order), then line and column.
    pub references: Vec<Reference>,
    /// The files with a use, with how many (all pages; as many as fit a
    /// quarter of `max_tokens`, in path order).
    pub files: Vec<FileCount>,
    /// Files with a use, in all.
    pub total_files: usize,
    /// Uses of the asked kind, all pages.
    pub total: usize,
    /// Sites that name the symbol but that no resolution tier could prove (an
    /// ambiguous name, a receiver of unknown type): not in `references`, so the
    /// list is a lower bound when this is not 0.
    pub unresolved: i64,
    /// `exact` only when no site that could be a use was left unproven, else
    /// `lower_bound`.
    pub completeness: String,
    /// How many such sites (`unresolved` and the others: see `unproven_sites`).
    pub unproven: usize,
    /// The first of them.
    pub unproven_sites: Vec<UnprovenSite>,
    pub truncated: bool,
    /// Pass as `cursor` for the next page.
    pub next_cursor: Option<String>,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Reference {
    pub path: String,
    pub line: i64,
    pub col: i64,
    /// `call`, `import`, or a reference kind: `type`, `value`, `construct`, `extends`, `implements`.
    pub kind: String,
    /// The enclosing function, method or type; null for top-level code and imports.
    pub from: Option<FromSymbol>,
    /// The resolution tier that proved the target (`static` for an import).
    pub confidence: String,
    /// The source line.
    pub text: String,
    /// A call to a trait/interface/base method this symbol implements or
    /// overrides (its qualified name): it may reach this symbol at run time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FromSymbol {
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub line_start: i64,
}

impl From<crate::store::catalog::Entry<'_>> for FromSymbol {
    fn from(e: crate::store::catalog::Entry<'_>) -> FromSymbol {
        FromSymbol {
            name: e.name().to_string(),
            qualified_name: e.qualified_name().to_string(),
            kind: e.kind().to_string(),
            line_start: e.line_start(),
        }
    }
}

/// A site that could belong to the answer but that no resolution tier proved.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnprovenSite {
    pub path: String,
    pub line: i64,
    pub col: i64,
    /// The name called or used.
    pub name: String,
    /// `unresolved` (a same-name call on a receiver of unknown type, or an
    /// ambiguous name), `name_only` (found by a unique name alone, below
    /// `min_confidence`), `function_value` (the function used as a value:
    /// calls through it are not seen) or `outside_override` (it implements or
    /// overrides a method of a type outside the repository, or the runtime
    /// calls it: its callers may be outside) or `outside_type` (a supertype
    /// the repository does not define).
    pub reason: String,
    /// The enclosing function, method or type; null for top-level code.
    pub from: Option<FromSymbol>,
    /// The source line.
    pub text: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileCount {
    pub path: String,
    pub count: usize,
}

// ---------------------------------------------------------------------------
// get_call_graph

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CallGraphAnswer {
    pub root: GraphNode,
    /// The root (depth 0) and the nodes the edges reach, nearest first.
    pub nodes: Vec<GraphNode>,
    /// Call sites among the nodes, nearest first.
    pub edges: Vec<GraphEdge>,
    /// The walk met a cycle (recursion, mutual recursion): each node is still
    /// listed once, at its shortest distance.
    pub cycles: bool,
    /// Call sites among every node within `depth` (all of them, not only
    /// those returned); a lower bound when `totals_exact` is false.
    pub total_edges: usize,
    /// Nodes within `depth`, the root excluded (exact).
    pub total_nodes: usize,
    /// False when the walks were cut (the node cap, the work budget): then
    /// `total_edges` counts only the edges among the nodes walked.
    pub totals_exact: bool,
    /// `exact` only when no call site that could reach (or, for callees, be
    /// made by) a node within `depth` was left unproven, else `lower_bound`.
    pub completeness: String,
    /// How many such sites.
    pub unproven: usize,
    /// The first of them.
    pub unproven_sites: Vec<UnprovenSite>,
    pub truncated: bool,
    /// `callers`, `callees` or `both`.
    pub direction: String,
    pub depth: usize,
    /// The weakest tier followed.
    pub min_confidence: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphNode {
    /// A symbol id, or a file id for top-level code.
    pub id: String,
    pub name: String,
    pub qualified_name: String,
    /// The symbol's kind, or `file`.
    pub kind: String,
    pub path: String,
    pub line_start: i64,
    /// Calls from the root (0 for the root).
    pub depth: usize,
    /// `caller` or `callee` (direction `both`; `both` when it is each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    /// `declaration`: a trait/interface/base method the root implements or
    /// overrides; `dispatch`: a caller of such a declaration, which may reach
    /// the root at run time; `class`: the class of the root, a constructor;
    /// `constructs`: a caller of that class, which runs the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphEdge {
    pub from: String,
    pub to: String,
    pub line: i64,
    pub col: i64,
    pub confidence: String,
}

// ---------------------------------------------------------------------------
// find_implementations

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationsAnswer {
    pub symbol: SymbolRef,
    /// `implementations` or `supertypes`.
    pub direction: String,
    /// Nearest first.
    pub types: Vec<ImplementingType>,
    pub total: usize,
    /// `exact` only when no `extends`/`implements` clause naming the symbol
    /// was left unproven, else `lower_bound`.
    pub completeness: String,
    pub unproven: usize,
    pub unproven_sites: Vec<UnprovenSite>,
    pub truncated: bool,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementingType {
    pub symbol_id: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line_start: i64,
    /// `implements` when an `IMPLEMENTS` edge is on the way, else `extends`.
    pub relation: String,
    /// Steps from the asked symbol (1 = direct).
    pub depth: i64,
    /// This type's methods that match the other side's by name (for a
    /// method asked: the same-named method).
    pub methods: Vec<Member>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Member {
    pub symbol_id: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line_start: i64,
    /// Defined on a type this one extends (Go embedding, a base class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherited_from: Option<String>,
}

// ---------------------------------------------------------------------------
// analyze_impact

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImpactAnswer {
    /// The symbols the change touches (distance 0).
    pub changed: Vec<ChangedSymbol>,
    /// What depends on them, ranked: by distance (1 "will break", then 2, 3…),
    /// then by how many changed symbols reach it, then by place.
    pub affected: Vec<AffectedSymbol>,
    /// How many affected symbols at each distance (all of them).
    pub by_distance: Vec<DistanceCount>,
    /// Files of the changed and affected symbols, nearest first.
    pub files: Vec<ImpactFile>,
    /// Tests among the changed and affected symbols and files: test functions,
    /// and files that are tests (nearest first).
    pub tests: Vec<TestHit>,
    /// `exact` only when no site that could reach any changed or affected
    /// symbol was left unproven, else `lower_bound` (see `notes`).
    pub completeness: String,
    /// Where `tests` come from: `graph` (the walks), `coverage` (the
    /// `coverage` report measured every changed function: the tests that ran
    /// them), or `graph and coverage` (it measured some).
    pub tests_from: String,
    /// `completeness` for the tests: `measured` when they come from the
    /// coverage report alone (all of them, provided it was recorded on the
    /// diff's base and the tests are deterministic), else `completeness`.
    pub tests_completeness: String,
    /// How many such sites.
    pub unproven: usize,
    /// The first of them.
    pub unproven_sites: Vec<UnprovenSite>,
    /// Why the answer is a lower bound, and anything else to know.
    pub notes: Vec<String>,
    /// `changed` in all.
    pub total_changed: usize,
    pub total_affected: usize,
    /// `files` and `tests` in all (the answer holds what fits `max_tokens`:
    /// the tests first, then the affected symbols, then the files).
    pub total_files: usize,
    pub total_tests: usize,
    /// False when a walk was cut (by its node cap or the work budget): every
    /// `total_*` is then a lower bound.
    pub totals_exact: bool,
    pub truncated: bool,
    pub depth: usize,
    pub min_confidence: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangedSymbol {
    pub symbol_id: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line_start: i64,
    pub line_end: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AffectedSymbol {
    /// A symbol id, or a file id for top-level code.
    pub id: String,
    pub name: String,
    pub qualified_name: String,
    /// The symbol's kind, or `file`.
    pub kind: String,
    pub path: String,
    pub line_start: i64,
    /// Steps from the change.
    pub distance: usize,
    /// The next symbol on the way to the change, and how this one depends on it.
    pub via: Via,
    /// A test function, or code in a test file.
    pub is_test: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Via {
    pub name: String,
    pub qualified_name: String,
    /// `calls`, `references`, `implements`, `extends`, `dispatch` (calls a
    /// trait/interface/base method a changed method implements), `overload`
    /// (a stub of it), or `constructs` (the class of a reached constructor).
    pub relation: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DistanceCount {
    pub distance: usize,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImpactFile {
    pub path: String,
    /// Changed symbols in it.
    pub changed: usize,
    /// Affected symbols in it.
    pub affected: usize,
    /// The smallest distance in it (0: it holds a change).
    pub distance: usize,
    pub is_test: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TestHit {
    pub path: String,
    /// The test function (none: the file as a whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_start: Option<i64>,
    pub distance: usize,
    /// How to run it: a pytest node id (`tests/test_app.py::TestApp::test_run`),
    /// a `go test ./pkg -run '^TestX$'` command, a `cargo test -p crate --
    /// mod::tests::x --exact` command, or (TypeScript, JavaScript) the file
    /// for vitest or jest.
    pub run: String,
}
