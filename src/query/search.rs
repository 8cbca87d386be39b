//! `search_code`: ranked symbols for a query (Tantivy, adjusted with the
//! catalog's names and import counts; rows from the catalog, enclosing
//! symbols from the graph).

use super::answers::*;
use super::args::{LIST_TOKENS, clean_opt_path, limit, max_tokens, non_empty, round3};
use super::budget::fitting;
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
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
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
    // Ranked and shown from the catalog, each hit's enclosing symbol too.
    let cat = &s.catalog;
    let mut results: Vec<SearchHit> = hits
        .iter()
        .map(|h| {
            let e = cat.entry(h.entry);
            SearchHit {
                symbol: SymbolRef::from(e),
                doc: e.doc_summary().to_string(),
                score: round3(h.score),
                // A member comes with its enclosing type's header.
                parent: cat.parent(h.entry).map(|p| {
                    let p = cat.entry(p);
                    ParentHeader {
                        name: p.name().to_string(),
                        kind: p.kind().to_string(),
                        signature: p.signature().to_string(),
                    }
                }),
            }
        })
        .collect();
    let total_found = results.len();
    results.truncate(fitting(&c.tokens, &results, budget));
    let truncated = results.len() < total_found;
    Ok((
        SearchAnswer {
            total_found,
            truncated,
            results,
            query: query.to_string(),
            metadata: Metadata::default(),
        },
        if truncated { "truncated" } else { "complete" },
    ))
}
