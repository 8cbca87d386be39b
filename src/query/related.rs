//! `find_related_symbols`: what sits beside a symbol (its file, module,
//! package) and what its file imports, in that order.

use std::collections::HashSet;

use super::answers::*;
use super::args::{clean_opt_path, dir_of, limit, non_empty, resolve_one};
use super::error::ToolError;
use super::inputs::{RelatedInput, RelatedScope};
use super::view::View;
use crate::store::graph::{FileInfo, SymbolRow, sort_by_position};

pub fn find_related_symbols(
    c: &View,
    input: RelatedInput,
) -> Result<(RelatedAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let limit = limit(input.limit, 20, 500)?;
    let cat = c.catalog()?;
    let anchor = resolve_one(c, &cat, name, path.as_deref())?.symbol;
    let files = c.files()?;
    let anchor_file = files
        .binary_search_by(|f| f.path.as_str().cmp(&anchor.path))
        .ok()
        .map(|k| &files[k]);

    let mut out = Related {
        seen: HashSet::from([anchor.id.clone()]),
        items: Vec::new(),
        limit,
        more: false,
    };
    if let Some(af) = anchor_file {
        // Each step is one statement, run only while the answer has room.
        // One more than the answer holds (the anchor is among them, and one
        // more tells whether there is more).
        for (row, _, _) in c.graph.file_symbols(&af.id, limit + 2)? {
            if !out.push(&row, "same_file") {
                break;
            }
        }
        let dir = dir_of(&af.path);
        let same_module = |f: &FileInfo| f.id != af.id && dir_of(&f.path) == dir;
        let same_package = |f: &FileInfo| {
            !af.package.is_empty() && f.package == af.package && dir_of(&f.path) != dir
        };
        let scopes: [(&str, FileFilter<'_>); 2] = [
            ("same_module", &same_module),
            ("same_package", &same_package),
        ];
        let wanted = match input.scope {
            RelatedScope::File => 0,
            RelatedScope::Module => 1,
            RelatedScope::Package => 2,
        };
        'scopes: for (relation, keep) in scopes.iter().take(wanted) {
            if out.more {
                break;
            }
            // Top-level definitions of the other files, file by file in path
            // order, each file's in line order.
            let ids: Vec<String> = files
                .iter()
                .filter(|f| keep(f))
                .map(|f| f.id.clone())
                .collect();
            let room = limit + 1 - out.items.len().min(limit);
            let mut top = c
                .graph
                .files_top_symbols(ids, room)
                .map_err(ToolError::internal)?;
            sort_by_position(&mut top);
            for (row, _, _) in &top {
                if !out.push(row, relation) {
                    break 'scopes;
                }
            }
        }
        if !out.more {
            for (row, _line) in c.graph.imported_symbols(&af.id)? {
                if !out.push(&row, "imported") {
                    break;
                }
            }
        }
    }
    let (related, more) = (out.items, out.more);
    let scope_used = match input.scope {
        RelatedScope::File => "file",
        RelatedScope::Module => "module",
        RelatedScope::Package => "package",
    };
    let body = RelatedAnswer {
        anchor: Anchor {
            symbol_id: anchor.id.clone(),
            symbol_stable_id: anchor.stable_id.clone(),
            name: anchor.name.clone(),
            kind: anchor.kind.clone(),
            qualified_name: anchor.qualified_name.clone(),
            path: anchor.path.clone(),
            line_start: anchor.line_start,
        },
        total_found: related.len(),
        related,
        scope_used: scope_used.into(),
        has_more: more,
        metadata: Metadata::default(),
    };
    Ok((body, if more { "truncated" } else { "complete" }))
}

type FileFilter<'a> = &'a dyn Fn(&FileInfo) -> bool;

/// Related symbols in priority order, each once, up to a limit.
struct Related {
    seen: HashSet<String>,
    items: Vec<RelatedSymbol>,
    limit: usize,
    more: bool,
}

impl Related {
    /// Adds `row` unless seen; false once the limit is reached (and more exist).
    fn push(&mut self, row: &SymbolRow, relation: &str) -> bool {
        if !self.seen.insert(row.id.clone()) {
            return true;
        }
        if self.items.len() >= self.limit {
            self.more = true;
            return false;
        }
        self.items.push(RelatedSymbol {
            symbol: SymbolRef::from(row),
            relation: relation.into(),
        });
        true
    }
}

// locate_symbol
