//! `search_code`: ranked symbols for a query (Tantivy, adjusted with the
//! catalog's names and import counts; rows read from the graph).

use super::answers::*;
use super::args::{clean_opt_path, first_line, limit, lookup, non_empty, round3};
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
    // Ranked in the catalog; the hits' rows and enclosing symbols are read
    // from the graph by primary key, in one statement.
    let entries: Vec<usize> = hits.iter().map(|h| h.entry).collect();
    let score_of: std::collections::HashMap<usize, f32> =
        hits.iter().map(|h| (h.entry, h.score)).collect();
    let results: Vec<SearchHit> = lookup(c, &s.catalog, &entries, true)?
        .iter()
        .map(|(i, found)| {
            let row = &found.symbol;
            SearchHit {
                symbol: SymbolRef::from(row),
                doc: first_line(&row.doc).to_string(),
                score: round3(score_of.get(i).copied().unwrap_or(0.0)),
                // A member comes with its enclosing type's header.
                parent: found.parent.as_ref().map(|p| ParentHeader {
                    name: p.name.clone(),
                    kind: p.kind.clone(),
                    signature: p.signature.clone(),
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
