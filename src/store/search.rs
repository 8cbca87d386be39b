//! Ranked symbol search: the only module that speaks to Tantivy.
//!
//! Each repo/ref has its index in the data dir (`search/<hash>/`), written by the
//! same index run as the graph, right after the graph commits: the documents of
//! changed and deleted files are deleted (by path) and those of changed and new
//! files added. A tag file records the `Ref.indexed_at` the index matches; an index
//! whose tag differs from the graph's (a run killed between the two commits, an
//! older data dir) is rebuilt from the graph when it is opened.
//!
//! A tokenizer registered with Tantivy splits identifiers (`parseHTTPRequest_v2` →
//! `parse http request v2` plus the whole identifier), and queries are split the
//! same way, so "http request" finds `parseHTTPRequest`. Fields are boosted name ≫
//! qualified name > signature > doc > path > body; the score is then adjusted with
//! what only the graph knows: exact name matches first, definitions over tests and
//! vendored code, and symbols many files import above leaf helpers of the same name.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::index::{SegmentId, SegmentMeta};
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, BoostQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, TantivyDocument, Term};

use crate::store::catalog::Catalog;
use crate::store::graph::{SymbolRow, SymbolWithRange};

#[derive(Debug, thiserror::Error)]
#[error("search index error: {0}")]
pub struct SearchError(String);

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> Self {
        SearchError(e.to_string())
    }
}

/// Field boosts: name ≫ qualified name > signature > doc > path.
const BOOSTS: [(&str, f32); 5] = [
    ("name", 8.0),
    ("qualified_name", 3.0),
    ("signature", 2.0),
    ("doc", 1.0),
    ("path", 0.5),
];

pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    text: Vec<(Field, f32)>,
    body: Field,
    language: Field,
    kind: Field,
    symbol_id: Field,
    path_raw: Field,
    /// Memory of a writer of many documents (`--search-writer-mb`).
    writer_bytes: usize,
    /// An update leaves its segment unmerged (see `with_merge_later`).
    merge_later: bool,
    /// The catalog entry of each term of each segment's `symbol_id` column.
    entries: Arc<EntryMaps>,
}

/// A catalog generation and a segment's map for it.
type GenerationMap = (u64, Arc<Vec<u32>>);

/// Per segment: the catalog entry of each term ordinal of its `symbol_id`
/// column (`u32::MAX` = not in the catalog), for the newest catalog generation
/// asked. Reading ids back one by one decompresses a dictionary block per hit.
///
/// A server shares one of these among the search indexes it opens of a ref,
/// one after another (each change opens the index again), and a catalog
/// patched by a change brings the maps of the segments the change left up to
/// date by the patch (`Catalog::patch`: the ids it killed and added). Mapping
/// the ref's main segment again took 150–300 ms of the first search-backed
/// answer after every change on the crates corpus (648k ids).
#[derive(Debug, Default)]
pub struct EntryMaps {
    maps: std::sync::Mutex<HashMap<tantivy::index::SegmentId, GenerationMap>>,
    /// How many maps were brought up to date by a patch (for checks).
    patched: std::sync::atomic::AtomicU64,
}

impl EntryMaps {
    /// How many maps were brought up to date by a catalog's patch rather than
    /// made again.
    pub fn patched(&self) -> u64 {
        self.patched.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn get(&self, segment: tantivy::index::SegmentId) -> Option<GenerationMap> {
        self.maps.lock().ok()?.get(&segment).cloned()
    }

    /// Keeps `map` as `segment`'s for `generation`, and drops the maps of
    /// segments no longer `live` (merged away).
    fn put(
        &self,
        segment: tantivy::index::SegmentId,
        generation: u64,
        map: Arc<Vec<u32>>,
        live: &[tantivy::index::SegmentId],
    ) {
        if let Ok(mut m) = self.maps.lock() {
            m.retain(|s, _| live.contains(s));
            m.insert(segment, (generation, map));
        }
    }
}

/// Bodies are indexed up to this many bytes (a class's body holds its methods').
const BODY_BYTES: usize = 2048;
/// Weight of the body field.
const BODY_BOOST: f32 = 0.3;
pub const TAG_FILE: &str = "cruxe-indexed-at";

fn schema() -> Schema {
    let mut sb = Schema::builder();
    let text_opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    for (name, _) in BOOSTS {
        sb.add_text_field(name, text_opts.clone());
    }
    sb.add_text_field("body", text_opts);
    // Filters: one token each, so no length to normalise by (a byte per
    // field and symbol, 2 MB on the crates).
    let filter = || {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("raw")
                .set_fieldnorms(false)
                .set_index_option(IndexRecordOption::Basic),
        )
    };
    sb.add_text_field("language", filter());
    sb.add_text_field("kind", filter());
    // A column only: ids are read from hits, never searched. Indexed, its
    // random-looking terms cost more than all the words of the bodies when
    // the term dictionary is built.
    sb.add_text_field("symbol_id", FAST);
    sb.add_text_field("path_raw", filter());
    sb.build()
}

/// Nothing is stored, but the store keeps a 32-bit offset a document, which
/// lz4 leaves at 4 bytes (2.7 MB on the crates) and zstd does not.
fn settings() -> tantivy::IndexSettings {
    tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::Zstd(Default::default()),
        ..Default::default()
    }
}

/// The index's tag: the `Ref.indexed_at` it matches, if it was ever completed.
pub fn read_tag(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(TAG_FILE)).ok()
}

/// Records that the index in `dir` matches the graph state `indexed_at`.
pub fn write_tag(dir: &Path, indexed_at: &str) -> Result<(), SearchError> {
    let tmp = dir.join(format!("{TAG_FILE}.tmp"));
    std::fs::write(&tmp, indexed_at).map_err(|e| SearchError(e.to_string()))?;
    std::fs::rename(&tmp, dir.join(TAG_FILE)).map_err(|e| SearchError(e.to_string()))
}

/// The text of a symbol worth indexing: its source, cut at `BODY_BYTES`.
pub fn body_of(text: &str, start: usize, end: usize) -> &str {
    let end = end.min(text.len()).min(start.saturating_add(BODY_BYTES));
    let mut e = end;
    while e > start && !text.is_char_boundary(e) {
        e -= 1;
    }
    let mut s = start.min(e);
    while s > 0 && !text.is_char_boundary(s) {
        s -= 1;
    }
    &text[s..e]
}

/// Filters of a search.
#[derive(Debug, Clone, Default)]
pub struct Filters<'a> {
    pub language: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub path_prefix: Option<&'a str>,
}

/// A ref's search index with the catalog it was built from (hits are catalog
/// entries).
pub struct RefSearch {
    pub catalog: std::sync::Arc<Catalog>,
    pub index: SearchIndex,
}

/// Memory of the search index writer by default, in MiB (all its threads
/// together): `memory::MemoryBudget::default().search_writer_mb()`.
pub const DEFAULT_WRITER_MB: usize = 64;

/// One hit: the catalog index of the symbol and its final score.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub entry: usize,
    pub score: f32,
}

/// The name cruxe's tokenizer is registered under in every index it opens.
const TOKENIZER: &str = "cruxe_ident";

/// [`terms`] as a Tantivy tokenizer, so documents are split by Tantivy with the
/// same rules the queries use.
#[derive(Clone)]
struct IdentTokenizer;

/// The terms of a text, streamed into one reused [`Token`] (the bodies of a
/// cold index are hundreds of megabytes: no string per term).
struct IdentStream<'a> {
    terms: Terms<'a>,
    token: Token,
}

impl Tokenizer for IdentTokenizer {
    type TokenStream<'a> = IdentStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> IdentStream<'a> {
        IdentStream {
            terms: Terms::new(text),
            token: Token {
                offset_from: 0,
                offset_to: 0,
                position: usize::MAX,
                text: String::new(),
                position_length: 1,
            },
        }
    }
}

impl TokenStream for IdentStream<'_> {
    fn advance(&mut self) -> bool {
        let more = self.terms.next_into(&mut self.token.text);
        self.token.position = self.token.position.wrapping_add(1);
        more
    }
    fn token(&self) -> &Token {
        &self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

/// Identifier-aware terms: words split at non-alphanumerics, lower→upper case
/// changes and acronym ends (`HTTPRequest` → `http request`), lower-cased; each
/// identifier longer than one part is kept whole too.
pub fn terms(text: &str) -> Vec<String> {
    let mut terms = Terms::new(text);
    let mut out = Vec::new();
    let mut term = String::new();
    while terms.next_into(&mut term) {
        out.push(std::mem::take(&mut term));
    }
    out
}

/// The state of [`terms`] over a text: the identifiers not reached yet, and the
/// parts of the current one (byte ranges into it) still to give.
struct Terms<'a> {
    rest: &'a str,
    /// The whole text is ASCII: scanned byte by byte (most source is).
    ascii: bool,
    ident: &'a str,
    parts: Vec<(usize, usize)>,
    next_part: usize,
}

impl<'a> Terms<'a> {
    fn new(text: &'a str) -> Terms<'a> {
        Terms {
            rest: text,
            ascii: text.is_ascii(),
            ident: "",
            parts: Vec::new(),
            next_part: 0,
        }
    }

    /// Writes the next term into `out` (cleared first); false when there is none.
    fn next_into(&mut self, out: &mut String) -> bool {
        out.clear();
        if let Some(&(s, e)) = self.parts.get(self.next_part) {
            self.next_part += 1;
            push_lowercase(out, &self.ident[s..e]);
            return true;
        }
        loop {
            let Some((start, len)) = self.next_word() else {
                self.rest = "";
                return false;
            };
            let from = &self.rest[start..];
            self.ident = &from[..len];
            self.rest = &from[len..];
            if self.ascii {
                split_ascii_identifier(self.ident.as_bytes(), &mut self.parts);
            } else {
                split_identifier(self.ident, &mut self.parts);
            }
            // Underscores only: no term; on to the next identifier.
            let Some(&(s, e)) = self.parts.first() else {
                continue;
            };
            if self.parts.len() > 1 {
                self.next_part = 0;
                push_lowercase(out, self.ident);
            } else {
                self.next_part = 1;
                push_lowercase(out, &self.ident[s..e]);
            }
            return true;
        }
    }

    /// Where the next identifier of `rest` starts, and its length in bytes.
    fn next_word(&self) -> Option<(usize, usize)> {
        if self.ascii {
            let is_word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
            let bytes = self.rest.as_bytes();
            let start = bytes.iter().position(is_word)?;
            let len = bytes[start..]
                .iter()
                .position(|b| !is_word(b))
                .unwrap_or(bytes.len() - start);
            Some((start, len))
        } else {
            let is_word = |c: char| c.is_alphanumeric() || c == '_';
            let start = self.rest.find(is_word)?;
            let from = &self.rest[start..];
            Some((
                start,
                from.find(|c: char| !is_word(c)).unwrap_or(from.len()),
            ))
        }
    }
}

/// Appends `s` lower-cased to `out`, which is empty.
fn push_lowercase(out: &mut String, s: &str) {
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&s.to_lowercase());
    }
}

/// Adjacent query words run together (and all of them, for three or more).
fn joined_words(query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut seen = HashSet::new();
    let mut out: Vec<String> = words
        .windows(2)
        .map(|w| w.concat())
        .filter(|j| seen.insert(j.clone()))
        .collect();
    // A whole phrase as one identifier only for a few words: longer, it names
    // nothing and only costs a term.
    if (3..=6).contains(&words.len()) {
        out.push(words.concat());
    }
    out
}

/// Longest query `search_code` and `get_code_context` accept, in characters.
pub const MAX_QUERY_CHARS: usize = 2_000;
/// Most distinct terms one query may have.
pub const MAX_QUERY_TERMS: usize = 64;

/// Refuses a query too long to be a question (its cost grows with its terms).
pub fn check_query(query: &str) -> Result<(), String> {
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(format!(
            "the query is {chars} characters long; at most {MAX_QUERY_CHARS} are accepted"
        ));
    }
    let mut distinct = HashSet::new();
    let mut terms = Terms::new(query);
    let mut term = String::new();
    while terms.next_into(&mut term) {
        distinct.insert(std::mem::take(&mut term));
        if distinct.len() > MAX_QUERY_TERMS {
            return Err(format!(
                "the query has more than {MAX_QUERY_TERMS} distinct terms; ask something narrower"
            ));
        }
    }
    Ok(())
}

/// The parts of an identifier as byte ranges into it (replacing `parts`'s).
fn split_identifier(ident: &str, parts: &mut Vec<(usize, usize)>) {
    split_units(ident.char_indices(), ident.len(), parts);
}

/// [`split_identifier`] of an ASCII identifier, byte by byte.
fn split_ascii_identifier(ident: &[u8], parts: &mut Vec<(usize, usize)>) {
    split_units(ident.iter().copied().enumerate(), ident.len(), parts);
}

/// A character or an ASCII byte, as the identifier splitter sees it.
trait Unit: Copy {
    fn is_underscore(self) -> bool;
    fn is_lower(self) -> bool;
    fn is_upper(self) -> bool;
}

impl Unit for char {
    fn is_underscore(self) -> bool {
        self == '_'
    }
    fn is_lower(self) -> bool {
        self.is_lowercase()
    }
    fn is_upper(self) -> bool {
        self.is_uppercase()
    }
}

impl Unit for u8 {
    fn is_underscore(self) -> bool {
        self == b'_'
    }
    fn is_lower(self) -> bool {
        self.is_ascii_lowercase()
    }
    fn is_upper(self) -> bool {
        self.is_ascii_uppercase()
    }
}

/// Splits at underscores, lower→upper changes and acronym ends; `units` are the
/// identifier's units with their byte offsets, `len` its length in bytes.
fn split_units<U: Unit>(
    units: impl Iterator<Item = (usize, U)>,
    len: usize,
    parts: &mut Vec<(usize, usize)>,
) {
    parts.clear();
    let mut cur: Option<(usize, U)> = None; // start of the part, its last unit
    let mut units = units.peekable();
    while let Some((i, c)) = units.next() {
        if c.is_underscore() {
            if let Some((s, _)) = cur.take() {
                parts.push((s, i));
            }
            continue;
        }
        match cur {
            Some((s, prev)) => {
                let next = units.peek().map(|&(_, n)| n);
                let boundary = (prev.is_lower() && c.is_upper())
                    || (prev.is_upper() && c.is_upper() && next.is_some_and(U::is_lower));
                if boundary {
                    parts.push((s, i));
                    cur = Some((i, c));
                } else {
                    cur = Some((s, c));
                }
            }
            None => cur = Some((i, c)),
        }
    }
    if let Some((s, _)) = cur {
        parts.push((s, len));
    }
}

/// The catalog entry of every term of a `symbol_id` dictionary.
fn all_entries(
    column: &tantivy::columnar::StrColumn,
    cat: &Catalog,
) -> Result<Vec<u32>, SearchError> {
    let dict = column.dictionary();
    let mut map = vec![u32::MAX; dict.num_terms()];
    let mut stream = dict.stream().map_err(|e| SearchError(e.to_string()))?;
    while stream.advance() {
        let ord = stream.term_ord() as usize;
        if let (Some(slot), Ok(id)) = (map.get_mut(ord), std::str::from_utf8(stream.key())) {
            *slot = cat.by_id(id).map_or(u32::MAX, |i| i as u32);
        }
    }
    Ok(map)
}

/// `before` (the map for the catalog `patch` was made from) with the terms of
/// the ids the patch killed or added mapped again: every other entry kept its
/// number and id.
fn patched_entries(
    before: &[u32],
    column: &tantivy::columnar::StrColumn,
    cat: &Catalog,
    patch: &crate::store::catalog::Patch,
) -> Result<Vec<u32>, SearchError> {
    let dict = column.dictionary();
    let mut map = before.to_vec();
    let added = patch.first_added as usize..cat.entries();
    for i in patch.killed.iter().map(|&k| k as usize).chain(added) {
        let id = cat.entry(i).id();
        let found = dict
            .term_ord(id.as_bytes())
            .map_err(|e| SearchError(e.to_string()))?;
        if let Some(slot) = found.and_then(|ord| map.get_mut(ord as usize)) {
            *slot = cat.by_id(&id).map_or(u32::MAX, |e| e as u32);
        }
    }
    Ok(map)
}

/// The segments to merge after a commit. A search pays per segment (each finds
/// its own top hits), so an index is kept to one big segment and a short tail:
/// - after a rebuild, or once the tail and the deleted documents reach a quarter
///   of the big segment, everything is merged into one;
/// - once the tail (one small segment per incremental run) has `TAIL_SEGMENTS`
///   segments, its small segments are merged into one (`small_tail`), which
///   costs little.
///
/// Tantivy's own merge policy works in the background of a long-lived writer;
/// cruxe's writer lives for one run, so it merges by this plan before closing.
fn merge_plan(metas: &[SegmentMeta], rebuilt: bool) -> Vec<SegmentId> {
    let Some((big, tail)) = split_big(metas) else {
        return Vec::new();
    };
    if tail.is_empty() {
        return Vec::new();
    }
    let tail_docs: u64 = tail.iter().map(|m| u64::from(m.num_docs())).sum();
    let dead: u64 = metas.iter().map(|m| u64::from(m.num_deleted_docs())).sum();
    if rebuilt || (tail_docs + dead) * 4 >= u64::from(big.num_docs()) {
        metas.iter().map(|m| m.id()).collect()
    } else if tail.len() >= TAIL_SEGMENTS {
        small_tail(&tail)
    } else {
        Vec::new()
    }
}

/// The tail's segments to merge: all but those that hold more documents than
/// the tail's smaller segments together, which wait until the smaller ones
/// reach them. A merge at a pause then rewrites what came since the last one,
/// not every change before it too: merging the whole tail rewrote a segment of a
/// branch switch's thousands of documents at every pause (150–470 ms, that a
/// change landing meanwhile waited for). Each document is rewritten about
/// log2 of the tail's size times; none when fewer than two are left.
fn small_tail(tail: &[&SegmentMeta]) -> Vec<SegmentId> {
    let mut by_size = tail.to_vec();
    by_size.sort_by_key(|m| std::cmp::Reverse(m.num_docs()));
    let mut smaller: u64 = by_size.iter().map(|m| u64::from(m.num_docs())).sum();
    let mut kept = 0;
    for m in &by_size {
        let docs = u64::from(m.num_docs());
        smaller -= docs;
        if docs <= smaller {
            break;
        }
        kept += 1;
    }
    match by_size.len() - kept >= 2 {
        true => by_size[kept..].iter().map(|m| m.id()).collect(),
        false => Vec::new(),
    }
}

/// The biggest segment and the others (the tail).
fn split_big(metas: &[SegmentMeta]) -> Option<(&SegmentMeta, Vec<&SegmentMeta>)> {
    let big = metas.iter().max_by_key(|m| m.num_docs())?;
    let tail = metas.iter().filter(|m| m.id() != big.id()).collect();
    Some((big, tail))
}

/// The tail alone, to merge: its small segments (`small_tail`), never the biggest.
fn tail_of(metas: &[SegmentMeta]) -> Vec<SegmentId> {
    split_big(metas).map_or(Vec::new(), |(_, tail)| small_tail(&tail))
}

/// Small segments left behind incremental runs before they are merged.
const TAIL_SEGMENTS: usize = 6;

impl SearchIndex {
    /// A new, empty index in memory (when the data dir cannot take one).
    pub fn in_ram() -> Result<SearchIndex, SearchError> {
        Self::from_index(Index::create_in_ram(schema()))
    }

    /// Opens the index in `dir`, creating it (or recreating one of another schema).
    pub fn open_dir(dir: &Path) -> Result<SearchIndex, SearchError> {
        std::fs::create_dir_all(dir).map_err(|e| SearchError(e.to_string()))?;
        let open = || -> Result<Index, SearchError> {
            let mmap = MmapDirectory::open(dir).map_err(|e| SearchError(e.to_string()))?;
            Ok(Index::builder()
                .schema(schema())
                .settings(settings())
                .open_or_create(mmap)?)
        };
        let index = match open() {
            Ok(i) => i,
            Err(first) => {
                tracing::info!("recreating the search index in {}: {first}", dir.display());
                let _ = std::fs::remove_dir_all(dir);
                std::fs::create_dir_all(dir).map_err(|e| SearchError(e.to_string()))?;
                open()?
            }
        };
        Self::from_index(index)
    }

    /// The same index, written with `mb` MiB (at least 15: Tantivy's minimum).
    pub fn with_writer_mb(mut self, mb: usize) -> SearchIndex {
        self.writer_bytes = mb.max(15) << 20;
        self
    }

    /// Shares `maps` with the other indexes of the ref opened before or after
    /// this one (see `EntryMaps`).
    pub fn with_entry_maps(mut self, maps: Arc<EntryMaps>) -> SearchIndex {
        self.entries = maps;
        self
    }

    /// Updates leave the merge of the tail to `merge_tail`: a server answers a
    /// change first (merging six small segments took ~50 ms of every sixth run
    /// on the Rust crates). A rebuild is still merged at once, and so is a
    /// tail grown past four times `TAIL_SEGMENTS` (changes without a pause).
    pub fn with_merge_later(mut self, later: bool) -> SearchIndex {
        self.merge_later = later;
        self
    }

    /// Merges what `merge_plan` says (after updates `with_merge_later`); the
    /// number of segments merged. With `small_only`, never the big segment
    /// (seconds on a big ref), whose merge waits for a longer pause: a tail of
    /// `TAIL_SEGMENTS` is merged meanwhile. (It was left alone, so a stream of
    /// short pauses grew it until an update merged everything: a 2.1 s rename on
    /// the Rust crates.)
    pub fn merge_tail(&self, small_only: bool) -> Result<usize, SearchError> {
        let metas = self.index.searchable_segment_metas()?;
        let mut plan = merge_plan(&metas, false);
        let big = split_big(&metas).map(|(b, _)| b.id());
        if small_only && big.is_some_and(|b| plan.contains(&b)) {
            plan = match metas.len() > TAIL_SEGMENTS {
                true => tail_of(&metas),
                false => Vec::new(),
            };
        }
        // See `write_when`: held metas would keep the merged segments' files.
        drop(metas);
        if plan.is_empty() {
            return Ok(0);
        }
        let mut writer = self
            .index
            .writer_with_num_threads::<TantivyDocument>(1, 15 << 20)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        writer.merge(&plan).wait()?;
        self.reader.reload()?;
        Ok(plan.len())
    }

    fn from_index(index: Index) -> Result<SearchIndex, SearchError> {
        index
            .tokenizers()
            .register(TOKENIZER, TextAnalyzer::from(IdentTokenizer));
        let s = index.schema();
        let field = |name: &str| s.get_field(name).map_err(|e| SearchError(e.to_string()));
        let text = BOOSTS
            .iter()
            .map(|(name, boost)| field(name).map(|f| (f, *boost)))
            .collect::<Result<Vec<_>, _>>()?;
        let (body, language, kind, symbol_id, path_raw) = (
            field("body")?,
            field("language")?,
            field("kind")?,
            field("symbol_id")?,
            field("path_raw")?,
        );
        let reader = index.reader()?;
        Ok(SearchIndex {
            index,
            reader,
            text,
            body,
            language,
            kind,
            symbol_id,
            path_raw,
            writer_bytes: DEFAULT_WRITER_MB << 20,
            merge_later: false,
            entries: Arc::default(),
        })
    }

    /// The catalog entry of every term ordinal of a segment's `symbol_id` column:
    /// kept per segment and catalog, brought up to date by the catalog's patch
    /// when the map of the catalog it patched is known, else made by streaming
    /// the column's dictionary.
    fn entries_of(
        &self,
        searcher: &tantivy::Searcher,
        segment: &tantivy::SegmentReader,
        cat: &Catalog,
    ) -> Result<Option<Arc<Vec<u32>>>, SearchError> {
        let generation = cat.generation();
        let known = self.entries.get(segment.segment_id());
        if let Some((g, map)) = &known
            && *g == generation
        {
            return Ok(Some(map.clone()));
        }
        let Some(column) = segment.fast_fields().str("symbol_id")? else {
            return Ok(None);
        };
        let t = std::time::Instant::now();
        let map = match (known, cat.patch()) {
            (Some((g, before)), Some(patch)) if g == patch.from => {
                self.entries
                    .patched
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                patched_entries(&before, &column, cat, patch)?
            }
            _ => all_entries(&column, cat)?,
        };
        tracing::debug!(
            terms = map.len(),
            ms = t.elapsed().as_millis() as u64,
            "mapped a segment's ids to catalog entries"
        );
        let map = Arc::new(map);
        let live: Vec<_> = searcher
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .collect();
        self.entries
            .put(segment.segment_id(), generation, map.clone(), &live);
        Ok(Some(map))
    }

    /// Each segment's map of ids to `cat`'s entries, as searches read them
    /// (for checks: a map brought up to date by a patch against one made).
    pub fn entry_maps_of(&self, cat: &Catalog) -> Result<Vec<Vec<u32>>, SearchError> {
        let searcher = self.reader.searcher();
        let mut out = Vec::new();
        for segment in searcher.segment_readers() {
            if let Some(map) = self.entries_of(&searcher, segment, cat)? {
                out.push(map.to_vec());
            }
        }
        Ok(out)
    }

    /// The symbol id of every live document, sorted (for checks: an updated index
    /// against a rebuilt one).
    pub fn symbol_ids(&self) -> Result<Vec<String>, SearchError> {
        self.reader.reload()?;
        let searcher = self.reader.searcher();
        let mut out = Vec::new();
        for segment in searcher.segment_readers() {
            let Some(column) = segment.fast_fields().str("symbol_id")? else {
                continue;
            };
            for doc in segment.doc_ids_alive() {
                for ord in column.term_ords(doc) {
                    let mut id = String::new();
                    column
                        .ord_to_str(ord, &mut id)
                        .map_err(|e| SearchError(e.to_string()))?;
                    out.push(id);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// One atomic change: with `clear`, every document goes first; then the
    /// documents of `remove_paths` go and `docs` (symbol, body) are added.
    pub fn write<R: std::borrow::Borrow<SymbolRow>, B: AsRef<str>>(
        &self,
        clear: bool,
        remove_paths: &[String],
        docs: impl Iterator<Item = (R, B)>,
    ) -> Result<(), SearchError> {
        self.write_when(clear, remove_paths, docs, || true)
            .map(|_| ())
    }

    /// `write`, made visible only if `go` (called once the new segment is on
    /// disk, which is most of a small write's cost) says so; otherwise
    /// abandoned, leaving the index as it was. Whether it was committed.
    pub fn write_when<R: std::borrow::Borrow<SymbolRow>, B: AsRef<str>>(
        &self,
        clear: bool,
        remove_paths: &[String],
        docs: impl Iterator<Item = (R, B)>,
        go: impl FnOnce() -> bool,
    ) -> Result<bool, SearchError> {
        let t = std::time::Instant::now();
        // An update of a few files is written by one thread with the smallest
        // arena. A rebuild is written by one thread too, into one segment when
        // it fits the budget: merging the segments of several threads costs
        // more than the second thread gains (Go's standard library: 6.5 s
        // instead of 8.4 s). Other updates use up to four threads.
        let small = !clear && remove_paths.len() <= 64;
        let threads = if small || clear {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
        };
        // Tantivy wants at least 15 MB per writer thread.
        let budget = if small { 15 << 20 } else { self.writer_bytes };
        let threads = threads.min((budget / (15 << 20)).max(1));
        let mut writer = self.index.writer_with_num_threads::<TantivyDocument>(
            threads,
            budget.max(threads * (15 << 20)),
        )?;
        // Merges follow `merge_plan` (Tantivy's policy would start merges that
        // closing the writer cancels).
        writer.set_merge_policy(Box::new(NoMergePolicy));
        if clear {
            writer.delete_all_documents()?;
        }
        for p in remove_paths {
            writer.delete_term(Term::from_field_text(self.path_raw, p));
        }
        for (row, body) in docs {
            let row: &SymbolRow = row.borrow();
            let mut doc = TantivyDocument::default();
            let values = [
                row.name.as_str(),
                &row.qualified_name,
                &row.signature,
                &row.doc,
                &row.path,
            ];
            for ((field, _), value) in self.text.iter().zip(values) {
                doc.add_text(*field, value);
            }
            doc.add_text(self.body, body.as_ref());
            doc.add_text(self.language, &row.language);
            doc.add_text(self.kind, &row.kind);
            doc.add_text(self.symbol_id, &row.id);
            doc.add_text(self.path_raw, &row.path);
            writer.add_document(doc)?;
        }
        let added_ms = t.elapsed().as_millis() as u64;
        let prepared = writer.prepare_commit()?;
        let prepared_ms = t.elapsed().as_millis() as u64;
        if !go() {
            // Its files are Tantivy's garbage from here on; the writer's drop
            // leaves the last commit as it was.
            tracing::debug!(added_ms, prepared_ms, "search index write abandoned");
            return Ok(false);
        }
        prepared.commit()?;
        let committed_ms = t.elapsed().as_millis() as u64;
        let metas = self.index.searchable_segment_metas()?;
        // Merged later, unless changes came for so long without a pause that
        // the tail grew four times its length: then the tail, never the big
        // segment, whose merge waits for a pause.
        let plan = match self.merge_later && !clear {
            true if metas.len() <= 4 * TAIL_SEGMENTS => Vec::new(),
            true => tail_of(&metas),
            false => merge_plan(&metas, clear),
        };
        // Tantivy deletes a merged segment's files after the merge unless its
        // meta is still held somewhere, as by this list: a rebuild written in
        // several segments left them beside the merged one (twice the index
        // on disk) until the next run's commit.
        drop(metas);
        if !plan.is_empty() {
            // Waited for: dropping the writer would cancel it.
            writer.merge(&plan).wait()?;
        }
        self.reader.reload()?;
        drop(writer);
        tracing::debug!(
            added_ms,
            prepared_ms,
            committed_ms,
            merged = plan.len(),
            ms = t.elapsed().as_millis() as u64,
            "search index write"
        );
        Ok(true)
    }

    /// How many segments the index has (for tests and `--verbose` figures).
    pub fn segment_count(&self) -> Result<usize, SearchError> {
        Ok(self.index.searchable_segment_ids()?.len())
    }

    /// Indexes `symbols` (bodies from `root`, when given), replacing what the
    /// index held.
    pub fn rebuild(
        &self,
        symbols: &[SymbolWithRange],
        root: Option<&Path>,
    ) -> Result<(), SearchError> {
        let mut texts: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        if let Some(root) = root {
            for (row, _, _) in symbols {
                texts.entry(row.path.as_str()).or_insert_with(|| {
                    std::fs::read_to_string(root.join(&row.path)).unwrap_or_default()
                });
            }
        }
        let docs = symbols.iter().map(|(row, start, end)| {
            let body = texts
                .get(row.path.as_str())
                .map_or("", |t| body_of(t, *start, *end));
            (row, body)
        });
        self.write(true, &[], docs)
    }

    /// The best `limit` symbols for `query`, best first.
    pub fn search(
        &self,
        cat: &Catalog,
        query: &str,
        filters: &Filters<'_>,

        limit: usize,
    ) -> Result<Vec<Hit>, SearchError> {
        // Each distinct term once: a repeated word adds nothing to the ranking
        // but a clause to every scoring step.
        let mut seen = HashSet::new();
        let words: Vec<String> = terms(query)
            .into_iter()
            .filter(|w| seen.insert(w.clone()))
            .collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let fields: Vec<(Field, f32)> = self
            .text
            .iter()
            .copied()
            .chain(std::iter::once((self.body, BODY_BOOST)))
            .collect();
        for w in &words {
            for (field, boost) in &fields {
                let tq = TermQuery::new(
                    Term::from_field_text(*field, w),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(tq), *boost)),
                ));
            }
        }
        // Words typed apart often name one lower-case identifier: "url parse" →
        // `urlparse`, "context manager" → `contextmanager`.
        for joined in joined_words(query) {
            for (field, boost) in self.text.iter().take(2) {
                let tq = TermQuery::new(
                    Term::from_field_text(*field, &joined),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(tq), *boost)),
                ));
            }
        }
        let mut must: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (field, value) in [(self.language, filters.language), (self.kind, filters.kind)] {
            if let Some(v) = value {
                let tq = TermQuery::new(Term::from_field_text(field, v), IndexRecordOption::Basic);
                must.push((Occur::Must, Box::new(tq)));
            }
        }
        // Unfiltered, the query is a flat union of term queries, which Tantivy
        // scores with block-max WAND (skipping blocks that cannot reach the top);
        // nested under a `Must` it would score every matching document.
        let q = if must.is_empty() {
            BooleanQuery::new(should)
        } else {
            must.insert(0, (Occur::Must, Box::new(BooleanQuery::new(should))));
            BooleanQuery::new(must)
        };
        self.ranked(cat, &q, query, filters, limit)
    }

    /// Names close to `name`, for "did you mean": each of its words matched
    /// within one edit (two for a word of six letters or more) against the
    /// names' words, ranked as `search` ranks.
    pub fn similar(
        &self,
        cat: &Catalog,
        name: &str,
        limit: usize,
    ) -> Result<Vec<Hit>, SearchError> {
        let Some(&(field, _)) = self.text.first() else {
            return Ok(Vec::new());
        };
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for w in terms(name) {
            let distance = if w.chars().count() >= 6 { 2 } else { 1 };
            let term = Term::from_field_text(field, &w);
            should.push((
                Occur::Should,
                Box::new(FuzzyTermQuery::new(term, distance, true)),
            ));
        }
        if should.is_empty() {
            return Ok(Vec::new());
        }
        let filters = Filters::default();
        self.ranked(cat, &BooleanQuery::new(should), name, &filters, limit)
    }

    /// The top hits of `q` as catalog entries, adjusted with what the catalog
    /// knows (an exact name, a test or vendored path, imports).
    fn ranked(
        &self,
        cat: &Catalog,
        q: &dyn Query,
        query: &str,
        filters: &Filters<'_>,
        limit: usize,
    ) -> Result<Vec<Hit>, SearchError> {
        let searcher = self.reader.searcher();
        // Rank more than asked for: the graph adjustments below reorder the head.
        let fetch = (limit * 2).max(50);
        let top = searcher.search(q, &TopDocs::with_limit(fetch).order_by_score())?;
        let query_lower = query.trim().to_lowercase();
        let mut hits = Vec::with_capacity(top.len());
        let mut columns: HashMap<u32, _> = HashMap::new();
        for (score, addr) in top {
            let segment = searcher.segment_reader(addr.segment_ord);
            if let std::collections::hash_map::Entry::Vacant(slot) = columns.entry(addr.segment_ord)
            {
                let column = segment.fast_fields().str("symbol_id")?;
                slot.insert(column.zip(self.entries_of(&searcher, segment, cat)?));
            }
            let Some((column, entries)) = &columns[&addr.segment_ord] else {
                continue;
            };
            let Some(entry) = column
                .term_ords(addr.doc_id)
                .next()
                .and_then(|ord| entries.get(ord as usize))
                .filter(|&&e| e != u32::MAX)
                .map(|&e| e as usize)
            else {
                continue;
            };
            let row = cat.entry(entry);
            if let Some(prefix) = filters.path_prefix
                && !(row.path() == prefix || row.path().starts_with(&format!("{prefix}/")))
            {
                continue;
            }
            let mut s = score;
            // Lower-casing allocates: compare lengths first (case folding of
            // identifiers keeps their length for ASCII, the usual case).
            let same = |s: &str| s.len() == query_lower.len() && s.to_lowercase() == query_lower;
            if same(row.name()) || same(row.qualified_name()) {
                s *= 3.0;
            }
            if crate::model::names::is_secondary_path(row.path()) {
                s *= 0.5;
            }
            if row.kind() == "impl" {
                s *= 0.9;
            }
            let n = cat.imported_by(entry);
            if n > 0 {
                s *= 1.0 + 0.15 * (1.0 + n as f32).ln();
            }
            hits.push(Hit { entry, score: s });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry.cmp(&b.entry)));
        hits.truncate(limit);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::{IdentTokenizer, SymbolRow, TAIL_SEGMENTS, merge_plan, terms};
    use tantivy::tokenizer::{TokenStream, Tokenizer};

    #[test]
    fn the_merge_plan_keeps_one_big_segment_and_a_short_tail() {
        let index = tantivy::Index::create_in_ram(super::schema());
        let meta = |docs: u32, deleted: u32| {
            let m = index.new_segment_meta(tantivy::index::SegmentId::generate_random(), docs);
            if deleted > 0 {
                m.with_delete_meta(deleted, 1)
            } else {
                m
            }
        };
        let big = meta(10_000, 0);
        let tail: Vec<_> = (0..TAIL_SEGMENTS).map(|_| meta(10, 0)).collect();
        let with_tail = |n: usize| {
            std::iter::once(big.clone())
                .chain(tail[..n].iter().cloned())
                .collect::<Vec<_>>()
        };
        // A lone segment, or a tail still short: nothing.
        assert!(merge_plan(&with_tail(0), false).is_empty());
        assert!(merge_plan(&with_tail(TAIL_SEGMENTS - 1), false).is_empty());
        // A rebuild: all of it, whatever the sizes.
        assert_eq!(merge_plan(&with_tail(2), true).len(), 3);
        // A long tail: the tail only.
        let plan = merge_plan(&with_tail(TAIL_SEGMENTS), false);
        assert_eq!(plan.len(), TAIL_SEGMENTS);
        assert!(!plan.contains(&big.id()));
        // Deleted documents in the big segment past a quarter of it: all.
        let worn = vec![meta(10_000, 2_000), meta(500, 0)];
        assert_eq!(merge_plan(&worn, false).len(), 2);
        let fresh = vec![meta(10_000, 1_000), meta(500, 0)];
        assert!(merge_plan(&fresh, false).is_empty());
        // A tail holding a merged segment bigger than the rest together: the
        // small ones only; once they outweigh it, it goes too.
        let merged = meta(900, 0);
        let small: Vec<_> = (0..TAIL_SEGMENTS).map(|_| meta(50, 0)).collect();
        let mut metas = vec![big.clone(), merged.clone()];
        metas.extend(small.iter().cloned());
        let plan = merge_plan(&metas, false);
        assert_eq!(plan.len(), TAIL_SEGMENTS);
        assert!(!plan.contains(&merged.id()) && !plan.contains(&big.id()));
        assert_eq!(super::tail_of(&metas), plan);
        let grown = meta(300, 0);
        let metas = vec![big.clone(), merged.clone(), grown, meta(600, 0)];
        assert_eq!(super::tail_of(&metas).len(), 3, "900 <= 300 + 600: all");
        let metas = vec![big.clone(), merged, meta(300, 0)];
        assert!(
            super::tail_of(&metas).is_empty(),
            "one small segment: nothing"
        );
    }

    /// `n` symbols, one a file: `{stem}{k}` in `{stem}{k}.py`.
    fn symbols(stem: &str, n: usize) -> Vec<SymbolRow> {
        (0..n)
            .map(|k| SymbolRow {
                id: format!("{stem}{k}").into(),
                name: format!("{stem}_{k}").into(),
                path: format!("{stem}{k}.py"),
                ..SymbolRow::default()
            })
            .collect()
    }

    /// A rebuild with the first row, then an update per row after it: a
    /// segment each.
    fn write_one_at_a_time(index: &super::SearchIndex, rows: &[SymbolRow]) {
        index
            .write(true, &[], std::iter::once((&rows[0], "x")))
            .expect("rebuild");
        for r in &rows[1..] {
            index
                .write(false, &[], std::iter::once((r, "x")))
                .expect("update");
        }
    }

    /// The files of merged segments leave the disk with the merge, whether
    /// `merge_tail` or a write (`write_when`) merges: the index directory
    /// holds the files of its live segments only.
    #[test]
    fn a_merge_leaves_only_the_merged_segments_files() {
        let tmp = tempfile::tempdir().expect("tmp");
        // Segment files are named by their segment's id, `{id}.{part}`.
        let segments_on_disk = |dir: &std::path::Path| {
            let mut stems: Vec<String> = std::fs::read_dir(dir)
                .expect("list")
                .filter_map(|e| {
                    let name = e.expect("entry").file_name().to_string_lossy().into_owned();
                    let (stem, ext) = name.split_once('.')?;
                    (stem.len() == 32 && ext != "json").then(|| stem.to_string())
                })
                .collect();
            stems.sort();
            stems.dedup();
            stems.len()
        };
        let rows = symbols("s", 4);
        for later in [true, false] {
            let dir = tmp.path().join(later.to_string());
            let index = super::SearchIndex::open_dir(&dir)
                .expect("index")
                .with_merge_later(later);
            write_one_at_a_time(&index, &rows);
            if later {
                assert_eq!(segments_on_disk(&dir), 4);
                assert_eq!(index.merge_tail(false).expect("merge"), 4);
            }
            // Unmerged later, each update's segment (a tail past a quarter of
            // the big one) was merged by its own write.
            assert_eq!(index.segment_count().expect("count"), 1);
            assert_eq!(
                segments_on_disk(&dir),
                1,
                "merged files gone, later: {later}"
            );
            assert_eq!(index.symbol_ids().expect("ids").len(), 4);
        }
    }

    /// A server's updates (`with_merge_later`) answer before merging: each
    /// leaves its segment, and `merge_tail` (once changes pause) merges them
    /// and loses nothing.
    #[test]
    fn updates_merged_later_leave_their_segments_to_merge_tail() {
        let index = super::SearchIndex::in_ram()
            .expect("index")
            .with_merge_later(true);
        let rows = symbols("grown", 8);
        let ids = || {
            let mut ids = index.symbol_ids().expect("ids");
            ids.sort();
            ids
        };
        write_one_at_a_time(&index, &rows);
        assert_eq!(index.segment_count().expect("count"), 8, "none merged yet");
        let before = ids();
        assert_eq!(before.len(), 8);
        // Seven one-document segments beside one: a tail past a quarter of
        // the biggest, so all of it; in a short pause (`small_only`) the tail
        // alone, the big segment's merge waiting for a longer one.
        assert_eq!(index.merge_tail(true).expect("merge"), 7, "the tail");
        assert_eq!(index.segment_count().expect("count"), 2);
        assert_eq!(ids(), before);
        assert_eq!(index.merge_tail(true).expect("merge"), 0, "a short tail");
        // A big segment and a tail of six small ones: the tail alone, in any pause.
        let big = symbols("big", 40);
        index
            .write(true, &[], big.iter().map(|r| (r, "x")))
            .expect("rebuild");
        for r in &rows[..super::TAIL_SEGMENTS] {
            index
                .write(false, &[], std::iter::once((r, "x")))
                .expect("update");
        }
        assert_eq!(index.merge_tail(true).expect("merge"), super::TAIL_SEGMENTS);
        assert_eq!(index.segment_count().expect("count"), 2);
        assert_eq!(ids().len(), 40 + super::TAIL_SEGMENTS);
        // A tail past a quarter of the big segment: in a short pause the tail
        // alone, in a long one everything.
        index
            .write(true, &[], big.iter().map(|r| (r, "x")))
            .expect("rebuild");
        let more = symbols("more", 12);
        for r in &more {
            index
                .write(false, &[], std::iter::once((r, "x")))
                .expect("update");
        }
        assert_eq!(index.segment_count().expect("count"), 13);
        assert_eq!(index.merge_tail(true).expect("merge"), 12);
        assert_eq!(index.segment_count().expect("count"), 2);
        assert_eq!(index.merge_tail(false).expect("merge"), 2);
        assert_eq!(index.segment_count().expect("count"), 1);
        assert_eq!(ids().len(), 40 + 12);
        assert_eq!(index.merge_tail(false).expect("merge"), 0, "nothing left");
    }

    /// A write beside the graph's: nothing of it is visible until `go`, and
    /// one abandoned (the graph failed) leaves the index as it was, ready for
    /// the next.
    #[test]
    fn a_write_is_visible_only_when_told_and_abandoned_otherwise() {
        let index = super::SearchIndex::in_ram().expect("index");
        let row = |k: usize| SymbolRow {
            id: format!("id{k}").into(),
            name: format!("name_{k}").into(),
            path: format!("f{k}.py"),
            ..SymbolRow::default()
        };
        let (a, b, c) = (row(0), row(1), row(2));
        let ids = || {
            let mut ids = index.symbol_ids().expect("ids");
            ids.sort();
            ids
        };
        index
            .write(true, &[], std::iter::once((&a, "x")))
            .expect("rebuild");
        let committed = index
            .write_when(
                false,
                &["f0.py".to_string()],
                std::iter::once((&b, "x")),
                || {
                    assert_eq!(ids(), ["id0"], "not visible before the graph commits");
                    false
                },
            )
            .expect("abandoned");
        assert!(!committed);
        assert_eq!(ids(), ["id0"], "an abandoned write changes nothing");
        let committed = index
            .write_when(
                false,
                &["f0.py".to_string()],
                std::iter::once((&c, "x")),
                || true,
            )
            .expect("write");
        assert!(committed);
        assert_eq!(ids(), ["id2"]);
    }

    #[test]
    fn identifiers_split_into_words_and_keep_the_whole() {
        assert_eq!(
            terms("parseHTTPRequest_v2"),
            ["parsehttprequest_v2", "parse", "http", "request", "v2"]
        );
        assert_eq!(
            terms("snake_case path/to/file.rs"),
            ["snake_case", "snake", "case", "path", "to", "file", "rs"]
        );
        assert_eq!(terms("Router"), ["router"]);
        assert_eq!(terms("__init__ x"), ["init", "x"]);
        assert_eq!(terms("___ ÉtéCafé"), ["étécafé", "été", "café"]);
        assert_eq!(terms("IOError2XML"), ["ioerror2xml", "io", "error2xml"]);
        // Non-ASCII text is split by the same rules, character by character.
        assert_eq!(terms("é fooBar"), ["é", "foobar", "foo", "bar"]);
        // A long run of underscore-only words is skipped without recursion.
        assert_eq!(terms(&format!("{} end", "_ ".repeat(1_000_000))), ["end"]);
    }

    #[test]
    fn the_tokenizer_streams_the_terms_with_positions() {
        let mut tok = IdentTokenizer;
        let mut stream = tok.token_stream("fooBar _ baz");
        let mut seen = Vec::new();
        while stream.advance() {
            let t = stream.token();
            seen.push((t.text.clone(), t.position));
        }
        assert_eq!(
            seen,
            [
                ("foobar".to_string(), 0),
                ("foo".to_string(), 1),
                ("bar".to_string(), 2),
                ("baz".to_string(), 3)
            ]
        );
    }
}
