//! `get_symbol_hierarchy`: where a symbol lives (ancestors) or what it holds
//! (descendants). Kuzu walks the CONTAINS edges (`queries/ancestors.cypher`,
//! `queries/descendants.cypher`, `queries/file_forest.cypher`); the catalog
//! supplies the rows.

use super::answers::*;
use super::args::{LIST_TOKENS, clean_opt_path, cursor, max_tokens, non_empty, resolve_one};
use super::budget::page;
use super::error::ToolError;
use super::forest::{Forest, MAX_DEPTH};
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
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let from = cursor("get_symbol_hierarchy", input.cursor.as_deref())?;
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
                    parent: None,
                    children: Vec::new(),
                })
                .collect();
            // A chain is as deep as the code's nesting: never long.
            HierarchyAnswer {
                chain_length: hierarchy.len(),
                returned: hierarchy.len(),
                truncated: false,
                next_cursor: None,
                hierarchy,
                direction: "ancestors".into(),
                file: Some(cat.entry(start).path().to_string()),
                metadata: Metadata::default(),
            }
        }
        Direction::Descendants => {
            let tree = descendants(c, &cat, start)?;
            let page = page(
                &c.tokens,
                vec![tree_node(&cat, &tree)],
                from,
                budget,
                usize::MAX,
            );
            super::args::cursor_in("get_symbol_hierarchy", from, page.total)?;
            super::args::page_holds_something(&page, budget)?;
            HierarchyAnswer {
                chain_length: page.total,
                returned: page.returned,
                truncated: page.next.is_some(),
                next_cursor: page.next.map(|n| n.to_string()),
                hierarchy: page.roots,
                direction: "descendants".into(),
                file: None,
                metadata: Metadata::default(),
            }
        }
    };
    let completeness = if body.truncated {
        "truncated"
    } else {
        "complete"
    };
    Ok((body, completeness))
}

/// The tree under entry `start`, children in position order. A Rust type's tree
/// also holds its impl blocks in the same file (found in the catalog by name),
/// as in [`nav::descendants`]: then the file's whole tree is walked in one
/// statement (a type can have dozens of impl blocks), else the symbol's.
fn descendants(c: &View, cat: &Catalog, start: usize) -> Result<TreeNode<usize>, ToolError> {
    let s = cat.entry(start);
    let mut impls = Vec::new();
    if s.language() == "rust" && s.kind() != "impl" {
        impls = cat.find(s.name(), Some(s.path()));
        impls.retain(|&i| {
            let e = cat.entry(i);
            e.kind() == "impl" && e.qualified_name() == s.qualified_name()
        });
    }
    let leaf = TreeNode {
        symbol: start,
        depth: 0,
        children: Vec::new(),
    };
    if impls.is_empty() {
        let trees = nav::subtrees(&c.graph, vec![s.id()]).map_err(ToolError::internal)?;
        let Some(mut tree) = trees
            .into_iter()
            .next()
            .and_then(|t| t.filter_map(&mut |id| cat.by_id(&id)))
        else {
            return Ok(leaf);
        };
        tree.sort_children_by_key(&|&i| (cat.entry(i).position(), i));
        return Ok(tree);
    }
    let files = c.files()?;
    let Some(file) = files.iter().find(|f| f.path == s.path()) else {
        return Ok(leaf);
    };
    let forest = Forest::load(&c.graph, cat, vec![file.id.clone()]).map_err(ToolError::internal)?;
    let Some(mut tree) = forest.of_entry(start).map(|n| forest_tree(&forest, n, 0)) else {
        return Ok(leaf);
    };
    for imp in impls.into_iter().filter_map(|i| forest.of_entry(i)) {
        tree.children.push(forest_tree(&forest, imp, 1));
    }
    Ok(tree)
}

/// Forest node `n` and what it holds, as a tree of catalog entries.
fn forest_tree(forest: &Forest, n: usize, depth: i64) -> TreeNode<usize> {
    let node = forest.node(n);
    TreeNode {
        symbol: node.entry,
        depth,
        // A forest's nodes have one parent each; the bound only guards a
        // damaged graph's depth.
        children: if (depth as usize) < MAX_DEPTH {
            node.children
                .iter()
                .map(|&c| forest_tree(forest, c, depth + 1))
                .collect()
        } else {
            Vec::new()
        },
    }
}

fn tree_node(cat: &Catalog, n: &TreeNode<usize>) -> HierarchyNode {
    HierarchyNode {
        symbol: SymbolRef::from(cat.entry(n.symbol)),
        depth: n.depth as usize,
        parent: None,
        children: n.children.iter().map(|c| tree_node(cat, c)).collect(),
    }
}
