//! One ref's symbols as rows, held in memory by the server: where every tool
//! that takes a symbol name or a search query starts, and what its answers show
//! of each symbol.
//!
//! Kuzu 0.11 has no secondary indexes (finding a symbol by name scans the Symbol
//! table), and reading a few rows by key costs ~0.3 ms a statement. So the
//! server keeps, per ref, each symbol's own properties (id, names, file, kind,
//! language, visibility, lines, byte range, signature, stable id, the first line
//! of its doc)
//! and how many import edges point at it (a ranking signal, counted by the
//! graph), with lookups by id, by name (ignoring case or not) and by file. It
//! holds no edge: every walk along CONTAINS or IMPORTS is a Cypher query that
//! returns ids (`store::graph::read`), and the catalog turns the ids into rows.
//!
//! Rows are compact: fixed-size records in chunks of 4,096, their strings in the
//! chunk's text, ids as bytes, stable ids made again when asked (~200 bytes a
//! symbol, maps included, on a 2.75M-symbol ref).
//!
//! Architecture invariant: built from the graph's committed state; after an index
//! run a copy is patched with the run's changes (`apply`) and replaces it whole.
//! A copy is cheap: chunks and map shards are shared `Arc`s, and a patch clones
//! only those it touches. Entry numbers are stable across patches: the entries of
//! removed files stay as dead slots (no map points at them) until too many pile
//! up and the catalog is loaded again.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::model::ids;
use crate::store::graph;
use crate::store::graph::{
    Changes, FileInfo, GraphError, GraphState, GraphStore, NameRow, SymbolRow,
};

/// Entries per chunk: a patch copies at most the last one.
const CHUNK: usize = 4096;
/// Map shards: a patch copies only the shards its ids and names fall in.
/// 512 shards (a patch copies less) made `team::thirty_two_clients_while_files_change`
/// fail one run in three: an outline of a file under edit with no symbols. Not
/// understood yet; kept at 64 until it is.
const SHARDS: usize = 64;

/// A symbol's id as a catalog key: packed when it is one of cruxe's own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum IdKey {
    Packed([u8; ids::PACKED]),
    Text(Arc<str>),
}

impl IdKey {
    fn of(id: &str) -> IdKey {
        ids::pack(id).map_or_else(|| IdKey::Text(id.into()), IdKey::Packed)
    }

    fn id(&self) -> String {
        match self {
            IdKey::Packed(k) => ids::unpack(k),
            IdKey::Text(t) => t.to_string(),
        }
    }
}

/// One symbol, fixed-size; its strings live in its chunk's `text`.
#[derive(Debug, Clone, Default)]
struct Row {
    /// `s_` + 24 hex digits as 12 bytes (see `Packed`), else in the text.
    /// The stable id is not kept: it is a hash of the row's language,
    /// qualified name, kind and signature (`model::stable_id_of`), made again
    /// when asked; one that is not is kept in the text.
    id: [u8; ids::PACKED],
    line_start: u32,
    line_end: u32,
    byte_start: u32,
    byte_end: u32,
    /// Where this row's strings start in the chunk's text: the qualified name,
    /// the name (unless it ends the qualified name), the signature, the doc's
    /// summary, then the id and stable id when they are not in their packed
    /// form.
    text_at: u32,
    qualified_len: u32,
    name_len: u32,
    signature_len: u32,
    /// The lengths of the doc's summary, and of the id and the stable id when
    /// they are text (each cut at 64 KiB).
    doc_len: u16,
    id_len: u16,
    stable_len: u16,
    /// Index into the catalog's paths.
    path: u32,
    /// Indexes into the catalog's vocabulary.
    kind: u8,
    language: u8,
    visibility: u8,
    flags: u8,
}

/// The name is a separate string, not the end of the qualified name.
const NAME_APART: u8 = 1;
const ID_TEXT: u8 = 2;
const STABLE_TEXT: u8 = 4;

#[derive(Debug, Clone, Default)]
struct Chunk {
    rows: Vec<Row>,
    text: String,
}

impl Chunk {
    fn push(&mut self, r: &NameRow, path: u32, vocab: &mut Vocab) {
        let text_at = self.text.len() as u32;
        let mut flags = 0;
        self.text.push_str(&r.qualified_name);
        if !r.qualified_name.ends_with(r.name.as_str()) {
            flags |= NAME_APART;
            self.text.push_str(&r.name);
        }
        self.text.push_str(&r.signature);
        fn cut(s: &str) -> &str {
            &s[..s.floor_char_boundary(usize::from(u16::MAX))]
        }
        let doc = cut(&r.doc_summary);
        self.text.push_str(doc);
        // Ids and stable ids are cruxe's own hashes; another form (older data,
        // tests) is kept as text.
        let (mut id_len, mut stable_len) = (0, 0);
        let id = ids::pack(&r.id).unwrap_or_else(|| {
            flags |= ID_TEXT;
            id_len = cut(&r.id).len() as u16;
            self.text.push_str(cut(&r.id));
            [0; ids::PACKED]
        });
        let (kind, language) = (vocab.code(&r.kind), vocab.code(&r.language));
        let derived = crate::model::stable_id_of(
            vocab.word(language),
            &r.qualified_name,
            vocab.word(kind),
            &r.signature,
        );
        if derived != r.stable_id {
            flags |= STABLE_TEXT;
            stable_len = cut(&r.stable_id).len() as u16;
            self.text.push_str(cut(&r.stable_id));
        }
        let clamp = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32;
        self.rows.push(Row {
            id,
            line_start: clamp(r.line_start),
            line_end: clamp(r.line_end),
            byte_start: clamp(r.byte_start),
            byte_end: clamp(r.byte_end),
            text_at,
            qualified_len: r.qualified_name.len() as u32,
            name_len: r.name.len() as u32,
            signature_len: r.signature.len() as u32,
            doc_len: doc.len() as u16,
            id_len,
            stable_len,
            path,
            kind,
            language,
            visibility: vocab.code(&r.visibility),
            flags,
        });
    }
}

/// Kinds, languages and visibilities, each kept once (a code per string).
#[derive(Debug, Clone, Default)]
struct Vocab {
    words: Vec<Arc<str>>,
}

impl Vocab {
    fn code(&mut self, s: &str) -> u8 {
        if let Some(i) = self.words.iter().position(|w| &**w == s) {
            return i as u8;
        }
        // A graph written by a later cruxe could hold more words than fit: the
        // rest read as the last one, which is never wrong about a symbol's name.
        if self.words.len() == usize::from(u8::MAX) {
            return u8::MAX - 1;
        }
        self.words.push(Arc::from(s));
        (self.words.len() - 1) as u8
    }

    fn word(&self, code: u8) -> &str {
        self.words.get(usize::from(code)).map_or("", |w| w)
    }
}

/// Entries under one name, usually one.
#[derive(Debug, Clone)]
enum Postings {
    One(u32),
    /// Shared: a patch copies the shards it touches, and a common name's
    /// list is long.
    Many(Arc<Vec<u32>>),
}

impl Postings {
    fn as_slice(&self) -> &[u32] {
        match self {
            Postings::One(i) => std::slice::from_ref(i),
            Postings::Many(v) => v,
        }
    }
    fn push(&mut self, i: u32) {
        match self {
            Postings::One(j) => *self = Postings::Many(Arc::new(vec![*j, i])),
            Postings::Many(v) => Arc::make_mut(v).push(i),
        }
    }
    /// Removes `i`; `false` when nothing is left.
    fn remove(&mut self, i: u32) -> bool {
        match self {
            Postings::One(j) => *j != i,
            Postings::Many(v) => {
                Arc::make_mut(v).retain(|&x| x != i);
                if v.len() == 1 {
                    *self = Postings::One(v[0]);
                }
                true
            }
        }
    }
}

fn shard_of(key: &impl Hash) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() as usize) % SHARDS
}

type Shards<K, V> = Vec<Arc<HashMap<K, V>>>;

/// Entries by packed id, in shards (a patch copies those it touches): each a
/// table of entry numbers, hashed by their rows' ids. An id is a hash already,
/// so its bits are the table's hash; 5 bytes an entry, where a map from keys
/// took 17 (59 MiB of a 2.75M-symbol catalog).
#[derive(Debug, Clone)]
struct IdIndex(Vec<Arc<hashbrown::HashTable<u32>>>);

impl Default for IdIndex {
    fn default() -> Self {
        IdIndex((0..SHARDS).map(|_| Arc::default()).collect())
    }
}

impl IdIndex {
    /// The table's hash of a packed id: its last 8 bytes (the first holds the
    /// id's top 2 bits), as a 64-bit hash.
    fn hash(key: &[u8; ids::PACKED]) -> u64 {
        u64::from_le_bytes(key[1..].try_into().expect("8 bytes"))
    }

    /// Shards by bits the table does not use for buckets (the low ones) or
    /// tags (the top 7).
    fn shard(hash: u64) -> usize {
        (hash >> 32) as usize % SHARDS
    }

    fn id_of(chunks: &[Arc<Chunk>], i: u32) -> &[u8; ids::PACKED] {
        let i = i as usize;
        &chunks[i / CHUNK].rows[i % CHUNK].id
    }

    fn get(&self, chunks: &[Arc<Chunk>], key: &[u8; ids::PACKED]) -> Option<&u32> {
        let h = Self::hash(key);
        self.0[Self::shard(h)].find(h, |&i| Self::id_of(chunks, i) == key)
    }

    /// Points `key` at entry `i` (whose row holds it), in place of any entry
    /// it pointed at.
    fn insert(&mut self, chunks: &[Arc<Chunk>], key: [u8; ids::PACKED], i: u32) {
        let h = Self::hash(&key);
        let table = Arc::make_mut(&mut self.0[Self::shard(h)]);
        match table.find_mut(h, |&j| *Self::id_of(chunks, j) == key) {
            Some(slot) => *slot = i,
            None => {
                table.insert_unique(h, i, |&j| Self::hash(Self::id_of(chunks, j)));
            }
        }
    }

    /// Forgets `key` if it points at entry `i`.
    fn remove(&mut self, key: &[u8; ids::PACKED], i: u32) {
        let h = Self::hash(key);
        let table = Arc::make_mut(&mut self.0[Self::shard(h)]);
        if let Ok(found) = table.find_entry(h, |&j| j == i) {
            found.remove();
        }
    }
}

/// A ref's files, sorted by path; entries shared between patched catalogs.
pub type Files = Arc<Vec<Arc<FileInfo>>>;

fn shards<K, V>() -> Shards<K, V> {
    (0..SHARDS).map(|_| Arc::new(HashMap::new())).collect()
}

/// What a patch changed (`Catalog::apply`): it only kills entries and appends
/// new ones, so every other entry keeps its number and id. Caches derived from
/// the catalog it was made from are brought up to date with it instead of made
/// again (the search index's term-to-entry maps: `search::EntryMaps`).
#[derive(Debug)]
pub struct Patch {
    /// The generation of the catalog patched.
    pub from: u64,
    /// The entries it killed (a changed file's, even when added again).
    pub killed: Vec<u32>,
    /// The first entry it added; every later one is new too.
    pub first_added: u32,
}

#[derive(Debug, Clone)]
pub struct Catalog {
    chunks: Vec<Arc<Chunk>>,
    len: usize,
    /// Whether each entry is live (a patch leaves removed ones dead).
    alive: Vec<bool>,
    dead: usize,
    /// By id: packed ids (all of cruxe's own), and the rest by text.
    by_id: IdIndex,
    by_text_id: Arc<HashMap<Box<str>, u32>>,
    /// By lower-cased name, in (path, line) order.
    by_lower: Shards<Arc<str>, Postings>,
    /// Every entry of each file (by path index), in (line, start, longest
    /// first) order.
    by_file: Arc<HashMap<u32, Arc<Vec<u32>>>>,
    paths: Arc<Vec<Arc<str>>>,
    path_index: Arc<HashMap<Arc<str>, u32>>,
    vocab: Arc<Vocab>,
    /// How many import edges point at each entry.
    imported_by: Arc<Vec<u32>>,
    /// The symbol directly enclosing each nested entry (its CONTAINS parent,
    /// always in the same file), by id: a patch that re-indexes the parent's
    /// file leaves its children's keys valid.
    parent_of: Arc<HashMap<u32, IdKey>>,
    /// The entries directly inside each symbol, by the symbol's id, in no
    /// particular order (sorted when asked).
    members_of: Arc<HashMap<IdKey, Vec<u32>>>,
    /// Names this catalog's entries (a hash of their ids in order, or of the
    /// catalog it was patched from and the patch): caches derived from one (the
    /// search index's term-to-entry maps) are keyed by it.
    generation: u64,
    /// What the patch that made this catalog changed (`None`: loaded whole).
    patch: Option<Arc<Patch>>,
    /// The ref's files, by path: of the same state as the symbols, so an answer
    /// about a file never pairs one state's file with another's symbols.
    files: Files,
    /// The graph state the rows are of.
    state: GraphState,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            chunks: Vec::new(),
            len: 0,
            alive: Vec::new(),
            dead: 0,
            by_id: IdIndex::default(),
            by_text_id: Arc::default(),
            by_lower: shards(),
            by_file: Arc::default(),
            paths: Arc::default(),
            path_index: Arc::default(),
            vocab: Arc::default(),
            imported_by: Arc::default(),
            parent_of: Arc::default(),
            members_of: Arc::default(),
            generation: 0,
            patch: None,
            files: Arc::default(),
            state: GraphState::default(),
        }
    }
}

/// One entry of a catalog, read in place.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    row: &'a Row,
    text: &'a str,
    cat: &'a Catalog,
}

impl<'a> Entry<'a> {
    fn at(&self, from: usize, len: u32) -> &'a str {
        self.text.get(from..from + len as usize).unwrap_or("")
    }
    fn qualified_end(&self) -> usize {
        self.row.text_at as usize + self.row.qualified_len as usize
    }
    fn name_end(&self) -> usize {
        self.qualified_end()
            + if self.row.flags & NAME_APART != 0 {
                self.row.name_len as usize
            } else {
                0
            }
    }
    fn signature_end(&self) -> usize {
        self.name_end() + self.row.signature_len as usize
    }
    fn doc_end(&self) -> usize {
        self.signature_end() + usize::from(self.row.doc_len)
    }

    pub fn id(&self) -> String {
        if self.row.flags & ID_TEXT != 0 {
            return self
                .at(self.doc_end(), u32::from(self.row.id_len))
                .to_string();
        }
        ids::unpack(&self.row.id)
    }

    pub fn stable_id(&self) -> String {
        if self.row.flags & STABLE_TEXT != 0 {
            let from = self.doc_end() + usize::from(self.row.id_len);
            return self.at(from, u32::from(self.row.stable_len)).to_string();
        }
        crate::model::stable_id_of(
            self.language(),
            self.qualified_name(),
            self.kind(),
            self.signature(),
        )
    }

    pub fn name(&self) -> &'a str {
        if self.row.flags & NAME_APART != 0 {
            self.at(self.qualified_end(), self.row.name_len)
        } else {
            let end = self.qualified_end();
            self.text
                .get(end - self.row.name_len as usize..end)
                .unwrap_or("")
        }
    }

    pub fn qualified_name(&self) -> &'a str {
        self.at(self.row.text_at as usize, self.row.qualified_len)
    }

    pub fn signature(&self) -> &'a str {
        self.at(self.name_end(), self.row.signature_len)
    }

    /// The doc's first line (`model::names::doc_summary`); the whole doc is in
    /// the graph.
    pub fn doc_summary(&self) -> &'a str {
        self.at(self.signature_end(), u32::from(self.row.doc_len))
    }

    pub fn path(&self) -> &'a str {
        self.cat.paths.get(self.row.path as usize).map_or("", |p| p)
    }

    pub fn kind(&self) -> &'a str {
        self.cat.word(self.row.kind)
    }

    pub fn language(&self) -> &'a str {
        self.cat.word(self.row.language)
    }

    pub fn visibility(&self) -> &'a str {
        self.cat.word(self.row.visibility)
    }

    pub fn line_start(&self) -> i64 {
        i64::from(self.row.line_start)
    }

    pub fn line_end(&self) -> i64 {
        i64::from(self.row.line_end)
    }

    /// The byte range in its file.
    pub fn bytes(&self) -> (usize, usize) {
        (self.row.byte_start as usize, self.row.byte_end as usize)
    }

    /// The graph's row of this symbol, without its doc (not kept here).
    pub fn row(&self) -> SymbolRow {
        SymbolRow {
            id: self.id().into(),
            stable_id: self.stable_id(),
            name: self.name().into(),
            kind: self.kind().into(),
            qualified_name: self.qualified_name().to_string(),
            path: self.path().to_string(),
            language: self.language().into(),
            line_start: self.line_start(),
            line_end: self.line_end(),
            signature: self.signature().to_string(),
            visibility: self.visibility().into(),
            doc: String::new(),
        }
    }

    /// The row this entry was made from, but for its parent (the catalog's).
    fn name_row(&self) -> NameRow {
        let (byte_start, byte_end) = self.bytes();
        NameRow {
            id: self.id(),
            stable_id: self.stable_id(),
            name: self.name().to_string(),
            qualified_name: self.qualified_name().to_string(),
            path: self.path().to_string(),
            kind: self.kind().to_string(),
            language: self.language().to_string(),
            visibility: self.visibility().to_string(),
            signature: self.signature().to_string(),
            doc_summary: self.doc_summary().to_string(),
            line_start: self.line_start(),
            line_end: self.line_end(),
            byte_start: byte_start as i64,
            byte_end: byte_end as i64,
            parent: None,
        }
    }

    /// (path, line, start, longest first): the order entries are numbered in.
    pub fn position(&self) -> (&'a str, u32, u32, std::cmp::Reverse<u32>) {
        (
            self.path(),
            self.row.line_start,
            self.row.byte_start,
            std::cmp::Reverse(self.row.byte_end),
        )
    }
}

impl std::fmt::Debug for Entry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("row", &self.row())
            .field("bytes", &self.bytes())
            .finish()
    }
}

fn row_key(r: &NameRow) -> (&str, i64, i64, std::cmp::Reverse<i64>) {
    (
        &r.path,
        r.line_start,
        r.byte_start,
        std::cmp::Reverse(r.byte_end),
    )
}

/// The order entries are numbered in: position, then id.
fn row_order(a: &NameRow, b: &NameRow) -> std::cmp::Ordering {
    row_key(a).cmp(&row_key(b)).then(a.id.cmp(&b.id))
}

/// A catalog built from rows that arrive in position order, a batch at a time.
struct Builder {
    catalog: Catalog,
    /// Over the ids in order: the generation.
    ids: blake3::Hasher,
    /// The last row's place, to check the batches came in order.
    last: Option<(String, i64, i64, std::cmp::Reverse<i64>, String)>,
    in_order: bool,
}

impl Builder {
    fn new(files: Vec<FileInfo>) -> Builder {
        Builder {
            catalog: Catalog {
                files: Arc::new(files.into_iter().map(Arc::new).collect()),
                ..Catalog::default()
            },
            ids: blake3::Hasher::new(),
            last: None,
            in_order: true,
        }
    }

    /// Appends `rows`, sorted, after everything added so far.
    fn add(&mut self, rows: &[NameRow]) {
        if let (Some(last), Some(first)) = (&self.last, rows.first()) {
            let (p, l, s, e) = row_key(first);
            self.in_order &= (p, l, s, e, first.id.as_str())
                > (last.0.as_str(), last.1, last.2, last.3, last.4.as_str());
        }
        for r in rows {
            self.ids.update(&(r.id.len() as u64).to_le_bytes());
            self.ids.update(r.id.as_bytes());
            self.catalog.push(r, None);
        }
        if let Some(r) = rows.last() {
            let (p, l, s, e) = row_key(r);
            self.last = Some((p.to_string(), l, s, e, r.id.clone()));
        }
    }

    fn finish(self) -> Catalog {
        let mut c = self.catalog;
        c.seal_last_chunk();
        if !self.in_order {
            // Batches split by a path order the graph compares differently:
            // numbered again in position order (every list follows it).
            let mut rows: Vec<NameRow> = (0..c.len)
                .map(|i| NameRow {
                    parent: c.parent_key(i).map(IdKey::id),
                    ..c.entry(i).name_row()
                })
                .collect();
            rows.sort_by(row_order);
            return Catalog::build(rows, c.files.iter().map(|f| (**f).clone()).collect());
        }
        c.generation = u64::from_le_bytes(
            self.ids.finalize().as_bytes()[..8]
                .try_into()
                .expect("8 bytes"),
        );
        c.imported_by = Arc::new(vec![0; c.len]);
        c
    }
}

/// A short hash of a sequence of strings.
fn stamp(parts: impl IntoIterator<Item = impl AsRef<str>>) -> u64 {
    let mut h = blake3::Hasher::new();
    for p in parts {
        let p = p.as_ref();
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

impl Catalog {
    /// Builds the catalog from the graph's rows.
    pub fn build(mut rows: Vec<NameRow>, files: Vec<FileInfo>) -> Catalog {
        rows.sort_by(row_order);
        let mut b = Builder::new(files);
        b.add(&rows);
        b.finish()
    }

    fn word(&self, code: u8) -> &str {
        self.vocab.word(code)
    }

    /// Appends a row as a new entry and indexes it; its lower-cased name is
    /// noted in `touched` when given (a patch sorts those lists again).
    fn push(&mut self, r: &NameRow, touched: Option<&mut HashSet<Arc<str>>>) {
        let path = self.path_code(&r.path);
        if self.len.is_multiple_of(CHUNK) {
            self.seal_last_chunk();
            self.chunks.push(Arc::new(Chunk {
                rows: Vec::with_capacity(CHUNK),
                text: String::new(),
            }));
        }
        let vocab = Arc::make_mut(&mut self.vocab);
        let last = self.chunks.last_mut().expect("a chunk");
        Arc::make_mut(last).push(r, path, vocab);
        let i = self.len as u32;
        self.len += 1;
        self.alive.push(true);
        match ids::pack(&r.id) {
            Some(key) => {
                self.by_id.insert(&self.chunks, key, i);
            }
            None => {
                Arc::make_mut(&mut self.by_text_id).insert(r.id.as_str().into(), i);
            }
        }
        let lower: Arc<str> = r.name.to_lowercase().into();
        let shard = Arc::make_mut(&mut self.by_lower[shard_of(&lower)]);
        match shard.get_mut(&lower) {
            Some(p) => p.push(i),
            None => {
                shard.insert(lower.clone(), Postings::One(i));
            }
        }
        if let Some(touched) = touched {
            touched.insert(lower);
        }
        let files = Arc::make_mut(&mut self.by_file);
        Arc::make_mut(files.entry(path).or_default()).push(i);
        if let Some(p) = &r.parent {
            let key = IdKey::of(p);
            Arc::make_mut(&mut self.members_of)
                .entry(key.clone())
                .or_default()
                .push(i);
            Arc::make_mut(&mut self.parent_of).insert(i, key);
        }
    }

    /// Gives back the room the last chunk's text grew into: a text grows by
    /// doubling, and a full chunk's spare room was a third of the text (93 MiB
    /// of a 2.75M-symbol catalog). A chunk shared with another catalog is a
    /// clone, already at its size.
    fn seal_last_chunk(&mut self) {
        if let Some(last) = self.chunks.last_mut().and_then(Arc::get_mut) {
            last.text.shrink_to_fit();
        }
    }

    fn path_code(&mut self, path: &str) -> u32 {
        if let Some(&i) = self.path_index.get(path) {
            return i;
        }
        let p: Arc<str> = Arc::from(path);
        let i = self.paths.len() as u32;
        Arc::make_mut(&mut self.paths).push(p.clone());
        Arc::make_mut(&mut self.path_index).insert(p, i);
        i
    }

    /// Sets the import in-degree of every entry from the graph's counts.
    pub fn set_in_degree(&mut self, counts: impl IntoIterator<Item = (String, u32)>) {
        let mut v = vec![0; self.len];
        for (id, n) in counts {
            if let Some(i) = self.by_id(&id) {
                v[i] = n;
            }
        }
        self.imported_by = Arc::new(v);
    }

    /// Sets the in-degree of the named symbols; other entries keep theirs
    /// (entries added since the last count start at 0).
    pub fn update_in_degree<'x>(&mut self, counts: impl IntoIterator<Item = &'x (String, u32)>) {
        let mut v = (*self.imported_by).clone();
        v.resize(self.len, 0);
        for (id, n) in counts {
            if let Some(i) = self.by_id(id) {
                v[i] = *n;
            }
        }
        self.imported_by = Arc::new(v);
    }

    /// The live entries, in slot order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| self.alive[i])
    }

    /// The number of import edges that point at entry `i`.
    pub fn imported_by(&self, i: usize) -> u32 {
        self.imported_by.get(i).copied().unwrap_or(0)
    }

    /// Everything the catalog holds, in a canonical order: (symbol id, byte
    /// range, import in-degree). Two catalogs of the same state have equal digests.
    pub fn digest(&self) -> Vec<(String, usize, usize, u32)> {
        let mut out: Vec<_> = self
            .indices()
            .map(|i| {
                let e = self.entry(i);
                let (start, end) = e.bytes();
                (e.id(), start, end, self.imported_by(i))
            })
            .collect();
        out.sort();
        out
    }

    /// Everything a tool can observe, in the order it observes it: the files,
    /// per symbol its row, import in-degree, parent and members, the name lookups and
    /// `matching`. A patched catalog must equal a fresh load in this (tests
    /// compare them).
    pub fn observable(&self) -> Vec<String> {
        let ids = |v: &[usize]| {
            v.iter()
                .map(|&i| self.entry(i).id())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut out = vec![format!("len {}", self.len())];
        out.extend(self.files.iter().map(|f| format!("{f:?}")));
        let mut order: Vec<usize> = self.indices().collect();
        self.sort_by_position(&mut order);
        let mut names = std::collections::BTreeSet::new();
        for &i in &order {
            let e = self.entry(i);
            out.push(format!(
                "{e:?} imported_by {} parent {:?} members {}",
                self.imported_by(i),
                self.parent(i).map(|p| self.entry(p).id()),
                ids(&self.members(i))
            ));
            names.insert(e.name().to_string());
        }
        for name in &names {
            out.push(format!("name {name}: {}", ids(&self.named(name))));
            let lower = name.to_lowercase();
            out.push(format!(
                "lower {lower}: {}",
                ids(&self.named_ignoring_case(name))
            ));
        }
        let mut paths: Vec<&str> = order.iter().map(|&i| self.entry(i).path()).collect();
        paths.dedup();
        for p in paths {
            let list: Vec<usize> = self.in_file(p);
            out.push(format!("file {p}: {}", ids(&list)));
        }
        out.push(format!("matching: {}", ids(&self.matching("", usize::MAX))));
        out
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// What the patch that made this catalog changed, if one did.
    pub fn patch(&self) -> Option<&Patch> {
        self.patch.as_deref()
    }

    /// How many entries there are, dead ones included (entry numbers run
    /// below it).
    pub fn entries(&self) -> usize {
        self.len
    }

    /// The graph state the rows are of: a walk of the graph in that state
    /// names only symbols this catalog holds.
    pub fn state(&self) -> &GraphState {
        &self.state
    }

    /// The same rows, of a later graph state that did not change them (a run
    /// that wrote nothing of this ref).
    pub fn with_state(&self, state: GraphState) -> Catalog {
        Catalog {
            state,
            ..self.clone()
        }
    }

    /// Live entries.
    pub fn len(&self) -> usize {
        self.len - self.dead
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn entry(&self, i: usize) -> Entry<'_> {
        let chunk = &self.chunks[i / CHUNK];
        Entry {
            row: &chunk.rows[i % CHUNK],
            text: &chunk.text,
            cat: self,
        }
    }

    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_key(&IdKey::of(id))
    }

    fn by_key(&self, key: &IdKey) -> Option<usize> {
        let found = match key {
            IdKey::Packed(k) => self.by_id.get(&self.chunks, k),
            IdKey::Text(t) => self.by_text_id.get(&**t),
        };
        found.map(|&i| i as usize)
    }

    fn parent_key(&self, i: usize) -> Option<&IdKey> {
        self.parent_of.get(&(i as u32))
    }

    /// The symbol directly enclosing entry `i` (where the CONTAINS edge into
    /// it comes from), if it has one.
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.parent_key(i).and_then(|k| self.by_key(k))
    }

    /// The entries directly inside entry `i` (its CONTAINS children), in
    /// position order.
    pub fn members(&self, i: usize) -> Vec<usize> {
        let mut list: Vec<usize> = self
            .members_of
            .get(&IdKey::of(&self.entry(i).id()))
            .map_or_else(Vec::new, |l| l.iter().map(|&m| m as usize).collect());
        self.sort_by_position(&mut list);
        list
    }

    /// Symbols whose name equals `name` ignoring case, in (path, line) order.
    pub fn named_ignoring_case(&self, name: &str) -> Vec<usize> {
        let lower = name.to_lowercase();
        self.by_lower[shard_of(&lower.as_str())]
            .get(lower.as_str())
            .map_or_else(Vec::new, |p| {
                p.as_slice().iter().map(|&i| i as usize).collect()
            })
    }

    /// Symbols with exactly this name, in (path, line) order.
    pub fn named(&self, name: &str) -> Vec<usize> {
        let mut v = self.named_ignoring_case(name);
        v.retain(|&i| self.entry(i).name() == name);
        v
    }

    /// Symbols whose name contains `needle` (lower-case), in (path, line) order.
    pub fn matching(&self, needle: &str, max: usize) -> Vec<usize> {
        let mut hits: Vec<usize> = self
            .indices()
            .filter(|&i| self.entry(i).name().to_lowercase().contains(needle))
            .collect();
        self.sort_by_position(&mut hits);
        hits.truncate(max);
        hits
    }

    /// The symbols meant by `name` (plain, or qualified: `auth::jwt::validate`,
    /// `pkg.mod.Class`), optionally only in `path`, in (path, line) order: what
    /// [`crate::model::names::find`] answers from the graph.
    pub fn find(&self, name: &str, path: Option<&str>) -> Vec<usize> {
        let in_path = |i: &usize| path.is_none_or(|p| self.entry(*i).path() == p);
        let mut exact = self.named(name);
        exact.retain(in_path);
        if !exact.is_empty() || !crate::model::names::looks_qualified(name) {
            return exact;
        }
        let mut found = self.named(crate::model::names::last_segment(name));
        found.retain(|i| {
            in_path(i)
                && crate::model::names::qualified_match(self.entry(*i).qualified_name(), name)
        });
        found
    }

    /// Sorts entries by position: (path, line, start, longest first).
    pub fn sort_by_position(&self, list: &mut [usize]) {
        list.sort_by(|&a, &b| {
            self.entry(a)
                .position()
                .cmp(&self.entry(b).position())
                .then(a.cmp(&b))
        });
    }

    /// Every symbol of a file, in (line, start, longest first) order.
    pub fn in_file(&self, path: &str) -> Vec<usize> {
        self.path_index
            .get(path)
            .and_then(|p| self.by_file.get(p))
            .map_or_else(Vec::new, |v| v.iter().map(|&i| i as usize).collect())
    }

    /// Which of its file's symbols of the same kind and qualified name entry `i`
    /// is, in position order, from 1 (a Rust type's second impl block is 2).
    pub fn ordinal_in_file(&self, i: usize) -> usize {
        let e = self.entry(i);
        let Some(list) = self
            .path_index
            .get(e.path())
            .and_then(|p| self.by_file.get(p))
        else {
            return 1;
        };
        1 + list
            .iter()
            .take_while(|&&j| j as usize != i)
            .filter(|&&j| {
                let o = self.entry(j as usize);
                o.row.kind == e.row.kind
                    && o.qualified_name() == e.qualified_name()
                    && o.name() == e.name()
            })
            .count()
    }

    /// The entries of these ids that this catalog holds, in the order given.
    pub fn entries_of<'s>(&self, ids: impl IntoIterator<Item = &'s str>) -> Vec<usize> {
        ids.into_iter().filter_map(|id| self.by_id(id)).collect()
    }

    /// The ref's files, sorted by path.
    pub fn files(&self) -> Files {
        self.files.clone()
    }

    /// The file list after `changes`: removed and changed files out, the new
    /// versions in.
    fn patched_files(&self, changes: &Changes, removed: &HashSet<&str>) -> Files {
        // Shared entries: a patch of a 17k-file ref copied and dropped every
        // file's strings (~25 ms a change).
        let mut added: Vec<Arc<FileInfo>> = changes
            .add
            .iter()
            .map(|f| {
                Arc::new(FileInfo {
                    id: f.file.id.clone(),
                    path: f.file.path.clone(),
                    language: f.file.language.clone(),
                    module: f.file.module.clone(),
                    package: f.file.package.clone(),
                    content_hash: f.file.content_hash.clone(),
                    line_count: f.file.line_count,
                })
            })
            .collect();
        added.sort_by(|a, b| a.path.cmp(&b.path));
        // Merged into the kept ones, which are in order (sorting them all
        // again cost ~3 ms a change).
        let mut added = added.into_iter().peekable();
        let mut files = Vec::with_capacity(self.files.len() + added.len());
        for f in self.files.iter() {
            if removed.contains(f.path.as_str()) {
                continue;
            }
            while let Some(a) = added.next_if(|a| a.path < f.path) {
                files.push(a);
            }
            files.push(f.clone());
        }
        files.extend(added);
        Arc::new(files)
    }

    /// The catalog after an in-place index run committed `changes` to this ref
    /// of `graph`: the symbols of removed and changed files go, the new ones
    /// come, and the import counts are read again from the graph. Equal to
    /// loading the ref from the graph again; the cost of a patch follows the
    /// number of changed files, plus the count statement.
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
        if changes.replace_all || (self.dead + dying) * 4 > self.len.max(1024) {
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
        let mut touched = HashSet::new();
        // Import counts of the removed entries, by id: a symbol a changed file
        // keeps keeps its incoming edges (see `Changes::in_degree`).
        let carried: Vec<(String, u32)> = removed
            .iter()
            .flat_map(|p| self.in_file(p))
            .map(|i| (self.entry(i).id(), self.imported_by(i)))
            .filter(|(_, n)| *n > 0)
            .collect();
        let killed: Vec<u32> = removed
            .iter()
            .flat_map(|p| self.in_file(p))
            .map(|i| i as u32)
            .collect();
        c.kill_files(&removed, &mut touched);
        for f in changes.add.iter() {
            c.add_file(f, &mut touched);
        }
        c.patch = Some(Arc::new(Patch {
            from: self.generation,
            killed,
            first_added: self.len as u32,
        }));
        c.sort_touched(&touched);
        match &changes.in_degree {
            // The write counted what it changed; other counts stay.
            Some(changed) => c.update_in_degree(carried.iter().chain(changed)),
            None => c.set_in_degree(graph.import_in_degree(&changes.repo, &changes.ref_name)?),
        }
        // Patched right after the commit, by the only writer.
        c.state = graph.state(&changes.repo, &changes.ref_name);
        Ok(c)
    }

    /// The catalog of `graph`'s state of a ref this catalog holds an older
    /// state of (a replica's next generation, a patch of this one): the files
    /// whose rows in the graph differ (content hash, module, package,
    /// language, lines) or that came or went are read again, the others'
    /// entries kept; import counts are read again. Equal to loading the ref
    /// from `graph`; its cost follows the number of changed files, plus the
    /// file list and the count statement.
    pub fn refreshed(
        &self,
        graph: &GraphStore,
        repo: &str,
        ref_name: &str,
    ) -> Result<Catalog, GraphError> {
        let state = graph.state(repo, ref_name);
        let listed = graph.files(repo, ref_name)?;
        let old: HashMap<&str, &Arc<FileInfo>> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        // Kept files share the old entries (a 17k-file list's strings).
        let mut files: Vec<Arc<FileInfo>> = Vec::with_capacity(listed.len());
        let mut changed: Vec<String> = Vec::new();
        for f in listed {
            match old.get(f.path.as_str()) {
                Some(o) if same_file(o, &f) => files.push(Arc::clone(o)),
                _ => {
                    changed.push(f.path.clone());
                    files.push(Arc::new(f));
                }
            }
        }
        let listed: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let removed: HashSet<&str> = (self.files.iter())
            .map(|f| f.path.as_str())
            .filter(|p| !listed.contains(p))
            .chain(changed.iter().map(String::as_str))
            .collect();
        let dying: usize = removed.iter().map(|p| self.in_file(p).len()).sum();
        if changed.len() > LOAD_FILES || (self.dead + dying) * 4 > self.len.max(1024) {
            return load(graph, repo, ref_name);
        }
        let rows = graph.symbol_names_in(repo, ref_name, &changed)?;
        let mut c = self.clone();
        c.generation = stamp(
            [self.generation.to_string().as_str(), "refreshed"]
                .into_iter()
                .chain(
                    files
                        .iter()
                        .filter(|f| removed.contains(f.path.as_str()))
                        .map(|f| f.content_hash.as_str()),
                )
                .chain(removed.iter().copied()),
        );
        c.files = Arc::new(files);
        let killed: Vec<u32> = (removed.iter())
            .flat_map(|p| self.in_file(p))
            .map(|i| i as u32)
            .collect();
        let mut touched = HashSet::new();
        c.kill_files(&removed, &mut touched);
        let mut rows = rows;
        rows.sort_by(row_order);
        for r in &rows {
            c.push(r, Some(&mut touched));
        }
        c.patch = Some(Arc::new(Patch {
            from: self.generation,
            killed,
            first_added: self.len as u32,
        }));
        c.sort_touched(&touched);
        c.set_in_degree(graph.import_in_degree(repo, ref_name)?);
        c.state = state;
        Ok(c)
    }

    /// Name lists read in (path, line) order, as a fresh build numbers them:
    /// those a patch `touched` are sorted again.
    fn sort_touched(&mut self, touched: &HashSet<Arc<str>>) {
        for lower in touched {
            let shard = shard_of(lower);
            let Some(Postings::Many(list)) = self.by_lower[shard].get(lower).cloned() else {
                continue;
            };
            let mut list: Vec<usize> = list.iter().map(|&i| i as usize).collect();
            self.sort_by_position(&mut list);
            let sorted = Postings::Many(Arc::new(list.into_iter().map(|i| i as u32).collect()));
            Arc::make_mut(&mut self.by_lower[shard]).insert(lower.clone(), sorted);
        }
    }

    /// The removed files' entries die (slots stay, marked dead: ids are
    /// indexes); their lower-cased names are noted in `touched`.
    fn kill_files(&mut self, removed: &HashSet<&str>, touched: &mut HashSet<Arc<str>>) {
        for path in removed {
            let Some(&code) = self.path_index.get(*path) else {
                continue;
            };
            let Some(list) = Arc::make_mut(&mut self.by_file).remove(&code) else {
                continue;
            };
            for &i in list.iter() {
                let (id, lower) = {
                    let e = self.entry(i as usize);
                    (e.id(), Arc::<str>::from(e.name().to_lowercase()))
                };
                if self.by_id(&id) == Some(i as usize) {
                    match ids::pack(&id) {
                        Some(key) => {
                            self.by_id.remove(&key, i);
                        }
                        None => {
                            Arc::make_mut(&mut self.by_text_id).remove(id.as_str());
                        }
                    }
                }
                let names = Arc::make_mut(&mut self.by_lower[shard_of(&lower)]);
                if let Some(p) = names.get_mut(&lower)
                    && !p.remove(i)
                {
                    names.remove(&lower);
                }
                touched.insert(lower);
                if let Some(key) = Arc::make_mut(&mut self.parent_of).remove(&i) {
                    let members = Arc::make_mut(&mut self.members_of);
                    if let Some(list) = members.get_mut(&key) {
                        list.retain(|&m| m != i);
                        if list.is_empty() {
                            members.remove(&key);
                        }
                    }
                }
                self.alive[i as usize] = false;
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
            .map(|s| {
                NameRow::of(
                    &s.row,
                    s.byte_start,
                    s.byte_end,
                    s.parent.as_ref().map(|p| p.to_string()),
                )
            })
            .collect();
        rows.sort_by(|a, b| row_key(a).cmp(&row_key(b)).then(a.id.cmp(&b.id)));
        for row in &rows {
            self.push(row, Some(&mut *touched));
        }
    }
}

/// Whether a file's row in two states of the graph says its symbols are the
/// same: what extraction reads of it is its content and where it sits.
fn same_file(a: &FileInfo, b: &FileInfo) -> bool {
    (
        &a.content_hash,
        &a.module,
        &a.package,
        &a.language,
        a.line_count,
    ) == (
        &b.content_hash,
        &b.module,
        &b.package,
        &b.language,
        b.line_count,
    )
}

/// Symbols per statement when a catalog is loaded, at most (a file's are never
/// split): a statement's rows are held whole by Kuzu and by the loader, ~1 KB
/// each. Ranges of a number of files held anything from a few thousand rows to
/// 417k on the crates corpus (generated bindings), and that one statement took
/// a server of 320 MiB at rest to a 997 MiB peak (docs/BENCHMARKS.md, "Memory
/// and scale"). A range whose rows do not fit the buffer pool is read in halves.
const LOAD_ROWS: u64 = 50_000;

/// Files per statement, at most: each statement also scans the ref's paths.
const LOAD_FILES: usize = 2000;

/// Loads a ref's catalog from the graph: its rows a range of paths at a time
/// (`LOAD_ROWS`, sized by each path's count of symbols), then the import counts.
pub fn load(store: &GraphStore, repo: &str, ref_name: &str) -> Result<Catalog, GraphError> {
    // Taken first: a write committed during the load leaves the label older than
    // the rows, which readers take for stale (and wait for the next catalog),
    // never the other way round.
    let state = store.state(repo, ref_name);
    let files = store.files(repo, ref_name)?;
    let counts: HashMap<String, u64> = store
        .path_symbol_counts(repo, ref_name)?
        .into_iter()
        .collect();
    let mut b = Builder::new(files.clone());
    let mut lo = 0;
    while lo < files.len() {
        let (mut hi, mut rows) = (lo, 0);
        while hi < files.len() && hi - lo < LOAD_FILES && rows < LOAD_ROWS {
            rows += counts.get(&files[hi].path).copied().unwrap_or(0);
            hi += 1;
        }
        load_range(store, repo, ref_name, &files, lo, hi, &mut b)?;
        lo = hi;
    }
    let mut c = b.finish();
    c.set_in_degree(store.import_in_degree(repo, ref_name)?);
    c.state = state;
    Ok(c)
}

/// Adds the rows of the files `lo..hi` (of `files`, sorted by path) to `b`.
fn load_range(
    store: &GraphStore,
    repo: &str,
    ref_name: &str,
    files: &[FileInfo],
    lo: usize,
    hi: usize,
    b: &mut Builder,
) -> Result<(), GraphError> {
    // The first range starts before every path, the last has no end: a symbol
    // whose path has no file row is still read.
    let from = if lo == 0 { "" } else { files[lo].path.as_str() };
    let to = files.get(hi).map(|f| f.path.as_str());
    match store.symbol_names(repo, ref_name, from, to) {
        Ok(mut rows) => {
            tracing::trace!(files = hi - lo, rows = rows.len(), "catalog statement");
            rows.sort_by(row_order);
            b.add(&rows);
            Ok(())
        }
        Err(e) if hi - lo > 1 && e.is_out_of_memory() => {
            let mid = lo + (hi - lo) / 2;
            load_range(store, repo, ref_name, files, lo, mid, b)?;
            load_range(store, repo, ref_name, files, mid, hi, b)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, name: &str, qn: &str, path: &str, line: i64) -> NameRow {
        NameRow {
            id: id.into(),
            name: name.into(),
            qualified_name: qn.into(),
            path: path.into(),
            kind: "fn".into(),
            language: "rust".into(),
            visibility: "public".into(),
            line_start: line,
            line_end: line + 1,
            byte_start: line * 10,
            byte_end: line * 10 + 5,
            signature: format!("fn {name}()"),
            doc_summary: format!("Runs {name}."),
            stable_id: format!("b3:{}", "ab".repeat(32)),
            parent: None,
        }
    }

    #[test]
    fn rows_read_back_as_given_in_both_forms() {
        let packed = "sABCDEFGHIJ-";
        let c = Catalog::build(
            vec![
                row(packed, "run", "app::run", "src/a.rs", 3),
                row("odd-id", "Run", "impl Run", "src/b.rs", 1),
            ],
            Vec::new(),
        );
        let a = c.entry(c.by_id(packed).expect("packed id"));
        assert_eq!(
            (a.id().as_str(), a.name(), a.qualified_name(), a.signature()),
            (packed, "run", "app::run", "fn run()")
        );
        assert_eq!(a.stable_id(), format!("b3:{}", "ab".repeat(32)));
        assert_eq!(a.doc_summary(), "Runs run.");
        let b = c.entry(c.by_id("odd-id").expect("text id"));
        assert_eq!(
            (b.id().as_str(), b.name(), b.qualified_name(), b.path()),
            ("odd-id", "Run", "impl Run", "src/b.rs")
        );
        assert_eq!(b.doc_summary(), "Runs Run.");
        assert_eq!(b.stable_id(), format!("b3:{}", "ab".repeat(32)));
        assert_eq!(
            (b.kind(), b.language(), b.visibility()),
            ("fn", "rust", "public")
        );
        assert_eq!(c.named("run").len(), 1);
        assert_eq!(c.named_ignoring_case("RUN").len(), 2);
        assert_eq!(c.in_file("src/a.rs").len(), 1);
    }

    #[test]
    fn a_stable_id_made_from_the_row_is_made_again_not_kept() {
        let mut own = row("sABCDEFGHIJ-", "run", "app::run", "src/a.rs", 3);
        own.stable_id = crate::model::stable_id_of("rust", "app::run", "fn", "fn  run()");
        let other = row("sABCDEFGHIK-", "go", "app::go", "src/a.rs", 5);
        let c = Catalog::build(vec![own.clone(), other.clone()], Vec::new());
        let text = |i: usize| c.chunks[0].rows[i].flags & STABLE_TEXT != 0;
        let a = c.by_id(&own.id).expect("own");
        let b = c.by_id(&other.id).expect("other");
        assert_eq!(c.entry(a).stable_id(), own.stable_id);
        assert!(!text(a), "a stable id the row makes is not kept");
        assert_eq!(c.entry(b).stable_id(), other.stable_id);
        assert!(text(b), "another one is kept as it was");
    }
}
