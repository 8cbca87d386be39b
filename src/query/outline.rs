//! `get_file_outline`: a file's symbols as a nested tree.

use std::collections::{HashMap, HashSet};

use super::answers::*;
use super::args::{clean_path, non_empty};
use super::error::ToolError;
use super::forest::Forest;
use super::inputs::OutlineInput;
use super::view::View;
use crate::store::graph::FileSymbol;

pub fn get_file_outline(
    c: &View,
    input: OutlineInput,
) -> Result<(OutlineAnswer, &'static str), ToolError> {
    let path = clean_path(non_empty("path", &input.path)?)?;
    let files = c.files()?;
    let Some(file) = files
        .binary_search_by(|f| f.path.as_str().cmp(&path))
        .ok()
        .map(|i| &files[i])
    else {
        return Err(ToolError::file_not_found(&path, &c.repo, &c.ref_name));
    };
    let symbols = Forest::load(&c.graph, vec![file.id.clone()])
        .map_err(ToolError::internal)?
        .file_symbols(&file.path, &file.id);
    let count = symbols.len();
    let tree = outline_tree(&file.id, &symbols);
    Ok((
        OutlineAnswer {
            path: file.path.clone(),
            language: file.language.clone(),
            module: file.module.clone(),
            package: file.package.clone(),
            line_count: file.line_count,
            symbol_count: count,
            symbols: tree,
            metadata: Metadata::default(),
        },
        "complete",
    ))
}

fn outline_tree(parent: &str, all: &[FileSymbol]) -> Vec<OutlineNode> {
    let mut by_parent: HashMap<&str, Vec<&FileSymbol>> = HashMap::new();
    for s in all {
        by_parent.entry(s.parent_id.as_str()).or_default().push(s);
    }
    fn build(
        id: &str,
        by_parent: &HashMap<&str, Vec<&FileSymbol>>,
        seen: &mut HashSet<String>,
    ) -> Vec<OutlineNode> {
        let Some(children) = by_parent.get(id) else {
            return Vec::new();
        };
        let fresh: Vec<&&FileSymbol> = children
            .iter()
            .filter(|s| seen.insert(s.symbol.id.clone()))
            .collect();
        fresh
            .into_iter()
            .map(|s| OutlineNode {
                symbol_id: s.symbol.id.clone(),
                name: s.symbol.name.clone(),
                kind: s.symbol.kind.clone(),
                qualified_name: s.symbol.qualified_name.clone(),
                signature: s.symbol.signature.clone(),
                visibility: s.symbol.visibility.clone(),
                line_start: s.symbol.line_start,
                line_end: s.symbol.line_end,
                children: build(&s.symbol.id, by_parent, seen),
            })
            .collect()
    }
    build(parent, &by_parent, &mut HashSet::new())
}

// explore_tree and get_node
