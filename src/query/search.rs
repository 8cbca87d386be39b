//! `search_code`: ranked symbols for a query (Tantivy over the catalog).

use super::answers::*;
use super::args::{clean_opt_path, first_line, limit, non_empty, round3};
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
    let results: Vec<SearchHit> = hits
        .iter()
        .map(|h| {
            let entry = s.catalog.entry(h.entry);
            let row = &entry.row;
            SearchHit {
                symbol: SymbolRef::from(row),
                doc: first_line(&row.doc).to_string(),
                score: round3(h.score),
                // A member comes with its enclosing type's header.
                parent: entry.parent.map(|p| {
                    let parent = &s.catalog.entry(p).row;
                    ParentHeader {
                        name: parent.name.clone(),
                        kind: parent.kind.clone(),
                        signature: parent.signature.clone(),
                    }
                }),
            }
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
