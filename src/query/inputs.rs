//! What each tool takes: its arguments as types, with the JSON Schemas the
//! transports advertise. Unknown fields are refused.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

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

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CallDirection {
    #[default]
    Callers,
    Callees,
    Both,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ImplDirection {
    #[default]
    Implementations,
    Supertypes,
}

/// A resolution tier (CONTRACT section 2), most certain first: `min_confidence`
/// keeps edges of this tier and every tier before it.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Scope,
    Import,
    #[serde(rename = "self")]
    SelfTier,
    Qualified,
    Typed,
    #[default]
    Dispatch,
    Name,
}

/// Which uses `find_references` lists.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RefKind {
    #[default]
    All,
    /// Calls and constructor calls.
    Call,
    /// Uses as a type: annotations, struct/object literals, `extends`/`implements` clauses.
    Type,
    /// Imports of it.
    Import,
    /// A function or value passed or read as a value.
    Value,
}

/// A tool's input: its own fields, then `repo` and `ref`, which every tool takes.
/// Unknown fields are refused (`invalid_input`), so a misspelt argument is not
/// silently ignored.
/// An integer argument: a JSON number, or a string holding one (`"limit": "20"`,
/// as some clients send every argument). Anything else is `invalid_input`. The
/// schema advertises an integer; the string is only tolerated.
fn int_or_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected an integer, not {n}"))),
        Some(Value::String(t)) => t
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected an integer, not \"{t}\""))),
        Some(other) => Err(D::Error::custom(format!(
            "expected an integer, not {other}"
        ))),
    }
}

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
    #[serde(alias = "name")]
    pub symbol_name: String,
    /// File path (repo-relative) to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `ancestors` (leaf to root, the default) or `descendants` (the tree below).
    #[serde(default)]
    pub direction: Direction,
    /// Token budget of the symbols (default 4000): a bigger tree of descendants is cut in pre-order and `next_cursor` gives the rest.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
    /// The `next_cursor` of the page before (descendants).
    #[serde(default)]
    pub cursor: Option<String>,
}
}

tool_input! {

pub struct RelatedInput {
    /// Anchor symbol name (plain or qualified).
    #[serde(alias = "name")]
    pub symbol_name: String,
    /// File path to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `file` (default), `module` (adds sibling files of the same directory/module) or `package` (adds the rest of the package).
    #[serde(default)]
    pub scope: RelatedScope,
    /// Max results (default 20, at most 500).
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the results (default 4000).
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
}
}

tool_input! {

pub struct LocateInput {
    /// Symbol name (exact, else ignoring case) or qualified name. `symbol_name`, as the other tools call it, is accepted too.
    #[serde(alias = "symbol_name")]
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
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the results (default 4000): more are cut, and `truncated` says so with the exact total.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
}
}

tool_input! {

pub struct OutlineInput {
    /// Repo-relative file path.
    pub path: String,
    /// Token budget of the answer's symbols (default 4000): a longer outline is cut, in source order, and `next_cursor` gives the rest.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
    /// The `next_cursor` of the page before.
    #[serde(default)]
    pub cursor: Option<String>,
}
}

tool_input! {

pub struct ExploreInput {
    /// A directory or file path (`.` for the root, the default), or else a name to search: files and symbols whose name contains it.
    #[serde(default)]
    pub pattern: Option<String>,
    /// Levels below the pattern's node to show: 0 = unlimited, 1 = direct children only. Default 2.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_depth: Option<i64>,
    /// `min` (name and type) or `max` (plus signature, qualified name and lines).
    #[serde(default)]
    pub detail: Detail,
    /// Max nodes in the answer (default 500, at most 5000); more sets `result_completeness: truncated`.
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the nodes (default 4000): a bigger tree is cut in pre-order and `meta.next_cursor` gives the rest.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
    /// The `meta.next_cursor` of the page before.
    #[serde(default)]
    pub cursor: Option<String>,
}
}

tool_input! {

pub struct NodeInput {
    /// A node id from `explore_tree` (`file:src/a.rs`, `dir:src`, `fn:src/a.rs:auth::validate`), or a `symbol_id` as `locate_symbol`, `search_code` and the call-graph tools give it.
    pub node_id: String,
    /// First line of the content to return (a file's or symbol's line number; a directory's entry number). Default: the node's first; pass a previous answer's `next_line` to read on.
    #[serde(default, deserialize_with = "int_or_text")]
    pub line_start: Option<i64>,
    /// Last line of the content to return. Default: the node's last.
    #[serde(default, deserialize_with = "int_or_text")]
    pub line_end: Option<i64>,
    /// Token budget of `content` (default 4000): longer content is cut at a whole line and `next_line` says where to go on.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
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
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the rows (default 4000): more are cut, and `truncated` says so.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
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
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the results (default 4000): more are cut, and `truncated` says so with the exact total.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
}
}

tool_input! {

pub struct ContextInput {
    /// Search query (as for search_code).
    pub query: String,
    /// Token budget of the answer's items (default 4000, at least 1).
    #[serde(default, deserialize_with = "int_or_text")]
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

pub struct ReferencesInput {
    /// The symbol whose uses to list: a plain or qualified name.
    #[serde(alias = "name")]
    pub symbol_name: String,
    /// File path to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `all` (default), `call`, `type` (annotations, literals, extends/implements clauses), `import` or `value`.
    #[serde(default)]
    pub kind: RefKind,
    /// Max references in this page (default 100, at most 1000).
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of this page's references (default 4000): a page is cut shorter to fit, and `next_cursor` goes on from there.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}
}

tool_input! {

pub struct CallGraphInput {
    /// The function or method to start from: a plain or qualified name.
    #[serde(alias = "name")]
    pub symbol_name: String,
    /// File path to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `callers` (default: what calls it), `callees` (what it calls) or `both`.
    #[serde(default)]
    pub direction: CallDirection,
    /// Calls to follow, 1 to 5 (default 2).
    #[serde(default, deserialize_with = "int_or_text")]
    pub depth: Option<i64>,
    /// Max edges returned (default 200, at most 2000); nearest first.
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the edges and their nodes (default 4000): farther edges are cut, and `truncated` says so with the exact total.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
    /// Weakest resolution tier followed: `scope`, `import`, `self`, `qualified`, `typed`, `dispatch` (the default) or `name` (adds edges guessed from a unique name).
    #[serde(default)]
    pub min_confidence: Option<Tier>,
}
}

tool_input! {

pub struct ImplementationsInput {
    /// A trait, interface or class (or one of its methods): a plain or qualified name.
    #[serde(alias = "name")]
    pub symbol_name: String,
    /// File path to disambiguate; without it a name defined in several places gives `ambiguous_symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// `implementations` (default: what implements or extends it, transitively) or `supertypes` (what it implements or extends).
    #[serde(default)]
    pub direction: ImplDirection,
    /// Max types returned (default 100, at most 1000).
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the types (default 4000): more are cut, and `truncated` says so with the exact total.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
}
}

tool_input! {

/// Exactly one of `symbol_name`, `paths` and `diff_base`.
pub struct ImpactInput {
    /// A symbol about to change: a plain or qualified name.
    #[serde(default, alias = "name")]
    pub symbol_name: Option<String>,
    /// With `symbol_name`: the file that holds it.
    #[serde(default)]
    pub path: Option<String>,
    /// Changed files (repo-relative): every symbol in them counts as changed.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// A git ref (branch, tag, commit): the working tree's diff against it (uncommitted and untracked files included) gives the changed lines, and the symbols around them.
    #[serde(default)]
    pub diff_base: Option<String>,
    /// Steps to follow from a change, 1 to 30 (default 3; 30 to choose the tests a change can break).
    #[serde(default, deserialize_with = "int_or_text")]
    pub depth: Option<i64>,
    /// A per-test coverage report inside the repository, recorded on the diff's base: coverage.py's JSON with contexts (`pytest --cov --cov-context=test`, then `coverage json --show-contexts`) or LCOV with a `TN:` record per test. Where it measured every changed function, `tests` are the tests that ran them (`tests_from: coverage`).
    #[serde(default)]
    pub coverage: Option<String>,
    /// Weakest resolution tier followed (default `dispatch`: `name`-tier edges are left out, and the answer says `lower_bound` when one was).
    #[serde(default)]
    pub min_confidence: Option<Tier>,
    /// Max affected symbols returned (default 200, at most 2000), ranked.
    #[serde(default, deserialize_with = "int_or_text")]
    pub limit: Option<i64>,
    /// Token budget of the affected symbols (default 4000): the lower-ranked are cut, and `truncated` says so with the exact total.
    #[serde(default, deserialize_with = "int_or_text")]
    pub max_tokens: Option<i64>,
}
}

tool_input! {

/// `repo` narrows the answer to one repository; every ref is listed.
pub struct StatusInput {}
}

// Errors
