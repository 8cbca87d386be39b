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
//! Architecture invariant: built from the graph's committed state; after an index
//! run a copy is patched with the run's changes (`apply`) and replaces it whole.
//! A copy is cheap (entries and names are shared `Arc`s) and the patch touches
//! only the changed files, so its cost follows the change. Entry indices are
//! stable across patches: the entries of removed files stay as dead slots (no
//! map points at them) until too many pile up and the catalog is rebuilt.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::store::graph;
use crate::store::graph::{Changes, FileInfo, FileSymbol, SymbolRow};

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

#[derive(Debug, Default, Clone)]
pub struct Catalog {
    entries: Vec<Arc<Entry>>,
    /// Whether each slot holds a live entry (a patch leaves removed ones dead).
    alive: Vec<bool>,
    dead: usize,
    by_id: HashMap<Arc<str>, usize>,
    by_name: HashMap<Arc<str>, Arc<Vec<usize>>>,
    by_lower: HashMap<Arc<str>, Arc<Vec<usize>>>,
    /// Top-level symbols of each file, in line order.
    by_file: HashMap<Arc<str>, Arc<Vec<usize>>>,
    /// How many import edges point at each imported symbol.
    imported_by: HashMap<usize, u32>,
    /// Names this catalog's entries (a hash of their ids in order, or of the
    /// catalog it was patched from and the patch): caches derived from one (the
    /// search index's term-to-entry maps) are keyed by it.
    generation: u64,
    /// The symbols each file imports (resolved edges, one per edge), in (path, line) order.
    imports_of: HashMap<String, Vec<usize>>,
    /// The ref's files, by path: of the same state as the symbols, so an answer
    /// about a file never pairs one state's file with another's symbols.
    files: Arc<Vec<FileInfo>>,
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
        let mut c = Catalog::default();
        let mut entries: Vec<Entry> = Vec::with_capacity(rows.len());
        for (i, (row, start, end)) in rows.into_iter().enumerate() {
            c.index_names(i, &row);
            entries.push(Entry {
                row,
                byte_start: start,
                byte_end: end,
                parent: None,
                children: Vec::new(),
            });
        }
        let mut contained: HashSet<usize> = HashSet::new();
        for (parent, child, from_file) in edges {
            let Some(&ci) = c.by_id.get(child.as_str()) else {
                continue;
            };
            if !contained.insert(ci) {
                continue; // a second parent would be damage: keep the first
            }
            if !from_file
                && let Some(&pi) = c.by_id.get(parent.as_str())
                && pi != ci
            {
                entries[ci].parent = Some(pi);
            }
        }
        for i in 0..entries.len() {
            match entries[i].parent {
                Some(p) => entries[p].children.push(i),
                None => {
                    let path: Arc<str> = Arc::from(entries[i].row.path.as_str());
                    Arc::make_mut(c.by_file.entry(path).or_default()).push(i);
                }
            }
        }
        // Entries are in (path, line) order, so children and files already are.
        c.alive = vec![true; entries.len()];
        c.generation = stamp(entries.iter().map(|e| e.row.id.as_str()));
        c.entries = entries.into_iter().map(Arc::new).collect();
        c
    }

    /// Adds entry `i` to the id and name maps.
    fn index_names(&mut self, i: usize, row: &SymbolRow) {
        self.by_id.insert(Arc::from(row.id.as_str()), i);
        Arc::make_mut(
            self.by_name
                .entry(Arc::from(row.name.as_str()))
                .or_default(),
        )
        .push(i);
        Arc::make_mut(
            self.by_lower
                .entry(Arc::from(row.name.to_lowercase().as_str()))
                .or_default(),
        )
        .push(i);
    }

    /// The order entries are numbered in by `build`: (path, line, start, longest
    /// first).
    fn order_key(&self, i: usize) -> (&str, i64, usize, std::cmp::Reverse<usize>) {
        entry_key(&self.entries[i])
    }

    /// The live entries, in slot order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.entries.len()).filter(|&i| self.alive[i])
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
        // Lists read in (path, line) order of their targets. An import of the
        // same symbol on two lines stays twice, as in the graph, so the in-degree
        // can be recomputed from these lists.
        let mut lists = std::mem::take(&mut self.imports_of);
        for list in lists.values_mut() {
            self.sort_entries(list);
        }
        self.imports_of = lists;
    }

    fn sort_entries(&self, list: &mut [usize]) {
        list.sort_by(|&a, &b| self.order_key(a).cmp(&self.order_key(b)));
    }

    /// Everything the catalog holds, in a canonical order: (symbol id, parent id,
    /// byte range, import in-degree, what its file imports). Two catalogs of the
    /// same state have equal digests.
    pub fn digest(&self) -> Vec<(String, String, usize, usize, u32)> {
        let mut out: Vec<_> = self
            .indices()
            .map(|i| {
                let e = &self.entries[i];
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

    /// Everything a tool can observe, in the order it observes it: per file its
    /// top-level symbols, per symbol its parent, children, byte range and import
    /// in-degree, the name lookups, each file's imports and `matching`. A patched
    /// catalog must equal a fresh load in this (tests compare them).
    pub fn observable(&self) -> Vec<String> {
        let id = |i: usize| self.entries[i].row.id.clone();
        let ids = |v: &[usize]| v.iter().map(|&i| id(i)).collect::<Vec<_>>().join(",");
        let mut out = vec![format!("len {}", self.len())];
        out.extend(self.files.iter().map(|f| format!("{f:?}")));
        let mut files: Vec<&Arc<str>> = self.by_file.keys().collect();
        files.sort();
        for f in files {
            out.push(format!("file {f}: {}", ids(&self.by_file[f])));
        }
        let mut order: Vec<usize> = self.indices().collect();
        self.sort_entries(&mut order);
        for i in order {
            let e = &self.entries[i];
            out.push(format!(
                "{:?} parent {:?} children [{}] bytes {}..{} imported_by {}",
                e.row,
                e.parent.map(id),
                ids(&e.children),
                e.byte_start,
                e.byte_end,
                self.imported_by(i)
            ));
        }
        for (what, map) in [("name", &self.by_name), ("lower", &self.by_lower)] {
            let mut keys: Vec<&Arc<str>> = map.keys().collect();
            keys.sort();
            for k in keys {
                out.push(format!("{what} {k}: {}", ids(&map[k])));
            }
        }
        let mut paths: Vec<&String> = self.imports_of.keys().collect();
        paths.sort();
        for p in paths {
            out.push(format!("imports {p}: {}", ids(&self.imports_of[p])));
        }
        out.push(format!("matching: {}", ids(&self.matching("", usize::MAX))));
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

    /// Live entries.
    pub fn len(&self) -> usize {
        self.entries.len() - self.dead
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Symbols with exactly this name, in (path, line) order.
    pub fn named(&self, name: &str) -> &[usize] {
        self.by_name.get(name).map_or(&[], |v| v.as_slice())
    }

    /// Symbols whose name equals `name` ignoring case.
    pub fn named_ignoring_case(&self, name: &str) -> &[usize] {
        self.by_lower
            .get(name.to_lowercase().as_str())
            .map_or(&[], |v| v.as_slice())
    }

    /// Symbols whose name contains `needle` (lower-case), in (path, line) order.
    pub fn matching(&self, needle: &str, max: usize) -> Vec<usize> {
        let mut hits: Vec<usize> = self
            .indices()
            .filter(|&i| self.entries[i].row.name.to_lowercase().contains(needle))
            .collect();
        hits.sort_by(|&a, &b| self.order_key(a).cmp(&self.order_key(b)));
        hits.truncate(max);
        hits
    }

    /// The symbols meant by `name` (plain, or qualified: `auth::jwt::validate`,
    /// `pkg.mod.Class`), optionally only in `path`: what [`crate::model::names::find`]
    /// answers from the graph.
    pub fn find(&self, name: &str, path: Option<&str>) -> Vec<SymbolRow> {
        let in_path = |i: &&usize| path.is_none_or(|p| self.entries[**i].row.path == p);
        let exact: Vec<SymbolRow> = self
            .named(name)
            .iter()
            .filter(in_path)
            .map(|&i| self.entries[i].row.clone())
            .collect();
        if !exact.is_empty() || !crate::model::names::looks_qualified(name) {
            return exact;
        }
        self.named(crate::model::names::last_segment(name))
            .iter()
            .filter(in_path)
            .filter(|&&i| {
                crate::model::names::qualified_match(&self.entries[i].row.qualified_name, name)
            })
            .map(|&i| self.entries[i].row.clone())
            .collect()
    }

    /// Top-level symbols of a file.
    pub fn file_top(&self, path: &str) -> &[usize] {
        self.by_file.get(path).map_or(&[], |v| v.as_slice())
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

/// The order `build` numbers entries in: (path, line, start, longest first).
fn entry_key(e: &Entry) -> (&str, i64, usize, std::cmp::Reverse<usize>) {
    (
        e.row.path.as_str(),
        e.row.line_start,
        e.byte_start,
        std::cmp::Reverse(e.byte_end),
    )
}

/// A stamp from parts of text (see `Catalog::generation`).
fn stamp<'a>(parts: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

impl Catalog {
    /// The ref's files, sorted by path.
    pub fn files(&self) -> Arc<Vec<FileInfo>> {
        self.files.clone()
    }

    /// The file list after `changes`: removed and changed files out, the new
    /// versions in.
    fn patched_files(&self, changes: &Changes, removed: &HashSet<&str>) -> Arc<Vec<FileInfo>> {
        let mut files: Vec<FileInfo> = self
            .files
            .iter()
            .filter(|f| !removed.contains(f.path.as_str()))
            .cloned()
            .collect();
        files.extend(changes.add.iter().map(|f| FileInfo {
            id: f.file.id.clone(),
            path: f.file.path.clone(),
            language: f.file.language.clone(),
            module: f.file.module.clone(),
            package: f.file.package.clone(),
            content_hash: f.file.content_hash.clone(),
            line_count: f.file.line_count,
        }));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Arc::new(files)
    }

    /// The catalog after an in-place index run committed `changes` to this ref:
    /// the symbols of removed and changed files go, the new ones come, and the
    /// import edges follow the run's (all of them, those of the files it
    /// rewrote, or none). Equal to loading the ref from the graph again (which
    /// costs about a second per 100k symbols); the cost of a patch follows the
    /// number of changed files, plus a shallow copy of the maps.
    pub fn apply(&self, changes: &Changes) -> Catalog {
        // The added files' paths too: applying to a catalog that already holds the
        // new state (loaded from the graph after the commit) must not add twice.
        let removed: HashSet<&str> = changes
            .remove_paths
            .iter()
            .map(String::as_str)
            .chain(changes.add.iter().map(|f| f.file.path.as_str()))
            .collect();
        let dying: usize = removed.iter().map(|p| self.file_all(p).len()).sum();
        if changes.replace_all || (self.dead + dying) * 4 > self.entries.len().max(1024) {
            return self.rebuilt(changes, &removed);
        }
        let mut c = self.clone();
        let previous = self.generation.to_string();
        c.generation = stamp(
            [previous.as_str(), changes.indexed_at.as_str()]
                .into_iter()
                .chain(removed.iter().copied()),
        );
        c.files = self.patched_files(changes, &removed);
        let prefix = format!("{}:", graph::ref_id(&changes.repo, &changes.ref_name));
        c.drop_rewritten_imports(changes, &removed, &prefix);
        c.kill_files(self, &removed);
        let mut touched_names: HashSet<Arc<str>> = HashSet::new();
        for f in changes.add.iter() {
            c.add_file(f, &mut touched_names);
        }
        // Name lists read in (path, line) order, as a fresh build numbers them.
        for name in &touched_names {
            for map in [&mut c.by_name, &mut c.by_lower] {
                if let Some(mut list) = map.remove(name) {
                    Arc::make_mut(&mut list)
                        .sort_by(|&a, &b| entry_key(&c.entries[a]).cmp(&entry_key(&c.entries[b])));
                    map.insert(name.clone(), list);
                }
            }
        }
        c.follow_kept_symbols();
        c.add_imports(changes, &prefix);
        c
    }

    /// Import lists that go away or are replaced: their counts go first.
    fn drop_rewritten_imports(&mut self, changes: &Changes, removed: &HashSet<&str>, prefix: &str) {
        let mut rewritten: HashSet<String> = HashSet::new();
        match &changes.imports {
            Some(graph::ImportChanges::All(_)) => {
                rewritten.extend(self.imports_of.keys().cloned());
            }
            Some(graph::ImportChanges::Files { files, .. }) => {
                rewritten.extend(
                    files
                        .iter()
                        .filter_map(|id| id.strip_prefix(prefix))
                        .map(str::to_string),
                );
                // A deleted file's edges went with its node.
                rewritten.extend(changes.drop_files.iter().cloned());
            }
            None => rewritten.extend(removed.iter().map(|p| p.to_string())),
        }
        for path in &rewritten {
            if let Some(list) = self.imports_of.remove(path.as_str()) {
                for t in list {
                    if let Some(n) = self.imported_by.get_mut(&t) {
                        *n = n.saturating_sub(1);
                        if *n == 0 {
                            self.imported_by.remove(&t);
                        }
                    }
                }
            }
        }
    }

    /// The removed files' entries die (slots stay, marked dead: ids are indexes).
    fn kill_files(&mut self, old: &Catalog, removed: &HashSet<&str>) {
        for path in removed {
            for (i, _) in old.file_all(path) {
                let e = &old.entries[i];
                if self.by_id.get(e.row.id.as_str()) == Some(&i) {
                    self.by_id.remove(e.row.id.as_str());
                }
                for (map, key) in [
                    (&mut self.by_name, e.row.name.clone()),
                    (&mut self.by_lower, e.row.name.to_lowercase()),
                ] {
                    if let Some(list) = map.get_mut(key.as_str()) {
                        Arc::make_mut(list).retain(|&x| x != i);
                        if list.is_empty() {
                            map.remove(key.as_str());
                        }
                    }
                }
                self.imported_by.remove(&i);
                self.alive[i] = false;
                self.dead += 1;
            }
            self.by_file.remove(*path);
        }
    }

    /// A new file's entries, in line order, appended; their names are noted in
    /// `touched_names` (their lists need sorting again).
    fn add_file(&mut self, f: &graph::FileRows, touched_names: &mut HashSet<Arc<str>>) {
        let mut order: Vec<usize> = (0..f.symbols.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&f.symbols[a], &f.symbols[b]);
            (
                x.row.line_start,
                x.byte_start,
                std::cmp::Reverse(x.byte_end),
            )
                .cmp(&(
                    y.row.line_start,
                    y.byte_start,
                    std::cmp::Reverse(y.byte_end),
                ))
        });
        let base = self.entries.len();
        let slot_of: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(k, &si)| (f.symbols[si].row.id.as_str(), base + k))
            .collect();
        let mut fresh: Vec<Entry> = order
            .iter()
            .map(|&si| {
                let s = &f.symbols[si];
                Entry {
                    row: s.row.clone(),
                    byte_start: s.byte_start.max(0) as usize,
                    byte_end: s.byte_end.max(0) as usize,
                    parent: s.parent.as_deref().and_then(|p| slot_of.get(p).copied()),
                    children: Vec::new(),
                }
            })
            .collect();
        let mut top = Vec::new();
        for k in 0..fresh.len() {
            match fresh[k].parent {
                Some(p) if p != base + k => fresh[p - base].children.push(base + k),
                _ => {
                    fresh[k].parent = None;
                    top.push(base + k);
                }
            }
        }
        for (k, e) in fresh.into_iter().enumerate() {
            self.index_names(base + k, &e.row);
            touched_names.insert(Arc::from(e.row.name.as_str()));
            touched_names.insert(Arc::from(e.row.name.to_lowercase().as_str()));
            self.entries.push(Arc::new(e));
            self.alive.push(true);
        }
        if !top.is_empty() {
            self.by_file
                .insert(Arc::from(f.file.path.as_str()), Arc::new(top));
        }
    }

    /// Lists the run did not rewrite may point at a symbol of a changed file
    /// that stayed (same id): they follow it to its new entry.
    fn follow_kept_symbols(&mut self) {
        let mut lists = std::mem::take(&mut self.imports_of);
        for list in lists.values_mut() {
            if list.iter().all(|&t| self.alive[t]) {
                continue;
            }
            let mut moved = Vec::with_capacity(list.len());
            for &t in list.iter() {
                let target = if self.alive[t] {
                    Some(t)
                } else {
                    let now = self.by_id(&self.entries[t].row.id);
                    if let Some(n) = now {
                        *self.imported_by.entry(n).or_insert(0) += 1;
                    }
                    now
                };
                moved.extend(target);
            }
            self.sort_entries(&mut moved);
            *list = moved;
        }
        self.imports_of = lists;
    }

    /// The import lists the run wrote.
    fn add_imports(&mut self, changes: &Changes, prefix: &str) {
        let rows: &[graph::ImportRow] = match &changes.imports {
            Some(i) => i.rows(),
            None => &[],
        };
        let new_edges: Vec<(String, String)> = rows
            .iter()
            .filter(|r| r.label == graph::ImportLabel::Symbol)
            .filter_map(|r| {
                let path = r.from.strip_prefix(prefix)?;
                Some((path.to_string(), r.to.clone()))
            })
            .collect();
        let mut lists = std::mem::take(&mut self.imports_of);
        let mut changed_lists: HashSet<String> = HashSet::new();
        for (path, id) in new_edges {
            let Some(i) = self.by_id(&id) else {
                continue;
            };
            *self.imported_by.entry(i).or_insert(0) += 1;
            lists.entry(path.clone()).or_default().push(i);
            changed_lists.insert(path);
        }
        for path in &changed_lists {
            if let Some(list) = lists.get_mut(path) {
                self.sort_entries(list);
            }
        }
        self.imports_of = lists;
    }

    /// `apply` by building the catalog again from the live entries and the
    /// changes (a `--force` run, or too many dead slots).
    fn rebuilt(&self, changes: &Changes, removed: &HashSet<&str>) -> Catalog {
        let added: usize = changes.add.iter().map(|f| f.symbols.len()).sum();
        let mut rows = Vec::with_capacity(self.len() + added);
        let mut edges = Vec::with_capacity(self.len() + added);
        for i in self.indices() {
            let e = &self.entries[i];
            if removed.contains(e.row.path.as_str()) {
                continue;
            }
            rows.push((e.row.clone(), e.byte_start, e.byte_end));
            edges.push(match e.parent {
                Some(p) => (self.entries[p].row.id.clone(), e.row.id.clone(), false),
                None => (String::new(), e.row.id.clone(), true),
            });
        }
        for f in changes.add.iter() {
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
        c.files = self.patched_files(changes, removed);
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
            None => c.set_imports(keep(removed)),
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
    c.files = Arc::new(store.files(repo, ref_name)?);
    Ok(c)
}
