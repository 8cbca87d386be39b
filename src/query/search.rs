//! `search_code`: ranked symbols for a query (Tantivy, adjusted with the
//! catalog's names and import counts; rows from the catalog, docs and
//! enclosing symbols from the graph).

use super::answers::*;
use super::args::{clean_opt_path, docs_and_parents, first_line, limit, non_empty, round3};
use super::error::ToolError;
use super::inputs::SearchInput;
use super::view::View;
use crate::store::search::Filters;

pub fn search_code(
    c: &View,
    input: SearchInput,
) -> Result<(SearchAnswer, &'static str), ToolError> {
    let query = non_empty("query", &input.query)?;
    crate::store::search::check_query(query).map_err(ToolError::invalid_input)?;
    let limit = limit(input.limit, 10, 200)?;
    let prefix = clean_opt_path(input.path_prefix.as_deref())?;
    let s = c.search()?;
    let filters = Filters {
        language: input.language.as_deref(),
        kind: input.kind.as_deref(),
        path_prefix: prefix.as_deref(),
    };
    let hits = s
        .index
        .search(&s.catalog, query, &filters, limit)
        .map_err(ToolError::internal)?;
    // Ranked in the catalog; the hits' docs and enclosing symbols are read
    // from the graph, a primary-key lookup each, side by side.
    let cat = &s.catalog;
    let entries: Vec<usize> = hits.iter().map(|h| h.entry).collect();
    let mut context = docs_and_parents(c, cat, &entries)?;
    let results: Vec<SearchHit> = hits
        .iter()
        .filter_map(|h| {
            // Left out when the graph no longer holds it (a run committed since).
            let found = context.remove(&h.entry)?;
            Some(SearchHit {
                symbol: SymbolRef::from(cat.entry(h.entry)),
                doc: first_line(&found.doc).to_string(),
                score: round3(h.score),
                // A member comes with its enclosing type's header.
                parent: found.parent.and_then(|p| cat.by_id(&p)).map(|p| {
                    let p = cat.entry(p);
                    ParentHeader {
                        name: p.name().to_string(),
                        kind: p.kind().to_string(),
                        signature: p.signature().to_string(),
                    }
                }),
            })
        })
        .collect();
    Ok((
        SearchAnswer {
            total_found: results.len(),
            results,
            query: query.to_string(),
            metadata: Metadata::default(),
        },
        "complete",
    ))
}
