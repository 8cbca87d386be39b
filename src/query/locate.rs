//! `locate_symbol`: where a name is defined, best first.

use super::answers::*;
use super::args::{LIST_TOKENS, clean_opt_path, limit, max_tokens, non_empty};
use super::budget::fitting;
use super::error::ToolError;
use super::inputs::LocateInput;
use super::view::View;
use crate::model::names::is_secondary_path;
use crate::store::search::Filters;

pub fn locate_symbol(
    c: &View,
    input: LocateInput,
) -> Result<(LocateAnswer, &'static str), ToolError> {
    let name = non_empty("name", &input.name)?;
    let under = clean_opt_path(input.path.as_deref())?;
    let limit = limit(input.limit, 10, 500)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let cat = c.catalog()?;
    let mut found = cat.find(name, None);
    let mut exact = true;
    if found.is_empty() {
        exact = false;
        found = cat.named_ignoring_case(crate::model::names::last_segment(name));
    }
    found.retain(|&i| {
        let s = cat.entry(i);
        input.kind.as_deref().is_none_or(|k| s.kind() == k)
            && input
                .language
                .as_deref()
                .is_none_or(|l| s.language().eq_ignore_ascii_case(l))
            && under
                .as_deref()
                .is_none_or(|u| s.path() == u || s.path().starts_with(&format!("{u}/")))
    });
    // Ranked in the catalog; only the shown ones are read from the graph.
    let mut scored: Vec<(f64, usize)> = found
        .into_iter()
        .map(|i| {
            let e = cat.entry(i);
            (
                locate_score(e.kind(), e.path(), exact, cat.imported_by(i)),
                i,
            )
        })
        .collect();
    let mut how = if exact { "exact" } else { "ignoring_case" };
    let mut cat = cat;
    if scored.is_empty() {
        // No definition has that name: the best search hits instead.
        how = "search";
        let s = c.search()?;
        let filters = Filters {
            language: input.language.as_deref(),
            kind: input.kind.as_deref(),
            path_prefix: under.as_deref(),
        };
        scored = s
            .index
            .search(&s.catalog, name, &filters, limit)
            .map_err(ToolError::internal)?
            .into_iter()
            .map(|h| (f64::from(h.score), h.entry))
            .collect();
        cat = s.catalog.clone();
    }
    scored.sort_by(|a, b| {
        let (x, y) = (cat.entry(a.1), cat.entry(b.1));
        b.0.total_cmp(&a.0)
            .then_with(|| x.path().cmp(y.path()))
            .then_with(|| x.line_start().cmp(&y.line_start()))
    });
    let total = scored.len();
    scored.truncate(limit);
    // Ranked and shown from the catalog alone.
    let mut results: Vec<LocatedSymbol> = scored
        .iter()
        .map(|&(score, i)| {
            let e = cat.entry(i);
            LocatedSymbol {
                symbol: SymbolRef::from(e),
                visibility: e.visibility().to_string(),
                doc: e.doc_summary().to_string(),
                score: (score * 1000.0).round() / 1000.0,
            }
        })
        .collect();
    results.truncate(fitting(&c.tokens, &results, budget));
    let truncated = results.len() < total;
    let completeness = if truncated { "truncated" } else { "complete" };
    Ok((
        LocateAnswer {
            results,
            total_found: total,
            truncated,
            exact,
            how: how.into(),
            metadata: Metadata::default(),
        },
        completeness,
    ))
}

/// Definitions over declarations and tests: exact names first, types over the
/// impl blocks that repeat their names, code over tests, vendored and generated files.
/// Among same-named definitions, one that many files import comes first.
fn locate_score(kind: &str, path: &str, exact: bool, imported_by: u32) -> f64 {
    let mut score = if exact { 1.0 } else { 0.8 };
    score *= 1.0 + 0.05 * (1.0 + f64::from(imported_by)).ln();
    if kind == "impl" {
        score *= 0.9;
    }
    if is_secondary_path(path) {
        score *= 0.5;
    }
    score
}
