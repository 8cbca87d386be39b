//! `get_code_context`: the code most relevant to a question, ranked and
//! expanded through the graph, fitted to a token budget.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::answers::*;
use super::args::{canonical_root, non_empty, round3};
use super::budget::Tokenizer;
use super::error::ToolError;
use super::inputs::ContextInput;
use super::texts::SourceTexts;
use super::view::View;
use crate::store::catalog::{Catalog, Entry};
use crate::store::graph::{FileInfo, GraphStore};
use crate::store::search::{Filters, Hit};

pub fn get_code_context(
    c: &View,
    input: ContextInput,
) -> Result<(ContextAnswer, &'static str), ToolError> {
    let max_tokens = input.max_tokens.unwrap_or(4000);
    if max_tokens < 1 {
        return Err(ToolError::invalid_max_tokens(max_tokens));
    }
    let strategy = input.strategy.as_deref().unwrap_or("breadth");
    let with_bodies = match strategy {
        "breadth" => false,
        "depth" => true,
        other => return Err(ToolError::invalid_strategy(other)),
    };
    let query = non_empty("query", &input.query)?;
    crate::store::search::check_query(query).map_err(ToolError::invalid_input)?;
    let s = c.search()?;
    let cat = &s.catalog;
    let filters = Filters {
        language: input.language.as_deref(),
        ..Filters::default()
    };
    let hits = s
        .index
        .search(cat, query, &filters, 100)
        .map_err(ToolError::internal)?;
    let mut sources = Sources::new(c);
    let budget = max_tokens as usize;
    let mut filled = Filled::default();
    let ranked: Vec<Candidate> = hits.iter().map(|h| (h.entry, h.score, None)).collect();
    fill(
        &c.tokens,
        cat,
        &ranked,
        budget,
        with_bodies,
        &mut sources,
        &mut filled,
    );
    let mut total = ranked.len();
    // The graph's candidates rank after every hit, so they are read only when
    // the hits leave room for one, or all fit (then the total counts them
    // too): most queries fill the budget with hits and skip ~20 graph reads.
    if budget.saturating_sub(filled.used) >= smallest_expanded(with_bodies)
        || filled.items.len() == ranked.len()
    {
        let more = expand(c, cat, &hits, &filters, &mut sources)?;
        total += more.len();
        fill(
            &c.tokens,
            cat,
            &more,
            budget,
            with_bodies,
            &mut sources,
            &mut filled,
        );
    }
    let Filled { items, used } = filled;
    let returned = items.len();
    let truncated = returned < total;
    let meta = ContextMeta {
        total_candidates: total,
        returned,
        strategy: strategy.to_string(),
        max_tokens: budget,
        remaining_candidates: truncated.then_some(total - returned),
        suggestion: truncated.then(|| {
            if returned == 0 {
                "No candidate fits this budget: increase max_tokens, or use locate_symbol for specific symbols"
            } else {
                "Use locate_symbol for specific symbols, or increase max_tokens"
            }
            .to_string()
        }),
    };
    Ok((
        ContextAnswer {
            context_items: items,
            estimated_tokens: used,
            truncated,
            metadata: Metadata::with(meta),
        },
        if truncated { "partial" } else { "complete" },
    ))
}

/// A candidate: its catalog entry, its score, and how it came in through the
/// graph (`None` for a search hit).
type Candidate = (usize, f32, Option<Via>);

/// The graph's candidates (expansion) for the best hits: the symbol enclosing
/// each (kept in the catalog), the definitions its file imports
/// that its code mentions (`queries/file_imported_symbols.cypher`), and what
/// it calls and what calls it (`queries/calls/calls_out.cypher`,
/// `callers_of.cypher`; every tier but `name`).
fn expand(
    c: &View,
    cat: &Catalog,
    hits: &[Hit],
    filters: &Filters<'_>,
    sources: &mut Sources,
) -> Result<Vec<Candidate>, ToolError> {
    let best = &hits[..hits.len().min(EXPAND_HITS)];
    let best_entries: Vec<usize> = best.iter().map(|h| h.entry).collect();
    let imports = imports_of(c, cat, best)?;
    let (callees, callers) = calls_of(&c.graph, cat, &best_entries)?;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut seen: HashSet<usize> = hits.iter().map(|h| h.entry).collect();
    for h in best {
        if let Some(p) = cat.parent(h.entry)
            && seen.insert(p)
        {
            candidates.push((p, h.score * 0.5, Some(("parent", h.entry))));
        }
        let hit = cat.entry(h.entry);
        if let Some(targets) = imports.get(hit.path())
            && let Some(code) = sources.text_of(hit)
        {
            let mut added = 0;
            for &imp in targets {
                if added == EXPAND_IMPORTS {
                    break;
                }
                let target = cat.entry(imp);
                if filters.language.is_some() && target.language() != hit.language() {
                    continue; // the hit passed the filter; its language is the one asked for
                }
                if mentions(&code, target.name()) && seen.insert(imp) {
                    candidates.push((imp, h.score * 0.4, Some(("imported", h.entry))));
                    added += 1;
                }
            }
        }
        for (relation, found, weight) in [("callee", &callees, 0.35), ("caller", &callers, 0.3)] {
            let list = found.get(&h.entry).map_or(&[][..], Vec::as_slice);
            for &i in list.iter().filter(|&&i| seen.insert(i)).take(EXPAND_CALLS) {
                candidates.push((i, h.score * weight, Some((relation, h.entry))));
            }
        }
    }
    Ok(candidates)
}

/// Catalog entries by catalog entry.
type Neighbours = HashMap<usize, Vec<usize>>;

/// What each of the `entries` (functions and methods) calls, in the order of
/// its call sites, and what calls it, in position order: catalog entries, by
/// entry, itself left out. The two walks run side by side, on two readers.
pub(super) fn calls_of(
    graph: &GraphStore,
    cat: &Catalog,
    entries: &[usize],
) -> Result<(Neighbours, Neighbours), ToolError> {
    let callable: Vec<usize> = entries
        .iter()
        .copied()
        .filter(|&i| matches!(cat.entry(i).kind(), "fn" | "method"))
        .collect();
    if callable.is_empty() {
        return Ok((HashMap::new(), HashMap::new()));
    }
    let callable = &callable;
    std::thread::scope(|s| {
        let callers = s.spawn(move || callers_of(graph, cat, callable));
        let callees = callees_of(graph, cat, callable);
        let callers = callers
            .join()
            .unwrap_or_else(|_| Err(ToolError::internal("a read of the graph panicked")));
        Ok((callees?, callers?))
    })
}

/// Every tier but the last (`name`): a guess is no context.
fn tiers() -> usize {
    GraphStore::CALL_TIERS.len() - 1
}

fn callees_of(
    graph: &GraphStore,
    cat: &Catalog,
    callable: &[usize],
) -> Result<Neighbours, ToolError> {
    let ids: Vec<String> = callable.iter().map(|&i| cat.entry(i).id()).collect();
    let out = graph.calls_out(ids, tiers()).map_err(ToolError::internal)?;
    let mut callees = HashMap::new();
    for (&i, mut sites) in callable.iter().zip(out) {
        sites.sort_by_key(|(_, line, col, _)| (*line, *col));
        let mut list: Vec<usize> = Vec::new();
        for j in sites.iter().filter_map(|(id, _, _, _)| cat.by_id(id)) {
            if j != i && !list.contains(&j) {
                list.push(j);
            }
        }
        callees.insert(i, list);
    }
    Ok(callees)
}

fn callers_of(
    graph: &GraphStore,
    cat: &Catalog,
    callable: &[usize],
) -> Result<Neighbours, ToolError> {
    let ids: Vec<String> = callable.iter().map(|&i| cat.entry(i).id()).collect();
    let into = graph
        .direct_callers(ids, tiers())
        .map_err(ToolError::internal)?;
    let mut callers = HashMap::new();
    for (&i, found) in callable.iter().zip(into) {
        let mut list: Vec<usize> = found
            .iter()
            .filter_map(|id| cat.by_id(id))
            .filter(|&j| j != i)
            .collect();
        cat.sort_by_position(&mut list);
        callers.insert(i, list);
    }
    Ok(callers)
}

/// Fewer tokens than any candidate the graph adds can cost: its keys and
/// numbers, and a letter in each string that is never empty (the pieces no
/// longer text can merge away: [`super::budget::pieces_at_least`]).
fn smallest_expanded(with_bodies: bool) -> usize {
    // A constant of the answer's shape, found once rather than per answer.
    static FLOORS: std::sync::OnceLock<[usize; 2]> = std::sync::OnceLock::new();
    FLOORS.get_or_init(|| [floor_of(false), floor_of(true)])[usize::from(with_bodies)]
}

fn floor_of(with_bodies: bool) -> usize {
    let x = || "x".to_string();
    let item = ContextItem {
        symbol: SymbolRef {
            symbol_id: x(),
            name: x(),
            kind: x(),
            qualified_name: x(),
            path: x(),
            line_start: 1,
            line_end: 1,
            signature: String::new(),
            language: x(),
        },
        score: 0.0,
        context_of: Some(x()),
        relation: Some("parent".into()),
        body: with_bodies.then(String::new),
        body_truncated: None,
    };
    let json = serde_json::to_string(&item).unwrap_or_default();
    super::budget::words_estimate(&json).max(super::budget::pieces_at_least(&json))
}

/// The items an answer holds so far, and the tokens they use.
#[derive(Default)]
struct Filled {
    items: Vec<ContextItem>,
    used: usize,
}

/// Adds the candidates that fit `budget` tokens, in rank order (an item that
/// does not fit is skipped and the next tried; with bodies, the best
/// candidate's body is cut to fit rather than dropped).
fn fill(
    tokens: &Tokenizer,
    cat: &Catalog,
    candidates: &[Candidate],
    budget: usize,
    with_bodies: bool,
    sources: &mut Sources,
    filled: &mut Filled,
) {
    let Filled { items, used } = filled;
    for &(i, score, via) in candidates {
        if *used >= budget {
            break;
        }
        let e = cat.entry(i);
        let body = if with_bodies {
            sources.text_of(e)
        } else {
            None
        };
        let item = ContextItem {
            symbol: SymbolRef::from(e),
            score: round3(score),
            context_of: via.map(|(_, hit)| cat.entry(hit).qualified_name().to_string()),
            relation: via.map(|(relation, _)| relation.to_string()),
            body: body.clone(),
            body_truncated: None,
        };
        let json = serde_json::to_string(&item).unwrap_or_default();
        if let Some(cost) = tokens.estimate_within(&json, budget - *used)
            && *used + cost <= budget
        {
            *used += cost;
            items.push(item);
            continue;
        }
        if let (Some(b), true) = (&body, items.is_empty())
            && let Some((cut, cost)) = cut_to_fit(tokens, &item, b, budget - *used)
        {
            *used += cost;
            items.push(cut);
        }
    }
}

/// The source files one answer reads, each read once (or kept from an
/// earlier answer: [`SourceTexts`]).
struct Sources {
    root: std::path::PathBuf,
    files: crate::store::catalog::Files,
    kept: Arc<SourceTexts>,
    texts: HashMap<String, Option<Arc<str>>>,
}

impl Sources {
    fn new(c: &View) -> Sources {
        Sources {
            root: canonical_root(c.root()),
            files: c.files().unwrap_or_default(),
            kept: c.texts.clone(),
            texts: HashMap::new(),
        }
    }

    /// A symbol's source text, when its file can be read.
    fn text_of(&mut self, e: Entry<'_>) -> Option<String> {
        let path = e.path();
        let (root, files, kept) = (&self.root, &self.files, &self.kept);
        let text = self
            .texts
            .entry(path.to_string())
            .or_insert_with(|| {
                files
                    .binary_search_by(|f| f.path.as_str().cmp(path))
                    .ok()
                    .and_then(|k| kept.text(root, &files[k]))
            })
            .clone()?;
        let (start, end) = e.bytes();
        text.get(start..end.min(text.len())).map(str::to_string)
    }
}

/// The definitions each of the hits' files imports (as catalog entries, in
/// position order, one per import edge): a walk per file
/// (`queries/file_imported_symbols.cypher`), the files side by side.
fn imports_of(
    c: &View,
    cat: &Catalog,
    hits: &[Hit],
) -> Result<HashMap<String, Vec<usize>>, ToolError> {
    let files = c.files()?;
    let mut wanted: Vec<&FileInfo> = hits
        .iter()
        .filter_map(|h| {
            let path = cat.entry(h.entry).path();
            let k = files.binary_search_by(|f| f.path.as_str().cmp(path)).ok()?;
            Some(&*files[k])
        })
        .collect();
    wanted.sort_by(|a, b| a.path.cmp(&b.path));
    wanted.dedup_by(|a, b| a.path == b.path);
    let ids = wanted.iter().map(|f| f.id.clone()).collect();
    let walked = c
        .graph
        .files_imported_symbols(ids)
        .map_err(ToolError::internal)?;
    let mut out: HashMap<String, Vec<usize>> = HashMap::new();
    for (f, imports) in wanted.into_iter().zip(walked) {
        let mut list: Vec<usize> = imports.iter().filter_map(|(id, _)| cat.by_id(id)).collect();
        cat.sort_by_position(&mut list);
        out.insert(f.path.clone(), list);
    }
    Ok(out)
}

/// How a get_code_context candidate came in through the graph: the relation
/// (`parent`, `imported`, `callee`, `caller`) and the hit it was reached from.
type Via = (&'static str, usize);

/// How many of the best hits get_code_context expands through the graph, and how
/// many imported definitions it adds per hit.
const EXPAND_HITS: usize = 5;

const EXPAND_IMPORTS: usize = 3;

/// Callees, and callers, get_code_context adds per expanded hit.
const EXPAND_CALLS: usize = 2;

/// Whether `code` uses the identifier `name` (a whole word, not part of a longer one).
fn mentions(code: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// `base` with the longest head of `body` (whole lines) that keeps the item within
/// `room` tokens, marked as cut; `None` if not even the first line fits.
fn cut_to_fit(
    tokens: &Tokenizer,
    base: &ContextItem,
    body: &str,
    room: usize,
) -> Option<(ContextItem, usize)> {
    let lines: Vec<&str> = body.lines().collect();
    let make = |n: usize| {
        let mut text = lines[..n].join("\n");
        text.push_str("\n… [cut to fit max_tokens]");
        ContextItem {
            body: Some(text),
            body_truncated: Some(true),
            ..base.clone()
        }
    };
    let (mut lo, mut hi) = (0usize, lines.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let json = serde_json::to_string(&make(mid)).unwrap_or_default();
        if tokens
            .estimate_within(&json, room)
            .is_some_and(|cost| cost <= room)
        {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return None;
    }
    let item = make(lo);
    let cost = tokens.estimate(&item);
    Some((item, cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No candidate the graph adds costs less than the floor that decides
    /// whether the graph is read: short, odd and non-ASCII names alike.
    #[test]
    fn no_expanded_item_costs_less_than_the_floor() {
        let tokens = Tokenizer::default();
        let names = [
            "a", "é", "中", "_", "$x", "a1", "ÄÖÜ", "x'y", "123", "A_B_C",
        ];
        for with_bodies in [false, true] {
            let floor = smallest_expanded(with_bodies);
            assert!(floor > 20, "{floor}");
            for (k, name) in names.iter().enumerate() {
                for relation in ["parent", "imported", "callee", "caller"] {
                    let item = ContextItem {
                        symbol: SymbolRef {
                            symbol_id: ["s0000000000-", "sAbCdEfGhIjK", "s_-_-_-_-_-_"][k % 3]
                                .into(),
                            name: name.to_string(),
                            kind: "fn".into(),
                            qualified_name: name.to_string(),
                            path: name.to_string(),
                            line_start: 1,
                            line_end: 1,
                            signature: String::new(),
                            language: "go".into(),
                        },
                        score: 0.0,
                        context_of: Some(name.to_string()),
                        relation: Some(relation.into()),
                        body: with_bodies.then(|| name.to_string()),
                        body_truncated: None,
                    };
                    let cost = tokens.estimate(&item);
                    assert!(cost >= floor, "{cost} < {floor}: {item:?}");
                }
            }
        }
    }
}
