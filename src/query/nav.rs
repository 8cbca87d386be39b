//! Structural navigation over the graph: resolve a symbol by name, walk its
//! ancestor chain (leaf → file) or its descendant tree. The MCP tools and the CLI
//! call this; it knows nothing of either.

use std::collections::HashMap;

use crate::model::names::{last_segment, looks_qualified, qualified_match};
use crate::store::graph::{Ancestor, GraphError, GraphStore, SymbolRow};

#[derive(Debug, thiserror::Error)]
pub enum NavError {
    #[error("no symbol named `{name}` in {repo}@{ref_name}{}", path_note(.path))]
    SymbolNotFound {
        name: String,
        path: Option<String>,
        repo: String,
        ref_name: String,
    },
    #[error("`{name}` matches {} symbols in several places; pass a path or a qualified name", .candidates.len())]
    Ambiguous {
        name: String,
        candidates: Vec<SymbolRow>,
    },
    #[error(transparent)]
    Graph(#[from] GraphError),
}

fn path_note(path: &Option<String>) -> String {
    path.as_ref()
        .map(|p| format!(" (in {p})"))
        .unwrap_or_default()
}

/// Which repo/ref a question is about.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    pub repo: &'a str,
    pub ref_name: &'a str,
}

/// Finds the one symbol meant by `name` (a plain name or a qualified name) and an
/// optional file path. Several matches without a path that tells them apart are
/// ambiguous; the candidates come back so the caller can choose.
pub fn resolve(
    store: &GraphStore,
    scope: &Scope<'_>,
    name: &str,
    path: Option<&str>,
) -> Result<SymbolRow, NavError> {
    let path = path.filter(|p| !p.is_empty());
    let found = find(store, scope, name, path)?;
    choose(found, scope, name, path)
}

/// The one symbol among `found` (the matches of `name`): a Rust type rather than
/// its impl blocks (they share a qualified name); several others are ambiguous.
pub fn choose(
    mut found: Vec<SymbolRow>,
    scope: &Scope<'_>,
    name: &str,
    path: Option<&str>,
) -> Result<SymbolRow, NavError> {
    if found.len() > 1
        && found
            .iter()
            .all(|c| c.qualified_name == found[0].qualified_name && c.path == found[0].path)
        && let Some(i) = found.iter().position(|c| c.kind != "impl")
    {
        return Ok(found.swap_remove(i));
    }
    match found.len() {
        0 => Err(NavError::SymbolNotFound {
            name: name.to_string(),
            path: path.map(str::to_string),
            repo: scope.repo.to_string(),
            ref_name: scope.ref_name.to_string(),
        }),
        1 => Ok(found.remove(0)),
        _ => Err(NavError::Ambiguous {
            name: name.to_string(),
            candidates: found,
        }),
    }
}

/// Every symbol meant by `name`: definitions with that name or, for a qualified
/// name (`auth::jwt::validate`, `pkg.mod.Class`), whose qualified name ends with it.
pub fn find(
    store: &GraphStore,
    scope: &Scope<'_>,
    name: &str,
    path: Option<&str>,
) -> Result<Vec<SymbolRow>, GraphError> {
    let found = store.symbols_by_name(scope.repo, scope.ref_name, name, path)?;
    if !found.is_empty() || !looks_qualified(name) {
        return Ok(found);
    }
    Ok(store
        .symbols_by_name(scope.repo, scope.ref_name, last_segment(name), path)?
        .into_iter()
        .filter(|s| qualified_match(&s.qualified_name, name))
        .collect())
}

/// The ancestor chain: the symbol itself (depth 0), its enclosing symbols, nearest
/// first. The file that holds the chain is returned beside it.
#[derive(Debug, Clone)]
pub struct Ancestry {
    pub chain: Vec<(SymbolRow, i64)>,
    pub file_path: String,
}

pub fn ancestors(store: &GraphStore, symbol: &SymbolRow) -> Result<Ancestry, NavError> {
    let mut chain = vec![(symbol.clone(), 0)];
    let mut file_path = symbol.path.clone();
    for a in store.ancestors(&symbol.id)? {
        match a {
            Ancestor::Symbol(row, depth) => chain.push((*row, depth)),
            Ancestor::File { path, .. } => file_path = path,
        }
    }
    Ok(Ancestry { chain, file_path })
}

/// A symbol with its nested symbols.
#[derive(Debug, Clone)]
pub struct TreeNode {
    pub symbol: SymbolRow,
    pub depth: i64,
    pub children: Vec<TreeNode>,
}

impl TreeNode {
    /// Number of nodes in the tree, this one included.
    pub fn size(&self) -> usize {
        1 + self.children.iter().map(TreeNode::size).sum::<usize>()
    }
}

/// The descendant tree of `symbol`. A Rust type's tree also holds the impl blocks
/// of that type in the same file (with their methods), since that is where a
/// struct's or enum's members live.
pub fn descendants(
    store: &GraphStore,
    scope: &Scope<'_>,
    symbol: &SymbolRow,
) -> Result<TreeNode, NavError> {
    let mut tree = subtree(store, symbol)?;
    if symbol.language == "rust" && symbol.kind != "impl" {
        let impls =
            store.symbols_by_name(scope.repo, scope.ref_name, &symbol.name, Some(&symbol.path))?;
        for imp in impls
            .into_iter()
            .filter(|s| s.kind == "impl" && s.qualified_name == symbol.qualified_name)
        {
            let mut child = subtree(store, &imp)?;
            shift(&mut child, 1);
            tree.children.push(child);
        }
    }
    Ok(tree)
}

/// Moves a subtree `by` levels down.
pub fn shift(node: &mut TreeNode, by: i64) {
    node.depth += by;
    for c in &mut node.children {
        shift(c, by);
    }
}

/// The tree under `symbol` (`queries/descendants.cypher`), children in line order.
pub fn subtree(store: &GraphStore, symbol: &SymbolRow) -> Result<TreeNode, NavError> {
    let rows = store.descendants(&symbol.id)?;
    // Rows come shallowest first, in position order: each parent's list of
    // children is in line order.
    let mut children: HashMap<&str, Vec<&crate::store::graph::Descendant>> = HashMap::new();
    for d in &rows {
        children.entry(d.parent_id.as_str()).or_default().push(d);
    }
    fn build(
        id: &str,
        symbol: SymbolRow,
        depth: i64,
        children: &HashMap<&str, Vec<&crate::store::graph::Descendant>>,
    ) -> TreeNode {
        let nested = children.get(id).map_or(&[][..], Vec::as_slice);
        TreeNode {
            symbol,
            depth,
            children: nested
                .iter()
                .map(|d| build(&d.symbol.id, d.symbol.clone(), d.depth, children))
                .collect(),
        }
    }
    Ok(build(&symbol.id, symbol.clone(), 0, &children))
}
