//! Structural navigation over the graph: resolve a symbol by name, walk its
//! ancestor chain (leaf → file) or its descendant tree. The MCP tools and the CLI
//! call this; it knows nothing of either.

use std::collections::{HashMap, HashSet};

use crate::model::names::{last_segment, looks_qualified, qualified_match};
use crate::store::graph::{Ancestor, GraphError, GraphStore, Nested, SymbolRow, SymbolWithRange};

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

/// The ancestor chain with rows read from the graph by key (the CLI's; the
/// server's tools read rows from their catalog).
pub fn ancestors(store: &GraphStore, symbol: &SymbolRow) -> Result<Ancestry, NavError> {
    let steps: Vec<Ancestor> = store.ancestors(&symbol.id)?;
    let ids: Vec<String> = steps
        .iter()
        .filter(|a| !a.is_file)
        .map(|a| a.id.clone())
        .collect();
    let mut rows: HashMap<String, SymbolRow> = store
        .symbols_by_ids(ids)?
        .into_iter()
        .map(|(row, _, _)| (row.id.to_string(), row))
        .collect();
    let mut chain = vec![(symbol.clone(), 0)];
    for a in steps.iter().filter(|a| !a.is_file) {
        if let Some(row) = rows.remove(&a.id) {
            chain.push((row, a.depth));
        }
    }
    Ok(Ancestry {
        chain,
        file_path: symbol.path.clone(),
    })
}

/// A symbol with its nested symbols.
#[derive(Debug, Clone)]
pub struct TreeNode<T> {
    pub symbol: T,
    pub depth: i64,
    pub children: Vec<TreeNode<T>>,
}

impl<T> TreeNode<T> {
    /// Number of nodes in the tree, this one included.
    pub fn size(&self) -> usize {
        1 + self.children.iter().map(TreeNode::size).sum::<usize>()
    }

    /// Every node's symbol, depth first.
    pub fn symbols(&self) -> Vec<&T> {
        let mut out = vec![&self.symbol];
        for c in &self.children {
            out.extend(c.symbols());
        }
        out
    }

    /// The tree with each symbol mapped; a node `f` maps to nothing is left
    /// out with everything under it.
    pub fn filter_map<U>(self, f: &mut impl FnMut(T) -> Option<U>) -> Option<TreeNode<U>> {
        Some(TreeNode {
            symbol: f(self.symbol)?,
            depth: self.depth,
            children: self
                .children
                .into_iter()
                .filter_map(|c| c.filter_map(f))
                .collect(),
        })
    }

    /// Orders every node's children by `key`.
    pub fn sort_children_by_key<K: Ord>(&mut self, key: &impl Fn(&T) -> K) {
        self.children.sort_by_key(|c| key(&c.symbol));
        for c in &mut self.children {
            c.sort_children_by_key(key);
        }
    }

    /// Moves a subtree `by` levels down.
    pub fn shift(&mut self, by: i64) {
        self.depth += by;
        for c in &mut self.children {
            c.shift(by);
        }
    }
}

/// The trees under each of `ids` (`queries/descendants.cypher`, walked by Kuzu
/// side by side), by id, children in no particular order.
pub fn subtrees(store: &GraphStore, ids: Vec<String>) -> Result<Vec<TreeNode<String>>, NavError> {
    let walks = store.descendants(ids.clone())?;
    Ok(ids
        .into_iter()
        .zip(walks)
        .map(|(id, rows)| tree_of(id, &rows))
        .collect())
}

/// Arranges walked rows under `start`. A symbol reached twice (damage: two
/// parents) keeps its first place.
fn tree_of(start: String, rows: &[Nested]) -> TreeNode<String> {
    let mut children: HashMap<&str, Vec<&Nested>> = HashMap::new();
    for n in rows {
        if let Some(p) = &n.parent {
            children.entry(p.as_str()).or_default().push(n);
        }
    }
    fn build(
        id: String,
        depth: i64,
        children: &HashMap<&str, Vec<&Nested>>,
        seen: &mut HashSet<String>,
    ) -> TreeNode<String> {
        let nested: Vec<&Nested> = children
            .get(id.as_str())
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
            .filter(|n| seen.insert(n.id.clone()))
            .collect();
        TreeNode {
            children: nested
                .into_iter()
                .map(|n| build(n.id.clone(), n.depth, children, seen))
                .collect(),
            symbol: id,
            depth,
        }
    }
    let mut seen = HashSet::from([start.clone()]);
    build(start, 0, &children, &mut seen)
}

/// The descendant tree of `symbol`, with rows read from the graph by key (the
/// CLI's). A Rust type's tree also holds the impl blocks of that type in the
/// same file (with their methods), since that is where a struct's or enum's
/// members live.
pub fn descendants(
    store: &GraphStore,
    scope: &Scope<'_>,
    symbol: &SymbolRow,
) -> Result<TreeNode<SymbolRow>, NavError> {
    let mut starts = vec![symbol.id.to_string()];
    if symbol.language == "rust" && symbol.kind != "impl" {
        let impls =
            store.symbols_by_name(scope.repo, scope.ref_name, &symbol.name, Some(&symbol.path))?;
        starts.extend(
            impls
                .into_iter()
                .filter(|s| s.kind == "impl" && s.qualified_name == symbol.qualified_name)
                .map(|s| s.id.to_string()),
        );
    }
    let trees = subtrees(store, starts)?;
    let ids: Vec<String> = trees.iter().flat_map(|t| t.symbols()).cloned().collect();
    let mut rows: HashMap<String, SymbolWithRange> = store
        .symbols_by_ids(ids)?
        .into_iter()
        .map(|r| (r.0.id.to_string(), r))
        .collect();
    // Children in position order: line, start, longest first.
    let mut trees = trees.into_iter().filter_map(|t| {
        let mut t = t.filter_map(&mut |id| rows.remove(&id))?;
        t.sort_children_by_key(&|(s, start, end): &SymbolWithRange| {
            (s.line_start, *start, std::cmp::Reverse(*end), s.id.clone())
        });
        t.filter_map(&mut |(row, _, _)| Some(row))
    });
    let mut tree = trees.next().unwrap_or_else(|| TreeNode {
        symbol: symbol.clone(),
        depth: 0,
        children: Vec::new(),
    });
    for mut imp in trees {
        imp.shift(1);
        tree.children.push(imp);
    }
    Ok(tree)
}
