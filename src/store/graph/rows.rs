//! The values the graph stores and answers, as plain Rust types: what an index
//! run writes (`Changes` and its rows) and what reads give back.

use compact_str::CompactString;
use std::collections::{HashMap, HashSet};

/// A node's properties as the store returns them. The short ones are
/// `CompactString`s, kept inline up to 24 bytes: an index run holds a row per
/// symbol until it is written, and a heap allocation for each of them cost
/// ~160 bytes a symbol (884 → 781 MiB of heap after the crates' parse).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SymbolRow {
    pub id: CompactString,
    pub stable_id: String,
    pub name: CompactString,
    pub kind: CompactString,
    pub qualified_name: String,
    pub path: String,
    pub language: CompactString,
    pub line_start: i64,
    pub line_end: i64,
    pub signature: String,
    pub visibility: CompactString,
    pub doc: String,
}

/// One step of an ancestor chain (`queries/ancestors.cypher`): an enclosing
/// symbol or, last, the file, by id, with its distance from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    pub id: String,
    pub is_file: bool,
    pub depth: i64,
}

/// A symbol reached by a walk down CONTAINS, by id: its depth below where the
/// walk started and its direct parent (the start's id for a child of the
/// start; in a file's tree, `None` for a top-level symbol).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nested {
    pub id: String,
    pub depth: i64,
    pub parent: Option<String>,
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
    /// The file's raw imports, encoded by the indexer for its resolution
    /// state (not written to the graph).
    pub imports: String,
    /// Lines under syntax errors after recovery, and declarations recovered.
    pub error_lines: i64,
    pub recovered: i64,
}

#[derive(Debug, Clone, Default)]
pub struct SymbolInsert {
    pub row: SymbolRow,
    pub byte_start: i64,
    pub byte_end: i64,
    /// Parent symbol id; `None` = contained by the file.
    pub parent: Option<CompactString>,
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
    /// The call-graph edges after this run; `None` leaves them as they are.
    pub sites: Option<SiteChanges>,
    /// The ref's Go packages after this run (directory → its importable files,
    /// by id), when imports were resolved; `None` leaves them as they are.
    pub packages: Option<Vec<PackageRow>>,
    /// For changed files (by path) whose stored symbols were diffed against the
    /// new ones: only what differs is written. A changed file without a diff has
    /// all its symbols replaced.
    pub symbol_diffs: HashMap<String, SymbolDiff>,
    /// Set by the write: the import in-degree, after it, of every symbol whose
    /// count it may have changed (`None`: not known, count them all). A server
    /// patches its catalog's counts with it.
    pub in_degree: Option<Vec<(String, u32)>>,
    /// Whether the write counts `in_degree` (a server patching its catalog).
    pub count_in_degree: bool,
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
/// properties and of its position (`symbol_marks`), `MARK_BYTES` each.
pub type SymbolMarks = [u64; 2];

/// The bytes of each mark. A changed symbol whose new mark equals the old one
/// would keep stale properties: at 48 bits the odds are 2^-48 (4e-15) a kept
/// symbol of an edited file, far below those of two symbol ids (66 bits)
/// colliding in a big repo. The state keeps two marks a symbol (on the
/// crates, 8.1 MB of its 80 at 48 bits, 10.8 MB at 64).
pub const MARK_BYTES: usize = 6;

/// Hashes of a symbol's properties (everything but its position) and of its
/// position (lines, bytes and the source in them). Its stable id and path are
/// left out: they follow from the rest and the file (a full build's rows do
/// not hold them, see `FileContext::lean`).
pub fn symbol_marks(si: &SymbolInsert) -> SymbolMarks {
    let r = &si.row;
    let mut h = blake3::Hasher::new();
    for part in [
        r.name.as_str(),
        &r.kind,
        &r.qualified_name,
        &r.language,
        &r.signature,
        &r.visibility,
        &r.doc,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let mark = |h: blake3::Hasher| {
        let mut b = [0u8; 8];
        b[..MARK_BYTES].copy_from_slice(&h.finalize().as_bytes()[..MARK_BYTES]);
        u64::from_le_bytes(b)
    };
    let content = mark(h);
    let mut h = blake3::Hasher::new();
    for n in [r.line_start, r.line_end, si.byte_start, si.byte_end] {
        h.update(&n.to_le_bytes());
    }
    h.update(&si.body_hash.to_le_bytes());
    let position = mark(h);
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

/// A Go package: its directory and the ids of its importable files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageRow {
    pub path: String,
    pub files: Vec<String>,
}

/// How a run changes the import edges of its ref.
#[derive(Debug, Clone)]
pub enum ImportChanges {
    /// The complete edge set of the ref, applied as a diff against the stored one.
    All(Vec<ImportRow>),
    /// What changes, as the run worked it out from the previous state: the
    /// cost follows the change, not the ref (nor a rewritten file's imports).
    Diff(ImportDiff),
}

/// The edges and External nodes a run adds and removes.
#[derive(Debug, Clone, Default)]
pub struct ImportDiff {
    /// Edges that go (of files that stay; a removed file's go with it).
    pub stale: Vec<ImportRow>,
    /// Edges that come, among them unchanged ones into symbols the run
    /// re-creates (those went with the symbols).
    pub missing: Vec<ImportRow>,
    /// External nodes (names) that come and that go.
    pub externals_new: Vec<String>,
    pub externals_gone: Vec<String>,
    /// The symbols whose import in-degree may change.
    pub touched: Vec<String>,
}

/// Where an import edge points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImportLabel {
    Symbol,
    File,
    /// A Go package; `to` is its directory (the node id is derived from it).
    Package,
    External,
}

impl ImportLabel {
    pub(super) fn parse(s: &str) -> Option<ImportLabel> {
        match s {
            "Symbol" => Some(ImportLabel::Symbol),
            "File" => Some(ImportLabel::File),
            "Package" => Some(ImportLabel::Package),
            "External" => Some(ImportLabel::External),
            _ => None,
        }
    }

    /// The node table of the target.
    pub(super) fn table(self) -> &'static str {
        match self {
            ImportLabel::Symbol => "Symbol",
            ImportLabel::File => "File",
            ImportLabel::Package => "Package",
            ImportLabel::External => "External",
        }
    }
}

/// One `IMPORTS` edge. For `External` targets `to` is the external's name, for
/// `Package` targets its directory (their node ids are derived here);
/// otherwise the target node's id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ImportRow {
    pub from: String,
    pub label: ImportLabel,
    pub to: String,
    pub to_name: String,
    pub line: i64,
    pub alias: String,
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

/// Rows of an ad hoc query, keyed by the RETURN aliases.
#[derive(Debug, Clone, Default)]
pub struct QueryRows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
}

/// What the server's catalog keeps of a symbol: its own properties, of its doc
/// only the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameRow {
    pub id: String,
    pub stable_id: String,
    pub name: String,
    pub qualified_name: String,
    pub path: String,
    pub kind: String,
    pub language: String,
    pub visibility: String,
    pub signature: String,
    /// The doc's first line ([`crate::model::names::doc_summary`]).
    pub doc_summary: String,
    pub line_start: i64,
    pub line_end: i64,
    pub byte_start: i64,
    pub byte_end: i64,
    /// The id of the symbol directly enclosing it (its CONTAINS parent).
    pub parent: Option<String>,
}

impl NameRow {
    pub fn of(s: &SymbolRow, byte_start: i64, byte_end: i64, parent: Option<String>) -> NameRow {
        NameRow {
            id: s.id.to_string(),
            stable_id: s.stable_id.clone(),
            name: s.name.to_string(),
            qualified_name: s.qualified_name.clone(),
            path: s.path.clone(),
            kind: s.kind.to_string(),
            language: s.language.to_string(),
            visibility: s.visibility.to_string(),
            signature: s.signature.clone(),
            doc_summary: crate::model::names::doc_summary(&s.doc).to_string(),
            line_start: s.line_start,
            line_end: s.line_end,
            byte_start,
            byte_end,
            parent,
        }
    }
}

/// One call-graph edge as written: `rel` is the relationship table
/// (`CALLS`, `REFERENCES`, `IMPLEMENTS`, `EXTENDS`, `UNRESOLVED`); `from` a
/// Symbol id, or a File id when `from_file`; `to` a Symbol id, or the name of
/// an unresolved site.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteRow {
    pub rel: &'static str,
    pub from: CompactString,
    pub from_file: bool,
    pub to: CompactString,
    pub line: i64,
    pub col: i64,
    pub confidence: &'static str,
    pub kind: &'static str,
    pub to_name: CompactString,
}

/// The call-graph edges a run writes.
#[derive(Debug, Clone)]
pub enum SiteChanges {
    /// Every edge of the ref (what it held is dropped first).
    All(Vec<SiteRow>),
    /// Edges that go and edges that come.
    Diff {
        stale: Vec<SiteRow>,
        missing: Vec<SiteRow>,
        /// Names of UNRESOLVED sites that go with the nodes the run deletes
        /// (removed files, and symbols of replaced files): not stale rows, as
        /// DETACH DELETE takes their edges, but their Name may be left unused.
        names_gone: Vec<String>,
    },
}
