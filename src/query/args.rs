//! Checks and helpers the queries share: repo-relative paths, limits, names
//! resolved to one symbol, source files read from the tree (never outside it).

use std::path::Path;

use super::error::{Candidate, ToolError};
use super::view::View;
use crate::store::catalog::Catalog;
use crate::store::graph::FileInfo;

/// A repo-relative path as given by a client, normalised by its text alone:
/// `.`, `..` within the repo and `\` are resolved; absolute paths and any `..`
/// that would climb above the root are refused (nothing outside the repo is
/// ever named). Symlinks are checked where files are read.
pub fn clean_path(p: &str) -> Result<String, ToolError> {
    let p = p.trim().replace('\\', "/");
    if p.starts_with('/') || p.get(1..2) == Some(":") {
        return Err(ToolError::invalid_input(format!(
            "`{p}` is absolute; paths are relative to the repository root"
        )));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(ToolError::invalid_input(format!(
                        "`{p}` leaves the repository; paths are relative to its root"
                    )));
                }
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

pub fn clean_opt_path(p: Option<&str>) -> Result<Option<String>, ToolError> {
    match p {
        None => Ok(None),
        Some(p) => clean_path(p).map(|c| Some(c).filter(|c| !c.is_empty())),
    }
}

pub fn limit(v: Option<i64>, default: usize, max: usize) -> Result<usize, ToolError> {
    match v {
        None => Ok(default),
        Some(n) if n >= 1 && n as u64 <= max as u64 => Ok(n as usize),
        Some(n) => Err(ToolError::invalid_input(format!(
            "limit must be between 1 and {max}, not {n}"
        ))),
    }
}

/// The default token budget of a list-like answer (CONTRACT section 3).
pub const LIST_TOKENS: usize = 4000;

/// A `max_tokens` argument: at least 1.
pub fn max_tokens(v: Option<i64>, default: usize) -> Result<usize, ToolError> {
    match v {
        None => Ok(default),
        Some(n) if n >= 1 => Ok(n as usize),
        Some(n) => Err(ToolError::invalid_max_tokens(n)),
    }
}

/// A page's start: the `next_cursor` of the page before (none: the first).
pub fn cursor(tool: &str, c: Option<&str>) -> Result<usize, ToolError> {
    match c.map(str::trim).filter(|c| !c.is_empty()) {
        None => Ok(0),
        Some(c) => c.parse().map_err(|_| {
            ToolError::invalid_input(format!(
                "`{c}` is not a cursor of {tool}; pass the `next_cursor` of the previous page"
            ))
        }),
    }
}

/// A cursor must point into the answer it pages (at most at its end): one
/// past it was not made by the tool.
pub fn cursor_in(tool: &str, from: usize, total: usize) -> Result<(), ToolError> {
    if from > total {
        return Err(ToolError::invalid_input(format!(
            "cursor {from} is past the end of {tool}'s answer ({total} items); pass the `next_cursor` of the previous page"
        )));
    }
    Ok(())
}

/// A page that holds nothing though nodes were left is refused (a client
/// paging through it would never get past it): the next node alone does not
/// fit `max_tokens`.
pub fn page_holds_something<T>(
    page: &super::budget::Page<T>,
    max_tokens: usize,
) -> Result<(), ToolError> {
    match page.needed {
        Some(needed) => Err(ToolError::max_tokens_too_small(max_tokens, needed)),
        None => Ok(()),
    }
}

pub fn non_empty<'a>(field: &str, v: &'a str) -> Result<&'a str, ToolError> {
    let t = v.trim();
    if t.is_empty() {
        Err(ToolError::invalid_input(format!(
            "`{field}` must not be empty"
        )))
    } else {
        Ok(t)
    }
}

/// The one symbol meant by `name` (and `path`), as its catalog entry. Several
/// symbols of one qualified name in one file are a Rust type and its impl
/// blocks: the type is meant.
pub fn resolve_one(
    c: &View<'_>,
    cat: &Catalog,
    name: &str,
    path: Option<&str>,
) -> Result<usize, ToolError> {
    let found = cat.find(name, path);
    let first = found.first().map(|&i| cat.entry(i));
    match found.len() {
        0 => Err(ToolError::symbol_not_found(
            name,
            path,
            &c.repo,
            &c.ref_name,
            &similar(c, cat, name),
        )),
        1 => Ok(found[0]),
        _ => {
            let one_place = first.is_some_and(|f| {
                found.iter().all(|&i| {
                    let e = cat.entry(i);
                    e.qualified_name() == f.qualified_name() && e.path() == f.path()
                })
            });
            match found.iter().find(|&&i| cat.entry(i).kind() != "impl") {
                Some(&i) if one_place => Ok(i),
                _ => {
                    let candidates: Vec<Candidate> = found
                        .iter()
                        .map(|&i| Candidate::from(cat.entry(i)))
                        .collect();
                    Err(ToolError::ambiguous_symbol(name, &candidates))
                }
            }
        }
    }
}

/// How many names "did you mean" offers.
const SUGGESTIONS: usize = 3;

/// Definitions whose names are close to `name`, which names none: the same
/// name in another case first, then the search index's nearest (a typo, a
/// word left out), each qualified name once.
fn similar(c: &View<'_>, cat: &Catalog, name: &str) -> Vec<Candidate> {
    let mut entries = cat.named_ignoring_case(crate::model::names::last_segment(name));
    if let Ok(s) = c.search()
        && let Ok(hits) = s
            .index
            .similar(&s.catalog, crate::model::names::last_segment(name), 10)
    {
        // The search may hold an older catalog: its entries, by id, in this one.
        let near: Vec<usize> = hits
            .iter()
            .filter_map(|h| cat.by_id(&s.catalog.entry(h.entry).id()))
            .collect();
        // Nearest spelling first, the search's order among equals; a name
        // that shares a word but not the spelling is no suggestion.
        let asked = crate::model::names::last_segment(name).to_lowercase();
        let within = 2.max(asked.chars().count() / 2);
        let mut near: Vec<(usize, usize)> = near
            .into_iter()
            .map(|i| {
                (
                    edit_distance(&cat.entry(i).name().to_lowercase(), &asked),
                    i,
                )
            })
            .filter(|&(d, _)| d <= within)
            .collect();
        near.sort_by_key(|&(d, _)| d);
        entries.extend(near.into_iter().map(|(_, i)| i));
    }
    let mut seen = std::collections::HashSet::new();
    entries
        .into_iter()
        .map(|i| cat.entry(i))
        .filter(|e| e.kind() != "impl" && seen.insert(e.qualified_name().to_string()))
        .take(SUGGESTIONS)
        .map(Candidate::from)
        .collect()
}

/// Levenshtein distance of two short names, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

// get_symbol_hierarchy

// get_file_outline

/// Reads an indexed file from the working tree, refusing anything that resolves
/// outside the repository (a path replaced by a symlink since indexing). Returns
/// the text and whether it differs from what was indexed.
pub fn read_source(root: &Path, f: &FileInfo) -> Result<(String, bool), ToolError> {
    let root = root.canonicalize().map_err(ToolError::internal)?;
    let full = root.join(&f.path);
    let real = full
        .canonicalize()
        .map_err(|e| ToolError::file_not_found_on_disk(&f.path, e))?;
    if !real.starts_with(&root) {
        return Err(ToolError::invalid_input(format!(
            "{} now resolves outside the repository; refusing to read it",
            f.path
        )));
    }
    let bytes = std::fs::read(&real).map_err(|e| ToolError::file_not_found_on_disk(&f.path, e))?;
    let stale = crate::model::content_hash(&bytes) != f.content_hash;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), stale))
}

/// An indexed file's text for context bodies: as `read_source` but without the
/// staleness hash (the answer's budget matters more than that check here).
/// `root` is the repository's canonical path ([`canonical_root`]), found once
/// for all the files an answer reads.
pub fn read_text(root: &Path, path: &str) -> Option<String> {
    String::from_utf8(super::texts::read_bytes(root, path)?).ok()
}

/// `root` as `read_text` takes it: canonical, or as given if it cannot be
/// resolved (then every read under it fails the same way).
pub fn canonical_root(root: std::path::PathBuf) -> std::path::PathBuf {
    root.canonicalize().unwrap_or(root)
}

pub fn round3(x: f32) -> f64 {
    (f64::from(x) * 1000.0).round() / 1000.0
}
