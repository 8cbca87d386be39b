//! `get_symbol_hierarchy`: where a symbol lives (ancestors) or what it holds
//! (descendants).

use super::answers::*;
use super::args::{clean_opt_path, lookup, non_empty, resolve_one};
use super::error::ToolError;
use super::inputs::{Direction, HierarchyInput};
use super::nav;
use super::view::View;
use crate::store::catalog::Catalog;
use crate::store::graph::SymbolRow;

/// The tree under `symbol` (`queries/descendants.cypher`). A Rust type's tree
/// also holds its impl blocks in the same file (found in the catalog by name),
/// each walked the same way, as in [`nav::descendants`].
fn descendants(c: &View, cat: &Catalog, symbol: &SymbolRow) -> Result<nav::TreeNode, ToolError> {
    let mut tree = nav::subtree(&c.graph, symbol).map_err(ToolError::internal)?;
    if symbol.language == "rust" && symbol.kind != "impl" {
        let impls: Vec<usize> = cat
            .find(&symbol.name, Some(&symbol.path))
            .into_iter()
            .filter(|&i| {
                let e = cat.entry(i);
                &*e.kind == "impl" && *e.qualified_name == *symbol.qualified_name
            })
            .collect();
        for (_, imp) in lookup(c, cat, &impls, false)? {
            let mut child = nav::subtree(&c.graph, &imp.symbol).map_err(ToolError::internal)?;
            nav::shift(&mut child, 1);
            tree.children.push(child);
        }
    }
    Ok(tree)
}

pub fn get_symbol_hierarchy(
    c: &View,
    input: HierarchyInput,
) -> Result<(HierarchyAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let cat = c.catalog()?;
    let row = resolve_one(c, &cat, name, path.as_deref())?.symbol;
    let body = match input.direction {
        Direction::Ancestors => {
            // Walked by Kuzu (`queries/ancestors.cypher`), bounded and acyclic.
            let ancestry = nav::ancestors(&c.graph, &row).map_err(ToolError::internal)?;
            let hierarchy: Vec<HierarchyNode> = ancestry
                .chain
                .iter()
                .enumerate()
                .map(|(depth, (s, _))| HierarchyNode {
                    symbol: SymbolRef::from(s),
                    depth,
                    children: Vec::new(),
                })
                .collect();
            HierarchyAnswer {
                chain_length: hierarchy.len(),
                hierarchy,
                direction: "ancestors".into(),
                file: Some(row.path.clone()),
                metadata: Metadata::default(),
            }
        }
        Direction::Descendants => {
            // Walked by Kuzu (`queries/descendants.cypher`), bounded and acyclic.
            let tree = descendants(c, &cat, &row)?;
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
}

fn tree_node(n: &nav::TreeNode) -> HierarchyNode {
    HierarchyNode {
        symbol: SymbolRef::from(&n.symbol),
        depth: n.depth as usize,
        children: n.children.iter().map(tree_node).collect(),
    }
}

// find_related_symbols
