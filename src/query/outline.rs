//! `get_file_outline`: a file's symbols as a nested tree.

use super::answers::*;
use super::args::{LIST_TOKENS, clean_path, cursor, max_tokens, non_empty};
use super::budget::page;
use super::error::ToolError;
use super::forest::{Forest, MAX_DEPTH};
use super::inputs::OutlineInput;
use super::view::View;
use crate::store::catalog::Catalog;

pub fn get_file_outline(
    c: &View,
    input: OutlineInput,
) -> Result<(OutlineAnswer, &'static str), ToolError> {
    let path = clean_path(non_empty("path", &input.path)?)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let from = cursor("get_file_outline", input.cursor.as_deref())?;
    let files = c.files()?;
    let Some(file) = files
        .binary_search_by(|f| f.path.as_str().cmp(&path))
        .ok()
        .map(|i| &files[i])
    else {
        return Err(ToolError::file_not_found(&path, &c.repo, &c.ref_name));
    };
    // The file's tree, walked by Kuzu (`queries/file_forest.cypher`).
    let cat = c.catalog()?;
    let forest =
        Forest::load(&c.graph, &cat, vec![file.id.clone()]).map_err(ToolError::internal)?;
    let count = forest.file_all(&file.path).len();
    let tree: Vec<OutlineNode> = forest
        .file_top(&file.path)
        .iter()
        .map(|&i| outline_node(&cat, &forest, i, 1))
        .collect();
    let page = page(&c.tokens, tree, from, budget, usize::MAX);
    super::args::cursor_in("get_file_outline", from, page.total)?;
    super::args::page_holds_something(&page, budget)?;
    let truncated = page.next.is_some();
    Ok((
        OutlineAnswer {
            path: file.path.clone(),
            language: file.language.clone(),
            module: file.module.clone(),
            package: file.package.clone(),
            line_count: file.line_count,
            symbol_count: count,
            returned: page.returned,
            symbols: page.roots,
            truncated,
            next_cursor: page.next.map(|n| n.to_string()),
            metadata: Metadata::default(),
        },
        if truncated { "truncated" } else { "complete" },
    ))
}

fn outline_node(cat: &Catalog, forest: &Forest, i: usize, depth: usize) -> OutlineNode {
    let n = forest.node(i);
    let e = cat.entry(n.entry);
    OutlineNode {
        symbol_id: e.id(),
        name: e.name().to_string(),
        kind: e.kind().to_string(),
        signature: e.signature().to_string(),
        visibility: e.visibility().to_string(),
        line_start: e.line_start(),
        line_end: e.line_end(),
        parent: None,
        // A forest's nodes have one parent each; the bound only guards a
        // damaged graph's depth.
        children: if depth < MAX_DEPTH {
            n.children
                .iter()
                .map(|&c| outline_node(cat, forest, c, depth + 1))
                .collect()
        } else {
            Vec::new()
        },
    }
}
