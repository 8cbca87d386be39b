//! One ref's symbols and their CONTAINS tree, held in memory by the server.
//!
//! Kuzu 0.11 has no secondary indexes: finding a symbol by name scans the Symbol
//! table, and every query pays a few milliseconds of planning and column reads.
//! The MCP tools answer in well under that by loading each ref's tree once per
//! index run (two Cypher queries: the symbols, and the CONTAINS edges into them)
//! and walking it here: lookups by id, name (exact or ignoring case) and file,
//! parent chains and subtrees. Walks keep a visited set and a depth bound, so even
//! a damaged tree cannot loop.
//!
//! Architecture invariant: built from the graph's committed state and replaced
//! whole after each index run; never written to otherwise.

use std::collections::{HashMap, HashSet};

use crate::graph;
use crate::graph::{Changes, FileSymbol, SymbolRow};

/// Deeper nesting than this is treated as damage and not followed.
pub const MAX_DEPTH: usize = 30;

#[derive(Debug, Clone)]
pub struct Entry {
    pub row: SymbolRow,
    pub byte_start: usize,
    pub byte_end: usize,
    /// Index of the enclosing symbol; `None` = contained by its file.
    pub parent: Option<usize>,
    /// Nested symbols in line order.
    pub children: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
    by_lower: HashMap<String, Vec<usize>>,
    /// Top-level symbols of each file, in line order.
    by_file: HashMap<String, Vec<usize>>,
    /// How many import edges point at each imported symbol.
    imported_by: HashMap<usize, u32>,
    /// Unique per built catalog: caches derived from one (the search index's
    /// term-to-entry maps) are keyed by it.
    generation: u64,
    /// The symbols each file imports (resolved edges, one per edge), in (path, line) order.
    imports_of: HashMap<String, Vec<usize>>,
}

impl Catalog {
    /// Builds the catalog from symbol rows (with byte ranges) and CONTAINS edges
    /// `(parent id, child id, parent is a file)`.
    pub fn build(
        rows: Vec<(SymbolRow, usize, usize)>,
        edges: Vec<(String, String, bool)>,
    ) -> Catalog {
        let mut rows = rows;
        rows.sort_by(|a, b| {
            (
                a.0.path.as_str(),
                a.0.line_start,
                a.1,
                std::cmp::Reverse(a.2),
            )
                .cmp(&(
                    b.0.path.as_str(),
                    b.0.line_start,
                    b.1,
                    std::cmp::Reverse(b.2),
                ))
        });
        static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mut c = Catalog {
            generation: GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            ..Catalog::default()
        };
        for (i, (row, start, end)) in rows.into_iter().enumerate() {
            c.by_id.insert(row.id.clone(), i);
            c.by_name.entry(row.name.clone()).or_default().push(i);
            c.by_lower
                .entry(row.name.to_lowercase())
                .or_default()
                .push(i);
            c.entries.push(Entry {
                row,
                byte_start: start,
                byte_end: end,
                parent: None,
                children: Vec::new(),
            });
        }
        let mut contained: HashSet<usize> = HashSet::new();
        for (parent, child, from_file) in edges {
            let Some(&ci) = c.by_id.get(&child) else {
                continue;
            };
            if !contained.insert(ci) {
                continue; // a second parent would be damage: keep the first
            }
            if !from_file
                && let Some(&pi) = c.by_id.get(&parent)
                && pi != ci
            {
                c.entries[ci].parent = Some(pi);
            }
        }
        for i in 0..c.entries.len() {
            match c.entries[i].parent {
                Some(p) => c.entries[p].children.push(i),
                None => {
                    let path = c.entries[i].row.path.clone();
                    c.by_file.entry(path).or_default().push(i);
                }
            }
        }
        // Entries are in (path, line) order, so children and files already are.
        c
    }

    /// The number of import edges that point at entry `i`.
    pub fn imported_by(&self, i: usize) -> u32 {
        self.imported_by.get(&i).copied().unwrap_or(0)
    }

    /// The symbols file `path` imports.
    pub fn imports_of(&self, path: &str) -> &[usize] {
        self.imports_of.get(path).map_or(&[], Vec::as_slice)
    }

    /// Records the resolved import edges `(importing file's path, symbol id)`:
    /// every edge counts towards its symbol's in-degree.
    pub fn set_imports(&mut self, edges: impl IntoIterator<Item = (String, String)>) {
        for (path, id) in edges {
            let Some(i) = self.by_id(&id) else {
                continue;
            };
            let n = self.imported_by.entry(i).or_insert(0);
            *n = n.saturating_add(1);
            let list = self.imports_of.entry(path).or_default();
            list.push(i);
        }
        // Entries are numbered in (path, line) order: sorted lists read in that
        // order. An import of the same symbol on two lines stays twice, as in the
        // graph, so the in-degree can be recomputed from these lists.
        for list in self.imports_of.values_mut() {
            list.sort_unstable();
        }
    }

    /// Everything the catalog holds, in a canonical order: (symbol id, parent id,
    /// byte range, import in-degree, what its file imports). Two catalogs of the
    /// same state have equal digests.
    pub fn digest(&self) -> Vec<(String, String, usize, usize, u32)> {
        let mut out: Vec<_> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                (
                    e.row.id.clone(),
                    e.parent
                        .map_or_else(String::new, |p| self.entries[p].row.id.clone()),
                    e.byte_start,
                    e.byte_end,
                    self.imported_by(i),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Each file's imported symbols by id, sorted.
    pub fn imports_digest(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = self
            .imports_of
            .iter()
            .map(|(p, ts)| {
                let mut ids: Vec<String> =
                    ts.iter().map(|&t| self.entries[t].row.id.clone()).collect();
                ids.sort();
                (p.clone(), ids)
            })
            .collect();
        out.sort();
        out
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Symbols with exactly this name, in (path, line) order.
    pub fn named(&self, name: &str) -> &[usize] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// Symbols whose name equals `name` ignoring case.
    pub fn named_ignoring_case(&self, name: &str) -> &[usize] {
        self.by_lower
            .get(&name.to_lowercase())
            .map_or(&[], Vec::as_slice)
    }

    /// Symbols whose name contains `needle` (lower-case), in (path, line) order.
    pub fn matching(&self, needle: &str, max: usize) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| self.entries[i].row.name.to_lowercase().contains(needle))
            .take(max)
            .collect()
    }

    /// The symbols meant by `name` (plain, or qualified: `auth::jwt::validate`,
    /// `pkg.mod.Class`), optionally only in `path`: what [`crate::nav::find`]
    /// answers from the graph.
    pub fn find(&self, name: &str, path: Option<&str>) -> Vec<SymbolRow> {
        let in_path = |i: &&usize| path.is_none_or(|p| self.entries[**i].row.path == p);
        let exact: Vec<SymbolRow> = self
            .named(name)
            .iter()
            .filter(in_path)
            .map(|&i| self.entries[i].row.clone())
            .collect();
        if !exact.is_empty() || !crate::nav::looks_qualified(name) {
            return exact;
        }
        self.named(crate::nav::last_segment(name))
            .iter()
            .filter(in_path)
            .filter(|&&i| crate::nav::qualified_match(&self.entries[i].row.qualified_name, name))
            .map(|&i| self.entries[i].row.clone())
            .collect()
    }

    /// Top-level symbols of a file.
    pub fn file_top(&self, path: &str) -> &[usize] {
        self.by_file.get(path).map_or(&[], Vec::as_slice)
    }

    /// Every symbol of a file, depth first in line order, with its depth (1 = top level).
    pub fn file_all(&self, path: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for &top in self.file_top(path) {
            self.walk(top, 1, &mut out, &mut HashSet::new());
        }
        out
    }

    /// `i` and everything nested in it, depth first, with depths from `depth`.
    pub fn subtree(&self, i: usize, depth: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.walk(i, depth, &mut out, &mut HashSet::new());
        out
    }

    fn walk(
        &self,
        i: usize,
        depth: usize,
        out: &mut Vec<(usize, usize)>,
        seen: &mut HashSet<usize>,
    ) {
        if depth > MAX_DEPTH || !seen.insert(i) {
            return;
        }
        out.push((i, depth));
        for &c in &self.entries[i].children {
            self.walk(c, depth + 1, out, seen);
        }
    }

    /// The enclosing symbols of `i`, nearest first.
    pub fn ancestors(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = HashSet::from([i]);
        let mut cur = self.entries[i].parent;
        while let Some(p) = cur {
            if !seen.insert(p) || out.len() >= MAX_DEPTH {
                break;
            }
            out.push(p);
            cur = self.entries[p].parent;
        }
        out
    }

    /// A file's symbols in the shape the graph's file queries return.
    pub fn file_symbols(&self, path: &str, file_id: &str) -> Vec<FileSymbol> {
        self.file_all(path)
            .into_iter()
            .map(|(i, depth)| {
                let e = &self.entries[i];
                FileSymbol {
                    symbol: e.row.clone(),
                    file_id: file_id.to_string(),
                    depth: depth as i64,
                    parent_id: e
                        .parent
                        .map_or_else(|| file_id.to_string(), |p| self.entries[p].row.id.clone()),
                }
            })
            .collect()
    }
}

impl Catalog {
    /// The catalog after an in-place index run committed `changes` to this ref:
    /// the symbols of removed and changed files go, the new ones come, and the
    /// import edges are the run's complete set (or the old ones when the run left
    /// them alone). Equal to loading the ref from the graph again, without the
    /// graph queries (which cost about a second per 100k symbols).
    pub fn apply(&self, changes: &Changes) -> Catalog {
        // The added files' paths too: applying to a catalog that already holds the
        // new state (loaded from the graph after the commit) must not add twice.
        let removed: HashSet<&str> = changes
            .remove_paths
            .iter()
            .map(String::as_str)
            .chain(changes.add.iter().map(|f| f.file.path.as_str()))
            .collect();
        let added: usize = changes.add.iter().map(|f| f.symbols.len()).sum();
        let mut rows = Vec::with_capacity(self.entries.len() + added);
        let mut edges = Vec::with_capacity(self.entries.len() + added);
        for e in &self.entries {
            if removed.contains(e.row.path.as_str()) {
                continue;
            }
            rows.push((e.row.clone(), e.byte_start, e.byte_end));
            edges.push(match e.parent {
                Some(p) => (self.entries[p].row.id.clone(), e.row.id.clone(), false),
                None => (String::new(), e.row.id.clone(), true),
            });
        }
        for f in &changes.add {
            for si in &f.symbols {
                rows.push((
                    si.row.clone(),
                    si.byte_start.max(0) as usize,
                    si.byte_end.max(0) as usize,
                ));
                edges.push(match &si.parent {
                    Some(p) => (p.clone(), si.row.id.clone(), false),
                    None => (String::new(), si.row.id.clone(), true),
                });
            }
        }
        let mut c = Catalog::build(rows, edges);
        let prefix = format!("{}:", graph::ref_id(&changes.repo, &changes.ref_name));
        let symbol_edges = |rows: &[graph::ImportRow]| -> Vec<(String, String)> {
            rows.iter()
                .filter(|r| r.label == graph::ImportLabel::Symbol)
                .filter_map(|r| {
                    let path = r.from.strip_prefix(&prefix)?;
                    Some((path.to_string(), r.to.clone()))
                })
                .collect()
        };
        // The edges of files the run did not rewrite stay (by target id: a target
        // re-created with its file keeps its id).
        let keep = |skip: &HashSet<&str>| -> Vec<(String, String)> {
            let mut kept = Vec::new();
            for (path, targets) in &self.imports_of {
                if skip.contains(path.as_str()) {
                    continue;
                }
                for &t in targets {
                    kept.push((path.clone(), self.entries[t].row.id.clone()));
                }
            }
            kept
        };
        match &changes.imports {
            Some(graph::ImportChanges::All(rows)) => c.set_imports(symbol_edges(rows)),
            Some(graph::ImportChanges::Files { files, rows, .. }) => {
                // A changed file keeps its node and so its edges; a deleted one
                // loses them.
                let skip: HashSet<&str> = files
                    .iter()
                    .filter_map(|id| id.strip_prefix(&prefix))
                    .chain(changes.drop_files.iter().map(String::as_str))
                    .collect();
                let mut edges = keep(&skip);
                edges.extend(symbol_edges(rows));
                c.set_imports(edges);
            }
            None => c.set_imports(keep(&removed)),
        }
        c
    }
}

/// Loads a ref's catalog from the graph.
pub fn load(
    store: &graph::GraphStore,
    repo: &str,
    ref_name: &str,
) -> Result<Catalog, graph::GraphError> {
    let (rows, edges) = store.symbol_tree(repo, ref_name)?;
    let mut c = Catalog::build(rows, edges);
    c.set_imports(store.symbol_imports(repo, ref_name)?);
    Ok(c)
}
