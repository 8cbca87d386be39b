//! `find_related_symbols`: what relates to a symbol, closest first: what it
//! calls and what calls it, its enclosing type and that type's other members,
//! the definitions its file imports, then what merely sits beside it (its
//! file, module, package). Its file's constants and variables come last.

use std::collections::HashSet;

use super::answers::*;
use super::args::{LIST_TOKENS, clean_opt_path, dir_of, limit, max_tokens, non_empty, resolve_one};
use super::budget::Tokenizer;
use super::error::ToolError;
use super::inputs::{RelatedInput, RelatedScope};
use super::view::View;
use crate::store::catalog::Catalog;
use crate::store::graph::{FileInfo, GraphStore};

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
        tokens: &c.tokens,
        seen: HashSet::from([anchor]),
        items: Vec::new(),
        limit,
        budget: max_tokens(input.max_tokens, LIST_TOKENS)?,
        used: 0,
        more: false,
    };
    if let Some(af) = anchor_file {
        // Two reads of the graph side by side (each on its own reader): what
        // it calls and what calls it (every resolution tier but the name
        // guess), and what its file imports; its type and that type's members
        // come from the catalog.
        let graph = &*c.graph;
        let cat_ref = &*cat;
        let (called, imports) = std::thread::scope(|s| {
            let called = s.spawn(|| super::context::calls_of(graph, cat_ref, &[anchor]));
            let imports = imported(graph, cat_ref, &af.id);
            (joined(called.join()), imports)
        });
        // What it calls and what calls it come before its type's other
        // members: a method's siblings are one outline away, its calls are
        // what an edit must keep working.
        let (callees, callers) = called?;
        for (relation, found) in [("callee", &callees), ("caller", &callers)] {
            for &i in found.get(&anchor).map_or(&[][..], Vec::as_slice) {
                out.push(i, relation);
            }
        }
        let (parent, members) = type_of(cat_ref, anchor);
        if let Some(p) = parent {
            out.push(p, "parent");
        }
        for m in members {
            out.push(m, "same_type");
        }
        for i in imports? {
            if !out.push(i, "imported") {
                break;
            }
        }
        // Its file's other symbols (a property of each symbol: no walk), then
        // each wider scope, read only while the answer has room; the file's
        // constants and variables after all of them.
        let (values, others): (Vec<usize>, Vec<usize>) = cat
            .in_file(&af.path)
            .into_iter()
            .partition(|&i| is_value(cat.entry(i).kind()));
        for i in others {
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
        for i in values {
            if !out.push(i, "same_file") {
                break;
            }
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

/// A read made on a scoped thread; one that panicked is an internal error.
fn joined<T>(r: std::thread::Result<Result<T, ToolError>>) -> Result<T, ToolError> {
    r.unwrap_or_else(|_| Err(ToolError::internal("a read of the graph panicked")))
}

/// The definitions a file imports, in the order of the imports.
fn imported(graph: &GraphStore, cat: &Catalog, file_id: &str) -> Result<Vec<usize>, ToolError> {
    let mut found: Vec<(i64, usize)> = graph
        .imported_symbols(file_id)
        .map_err(ToolError::internal)?
        .into_iter()
        .filter_map(|(id, line)| Some((line, cat.by_id(&id)?)))
        .collect();
    found.sort_by(|a, b| {
        let (x, y) = (cat.entry(a.1), cat.entry(b.1));
        (a.0, x.path(), x.line_start()).cmp(&(b.0, y.path(), y.line_start()))
    });
    Ok(found.into_iter().map(|(_, i)| i).collect())
}

/// The symbol enclosing `anchor`, and the members of that parent, or (with no
/// parent) of `anchor` itself when it is a type; members in position order
/// (the catalog keeps the CONTAINS parent of each symbol).
fn type_of(cat: &Catalog, anchor: usize) -> (Option<usize>, Vec<usize>) {
    let parent = cat.parent(anchor);
    let kind = cat.entry(anchor).kind();
    if parent.is_none() && (matches!(kind, "fn" | "method") || is_value(kind)) {
        return (None, Vec::new());
    }
    (parent, cat.members(parent.unwrap_or(anchor)))
}

/// Kinds that hold a value rather than define behaviour or a type: the least
/// related of a file's symbols.
fn is_value(kind: &str) -> bool {
    matches!(
        kind,
        "const" | "static" | "var" | "variable" | "field" | "property"
    )
}

/// Files read per statement: most answers fill from the first few.
const FILES_PER_READ: usize = 8;

type FileFilter<'a> = &'a dyn Fn(&FileInfo) -> bool;

/// Related symbols in priority order, each once, up to a limit.
struct Related<'a> {
    cat: &'a Catalog,
    tokens: &'a Tokenizer,
    seen: HashSet<usize>,
    items: Vec<RelatedSymbol>,
    limit: usize,
    /// The answer's token budget, and what its items use of it.
    budget: usize,
    used: usize,
    more: bool,
}

impl Related<'_> {
    /// Adds entry `i` unless seen; false once the limit or the token budget
    /// is reached (and more exist).
    fn push(&mut self, i: usize, relation: &str) -> bool {
        if self.more {
            return false;
        }
        if !self.seen.insert(i) {
            return true;
        }
        let item = RelatedSymbol {
            symbol: SymbolRef::from(self.cat.entry(i)),
            relation: relation.into(),
        };
        let cost = self.tokens.estimate(&item);
        if self.items.len() >= self.limit || self.used + cost > self.budget {
            self.more = true;
            return false;
        }
        self.used += cost;
        self.items.push(item);
        true
    }
}
