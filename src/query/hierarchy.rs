//! `get_symbol_hierarchy`: where a symbol lives (ancestors) or what it holds
//! (descendants).

use std::collections::HashSet;

use super::answers::*;
use super::args::{clean_opt_path, non_empty, resolve_one};
use super::error::ToolError;
use super::forest::{Forest, MAX_DEPTH};
use super::inputs::{Direction, HierarchyInput};
use super::nav;
use super::view::View;

/// The tree under forest node `i` (a Rust type's tree also holds its impl blocks
/// in the same file, as in [`nav::descendants`]).
fn forest_tree(forest: &Forest, i: usize) -> nav::TreeNode {
    fn node(forest: &Forest, i: usize, depth: i64, seen: &mut HashSet<usize>) -> nav::TreeNode {
        let children = if depth as usize >= MAX_DEPTH {
            Vec::new()
        } else {
            let fresh: Vec<usize> = forest
                .node(i)
                .children
                .iter()
                .copied()
                .filter(|c| seen.insert(*c))
                .collect();
            fresh
                .into_iter()
                .map(|c| node(forest, c, depth + 1, seen))
                .collect()
        };
        nav::TreeNode {
            symbol: forest.node(i).row.clone(),
            depth,
            children,
        }
    }
    let mut seen = HashSet::from([i]);
    let mut tree = node(forest, i, 0, &mut seen);
    for j in forest.impls_of(i) {
        if seen.insert(j) {
            tree.children.push(node(forest, j, 1, &mut seen));
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
            // The file's CONTAINS tree, walked by Kuzu in one statement
            // (`queries/file_forest.cypher`, bounded and acyclic).
            let file = c.file(&row.path)?.map(|f| f.id);
            let forest =
                Forest::load(&c.graph, file.into_iter().collect()).map_err(ToolError::internal)?;
            let tree = match forest.by_id(&row.id) {
                Some(i) => forest_tree(&forest, i),
                None => nav::TreeNode {
                    symbol: row.clone(),
                    depth: 0,
                    children: Vec::new(),
                },
            };
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
