//! The call-graph tools: `find_references`, `get_call_graph`,
//! `find_implementations` and `analyze_impact`, over the `CALLS`,
//! `REFERENCES`, `IMPLEMENTS`, `EXTENDS` and `UNRESOLVED` edges.
//!
//! Kuzu walks the edges (`queries/calls/`, through `GraphStore`); the catalog
//! supplies the rows; this module arranges them. Trait and interface dispatch
//! is expanded here, at query time: a call on a trait-typed receiver points at
//! the trait's method declaration (tier `dispatch`), and a method that
//! implements or overrides a declaration (found through `IMPLEMENTS` and
//! `EXTENDS` of its type, and the same name) is reached by the declaration's
//! callers too, labelled as such.

mod completeness;
mod coverage;
pub mod diff;
mod graph;
mod impact;
mod implementations;
mod references;
pub mod tests;

pub use graph::get_call_graph;
pub use impact::analyze_impact;
pub use implementations::find_implementations;
pub use references::find_references;

use std::collections::HashMap;
use std::path::PathBuf;

use super::error::ToolError;
use super::inputs::Tier;
use super::view::View;
use crate::model::names::last_segment;
use crate::store::catalog::Catalog;
use crate::store::graph::GraphStore;

/// Kinds that own methods: what `IMPLEMENTS` and `EXTENDS` join.
const TYPE_KINDS: &[&str] = &["struct", "enum", "trait", "class", "interface", "type"];

/// The name of a tier, as edges carry it.
pub fn tier_name(t: Tier) -> &'static str {
    GraphStore::CALL_TIERS[tier_rank(t)]
}

fn tier_rank(t: Tier) -> usize {
    match t {
        Tier::Scope => 0,
        Tier::Import => 1,
        Tier::SelfTier => 2,
        Tier::Qualified => 3,
        Tier::Typed => 4,
        Tier::Dispatch => 5,
        Tier::Name => 6,
    }
}

/// How many tiers a walk follows for `min_confidence` (default `dispatch`:
/// every tier but `name`), and the tier's name.
pub fn tiers(min_confidence: Option<Tier>) -> (usize, &'static str) {
    let t = min_confidence.unwrap_or(Tier::Dispatch);
    (tier_rank(t) + 1, tier_name(t))
}

/// Whether a walk over the first `tiers` tiers follows `dispatch`: then a
/// method's declarations (and their callers) count as reaching it.
pub fn dispatches(tiers: usize) -> bool {
    tiers > tier_rank(Tier::Dispatch)
}

/// A walk's depth: 1 to `max` (`GraphStore::MAX_CALL_DEPTH` or
/// `MAX_IMPACT_DEPTH`).
pub fn depth(v: Option<i64>, default: usize, max: usize) -> Result<usize, ToolError> {
    match v {
        None => Ok(default),
        Some(n) if n >= 1 && n as u64 <= max as u64 => Ok(n as usize),
        Some(n) => Err(ToolError::invalid_input(format!(
            "depth must be between 1 and {max}, not {n}"
        ))),
    }
}

/// What separates a type's qualified name from its members' in `language`.
fn member_sep(language: &str) -> &'static str {
    if language == "rust" { "::" } else { "." }
}

/// The types that own the method at entry `i`, by qualified name (a Rust
/// method sits in an `impl` named after its type; a Go method may hang off
/// its file): `a::Circle::area` → the `a::Circle` struct.
fn owners(cat: &Catalog, i: usize) -> Vec<usize> {
    let e = cat.entry(i);
    let suffix = format!("{}{}", member_sep(e.language()), e.name());
    let Some(owner_qn) = e.qualified_name().strip_suffix(&suffix) else {
        return Vec::new();
    };
    let mut found = cat.named(last_segment(owner_qn));
    found.retain(|&j| {
        let o = cat.entry(j);
        o.qualified_name() == owner_qn
            && TYPE_KINDS.contains(&o.kind())
            && o.language() == e.language()
    });
    // A Rust impl of a trait for a type from outside the repo (`impl
    // Automaton for Arc<dyn AcAutomaton>`, a blanket `impl<A> T for A`):
    // no type of the repo is its own, so the impl block holds the
    // `IMPLEMENTS` edge.
    if found.is_empty()
        && let Some(p) = cat.parent(i).filter(|&p| cat.entry(p).kind() == "impl")
    {
        found.push(p);
    }
    found
}

/// The methods named `name` of the type at entry `t` (in its body, its Rust
/// impl blocks, or, in Go, anywhere with its receiver).
fn members_named(cat: &Catalog, t: usize, name: &str) -> Vec<usize> {
    let e = cat.entry(t);
    let qn = format!("{}{}{}", e.qualified_name(), member_sep(e.language()), name);
    let mut found = cat.named(name);
    found.retain(|&j| {
        let m = cat.entry(j);
        m.qualified_name() == qn
            && matches!(m.kind(), "method" | "fn")
            && m.language() == e.language()
    });
    found
}

/// The trait, interface or base-class methods that the method at entry `i`
/// implements or overrides: the same-named methods of every type its owner
/// implements or extends (transitively).
fn declarations(c: &View, cat: &Catalog, i: usize) -> Result<Vec<usize>, ToolError> {
    Ok(declarations_of(c, cat, &[i])?
        .into_iter()
        .map(|(_, d)| d)
        .collect())
}

/// The class whose constructor is method `m` (Python `__init__`/`__new__`, TS
/// `constructor`): calling the class runs it.
pub(super) fn constructed_by(cat: &Catalog, m: usize) -> Option<usize> {
    let e = cat.entry(m);
    let is_constructor = match e.name() {
        "__init__" | "__new__" => e.path().ends_with(".py") || e.path().ends_with(".pyi"),
        "constructor" => !e.path().ends_with(".py") && !e.path().ends_with(".rs"),
        _ => false,
    };
    if !is_constructor || e.kind() != "method" {
        return None;
    }
    cat.parent(m).filter(|&p| cat.entry(p).kind() == "class")
}

/// `declarations` of each of the entries `methods`, as (method, declaration)
/// pairs: the owners' supertypes read once each, side by side.
fn declarations_of(
    c: &View,
    cat: &Catalog,
    methods: &[usize],
) -> Result<Vec<(usize, usize)>, ToolError> {
    let owned: Vec<(usize, Vec<usize>)> = methods
        .iter()
        .filter(|&&i| matches!(cat.entry(i).kind(), "method" | "fn"))
        .map(|&i| (i, owners(cat, i)))
        .filter(|(_, o)| !o.is_empty())
        .collect();
    let mut types: Vec<usize> = owned.iter().flat_map(|(_, o)| o.iter().copied()).collect();
    types.sort_unstable();
    types.dedup();
    let ids: Vec<String> = types.iter().map(|&o| cat.entry(o).id()).collect();
    let supers: HashMap<usize, Vec<usize>> = types
        .iter()
        .copied()
        .zip(c.graph.supertypes(ids).map_err(ToolError::internal)?)
        .map(|(t, list)| {
            let found = list.iter().filter_map(|(id, _, _)| cat.by_id(id)).collect();
            (t, found)
        })
        .collect();
    let mut out = Vec::new();
    for (i, owners) in owned {
        let name = cat.entry(i).name();
        for s in owners
            .iter()
            .flat_map(|o| supers.get(o).into_iter().flatten())
        {
            for m in members_named(cat, *s, name) {
                if m != i && !out.contains(&(i, m)) {
                    out.push((i, m));
                }
            }
        }
    }
    Ok(out)
}

/// Source lines read for one answer, each file once.
struct Lines {
    root: PathBuf,
    files: HashMap<String, Option<Vec<String>>>,
}

/// Longest source line an answer shows, in characters.
const MAX_LINE_CHARS: usize = 240;

impl Lines {
    fn new(c: &View) -> Lines {
        Lines {
            root: super::args::canonical_root(c.root()),
            files: HashMap::new(),
        }
    }

    /// Line `n` (1-based) of `path` as it is; "" when it cannot be read.
    fn raw(&mut self, path: &str, n: i64) -> String {
        let root = &self.root;
        let lines = self.files.entry(path.to_string()).or_insert_with(|| {
            super::args::read_text(root, path).map(|t| t.lines().map(str::to_string).collect())
        });
        lines
            .as_ref()
            .and_then(|lines| lines.get(usize::try_from(n - 1).ok()?))
            .cloned()
            .unwrap_or_default()
    }

    /// Line `n` (1-based) of `path`, trimmed and cut to `MAX_LINE_CHARS`.
    fn line(&mut self, path: &str, n: i64) -> String {
        let raw = self.raw(path, n);
        let text = raw.trim();
        if text.chars().count() > MAX_LINE_CHARS {
            text.chars().take(MAX_LINE_CHARS - 1).chain(['…']).collect()
        } else {
            text.to_string()
        }
    }
}

/// The path of a file node's id (`repo@ref:path`).
fn file_path_of<'a>(c: &View, id: &'a str) -> &'a str {
    let prefix = format!("{}@{}:", c.repo, c.ref_name);
    id.strip_prefix(&prefix).unwrap_or(id)
}
