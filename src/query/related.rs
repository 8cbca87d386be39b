//! `find_related_symbols`: what sits beside a symbol (its file, module,
//! package) and what its file imports, in that order.

use std::collections::HashSet;

use super::answers::*;
use super::args::{clean_opt_path, dir_of, limit, non_empty, resolve_one};
use super::error::ToolError;
use super::inputs::{RelatedInput, RelatedScope};
use super::view::View;
use crate::store::catalog::Catalog;
use crate::store::graph::FileInfo;

pub fn find_related_symbols(
    c: &View,
    input: RelatedInput,
) -> Result<(RelatedAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let limit = limit(input.limit, 20, 500)?;
    let cat = c.catalog()?;
    let anchor = resolve_one(c, &cat, name, path.as_deref())?;
    let files = c.files()?;
    let anchor_path = cat.entry(anchor).path();
    let anchor_file = files
        .binary_search_by(|f| f.path.as_str().cmp(anchor_path))
        .ok()
        .map(|k| &files[k]);

    let mut out = Related {
        cat: &cat,
        seen: HashSet::from([anchor]),
        items: Vec::new(),
        limit,
        more: false,
    };
    if let Some(af) = anchor_file {
        // Its file's symbols (a property of each symbol: no walk), then each
        // wider scope, read only while the answer has room.
        for i in cat.in_file(&af.path) {
            if !out.push(i, "same_file") {
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
        for (relation, keep) in scopes.iter().take(wanted) {
            let others: Vec<&FileInfo> = files.iter().map(|f| &**f).filter(|f| keep(f)).collect();
            if !tops_of_files(c, &mut out, &others, relation)? {
                break;
            }
        }
        if !out.more {
            imported(c, &mut out, &af.id)?;
        }
    }
    let (related, more) = (out.items, out.more);
    let scope_used = match input.scope {
        RelatedScope::File => "file",
        RelatedScope::Module => "module",
        RelatedScope::Package => "package",
    };
    let a = cat.entry(anchor);
    let body = RelatedAnswer {
        anchor: Anchor {
            symbol_id: a.id(),
            name: a.name().to_string(),
            kind: a.kind().to_string(),
            qualified_name: a.qualified_name().to_string(),
            path: a.path().to_string(),
            line_start: a.line_start(),
        },
        total_found: related.len(),
        related,
        scope_used: scope_used.into(),
        has_more: more,
        metadata: Metadata::default(),
    };
    Ok((body, if more { "truncated" } else { "complete" }))
}

/// The top-level definitions of `files`, file by file in path order, each
/// file's in position order (`queries/files_top_symbols.cypher`, a few files at
/// a time while the answer has room). `false` once the answer is full.
fn tops_of_files(
    c: &View,
    out: &mut Related<'_>,
    files: &[&FileInfo],
    relation: &str,
) -> Result<bool, ToolError> {
    for batch in files.chunks(FILES_PER_READ) {
        if out.more {
            return Ok(false);
        }
        let ids = batch.iter().map(|f| f.id.clone()).collect();
        let tops = c
            .graph
            .files_top_symbols(ids)
            .map_err(ToolError::internal)?;
        let mut entries: Vec<usize> = tops
            .iter()
            .filter_map(|(_, id)| out.cat.by_id(id))
            .collect();
        out.cat.sort_by_position(&mut entries);
        for i in entries {
            if !out.push(i, relation) {
                return Ok(false);
            }
        }
    }
    Ok(!out.more)
}

/// The definitions the anchor's file imports, in the order of the imports.
fn imported(c: &View, out: &mut Related<'_>, file_id: &str) -> Result<(), ToolError> {
    let cat = out.cat;
    let mut found: Vec<(i64, usize)> = c
        .graph
        .imported_symbols(file_id)
        .map_err(ToolError::internal)?
        .into_iter()
        .filter_map(|(id, line)| Some((line, cat.by_id(&id)?)))
        .collect();
    found.sort_by(|a, b| {
        let (x, y) = (cat.entry(a.1), cat.entry(b.1));
        (a.0, x.path(), x.line_start()).cmp(&(b.0, y.path(), y.line_start()))
    });
    for (_, i) in found {
        if !out.push(i, "imported") {
            break;
        }
    }
    Ok(())
}

/// Files read per statement: most answers fill from the first few.
const FILES_PER_READ: usize = 8;

type FileFilter<'a> = &'a dyn Fn(&FileInfo) -> bool;

/// Related symbols in priority order, each once, up to a limit.
struct Related<'a> {
    cat: &'a Catalog,
    seen: HashSet<usize>,
    items: Vec<RelatedSymbol>,
    limit: usize,
    more: bool,
}

impl Related<'_> {
    /// Adds entry `i` unless seen; false once the limit is reached (and more
    /// exist).
    fn push(&mut self, i: usize, relation: &str) -> bool {
        if !self.seen.insert(i) {
            return true;
        }
        if self.items.len() >= self.limit {
            self.more = true;
            return false;
        }
        self.items.push(RelatedSymbol {
            symbol: SymbolRef::from(self.cat.entry(i)),
            relation: relation.into(),
        });
        true
    }
}
