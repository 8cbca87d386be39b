//! The graph store: the only module that speaks to Kuzu.
//!
//! Owns the database file inside the data dir, the schema (`schema/*.cypher`), every
//! query the code runs (`queries/*.cypher`), batched writes, and read-only ad hoc
//! Cypher. A `GraphStore` opened read-write is the process's single writer (the data
//! dir's writer lock says who that is); readers may share it, and see the last
//! committed state while a run writes. An index run's changes commit in one
//! transaction, so a kill at any moment leaves the last completed state.
//!
//! Architecture invariant: nothing outside this module names a Kuzu type.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use kuzu::{Connection, Database, LogicalType, SystemConfig, Value};

/// DDL, applied in order on every read-write open (`IF NOT EXISTS`).
pub const SCHEMA_FILES: &[(&str, &str)] = &[
    (
        "001_nodes.cypher",
        include_str!("../../schema/001_nodes.cypher"),
    ),
    (
        "002_rels.cypher",
        include_str!("../../schema/002_rels.cypher"),
    ),
];

/// Every query the code runs, by name. A test prepares each against a fresh database.
pub const QUERY_FILES: &[(&str, &str)] = &[
    ("ancestors", include_str!("../../queries/ancestors.cypher")),
    (
        "ref_layout_hash",
        include_str!("../../queries/ref_layout_hash.cypher"),
    ),
    (
        "update_files",
        include_str!("../../queries/update_files.cypher"),
    ),
    (
        "update_file_counts",
        include_str!("../../queries/update_file_counts.cypher"),
    ),
    (
        "descendants",
        include_str!("../../queries/descendants.cypher"),
    ),
    (
        "symbols_by_name",
        include_str!("../../queries/symbols_by_name.cypher"),
    ),
    (
        "file_hashes",
        include_str!("../../queries/file_hashes.cypher"),
    ),
    (
        "ref_counts",
        include_str!("../../queries/ref_counts.cypher"),
    ),
    (
        "ref_symbol_counts",
        include_str!("../../queries/ref_symbol_counts.cypher"),
    ),
    (
        "ref_import_counts",
        include_str!("../../queries/ref_import_counts.cypher"),
    ),
    (
        "upsert_repo",
        include_str!("../../queries/upsert_repo.cypher"),
    ),
    (
        "upsert_ref",
        include_str!("../../queries/upsert_ref.cypher"),
    ),
    (
        "insert_files",
        include_str!("../../queries/insert_files.cypher"),
    ),
    (
        "insert_symbols_under_symbol",
        include_str!("../../queries/insert_symbols_under_symbol.cypher"),
    ),
    (
        "copy_files",
        include_str!("../../queries/copy_files.cypher"),
    ),
    (
        "copy_symbols",
        include_str!("../../queries/copy_symbols.cypher"),
    ),
    (
        "copy_has_file",
        include_str!("../../queries/copy_has_file.cypher"),
    ),
    (
        "copy_file_contains",
        include_str!("../../queries/copy_file_contains.cypher"),
    ),
    (
        "copy_symbol_contains",
        include_str!("../../queries/copy_symbol_contains.cypher"),
    ),
    (
        "copy_externals",
        include_str!("../../queries/copy_externals.cypher"),
    ),
    (
        "copy_imports_symbol",
        include_str!("../../queries/copy_imports_symbol.cypher"),
    ),
    (
        "copy_imports_file",
        include_str!("../../queries/copy_imports_file.cypher"),
    ),
    (
        "copy_imports_external",
        include_str!("../../queries/copy_imports_external.cypher"),
    ),
    (
        "delete_files",
        include_str!("../../queries/delete_files.cypher"),
    ),
    (
        "delete_file_symbols",
        include_str!("../../queries/delete_file_symbols.cypher"),
    ),
    (
        "delete_ref_files",
        include_str!("../../queries/delete_ref_files.cypher"),
    ),
    (
        "delete_ref_symbols",
        include_str!("../../queries/delete_ref_symbols.cypher"),
    ),
    (
        "delete_ref_externals",
        include_str!("../../queries/delete_ref_externals.cypher"),
    ),
    ("ref_files", include_str!("../../queries/ref_files.cypher")),
    (
        "ref_symbols",
        include_str!("../../queries/ref_symbols.cypher"),
    ),
    (
        "ref_imports",
        include_str!("../../queries/ref_imports.cypher"),
    ),
    (
        "ref_externals",
        include_str!("../../queries/ref_externals.cypher"),
    ),
    (
        "insert_externals",
        include_str!("../../queries/insert_externals.cypher"),
    ),
    (
        "delete_externals",
        include_str!("../../queries/delete_externals.cypher"),
    ),
    (
        "delete_imports",
        include_str!("../../queries/delete_imports.cypher"),
    ),
    (
        "delete_symbols",
        include_str!("../../queries/delete_symbols.cypher"),
    ),
    (
        "update_symbol_positions",
        include_str!("../../queries/update_symbol_positions.cypher"),
    ),
    (
        "update_symbols",
        include_str!("../../queries/update_symbols.cypher"),
    ),
    (
        "insert_symbols_with_children",
        include_str!("../../queries/insert_symbols_with_children.cypher"),
    ),
    (
        "delete_file_imports",
        include_str!("../../queries/delete_file_imports.cypher"),
    ),
    (
        "insert_imports_symbol",
        include_str!("../../queries/insert_imports_symbol.cypher"),
    ),
    (
        "insert_imports_file",
        include_str!("../../queries/insert_imports_file.cypher"),
    ),
    (
        "insert_imports_external",
        include_str!("../../queries/insert_imports_external.cypher"),
    ),
    (
        "ref_symbol_rows",
        include_str!("../../queries/ref_symbol_rows.cypher"),
    ),
    (
        "ref_indexed_at",
        include_str!("../../queries/ref_indexed_at.cypher"),
    ),
    (
        "ref_symbol_imports",
        include_str!("../../queries/ref_symbol_imports.cypher"),
    ),
    (
        "ref_symbol_parents",
        include_str!("../../queries/ref_symbol_parents.cypher"),
    ),
    (
        "ref_file_list",
        include_str!("../../queries/ref_file_list.cypher"),
    ),
    (
        "file_imported_symbols",
        include_str!("../../queries/file_imported_symbols.cypher"),
    ),
];

fn q(name: &str) -> &'static str {
    QUERY_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .unwrap_or_else(|| panic!("no query file named {name}"))
}

/// Rows per UNWIND batch: large enough to amortise the call, small enough to keep
/// parameter conversion cheap.
const BATCH: usize = 5_000;

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error(
        "the data dir {0} is in use by another cruxe process (an index run or a server); wait for it to finish or stop it"
    )]
    Locked(PathBuf),
    #[error("cannot open the graph at {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error("the query writes to the graph; only read-only queries are allowed here")]
    NotReadOnly,
    /// The query reached for a file (refused by the sandbox, or absent).
    #[error("the query reads or writes files outside the graph")]
    OutsideGraph,
    #[error("invalid query: {0}")]
    Invalid(String),
    #[error("the query ran longer than {0} ms and was stopped")]
    Timeout(u64),
    #[error("graph error: {0}")]
    Kuzu(String),
}

impl From<kuzu::Error> for GraphError {
    fn from(e: kuzu::Error) -> Self {
        GraphError::Kuzu(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, GraphError>;

/// Resource settings for Kuzu; its defaults (80% of RAM for the buffer pool, an
/// 8 TB address-space reservation) do not suit a tool that shares the machine.
#[derive(Debug, Clone)]
pub struct GraphConfig {
    pub buffer_pool_bytes: u64,
    pub threads: u64,
    pub max_db_bytes: u64,
    /// Let Kuzu checkpoint on its own when the log grows. A server turns it off:
    /// its in-place runs checkpoint explicitly, behind the reader gate.
    pub auto_checkpoint: bool,
}

impl Default for GraphConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
        GraphConfig {
            buffer_pool_bytes: 512 * 1024 * 1024,
            threads: cores.clamp(1, 4),
            max_db_bytes: 1 << 36,
            auto_checkpoint: true,
        }
    }
}

/// A node's properties as the store returns them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SymbolRow {
    pub id: String,
    pub stable_id: String,
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub path: String,
    pub language: String,
    pub line_start: i64,
    pub line_end: i64,
    pub signature: String,
    pub visibility: String,
    pub doc: String,
}

/// One step of an ancestor chain: an enclosing symbol or, last, the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ancestor {
    Symbol(Box<SymbolRow>, i64),
    File {
        id: String,
        path: String,
        depth: i64,
    },
}

/// A descendant with its direct parent's id and depth below the start symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descendant {
    pub symbol: SymbolRow,
    pub parent_id: String,
    pub depth: i64,
}

/// Rows to write for one file (already carrying graph ids).
#[derive(Debug, Clone, Default)]
pub struct FileRows {
    pub file: FileRow,
    pub symbols: Vec<SymbolInsert>,
    /// The file's node exists already (a changed file): it is updated in place.
    pub existing: bool,
    /// An existing file's language, module, package and imports text are the
    /// stored ones: only its hash and counts are rewritten.
    pub same_names: bool,
}

#[derive(Debug, Clone, Default)]
pub struct FileRow {
    pub id: String,
    pub path: String,
    pub language: String,
    pub module: String,
    pub package: String,
    pub content_hash: String,
    pub line_count: i64,
    pub size: i64,
    /// The file's raw imports, encoded by the indexer (opaque here).
    pub imports: String,
}

#[derive(Debug, Clone, Default)]
pub struct SymbolInsert {
    pub row: SymbolRow,
    pub byte_start: i64,
    pub byte_end: i64,
    /// Parent symbol id; `None` = contained by the file.
    pub parent: Option<String>,
    /// A hash of the source the search index keeps of it (`search::body_of`):
    /// part of its position mark, so a diff sees an edit inside its body.
    pub body_hash: u64,
}

/// One index run's changes to one repo/ref, applied in a single transaction.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub repo: String,
    pub repo_root: String,
    pub ref_name: String,
    pub commit: String,
    pub indexed_at: String,
    /// Hash of the manifests that decided module and package names.
    pub layout_hash: String,
    /// Drop everything of this repo/ref first (a `--force` rebuild).
    pub replace_all: bool,
    /// Files (repo-relative paths) whose symbols are removed: changed and deleted ones.
    pub remove_paths: Vec<String>,
    /// Of those, the deleted ones: their File nodes go too.
    pub drop_files: Vec<String>,
    /// Shared with the search index writer of a full build.
    pub add: std::sync::Arc<Vec<FileRows>>,
    /// The import edges after this run; `None` leaves them as they are.
    pub imports: Option<ImportChanges>,
    /// For changed files (by path) whose stored symbols were diffed against the
    /// new ones: only what differs is written. A changed file without a diff has
    /// all its symbols replaced.
    pub symbol_diffs: HashMap<String, SymbolDiff>,
}

/// How a changed file's stored symbols become its new ones.
#[derive(Debug, Clone, Default)]
pub struct SymbolDiff {
    /// Stored symbols that go (gone, or re-created under another parent, with
    /// everything nested in them).
    pub delete: Vec<String>,
    /// Symbols that stay; their properties are rewritten when in `update`, their
    /// positions alone when in `moved` (a rewrite is costly at checkpoint).
    pub keep: HashSet<String>,
    pub update: HashSet<String>,
    pub moved: HashSet<String>,
}

/// What a diff needs of a symbol besides its id and parent: hashes of its
/// properties and of its position (`symbol_marks`).
pub type SymbolMarks = [u64; 2];

/// Hashes of a symbol's properties (everything but its position) and of its
/// position (lines, bytes and the source in them).
pub fn symbol_marks(si: &SymbolInsert) -> SymbolMarks {
    let r = &si.row;
    let mut h = blake3::Hasher::new();
    for part in [
        &r.stable_id,
        &r.name,
        &r.kind,
        &r.qualified_name,
        &r.path,
        &r.language,
        &r.signature,
        &r.visibility,
        &r.doc,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let content = u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8"));
    let mut h = blake3::Hasher::new();
    for n in [r.line_start, r.line_end, si.byte_start, si.byte_end] {
        h.update(&n.to_le_bytes());
    }
    h.update(&si.body_hash.to_le_bytes());
    let position = u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8"));
    [content, position]
}

impl SymbolDiff {
    /// The diff from a file's stored symbols (id, parent id or `None` for the
    /// file, marks) to its new ones.
    pub fn between(
        old: &[(String, Option<String>, SymbolMarks)],
        new: &[SymbolInsert],
    ) -> SymbolDiff {
        let new_by_id: HashMap<&str, &SymbolInsert> =
            new.iter().map(|s| (s.row.id.as_str(), s)).collect();
        let old_by_id: HashMap<&str, Option<&str>> = old
            .iter()
            .map(|(id, p, _)| (id.as_str(), p.as_deref()))
            .collect();
        // A stored symbol stays when the new version has it under the same
        // parent, and so does every ancestor (deleting a node drops the CONTAINS
        // edges to its children).
        let mut stays: HashMap<&str, bool> = HashMap::new();
        fn decide<'a>(
            id: &'a str,
            old_by_id: &HashMap<&'a str, Option<&'a str>>,
            new_by_id: &HashMap<&str, &SymbolInsert>,
            stays: &mut HashMap<&'a str, bool>,
            depth: usize,
        ) -> bool {
            if let Some(&v) = stays.get(id) {
                return v;
            }
            let parent = old_by_id[id];
            let v = depth < 64
                && new_by_id
                    .get(id)
                    .is_some_and(|n| n.parent.as_deref() == parent)
                && parent.is_none_or(|p| {
                    old_by_id.contains_key(p) && decide(p, old_by_id, new_by_id, stays, depth + 1)
                });
            stays.insert(id, v);
            v
        }
        let mut diff = SymbolDiff::default();
        for (id, _, marks) in old {
            if decide(id, &old_by_id, &new_by_id, &mut stays, 0) {
                let now = symbol_marks(new_by_id[id.as_str()]);
                if now[0] != marks[0] {
                    diff.update.insert(id.clone());
                } else if now[1] != marks[1] {
                    diff.moved.insert(id.clone());
                }
                diff.keep.insert(id.clone());
            } else {
                diff.delete.push(id.clone());
            }
        }
        diff
    }
}

impl ImportChanges {
    /// The edges written: all of the ref's, or those of the rewritten files.
    pub fn rows(&self) -> &[ImportRow] {
        match self {
            ImportChanges::All(rows) | ImportChanges::Files { rows, .. } => rows,
        }
    }
}

/// How a run changes the import edges of its ref.
#[derive(Debug, Clone)]
pub enum ImportChanges {
    /// The complete edge set of the ref, applied as a diff against the stored one.
    All(Vec<ImportRow>),
    /// Only the outgoing edges of `files` (file ids) change: they are replaced by
    /// `rows`. `externals` names every External node the ref needs after the run.
    Files {
        files: Vec<String>,
        rows: Vec<ImportRow>,
        externals: Vec<String>,
    },
}

/// Where an import edge points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImportLabel {
    Symbol,
    File,
    External,
}

impl ImportLabel {
    fn parse(s: &str) -> Option<ImportLabel> {
        match s {
            "Symbol" => Some(ImportLabel::Symbol),
            "File" => Some(ImportLabel::File),
            "External" => Some(ImportLabel::External),
            _ => None,
        }
    }
}

/// One `IMPORTS` edge. For `External` targets `to` is the external's name (its
/// node id is derived here); otherwise the target node's id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ImportRow {
    pub from: String,
    pub label: ImportLabel,
    pub to: String,
    pub to_name: String,
    pub line: i64,
    pub alias: String,
}

/// A stored file, for import resolution.
#[derive(Debug, Clone, Default)]
pub struct StoredFile {
    pub id: String,
    pub path: String,
    pub language: String,
    pub module: String,
    pub package: String,
    pub imports: String,
}

/// A stored symbol, for import resolution.
#[derive(Debug, Clone, Default)]
pub struct StoredSymbol {
    pub id: String,
    pub path: String,
    pub qualified_name: String,
    pub kind: String,
}

pub fn external_id(repo: &str, ref_name: &str, name: &str) -> String {
    format!("{repo}@{ref_name}:ext:{name}")
}

/// Counts of one indexed ref.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefStatus {
    pub repo: String,
    pub ref_name: String,
    pub commit: String,
    pub indexed_at: String,
    pub files: i64,
    pub symbols: i64,
    pub import_edges: i64,
    pub unresolved_imports: i64,
}

/// A symbol with its byte range in its file.
pub type SymbolWithRange = (SymbolRow, usize, usize);

/// A CONTAINS edge into a symbol: (parent id, child id, the parent is a file).
pub type ContainsEdge = (String, String, bool);

/// A file's node as readers see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileInfo {
    pub id: String,
    pub path: String,
    pub language: String,
    pub module: String,
    pub package: String,
    pub content_hash: String,
    pub line_count: i64,
}

/// A symbol of a file with its place in the file's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSymbol {
    pub symbol: SymbolRow,
    pub file_id: String,
    /// 1 for a top-level symbol.
    pub depth: i64,
    /// The file's id for a top-level symbol, else the enclosing symbol's id.
    pub parent_id: String,
}

/// Rows of an ad hoc query, keyed by the RETURN aliases.
#[derive(Debug, Clone, Default)]
pub struct QueryRows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
}

pub fn file_id(repo: &str, ref_name: &str, path: &str) -> String {
    format!("{repo}@{ref_name}:{path}")
}

pub fn ref_id(repo: &str, ref_name: &str) -> String {
    format!("{repo}@{ref_name}")
}

pub struct GraphStore {
    db: Database,
    read_only: bool,
    /// Every Kuzu call holds this shared; `checkpoint` holds it exclusively. Kuzu
    /// 0.11's CHECKPOINT holds the transaction manager's lock while it waits for
    /// active transactions to leave, and a transaction leaving needs that lock:
    /// a read that overlaps a checkpoint deadlocks both for Kuzu's 5 s wait (the
    /// read times out, the checkpoint fails). The gate lets running calls finish
    /// first and holds new ones back for the checkpoint's few milliseconds.
    gate: std::sync::RwLock<()>,
}

/// A connection that holds the checkpoint gate open for as long as it lives.
pub struct GatedConnection<'a> {
    conn: Connection<'a>,
    _gate: std::sync::RwLockReadGuard<'a, ()>,
}

impl<'a> std::ops::Deref for GatedConnection<'a> {
    type Target = Connection<'a>;
    fn deref(&self) -> &Connection<'a> {
        &self.conn
    }
}

impl GraphStore {
    /// Opens (creating if needed) the graph at `path` read-write and applies the schema.
    pub fn open(path: &Path, cfg: &GraphConfig) -> Result<GraphStore> {
        let store = Self::open_with(path, cfg, false)?;
        {
            let conn = store.conn()?;
            for (_, ddl) in SCHEMA_FILES {
                for stmt in statements(ddl) {
                    conn.query(&stmt)?;
                }
            }
        }
        Ok(store)
    }

    /// Opens an existing graph read-only: any write is refused by Kuzu itself.
    pub fn open_read_only(path: &Path, cfg: &GraphConfig) -> Result<GraphStore> {
        Self::open_with(path, cfg, true)
    }

    fn open_with(path: &Path, cfg: &GraphConfig, read_only: bool) -> Result<GraphStore> {
        let config = SystemConfig::default()
            .buffer_pool_size(cfg.buffer_pool_bytes)
            .max_num_threads(cfg.threads)
            .max_db_size(cfg.max_db_bytes)
            .auto_checkpoint(cfg.auto_checkpoint)
            .read_only(read_only);
        let db = Database::new(path, config).map_err(|e| {
            let message = e.to_string();
            if message.contains("lock") {
                GraphError::Locked(path.to_path_buf())
            } else {
                GraphError::Open {
                    path: path.to_path_buf(),
                    message,
                }
            }
        })?;
        Ok(GraphStore {
            db,
            read_only,
            gate: std::sync::RwLock::new(()),
        })
    }

    fn conn(&self) -> Result<GatedConnection<'_>> {
        let gate = self.gate.read().unwrap_or_else(|e| e.into_inner());
        Ok(GatedConnection {
            conn: Connection::new(&self.db)?,
            _gate: gate,
        })
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The manifests hash a ref was last indexed with ("" if unknown).
    pub fn layout_hash(&self, repo: &str, ref_name: &str) -> Result<String> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_layout_hash"))?;
        let mut rows = conn.execute(&mut stmt, vec![("id", s(&ref_id(repo, ref_name)))])?;
        Ok(rows.next().map(|r| string(&r[0])).unwrap_or_default())
    }

    /// Content hash of every file of a repo/ref, by path.
    pub fn file_hashes(&self, repo: &str, ref_name: &str) -> Result<HashMap<String, String>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("file_hashes"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows
            .map(|r| (string(&r[0]), string(&r[1])))
            .collect::<HashMap<_, _>>())
    }

    /// Every file and symbol of a repo/ref, for import resolution.
    pub fn load_ref(
        &self,
        repo: &str,
        ref_name: &str,
    ) -> Result<(Vec<StoredFile>, Vec<StoredSymbol>)> {
        let conn = self.conn()?;
        let params = || vec![("repo", s(repo)), ("ref", s(ref_name))];
        let mut stmt = conn.prepare(q("ref_files"))?;
        let files = conn
            .execute(&mut stmt, params())?
            .map(|r| StoredFile {
                id: string(&r[0]),
                path: string(&r[1]),
                language: string(&r[2]),
                module: string(&r[3]),
                package: string(&r[4]),
                imports: string(&r[5]),
            })
            .collect();
        let mut stmt = conn.prepare(q("ref_symbols"))?;
        let symbols = conn
            .execute(&mut stmt, params())?
            .map(|r| StoredSymbol {
                id: string(&r[0]),
                path: string(&r[1]),
                qualified_name: string(&r[2]),
                kind: string(&r[3]),
            })
            .collect();
        Ok((files, symbols))
    }

    /// Applies one run's changes atomically: all of them or (after a crash or error)
    /// none of them.
    pub fn apply(&self, changes: &Changes) -> Result<()> {
        let conn = self.conn()?;
        conn.query("BEGIN TRANSACTION")?;
        match write_changes(&conn, changes) {
            Ok(()) => {
                conn.query("COMMIT")?;
                Ok(())
            }
            Err(e) => {
                let _ = conn.query("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Writes every committed change into the database file and empties the log.
    pub fn checkpoint(&self) -> Result<()> {
        let _exclusive = self.gate.write().unwrap_or_else(|e| e.into_inner());
        Connection::new(&self.db)?.query("CHECKPOINT")?;
        Ok(())
    }

    /// Writes a whole repo/ref into this (new, empty) database with bulk COPY, each
    /// statement committing on its own: only for a database that is built aside
    /// and swapped in by the caller once this returns.
    pub fn load_fresh(&mut self, changes: &Changes) -> Result<()> {
        let conn = self.conn()?;
        copy_all(&conn, changes)
    }

    /// The (repo, ref) pairs this database holds.
    pub fn refs(&self) -> Result<Vec<(String, String)>> {
        Ok(self
            .status()?
            .into_iter()
            .map(|s| (s.repo, s.ref_name))
            .collect())
    }

    /// Symbols named `name` in a repo/ref, optionally only in `path`.
    pub fn symbols_by_name(
        &self,
        repo: &str,
        ref_name: &str,
        name: &str,
        path: Option<&str>,
    ) -> Result<Vec<SymbolRow>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("symbols_by_name"))?;
        let rows = conn.execute(
            &mut stmt,
            vec![
                ("repo", s(repo)),
                ("ref", s(ref_name)),
                ("name", s(name)),
                ("path", s(path.unwrap_or(""))),
            ],
        )?;
        Ok(rows.map(|r| symbol_row(&r, 0)).collect())
    }

    /// The chain from the symbol's parent up to its file, nearest first.
    pub fn ancestors(&self, symbol_id: &str) -> Result<Vec<Ancestor>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ancestors"))?;
        let rows = conn.execute(&mut stmt, vec![("id", s(symbol_id))])?;
        Ok(rows
            .map(|r| {
                let depth = int(&r[13]);
                if string(&r[0]) == "File" {
                    Ancestor::File {
                        id: string(&r[1]),
                        path: string(&r[6]),
                        depth,
                    }
                } else {
                    Ancestor::Symbol(Box::new(symbol_row(&r, 1)), depth)
                }
            })
            .collect())
    }

    /// Every symbol nested under `symbol_id`, shallowest first.
    pub fn descendants(&self, symbol_id: &str) -> Result<Vec<Descendant>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("descendants"))?;
        let rows = conn.execute(&mut stmt, vec![("id", s(symbol_id))])?;
        Ok(rows
            .map(|r| Descendant {
                symbol: symbol_row(&r, 0),
                depth: int(&r[12]),
                parent_id: string(&r[13]),
            })
            .collect())
    }

    /// Counts per repo/ref.
    pub fn status(&self) -> Result<Vec<RefStatus>> {
        let conn = self.conn()?;
        let mut out: Vec<RefStatus> = conn
            .query(q("ref_counts"))?
            .map(|r| RefStatus {
                repo: string(&r[0]),
                ref_name: string(&r[1]),
                commit: string(&r[2]),
                indexed_at: string(&r[3]),
                files: int(&r[4]),
                ..RefStatus::default()
            })
            .collect();
        let find = |out: &mut Vec<RefStatus>, repo: &str, r: &str| {
            out.iter().position(|x| x.repo == repo && x.ref_name == r)
        };
        for r in conn.query(q("ref_symbol_counts"))? {
            if let Some(i) = find(&mut out, &string(&r[0]), &string(&r[1])) {
                out[i].symbols = int(&r[2]);
            }
        }
        for r in conn.query(q("ref_import_counts"))? {
            if let Some(i) = find(&mut out, &string(&r[0]), &string(&r[1])) {
                out[i].import_edges = int(&r[2]);
                out[i].unresolved_imports = int(&r[3]);
            }
        }
        Ok(out)
    }

    /// Runs one query inside a read-only transaction; `timeout_ms` 0 means no
    /// limit. Only for queries this code trusts (and tests): a read-only
    /// transaction still lets `LOAD FROM`, `COPY … TO` and settings through, so
    /// ad hoc Cypher goes through `adhoc`, which checks the plan first and runs
    /// in a sandboxed worker process.
    pub fn query_read_only(
        &self,
        cypher: &str,
        params: Vec<(String, serde_json::Value)>,
        max_rows: usize,
        timeout_ms: u64,
    ) -> Result<(QueryRows, bool)> {
        let conn = self.conn()?;
        if timeout_ms > 0 {
            conn.set_query_timeout(timeout_ms);
        }
        conn.query("BEGIN TRANSACTION READ ONLY")?;
        let result = run_read_only(&conn, cypher, params, max_rows, timeout_ms);
        let _ = conn.query("COMMIT");
        result
    }

    /// Compiles one statement without running it: its syntax and binder errors
    /// (with Kuzu's position) as `Invalid`.
    pub fn check_statement(&self, cypher: &str) -> Result<()> {
        let conn = self.conn()?;
        conn.prepare(cypher)
            .map(|_| ())
            .map_err(classify_query_error)
    }

    /// Kuzu's printed physical plan of one statement (`EXPLAIN`: nothing runs).
    pub fn explain(&self, cypher: &str, params: &[(String, serde_json::Value)]) -> Result<String> {
        let conn = self.conn()?;
        let mut stmt = conn
            .prepare(&format!("EXPLAIN {cypher}"))
            .map_err(classify_query_error)?;
        let mut bound = Vec::with_capacity(params.len());
        for (k, v) in params {
            bound.push((k.as_str(), json_to_value(v)?));
        }
        let result = conn
            .execute(&mut stmt, bound)
            .map_err(classify_query_error)?;
        let mut plan = String::new();
        for row in result {
            for v in row {
                if let Value::String(s) = v {
                    plan.push_str(&s);
                    plan.push('\n');
                }
            }
        }
        Ok(plan)
    }

    /// Every file of a repo/ref, ordered by path.
    pub fn files(&self, repo: &str, ref_name: &str) -> Result<Vec<FileInfo>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_file_list"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows.map(|r| file_info(&r)).collect())
    }

    /// When a repo/ref was last indexed (`None` if it is not in this graph).
    pub fn ref_indexed_at(&self, repo: &str, ref_name: &str) -> Result<Option<String>> {
        Ok(self.ref_version(repo, ref_name)?.map(|(at, _)| at))
    }

    /// (indexed_at, commit) of a repo/ref.
    pub fn ref_version(&self, repo: &str, ref_name: &str) -> Result<Option<(String, String)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_indexed_at"))?;
        let mut rows = conn.execute(&mut stmt, vec![("id", s(&ref_id(repo, ref_name)))])?;
        Ok(rows.next().map(|r| (string(&r[0]), string(&r[1]))))
    }

    /// Every resolved File -> Symbol import edge of a repo/ref as (file path, symbol id).
    pub fn symbol_imports(&self, repo: &str, ref_name: &str) -> Result<Vec<(String, String)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_imports"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows.map(|r| (string(&r[0]), string(&r[1]))).collect())
    }

    /// Every symbol of a repo/ref with its byte range, and every CONTAINS edge into a
    /// symbol as (parent id, child id, parent is a file): one ref's whole tree.
    /// Each symbol's direct parent: (parent id, symbol id, the parent is a file).
    pub fn symbol_parents(&self, repo: &str, ref_name: &str) -> Result<Vec<ContainsEdge>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_parents"))?;
        Ok(conn
            .execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?
            .map(|r| {
                (
                    string(&r[0]),
                    string(&r[1]),
                    matches!(r[2], Value::Bool(true)),
                )
            })
            .collect())
    }

    pub fn symbol_tree(
        &self,
        repo: &str,
        ref_name: &str,
    ) -> Result<(Vec<SymbolWithRange>, Vec<ContainsEdge>)> {
        let conn = self.conn()?;
        let params = || vec![("repo", s(repo)), ("ref", s(ref_name))];
        let mut stmt = conn.prepare(q("ref_symbol_rows"))?;
        let rows = conn
            .execute(&mut stmt, params())?
            .map(|r| {
                (
                    symbol_row(&r, 0),
                    int(&r[12]).max(0) as usize,
                    int(&r[13]).max(0) as usize,
                )
            })
            .collect();
        let mut stmt = conn.prepare(q("ref_symbol_parents"))?;
        let edges = conn
            .execute(&mut stmt, params())?
            .map(|r| {
                (
                    string(&r[0]),
                    string(&r[1]),
                    matches!(r[2], Value::Bool(true)),
                )
            })
            .collect();
        Ok((rows, edges))
    }

    /// The definitions a file imports (resolved edges only), with the import's line.
    pub fn imported_symbols(&self, file_id: &str) -> Result<Vec<(SymbolRow, i64)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("file_imported_symbols"))?;
        let rows = conn.execute(&mut stmt, vec![("id", s(file_id))])?;
        Ok(rows.map(|r| (symbol_row(&r, 0), int(&r[12]))).collect())
    }

    /// Prepares (compiles, does not run) a query: used by tests to check every query file.
    pub fn prepare_check(&self, cypher: &str) -> Result<()> {
        let conn = self.conn()?;
        conn.prepare(cypher)
            .map(|_| ())
            .map_err(|e| GraphError::Invalid(e.to_string()))
    }
}

/// What a failed ad hoc query was: a write Kuzu refused, an attempt on the file
/// system (refused by the sandbox, or a file that is not there), a timeout, or a
/// mistake in the query. Decided by the fixed head of Kuzu's message: the rest
/// may quote the query, whose text is anyone's.
fn classify_query_error(e: kuzu::Error) -> GraphError {
    let m = e.to_string();
    let head = m.trim_start_matches("Query execution failed: ");
    const WRITES: &[&str] = &[
        "Connection exception: Cannot execute write operations in a read-only database!",
        "Transaction manager exception: Can not execute a write query inside a read-only transaction.",
    ];
    if head.starts_with("Interrupted.") {
        GraphError::Timeout(0)
    } else if WRITES.iter().any(|w| head.starts_with(w)) {
        GraphError::NotReadOnly
    } else if head.starts_with("IO exception: ")
        || head.starts_with("Binder exception: No file found that matches the pattern")
        || head.starts_with("Binder exception: Cannot infer the format of the given file")
        // Kuzu checks a file's existence before opening it; saying which of
        // the two failed would tell a caller which paths exist.
        || head.starts_with("Binder exception: File ")
    {
        GraphError::OutsideGraph
    } else if head
        .starts_with("Connection Exception: We do not support prepare multiple statements")
    {
        GraphError::Invalid("one statement at a time, please: `;` may only end the query".into())
    } else {
        GraphError::Invalid(head.to_string())
    }
}

fn run_read_only(
    conn: &Connection<'_>,
    cypher: &str,
    params: Vec<(String, serde_json::Value)>,
    max_rows: usize,
    timeout_ms: u64,
) -> Result<(QueryRows, bool)> {
    let classify = |e: kuzu::Error| match classify_query_error(e) {
        GraphError::Timeout(_) => GraphError::Timeout(timeout_ms),
        other => other,
    };
    let mut stmt = conn.prepare(cypher).map_err(classify)?;
    let mut bound = Vec::with_capacity(params.len());
    for (k, v) in &params {
        bound.push((k.as_str(), json_to_value(v)?));
    }
    let result = conn.execute(&mut stmt, bound).map_err(classify)?;
    let columns = result.get_column_names();
    let mut rows = Vec::new();
    let mut truncated = false;
    for row in result {
        if rows.len() >= max_rows {
            truncated = true;
            break;
        }
        rows.push(row.iter().map(value_to_json).collect());
    }
    Ok((QueryRows { columns, rows }, truncated))
}

/// Splits a DDL file into statements (`;`-separated, `//` comment lines dropped).
fn statements(ddl: &str) -> Vec<String> {
    let body: String = ddl
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    body.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn write_changes(conn: &Connection<'_>, c: &Changes) -> Result<()> {
    let repo = s(&c.repo);
    let rf = s(&c.ref_name);
    if c.replace_all {
        for name in [
            "delete_ref_symbols",
            "delete_ref_externals",
            "delete_ref_files",
        ] {
            let mut stmt = conn.prepare(q(name))?;
            conn.execute(&mut stmt, vec![("repo", repo.clone()), ("ref", rf.clone())])?;
        }
    } else if !c.remove_paths.is_empty() {
        let t = std::time::Instant::now();
        // Files without a diff lose all their symbols; diffed ones only those
        // that go.
        let whole: Vec<&String> = c
            .remove_paths
            .iter()
            .filter(|p| !c.symbol_diffs.contains_key(*p))
            .collect();
        for chunk in whole.chunks(BATCH) {
            let ids = list_of_strings(chunk.iter().map(|p| file_id(&c.repo, &c.ref_name, p)));
            let mut stmt = conn.prepare(q("delete_file_symbols"))?;
            conn.execute(&mut stmt, vec![("ids", ids)])?;
        }
        let mut diffed: Vec<(&String, &SymbolDiff)> = c
            .symbol_diffs
            .iter()
            .filter(|(_, d)| !d.delete.is_empty())
            .collect();
        diffed.sort_by(|a, b| a.0.cmp(b.0));
        for chunk in diffed.chunks(256) {
            let files =
                list_of_strings(chunk.iter().map(|(p, _)| file_id(&c.repo, &c.ref_name, p)));
            let ids = list_of_strings(chunk.iter().flat_map(|(_, d)| d.delete.iter().cloned()));
            let mut stmt = conn.prepare(q("delete_symbols"))?;
            conn.execute(&mut stmt, vec![("files", files), ("ids", ids)])?;
        }
        for chunk in c.drop_files.chunks(BATCH) {
            let ids = list_of_strings(chunk.iter().map(|p| file_id(&c.repo, &c.ref_name, p)));
            let mut stmt = conn.prepare(q("delete_files"))?;
            conn.execute(&mut stmt, vec![("ids", ids)])?;
        }
        tracing::debug!(
            ms = t.elapsed().as_millis() as u64,
            files = c.remove_paths.len(),
            diffed = c.symbol_diffs.len(),
            "deleted the symbols of changed files"
        );
    }

    let mut stmt = conn.prepare(q("upsert_repo"))?;
    conn.execute(
        &mut stmt,
        vec![("name", repo.clone()), ("root", s(&c.repo_root))],
    )?;
    let rid = ref_id(&c.repo, &c.ref_name);
    let mut stmt = conn.prepare(q("upsert_ref"))?;
    conn.execute(
        &mut stmt,
        vec![
            ("repo", repo.clone()),
            ("id", s(&rid)),
            ("name", rf.clone()),
            ("commit", s(&c.commit)),
            ("indexed_at", s(&c.indexed_at)),
            ("layout_hash", s(&c.layout_hash)),
        ],
    )?;

    // Files, with their HAS_FILE edge.
    let (file_fields, file_types) = file_layout();
    write_batches(
        conn,
        q("insert_files"),
        &file_types,
        &file_fields,
        c.add
            .iter()
            .filter(|f| !f.existing)
            .map(|f| file_values(c, &f.file)),
        |p| p.push(("ref_id", s(&rid))),
    )?;
    for (query, same_names) in [("update_files", false), ("update_file_counts", true)] {
        write_batches(
            conn,
            q(query),
            &file_types,
            &file_fields,
            c.add
                .iter()
                .filter(|f| f.existing && f.same_names == same_names)
                .map(|f| file_values(c, &f.file)),
            |_| {},
        )?;
    }

    // Symbols that stay but changed: rewritten in place (positions alone when
    // only they changed).
    let (sym_fields, sym_types) = symbol_layout(true);
    for f in c.add.iter().filter(|f| f.existing) {
        let Some(d) = c.symbol_diffs.get(&f.file.path) else {
            continue;
        };
        let files = list_of_strings(std::iter::once(f.file.id.clone()));
        if !d.update.is_empty() {
            write_batches(
                conn,
                q("update_symbols"),
                &sym_types,
                &sym_fields,
                f.symbols
                    .iter()
                    .filter(|si| d.update.contains(&si.row.id))
                    .map(|si| symbol_values(c, &f.file, si, true)),
                |p| p.push(("files", files.clone())),
            )?;
        }
        if !d.moved.is_empty() {
            let fields = ["id", "line_start", "line_end", "byte_start", "byte_end"];
            write_batches(
                conn,
                q("update_symbol_positions"),
                &struct_type(&fields, &[1, 2, 3, 4]),
                &fields,
                f.symbols
                    .iter()
                    .filter(|si| d.moved.contains(&si.row.id))
                    .map(|si| {
                        vec![
                            s(&si.row.id),
                            Value::Int64(si.row.line_start),
                            Value::Int64(si.row.line_end),
                            Value::Int64(si.byte_start),
                            Value::Int64(si.byte_end),
                        ]
                    }),
                |p| p.push(("files", files.clone())),
            )?;
        }
    }

    // New symbols with their CONTAINS edge, shallowest first so parents exist:
    // those directly in their file together with their children, then the rest
    // under their (new or kept) parent symbol.
    let plan = insert_plan(&c.add, &c.symbol_diffs);
    if !plan.top.is_empty() {
        let (child_fields, child_type) = symbol_layout(false);
        let mut fields = sym_fields.clone();
        fields.push("children");
        let LogicalType::Struct { fields: mut types } = sym_types.clone() else {
            unreachable!("symbol_layout is a struct")
        };
        types.push((
            "children".to_string(),
            LogicalType::List {
                child_type: Box::new(child_type.clone()),
            },
        ));
        let row_type = LogicalType::Struct { fields: types };
        write_batches(
            conn,
            q("insert_symbols_with_children"),
            &row_type,
            &fields,
            plan.top.iter().map(|(file, si)| {
                let mut v = symbol_values(c, file, si, true);
                let kids = plan
                    .children
                    .get(si.row.id.as_str())
                    .map_or(&[][..], Vec::as_slice);
                v.push(Value::List(
                    child_type.clone(),
                    kids.iter()
                        .map(|(f, k)| {
                            Value::Struct(
                                child_fields
                                    .iter()
                                    .map(|n| n.to_string())
                                    .zip(symbol_values(c, f, k, false))
                                    .collect(),
                            )
                        })
                        .collect(),
                ));
                v
            }),
            |_| {},
        )?;
    }
    for level in &plan.nested {
        write_batches(
            conn,
            q("insert_symbols_under_symbol"),
            &sym_types,
            &sym_fields,
            level
                .iter()
                .map(|(file, si)| symbol_values(c, file, si, true)),
            |_| {},
        )?;
    }
    match &c.imports {
        Some(ImportChanges::All(imports)) => write_imports(conn, c, imports)?,
        Some(ImportChanges::Files {
            files,
            rows,
            externals,
        }) => write_file_imports(conn, c, files, rows, externals)?,
        None => {}
    }
    Ok(())
}

/// Replaces the outgoing import edges of `files` by `rows` and brings the ref's
/// External nodes to exactly `externals`: the cost follows the change, not the ref.
fn write_file_imports(
    conn: &Connection<'_>,
    c: &Changes,
    files: &[String],
    rows: &[ImportRow],
    externals: &[String],
) -> Result<()> {
    for chunk in files.chunks(BATCH) {
        let mut stmt = conn.prepare(q("delete_file_imports"))?;
        conn.execute(
            &mut stmt,
            vec![("ids", list_of_strings(chunk.iter().cloned()))],
        )?;
    }
    sync_externals(conn, c, externals.iter().map(String::as_str))?;
    insert_import_rows(conn, c, rows.iter(), false)
}

/// Deletes External nodes of the ref that are not named in `wanted` and creates
/// the missing ones.
fn sync_externals<'x>(
    conn: &Connection<'_>,
    c: &Changes,
    wanted: impl Iterator<Item = &'x str>,
) -> Result<()> {
    use std::collections::HashSet;
    let mut stmt = conn.prepare(q("ref_externals"))?;
    let have_ext: HashSet<String> = conn
        .execute(
            &mut stmt,
            vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))],
        )?
        .map(|r| string(&r[0]))
        .collect();
    let mut want_ext: Vec<&str> = wanted.collect();
    want_ext.sort_unstable();
    want_ext.dedup();
    let want_ext_ids: HashSet<String> = want_ext
        .iter()
        .map(|n| external_id(&c.repo, &c.ref_name, n))
        .collect();
    let mut gone: Vec<String> = have_ext.difference(&want_ext_ids).cloned().collect();
    gone.sort();
    for chunk in gone.chunks(BATCH) {
        let mut stmt = conn.prepare(q("delete_externals"))?;
        conn.execute(
            &mut stmt,
            vec![("ids", list_of_strings(chunk.iter().cloned()))],
        )?;
    }
    let ext_fields = ["id", "repo", "ref", "name"];
    let ext_type = struct_type(&ext_fields, &[]);
    let new_ext = want_ext.iter().filter_map(|name| {
        let id = external_id(&c.repo, &c.ref_name, name);
        (!have_ext.contains(&id)).then(|| vec![s(&id), s(&c.repo), s(&c.ref_name), s(name)])
    });
    write_batches(
        conn,
        q("insert_externals"),
        &ext_type,
        &ext_fields,
        new_ext,
        |_| {},
    )
}

const EDGE_FIELDS: [&str; 5] = ["from", "to", "to_name", "line", "alias"];

/// One import edge as an UNWIND row; `to` of an External edge is its name
/// unless `normalized` (then it is already the node id).
fn edge_row(c: &Changes, r: &ImportRow, normalized: bool) -> Vec<Value> {
    let to = if r.label == ImportLabel::External && !normalized {
        external_id(&c.repo, &c.ref_name, &r.to)
    } else {
        r.to.clone()
    };
    vec![
        s(&r.from),
        Value::String(to),
        s(&r.to_name),
        Value::Int64(r.line),
        s(&r.alias),
    ]
}

/// Creates import edges (their target nodes exist); see `edge_row` for
/// `normalized`.
fn insert_import_rows<'r>(
    conn: &Connection<'_>,
    c: &Changes,
    rows: impl Iterator<Item = &'r ImportRow> + Clone,
    normalized: bool,
) -> Result<()> {
    let edge_type = struct_type(&EDGE_FIELDS, &[3]);
    for (label, query) in [
        (ImportLabel::Symbol, "insert_imports_symbol"),
        (ImportLabel::File, "insert_imports_file"),
        (ImportLabel::External, "insert_imports_external"),
    ] {
        write_batches(
            conn,
            q(query),
            &edge_type,
            &EDGE_FIELDS,
            rows.clone()
                .filter(|r| r.label == label)
                .map(|r| edge_row(c, r, normalized)),
            |_| {},
        )?;
    }
    Ok(())
}

/// Brings the ref's import edges and External nodes to exactly `desired`,
/// touching only what differs. Runs after the node changes of the same
/// transaction, so edges lost with re-created nodes are seen as missing.
fn write_imports(conn: &Connection<'_>, c: &Changes, desired: &[ImportRow]) -> Result<()> {
    use std::collections::HashSet;
    let params = || vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))];
    let norm = |r: &ImportRow| -> ImportRow {
        let mut r = r.clone();
        if r.label == ImportLabel::External {
            r.to = external_id(&c.repo, &c.ref_name, &r.to);
        }
        r
    };
    let want: HashSet<ImportRow> = desired.iter().map(norm).collect();
    let mut stmt = conn.prepare(q("ref_imports"))?;
    let have: HashSet<ImportRow> = conn
        .execute(&mut stmt, params())?
        .filter_map(|r| {
            Some(ImportRow {
                from: string(&r[0]),
                label: ImportLabel::parse(&string(&r[1]))?,
                to: string(&r[2]),
                to_name: string(&r[3]),
                line: int(&r[4]),
                alias: string(&r[5]),
            })
        })
        .collect();

    let edge_type = struct_type(&EDGE_FIELDS, &[3]);
    let mut stale: Vec<&ImportRow> = have.difference(&want).collect();
    stale.sort();
    write_batches(
        conn,
        q("delete_imports"),
        &edge_type,
        &EDGE_FIELDS,
        stale.iter().map(|r| edge_row(c, r, true)),
        |_| {},
    )?;
    sync_externals(
        conn,
        c,
        desired
            .iter()
            .filter(|r| r.label == ImportLabel::External)
            .map(|r| r.to.as_str()),
    )?;
    let mut missing: Vec<&ImportRow> = want.difference(&have).collect();
    missing.sort();
    insert_import_rows(conn, c, missing.into_iter(), true)
}

const SYMBOL_FIELDS: [&str; 17] = [
    "id",
    "stable_id",
    "repo",
    "ref",
    "path",
    "name",
    "kind",
    "qualified_name",
    "language",
    "line_start",
    "line_end",
    "byte_start",
    "byte_end",
    "signature",
    "visibility",
    "doc",
    "parent",
];

/// Field names and STRUCT type of symbol rows, with or without `parent`.
fn symbol_layout(with_parent: bool) -> (Vec<&'static str>, LogicalType) {
    let n = if with_parent { 17 } else { 16 };
    let fields: Vec<&str> = SYMBOL_FIELDS[..n].to_vec();
    let ty = struct_type(&fields, &[9, 10, 11, 12]);
    (fields, ty)
}

fn symbol_values(c: &Changes, file: &FileRow, si: &SymbolInsert, with_parent: bool) -> Vec<Value> {
    let r = &si.row;
    let mut v = vec![
        s(&r.id),
        s(&r.stable_id),
        s(&c.repo),
        s(&c.ref_name),
        s(&r.path),
        s(&r.name),
        s(&r.kind),
        s(&r.qualified_name),
        s(&r.language),
        Value::Int64(r.line_start),
        Value::Int64(r.line_end),
        Value::Int64(si.byte_start),
        Value::Int64(si.byte_end),
        s(&r.signature),
        s(&r.visibility),
        s(&r.doc),
    ];
    if with_parent {
        v.push(s(si.parent.as_deref().unwrap_or(&file.id)));
    }
    v
}

/// Which new symbols an in-place write creates, and how: `top` are contained by
/// their file (created with `children`, their new direct children, in the same
/// statement); `nested` holds the others level by level (a level's parents
/// exist once the levels before it are written), each level in file order.
/// Symbols a file's diff keeps are not created again.
struct InsertPlan<'a> {
    top: Vec<(&'a FileRow, &'a SymbolInsert)>,
    children: HashMap<&'a str, Vec<(&'a FileRow, &'a SymbolInsert)>>,
    nested: Vec<Vec<(&'a FileRow, &'a SymbolInsert)>>,
}

fn insert_plan<'a>(add: &'a [FileRows], diffs: &HashMap<String, SymbolDiff>) -> InsertPlan<'a> {
    let mut plan = InsertPlan {
        top: Vec::new(),
        children: HashMap::new(),
        nested: Vec::new(),
    };
    for f in add {
        let keep = diffs.get(&f.file.path).map(|d| &d.keep);
        let created: Vec<&SymbolInsert> = f
            .symbols
            .iter()
            .filter(|si| keep.is_none_or(|k| !k.contains(&si.row.id)))
            .collect();
        let parent_of: HashMap<&str, Option<&str>> = created
            .iter()
            .map(|si| (si.row.id.as_str(), si.parent.as_deref()))
            .collect();
        // Depth among the created symbols: 0 = its parent is the file or a kept
        // symbol.
        let depth = |si: &SymbolInsert| -> usize {
            let mut d = 0;
            let mut cur = si.parent.as_deref();
            while let Some(p) = cur {
                let Some(up) = parent_of.get(p) else { break };
                d += 1;
                cur = *up;
                if d > 256 {
                    break;
                }
            }
            d
        };
        let top_ids: HashSet<&str> = created
            .iter()
            .filter(|si| si.parent.is_none())
            .map(|si| si.row.id.as_str())
            .collect();
        for si in created {
            let d = depth(si);
            match si.parent.as_deref() {
                None => plan.top.push((&f.file, si)),
                Some(p) if d == 1 && top_ids.contains(p) => {
                    plan.children.entry(p).or_default().push((&f.file, si));
                }
                Some(_) => {
                    if plan.nested.len() <= d {
                        plan.nested.resize_with(d + 1, Vec::new);
                    }
                    plan.nested[d].push((&f.file, si));
                }
            }
        }
    }
    plan
}

/// Writes a whole repo/ref into a new, empty database with COPY from CSV files
/// (no manual transaction: the caller builds aside and swaps the file in when
/// this returns). CSV, not parameters: converting wide rows across the FFI costs
/// more than Kuzu's CSV reader.
fn copy_all(conn: &Connection<'_>, c: &Changes) -> Result<()> {
    let rid = ref_id(&c.repo, &c.ref_name);
    let mut stmt = conn.prepare(q("upsert_repo"))?;
    conn.execute(
        &mut stmt,
        vec![("name", s(&c.repo)), ("root", s(&c.repo_root))],
    )?;
    let mut stmt = conn.prepare(q("upsert_ref"))?;
    conn.execute(
        &mut stmt,
        vec![
            ("repo", s(&c.repo)),
            ("id", s(&rid)),
            ("name", s(&c.ref_name)),
            ("commit", s(&c.commit)),
            ("indexed_at", s(&c.indexed_at)),
            ("layout_hash", s(&c.layout_hash)),
        ],
    )?;
    let scratch = tempfile::tempdir().map_err(|e| GraphError::Kuzu(e.to_string()))?;
    let mut n = 0;
    let mut copy = |name: &str, rows: &mut dyn Iterator<Item = Vec<String>>| -> Result<()> {
        n += 1;
        let path = scratch.path().join(format!("{n}.csv"));
        let mut text = String::new();
        let mut count = 0usize;
        for row in rows {
            for (i, field) in row.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push('"');
                text.push_str(&field.replace('"', "\"\""));
                text.push('"');
            }
            text.push('\n');
            count += 1;
        }
        if count == 0 {
            return Ok(());
        }
        std::fs::write(&path, text).map_err(|e| GraphError::Kuzu(e.to_string()))?;
        let started = std::time::Instant::now();
        let query = q(name).replace("{csv}", &path.to_string_lossy());
        conn.query(&query)?;
        tracing::debug!(
            rows = count,
            ms = started.elapsed().as_millis() as u64,
            name,
            "copy"
        );
        Ok(())
    };
    let num = |i: i64| i.to_string();
    copy(
        "copy_files",
        &mut c.add.iter().map(|f| {
            let r = &f.file;
            vec![
                r.id.clone(),
                c.repo.clone(),
                c.ref_name.clone(),
                r.path.clone(),
                r.language.clone(),
                r.module.clone(),
                r.package.clone(),
                r.content_hash.clone(),
                num(r.line_count),
                num(r.size),
                r.imports.clone(),
            ]
        }),
    )?;
    copy(
        "copy_has_file",
        &mut c.add.iter().map(|f| vec![rid.clone(), f.file.id.clone()]),
    )?;
    copy(
        "copy_symbols",
        &mut c.add.iter().flat_map(|f| {
            f.symbols.iter().map(|si| {
                let r = &si.row;
                vec![
                    r.id.clone(),
                    r.stable_id.clone(),
                    c.repo.clone(),
                    c.ref_name.clone(),
                    r.path.clone(),
                    r.name.clone(),
                    r.kind.clone(),
                    r.qualified_name.clone(),
                    r.language.clone(),
                    num(r.line_start),
                    num(r.line_end),
                    num(si.byte_start),
                    num(si.byte_end),
                    r.signature.clone(),
                    r.visibility.clone(),
                    r.doc.clone(),
                ]
            })
        }),
    )?;
    copy(
        "copy_file_contains",
        &mut c.add.iter().flat_map(|f| {
            f.symbols
                .iter()
                .filter(|si| si.parent.is_none())
                .map(|si| vec![f.file.id.clone(), si.row.id.clone()])
        }),
    )?;
    copy(
        "copy_symbol_contains",
        &mut c.add.iter().flat_map(|f| {
            f.symbols.iter().filter_map(|si| {
                si.parent
                    .as_ref()
                    .map(|p| vec![p.clone(), si.row.id.clone()])
            })
        }),
    )?;
    if let Some(imports) = c.imports.as_ref().map(ImportChanges::rows) {
        let mut names: Vec<&str> = imports
            .iter()
            .filter(|r| r.label == ImportLabel::External)
            .map(|r| r.to.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        copy(
            "copy_externals",
            &mut names.iter().map(|n| {
                vec![
                    external_id(&c.repo, &c.ref_name, n),
                    c.repo.clone(),
                    c.ref_name.clone(),
                    n.to_string(),
                ]
            }),
        )?;
        for (label, name) in [
            (ImportLabel::Symbol, "copy_imports_symbol"),
            (ImportLabel::File, "copy_imports_file"),
            (ImportLabel::External, "copy_imports_external"),
        ] {
            copy(
                name,
                &mut imports.iter().filter(|r| r.label == label).map(|r| {
                    let to = if label == ImportLabel::External {
                        external_id(&c.repo, &c.ref_name, &r.to)
                    } else {
                        r.to.clone()
                    };
                    vec![
                        r.from.clone(),
                        to,
                        r.to_name.clone(),
                        num(r.line),
                        "static".to_string(),
                        r.alias.clone(),
                    ]
                }),
            )?;
        }
    }
    Ok(())
}

fn file_layout() -> (Vec<&'static str>, LogicalType) {
    let fields = vec![
        "id",
        "repo",
        "ref",
        "path",
        "language",
        "module",
        "package",
        "content_hash",
        "line_count",
        "size",
        "imports",
    ];
    let ty = struct_type(&fields, &[8, 9]);
    (fields, ty)
}

fn file_values(c: &Changes, r: &FileRow) -> Vec<Value> {
    vec![
        s(&r.id),
        s(&c.repo),
        s(&c.ref_name),
        s(&r.path),
        s(&r.language),
        s(&r.module),
        s(&r.package),
        s(&r.content_hash),
        Value::Int64(r.line_count),
        Value::Int64(r.size),
        s(&r.imports),
    ]
}

/// A STRUCT type whose fields are STRING except the INT64 ones at `int_fields`.
fn struct_type(fields: &[&str], int_fields: &[usize]) -> LogicalType {
    LogicalType::Struct {
        fields: fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let t = if int_fields.contains(&i) {
                    LogicalType::Int64
                } else {
                    LogicalType::String
                };
                (f.to_string(), t)
            })
            .collect(),
    }
}

/// Runs `query` once per batch of rows, bound as `$rows` (a list of structs).
fn write_batches(
    conn: &Connection<'_>,
    query: &str,
    row_type: &LogicalType,
    fields: &[&str],
    rows: impl Iterator<Item = Vec<Value>>,
    extra: impl Fn(&mut Vec<(&str, Value)>),
) -> Result<()> {
    let started = std::time::Instant::now();
    let mut count = 0usize;
    let mut stmt = conn.prepare(query)?;
    let mut batch: Vec<Value> = Vec::with_capacity(BATCH);
    let mut flush = |batch: &mut Vec<Value>| -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let list = Value::List(row_type.clone(), std::mem::take(batch));
        let mut params = vec![("rows", list)];
        extra(&mut params);
        conn.execute(&mut stmt, params)?;
        Ok(())
    };
    for row in rows {
        let value = Value::Struct(fields.iter().map(|f| f.to_string()).zip(row).collect());
        batch.push(value);
        count += 1;
        if batch.len() >= BATCH {
            flush(&mut batch)?;
        }
    }
    flush(&mut batch)?;
    tracing::debug!(
        rows = count,
        ms = started.elapsed().as_millis() as u64,
        query = query
            .lines()
            .find(|l| l.contains("CREATE") || l.contains("DELETE"))
            .unwrap_or(""),
        "batched write"
    );
    Ok(())
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn list_of_strings(items: impl Iterator<Item = String>) -> Value {
    Value::List(LogicalType::String, items.map(Value::String).collect())
}

fn string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null(_) => String::new(),
        other => other.to_string(),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int64(i) => *i,
        Value::Int32(i) => i64::from(*i),
        Value::Int16(i) => i64::from(*i),
        Value::Int8(i) => i64::from(*i),
        Value::UInt64(i) => *i as i64,
        Value::UInt32(i) => i64::from(*i),
        Value::Int128(i) => *i as i64,
        Value::Double(d) => *d as i64,
        _ => 0,
    }
}

/// A symbol from 12 consecutive columns starting at `at` (the order of the
/// `RETURN` lists in `symbols_by_name`, `ancestors` and `descendants`).
fn file_info(r: &[Value]) -> FileInfo {
    FileInfo {
        id: string(&r[0]),
        path: string(&r[1]),
        language: string(&r[2]),
        module: string(&r[3]),
        package: string(&r[4]),
        content_hash: string(&r[5]),
        line_count: int(&r[6]),
    }
}

fn symbol_row(r: &[Value], at: usize) -> SymbolRow {
    SymbolRow {
        id: string(&r[at]),
        stable_id: string(&r[at + 1]),
        name: string(&r[at + 2]),
        kind: string(&r[at + 3]),
        qualified_name: string(&r[at + 4]),
        path: string(&r[at + 5]),
        language: string(&r[at + 6]),
        line_start: int(&r[at + 7]),
        line_end: int(&r[at + 8]),
        signature: string(&r[at + 9]),
        visibility: string(&r[at + 10]),
        doc: string(&r[at + 11]),
    }
}

fn json_to_value(v: &serde_json::Value) -> Result<Value> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => Value::Null(LogicalType::String),
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::Int64(i),
            None => Value::Double(n.as_f64().unwrap_or(0.0)),
        },
        J::String(s) => Value::String(s.clone()),
        J::Array(items) => {
            let values = items
                .iter()
                .map(json_to_value)
                .collect::<Result<Vec<_>>>()?;
            let elem = match values.first() {
                Some(Value::Int64(_)) => LogicalType::Int64,
                Some(Value::Double(_)) => LogicalType::Double,
                Some(Value::Bool(_)) => LogicalType::Bool,
                _ => LogicalType::String,
            };
            Value::List(elem, values)
        }
        J::Object(_) => {
            return Err(GraphError::Invalid(
                "map parameters are not supported; pass scalars or lists".into(),
            ));
        }
    })
}

/// A Kuzu value as JSON for ad hoc query output.
pub fn value_to_json(v: &Value) -> serde_json::Value {
    use serde_json::{Value as J, json};
    match v {
        Value::Null(_) => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int64(i) => json!(i),
        Value::Int32(i) => json!(i),
        Value::Int16(i) => json!(i),
        Value::Int8(i) => json!(i),
        Value::UInt64(i) => json!(i),
        Value::UInt32(i) => json!(i),
        Value::UInt16(i) => json!(i),
        Value::UInt8(i) => json!(i),
        Value::Int128(i) => json!(i.to_string()),
        Value::Double(d) => json!(d),
        Value::Float(f) => json!(f),
        Value::String(s) => J::String(s.clone()),
        Value::List(_, items) | Value::Array(_, items) => {
            J::Array(items.iter().map(value_to_json).collect())
        }
        Value::Struct(fields) => J::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), value_to_json(v)))
                .collect(),
        ),
        Value::Node(n) => {
            let mut m = serde_json::Map::new();
            m.insert("_label".into(), J::String(n.get_label_name().clone()));
            for (k, v) in n.get_properties() {
                m.insert(k.clone(), value_to_json(v));
            }
            J::Object(m)
        }
        Value::Rel(r) => {
            let mut m = serde_json::Map::new();
            m.insert("_label".into(), J::String(r.get_label_name().clone()));
            for (k, v) in r.get_properties() {
                m.insert(k.clone(), value_to_json(v));
            }
            J::Object(m)
        }
        other => J::String(other.to_string()),
    }
}
