//! `get_symbol_hierarchy`: where a symbol lives (ancestors) or what it holds
//! (descendants).

use std::collections::HashSet;

use super::answers::*;
use super::args::{clean_opt_path, non_empty, resolve_one};
use super::error::ToolError;
use super::inputs::{Direction, HierarchyInput};
use super::nav;
use super::view::View;
use crate::store::catalog::{self, Catalog};

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

pub fn get_symbol_hierarchy(
    c: &View,
    input: HierarchyInput,
) -> Result<(HierarchyAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let cat = c.catalog()?;
    let i = resolve_one(c, &cat, name, path.as_deref())?;
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
}

fn tree_node(n: &nav::TreeNode) -> HierarchyNode {
    HierarchyNode {
        symbol: SymbolRef::from(&n.symbol),
        depth: n.depth as usize,
        children: n.children.iter().map(tree_node).collect(),
    }
}

// find_related_symbols
