//! `find_references`: a definition and every use of it (calls, references,
//! imports), by file, with the enclosing symbol, the tier that proved each
//! and its source line; and how many sites named it without proof.

use std::collections::BTreeMap;

use super::super::answers::*;
use super::super::args::{LIST_TOKENS, clean_opt_path, limit, max_tokens, non_empty, resolve_one};
use super::super::budget::{fitting, keep_within};
use super::super::error::ToolError;
use super::super::inputs::{RefKind, ReferencesInput};
use super::super::view::View;
use super::{Lines, completeness, declarations};
use crate::store::catalog::Catalog;

/// One use before it is rendered.
struct Site {
    path: String,
    line: i64,
    col: i64,
    kind: String,
    from: Option<usize>,
    confidence: String,
    via: Option<usize>,
}

pub fn find_references(
    c: &View,
    input: ReferencesInput,
) -> Result<(ReferencesAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let limit = limit(input.limit, 100, 1000)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let offset = super::super::args::cursor("find_references", input.cursor.as_deref())?;
    let cat = c.catalog()?;
    let target = resolve_one(c, &cat, name, path.as_deref())?;
    let t = cat.entry(target);

    // Its own uses, then the calls of the declarations it implements (a
    // trait's or base class's method: those calls may reach it).
    let mut sites: Vec<Site> = Vec::new();
    let mut starts = vec![(target, None)];
    let starts_via = declarations(c, &cat, target)?;
    starts.extend(starts_via.iter().map(|&d| (d, Some(d))));
    for (start, via) in starts {
        let uses = c
            .graph
            .uses_of(&cat.entry(start).id())
            .map_err(ToolError::internal)?;
        for (rel, from, from_file, from_path, line, col, ref_kind, confidence) in uses {
            let kind = match rel.as_str() {
                "CALLS" => "call".to_string(),
                "IMPORTS" => "import".to_string(),
                _ => ref_kind,
            };
            // Through a declaration, only calls reach the implementation.
            if via.is_some() && kind != "call" {
                continue;
            }
            if !wanted(input.kind, &kind) {
                continue;
            }
            sites.push(Site {
                path: from_path,
                line,
                col,
                kind,
                from: if from_file { None } else { cat.by_id(&from) },
                confidence,
                via,
            });
        }
    }
    sites.sort_by(|a, b| {
        (&a.path, a.line, a.col, &a.kind, a.via).cmp(&(&b.path, b.line, b.col, &b.kind, b.via))
    });
    sites.dedup_by(|a, b| (&a.path, a.line, a.col, &a.kind) == (&b.path, b.line, b.col, &b.kind));

    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &sites {
        *per_file.entry(s.path.as_str()).or_default() += 1;
    }
    let mut files: Vec<FileCount> = per_file
        .into_iter()
        .map(|(path, count)| FileCount {
            path: path.to_string(),
            count,
        })
        .collect();
    let total_files = files.len();

    let unresolved: i64 = c
        .graph
        .unresolved_named(&c.repo, &c.ref_name, vec![t.name().to_string()])
        .map_err(ToolError::internal)?
        .into_iter()
        .flatten()
        .filter(|(kind, _)| wanted(input.kind, kind))
        .map(|(_, n)| n)
        .sum();

    // Every same-name site no tier proved could be a use (calls: the only
    // sites kept unproven); the uses listed include value uses and the
    // `name` tier's, so those hide nothing here.
    let kinds: &[&str] = if wanted(input.kind, "call") {
        &["call"]
    } else {
        &[]
    };
    let mut asked = vec![target];
    asked.extend(starts_via.iter().copied());
    let mut unproven = completeness::into(
        c,
        &cat,
        &asked,
        completeness::Into {
            kinds,
            name_tier_left_out: false,
            values_hide_calls: false,
        },
    )?;
    let total = sites.len();
    super::super::args::cursor_in("find_references", offset, total)?;
    let end = offset.saturating_add(limit).min(total);
    let mut lines = Lines::new(c);
    let mut references: Vec<Reference> = sites
        .get(offset.min(total)..end)
        .unwrap_or_default()
        .iter()
        .map(|s| render(&cat, &mut lines, t.name(), s))
        .collect();
    // The files with uses take at most a quarter of the budget; the page of
    // references the rest. A page cut to fit goes on where it stopped. A
    // budget that holds no reference at all is refused: a page of none would
    // never get through.
    let used = keep_within(&c.tokens, &mut files, budget / 4);
    let mut fit = fitting(&c.tokens, &references, budget - used);
    if fit == 0 && !references.is_empty() {
        files.clear();
        fit = fitting(&c.tokens, &references, budget);
    }
    if fit == 0 && !references.is_empty() {
        return Err(ToolError::max_tokens_too_small(
            budget,
            c.tokens.estimate(&references[0]) + 1,
        ));
    }
    references.truncate(fit);
    // The unproven sites listed take what the page leaves, at most an eighth.
    let room = budget
        .saturating_sub(c.tokens.estimate(&references) + c.tokens.estimate(&files))
        .min(budget / 8);
    keep_within(&c.tokens, &mut unproven.sites, room);
    let end = offset.saturating_add(references.len()).min(total);
    let more = end < total;
    let cut = more || files.len() < total_files;
    let body = ReferencesAnswer {
        symbol: SymbolRef::from(t),
        references,
        files,
        total_files,
        total,
        unresolved,
        completeness: unproven.completeness().into(),
        unproven: unproven.count,
        unproven_sites: unproven.sites,
        truncated: cut,
        next_cursor: more.then(|| end.to_string()),
        metadata: Metadata::default(),
    };
    Ok((body, if cut { "truncated" } else { "complete" }))
}

/// Whether a use of `kind` is asked for.
fn wanted(asked: RefKind, kind: &str) -> bool {
    match asked {
        RefKind::All => true,
        RefKind::Call => kind == "call",
        RefKind::Type => matches!(kind, "type" | "construct" | "extends" | "implements"),
        RefKind::Import => kind == "import",
        RefKind::Value => kind == "value",
    }
}

fn render(cat: &Catalog, lines: &mut Lines, name: &str, s: &Site) -> Reference {
    let text = lines.line(&s.path, s.line);
    // An import's edge has no column: where the name is on its line.
    let col = match s.col {
        0 => text_col(&lines.raw(&s.path, s.line), name),
        n => n,
    };
    Reference {
        path: s.path.clone(),
        line: s.line,
        col,
        kind: s.kind.clone(),
        from: s.from.map(|i| FromSymbol::from(cat.entry(i))),
        confidence: s.confidence.clone(),
        text,
        via: s.via.map(|d| cat.entry(d).qualified_name().to_string()),
    }
}

/// The 1-based byte column of `name` on `line` (1 when it is not there).
fn text_col(line: &str, name: &str) -> i64 {
    line.find(name).map_or(1, |k| k as i64 + 1)
}
