//! `get_symbol_hierarchy`: where a symbol lives (ancestors) or what it holds
//! (descendants). Kuzu walks the CONTAINS edges (`queries/ancestors.cypher`,
//! `queries/descendants.cypher`); the catalog supplies the rows.

use super::answers::*;
use super::args::{clean_opt_path, non_empty, resolve_one};
use super::error::ToolError;
use super::inputs::{Direction, HierarchyInput};
use super::nav::{self, TreeNode};
use super::view::View;
use crate::store::catalog::Catalog;

pub fn get_symbol_hierarchy(
    c: &View,
    input: HierarchyInput,
) -> Result<(HierarchyAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let cat = c.catalog()?;
    let start = resolve_one(c, &cat, name, path.as_deref())?;
    let body = match input.direction {
        Direction::Ancestors => {
            let steps = c
                .graph
                .ancestors(&cat.entry(start).id())
                .map_err(ToolError::internal)?;
            // The symbol, then its enclosing symbols nearest first (the walk
            // ends at the file, which the answer names apart).
            let chain = std::iter::once(start).chain(
                steps
                    .iter()
                    .filter(|a| !a.is_file)
                    .filter_map(|a| cat.by_id(&a.id)),
            );
            let hierarchy: Vec<HierarchyNode> = chain
                .enumerate()
                .map(|(depth, i)| HierarchyNode {
                    symbol: SymbolRef::from(cat.entry(i)),
                    depth,
                    children: Vec::new(),
                })
                .collect();
            HierarchyAnswer {
                chain_length: hierarchy.len(),
                hierarchy,
                direction: "ancestors".into(),
                file: Some(cat.entry(start).path().to_string()),
                metadata: Metadata::default(),
            }
        }
        Direction::Descendants => {
            let tree = descendants(c, &cat, start)?;
            HierarchyAnswer {
                chain_length: tree.size(),
                hierarchy: vec![tree_node(&cat, &tree)],
                direction: "descendants".into(),
                file: None,
                metadata: Metadata::default(),
            }
        }
    };
    Ok((body, "complete"))
}

/// The tree under entry `start`, children in position order. A Rust type's tree
/// also holds its impl blocks in the same file (found in the catalog by name),
/// as in [`nav::descendants`]; every tree is walked at once.
fn descendants(c: &View, cat: &Catalog, start: usize) -> Result<TreeNode<usize>, ToolError> {
    let s = cat.entry(start);
    let mut starts = vec![start];
    if s.language() == "rust" && s.kind() != "impl" {
        starts.extend(cat.find(s.name(), Some(s.path())).into_iter().filter(|&i| {
            let e = cat.entry(i);
            e.kind() == "impl" && e.qualified_name() == s.qualified_name()
        }));
    }
    let ids = starts.iter().map(|&i| cat.entry(i).id()).collect();
    let trees = nav::subtrees(&c.graph, ids).map_err(ToolError::internal)?;
    let mut trees = trees.into_iter().filter_map(|t| {
        let mut t = t.filter_map(&mut |id| cat.by_id(&id))?;
        t.sort_children_by_key(&|&i| (cat.entry(i).position(), i));
        Some(t)
    });
    let mut tree = trees.next().unwrap_or(TreeNode {
        symbol: start,
        depth: 0,
        children: Vec::new(),
    });
    for mut imp in trees {
        imp.shift(1);
        tree.children.push(imp);
    }
    Ok(tree)
}

fn tree_node(cat: &Catalog, n: &TreeNode<usize>) -> HierarchyNode {
    HierarchyNode {
        symbol: SymbolRef::from(cat.entry(n.symbol)),
        depth: n.depth as usize,
        children: n.children.iter().map(|c| tree_node(cat, c)).collect(),
    }
}
