//! One ref's symbols by name, held in memory by the server: where every tool
//! that takes a symbol name or a search query starts.
//!
//! Kuzu 0.11 has no secondary indexes: finding a symbol by name scans the Symbol
//! table. So the server keeps, per ref, what finding and ranking a symbol needs:
//! its id, name, qualified name, file, kind, language, position, and how many
//! import edges point at it (a ranking signal, counted by the graph). Nothing
//! else: a symbol's signature and doc are read from the graph by primary key when
//! an answer shows them, and every walk along edges is a Cypher query
//! (`query::forest`, `query::nav`). The catalog holds no edge.
//!
//! Architecture invariant: built from the graph's committed state; after an index
//! run a copy is patched with the run's changes (`apply`) and replaces it whole.
//! A copy is cheap (entries and name lists are shared `Arc`s) and the patch
//! touches only the changed files' entries, plus one statement for the import
//! counts. Entry indices are stable across patches: the entries of removed files
//! stay as dead slots (no map points at them) until too many pile up and the
//! catalog is loaded again.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::store::graph;
use crate::store::graph::{Changes, FileInfo, GraphError, GraphStore, NameRow};

/// A symbol as the name index knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: Arc<str>,
    pub name: Arc<str>,
    pub qualified_name: Box<str>,
    pub path: Arc<str>,
    pub kind: Arc<str>,
    pub language: Arc<str>,
    pub line_start: i64,
    byte_start: i64,
    byte_end: i64,
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
    /// Every entry of each file (what a patch of the file removes).
    by_file: HashMap<Arc<str>, Arc<Vec<usize>>>,
    /// How many import edges point at each entry (by slot).
    imported_by: Vec<u32>,
    /// Kinds, languages and paths, each kept once.
    strings: HashSet<Arc<str>>,
    /// Names this catalog's entries (a hash of their ids in order, or of the
    /// catalog it was patched from and the patch): caches derived from one (the
    /// search index's term-to-entry maps) are keyed by it.
    generation: u64,
    /// The ref's files, by path: of the same state as the symbols, so an answer
    /// about a file never pairs one state's file with another's symbols.
    files: Arc<Vec<FileInfo>>,
}

impl Catalog {
    /// Builds the catalog from the graph's name rows.
    pub fn build(mut rows: Vec<NameRow>, files: Vec<FileInfo>) -> Catalog {
        rows.sort_by(|a, b| row_key(a).cmp(&row_key(b)).then(a.id.cmp(&b.id)));
        let mut c = Catalog::default();
        c.entries.reserve(rows.len());
        for (i, row) in rows.into_iter().enumerate() {
            let e = c.entry_of(row);
            c.index(i, &e);
            c.entries.push(Arc::new(e));
        }
        // Entries are in (path, line) order, so every list already is.
        c.alive = vec![true; c.entries.len()];
        c.imported_by = vec![0; c.entries.len()];
        c.generation = stamp(c.entries.iter().map(|e| &*e.id));
        c.files = Arc::new(files);
        c
    }

    fn shared(&mut self, s: &str) -> Arc<str> {
        if let Some(v) = self.strings.get(s) {
            return v.clone();
        }
        let v: Arc<str> = Arc::from(s);
        self.strings.insert(v.clone());
        v
    }

    fn entry_of(&mut self, row: NameRow) -> Entry {
        let name = match self.by_name.get_key_value(row.name.as_str()) {
            Some((k, _)) => k.clone(),
            None => Arc::from(row.name.as_str()),
        };
        Entry {
            id: Arc::from(row.id.as_str()),
            name,
            qualified_name: row.qualified_name.into_boxed_str(),
            path: self.shared(&row.path),
            kind: self.shared(&row.kind),
            language: self.shared(&row.language),
            line_start: row.line_start,
            byte_start: row.byte_start,
            byte_end: row.byte_end,
        }
    }

    /// Adds entry `i` to the id, name and file maps.
    fn index(&mut self, i: usize, e: &Entry) {
        self.by_id.insert(e.id.clone(), i);
        Arc::make_mut(self.by_name.entry(e.name.clone()).or_default()).push(i);
        let lower = e.name.to_lowercase();
        let lower = match self.by_lower.get_key_value(lower.as_str()) {
            Some((k, _)) => k.clone(),
            None if *lower == *e.name => e.name.clone(),
            None => Arc::from(lower.as_str()),
        };
        Arc::make_mut(self.by_lower.entry(lower).or_default()).push(i);
        Arc::make_mut(self.by_file.entry(e.path.clone()).or_default()).push(i);
    }

    /// Sets the import in-degree of every entry from the graph's counts.
    pub fn set_in_degree(&mut self, counts: impl IntoIterator<Item = (String, u32)>) {
        self.imported_by = vec![0; self.entries.len()];
        for (id, n) in counts {
            if let Some(&i) = self.by_id.get(id.as_str()) {
                self.imported_by[i] = n;
            }
        }
    }

    /// The live entries, in slot order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.entries.len()).filter(|&i| self.alive[i])
    }

    /// The number of import edges that point at entry `i`.
    pub fn imported_by(&self, i: usize) -> u32 {
        self.imported_by.get(i).copied().unwrap_or(0)
    }

    /// Everything the catalog holds, in a canonical order: (symbol id, byte
    /// range, import in-degree). Two catalogs of the same state have equal digests.
    pub fn digest(&self) -> Vec<(String, i64, i64, u32)> {
        let mut out: Vec<_> = self
            .indices()
            .map(|i| {
                let e = &self.entries[i];
                (
                    e.id.to_string(),
                    e.byte_start,
                    e.byte_end,
                    self.imported_by(i),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Everything a tool can observe, in the order it observes it: the files,
    /// per symbol its entry and import in-degree, the name lookups and
    /// `matching`. A patched catalog must equal a fresh load in this (tests
    /// compare them).
    pub fn observable(&self) -> Vec<String> {
        let id = |i: usize| self.entries[i].id.to_string();
        let ids = |v: &[usize]| v.iter().map(|&i| id(i)).collect::<Vec<_>>().join(",");
        let mut out = vec![format!("len {}", self.len())];
        out.extend(self.files.iter().map(|f| format!("{f:?}")));
        let mut order: Vec<usize> = self.indices().collect();
        order.sort_by(|&a, &b| entry_key(&self.entries[a]).cmp(&entry_key(&self.entries[b])));
        for i in order {
            out.push(format!(
                "{:?} imported_by {}",
                self.entries[i],
                self.imported_by(i)
            ));
        }
        for (what, map) in [
            ("name", &self.by_name),
            ("lower", &self.by_lower),
            ("file", &self.by_file),
        ] {
            let mut keys: Vec<&Arc<str>> = map.keys().collect();
            keys.sort();
            for k in keys {
                out.push(format!("{what} {k}: {}", ids(&map[k])));
            }
        }
        out.push(format!("matching: {}", ids(&self.matching("", usize::MAX))));
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
            .filter(|&i| self.entries[i].name.to_lowercase().contains(needle))
            .collect();
        hits.sort_by(|&a, &b| entry_key(&self.entries[a]).cmp(&entry_key(&self.entries[b])));
        hits.truncate(max);
        hits
    }

    /// The symbols meant by `name` (plain, or qualified: `auth::jwt::validate`,
    /// `pkg.mod.Class`), optionally only in `path`, in (path, line) order: what
    /// [`crate::model::names::find`] answers from the graph.
    pub fn find(&self, name: &str, path: Option<&str>) -> Vec<usize> {
        let in_path = |i: &&usize| path.is_none_or(|p| &*self.entries[**i].path == p);
        let exact: Vec<usize> = self.named(name).iter().filter(in_path).copied().collect();
        if !exact.is_empty() || !crate::model::names::looks_qualified(name) {
            return exact;
        }
        self.named(crate::model::names::last_segment(name))
            .iter()
            .filter(in_path)
            .filter(|&&i| {
                crate::model::names::qualified_match(&self.entries[i].qualified_name, name)
            })
            .copied()
            .collect()
    }

    /// Sorts entries by position: (path, line, start, longest first).
    pub fn sort_by_position(&self, list: &mut [usize]) {
        list.sort_by(|&a, &b| entry_key(&self.entries[a]).cmp(&entry_key(&self.entries[b])));
    }

    /// Every symbol of a file, in (line, start, longest first) order.
    pub fn in_file(&self, path: &str) -> &[usize] {
        self.by_file.get(path).map_or(&[], |v| v.as_slice())
    }
}

/// The order `build` numbers entries in: (path, line, start, longest first).
fn entry_key(e: &Entry) -> (&str, i64, i64, std::cmp::Reverse<i64>) {
    (
        &e.path,
        e.line_start,
        e.byte_start,
        std::cmp::Reverse(e.byte_end),
    )
}

fn row_key(r: &NameRow) -> (&str, i64, i64, std::cmp::Reverse<i64>) {
    (
        &r.path,
        r.line_start,
        r.byte_start,
        std::cmp::Reverse(r.byte_end),
    )
}

/// A short hash of a sequence of strings.
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

    /// The catalog after an in-place index run committed `changes` to this ref
    /// of `graph`: the symbols of removed and changed files go, the new ones
    /// come, and the import counts are read again from the graph. Equal to
    /// loading the ref from the graph again; the cost of a patch follows the
    /// number of changed files, plus a shallow copy of the maps and the count
    /// statement.
    pub fn apply(&self, changes: &Changes, graph: &GraphStore) -> Result<Catalog, GraphError> {
        // The added files' paths too: applying to a catalog that already holds the
        // new state (loaded from the graph after the commit) must not add twice.
        let removed: HashSet<&str> = changes
            .remove_paths
            .iter()
            .map(String::as_str)
            .chain(changes.add.iter().map(|f| f.file.path.as_str()))
            .collect();
        let dying: usize = removed.iter().map(|p| self.in_file(p).len()).sum();
        if changes.replace_all || (self.dead + dying) * 4 > self.entries.len().max(1024) {
            return load(graph, &changes.repo, &changes.ref_name);
        }
        let mut c = self.clone();
        let previous = self.generation.to_string();
        c.generation = stamp(
            [previous.as_str(), changes.indexed_at.as_str()]
                .into_iter()
                .chain(removed.iter().copied()),
        );
        c.files = self.patched_files(changes, &removed);
        c.kill_files(&removed);
        let mut touched: HashSet<Arc<str>> = HashSet::new();
        for f in changes.add.iter() {
            c.add_file(f, &mut touched);
        }
        // Name lists read in (path, line) order, as a fresh build numbers them.
        for name in &touched {
            for map in [&mut c.by_name, &mut c.by_lower] {
                if let Some(list) = map.get_mut(name) {
                    let entries = &c.entries;
                    Arc::make_mut(list)
                        .sort_by(|&a, &b| entry_key(&entries[a]).cmp(&entry_key(&entries[b])));
                }
            }
        }
        c.set_in_degree(graph.import_in_degree(&changes.repo, &changes.ref_name)?);
        Ok(c)
    }

    /// The removed files' entries die (slots stay, marked dead: ids are indexes).
    fn kill_files(&mut self, removed: &HashSet<&str>) {
        for path in removed {
            let Some(list) = self.by_file.remove(*path) else {
                continue;
            };
            for &i in list.iter() {
                let e = self.entries[i].clone();
                if self.by_id.get(&*e.id) == Some(&i) {
                    self.by_id.remove(&*e.id);
                }
                for (map, key) in [
                    (&mut self.by_name, e.name.to_string()),
                    (&mut self.by_lower, e.name.to_lowercase()),
                ] {
                    if let Some(list) = map.get_mut(key.as_str()) {
                        Arc::make_mut(list).retain(|&x| x != i);
                        if list.is_empty() {
                            map.remove(key.as_str());
                        }
                    }
                }
                self.alive[i] = false;
                self.dead += 1;
            }
        }
    }

    /// A new file's entries, in line order, appended; their names are noted in
    /// `touched` (their lists need sorting again).
    fn add_file(&mut self, f: &graph::FileRows, touched: &mut HashSet<Arc<str>>) {
        let mut rows: Vec<NameRow> = f
            .symbols
            .iter()
            .map(|s| NameRow {
                id: s.row.id.clone(),
                name: s.row.name.clone(),
                qualified_name: s.row.qualified_name.clone(),
                path: s.row.path.clone(),
                kind: s.row.kind.clone(),
                language: s.row.language.clone(),
                line_start: s.row.line_start,
                byte_start: s.byte_start,
                byte_end: s.byte_end,
            })
            .collect();
        rows.sort_by(|a, b| row_key(a).cmp(&row_key(b)).then(a.id.cmp(&b.id)));
        for row in rows {
            let i = self.entries.len();
            let e = self.entry_of(row);
            self.index(i, &e);
            touched.insert(e.name.clone());
            touched.insert(Arc::from(e.name.to_lowercase().as_str()));
            self.entries.push(Arc::new(e));
            self.alive.push(true);
            self.imported_by.push(0);
        }
    }
}

/// Loads a ref's catalog from the graph (two statements: the name rows, the
/// import counts).
pub fn load(store: &GraphStore, repo: &str, ref_name: &str) -> Result<Catalog, GraphError> {
    let mut c = Catalog::build(
        store.symbol_names(repo, ref_name)?,
        store.files(repo, ref_name)?,
    );
    c.set_in_degree(store.import_in_degree(repo, ref_name)?);
    Ok(c)
}
