//! The resolution state of a ref: what an incremental run needs from the previous
//! one, kept in one file beside the graph so a run costs in proportion to what
//! changed instead of reading the whole ref back from Kuzu.
//!
//! Per file: its content hash, its module names, its raw imports, its definitions
//! (id, qualified name, kind) and a fingerprint of the `IMPORTS` edges it had after
//! the run. The fingerprints let a run rewrite only the edges of files whose
//! resolution changed; without a trustworthy state (missing, damaged, or tagged
//! with another graph state) a run falls back to loading the ref from the graph
//! and diffing every edge, so the state is an accelerator and never a source of
//! truth.
//!
//! The file is tagged with the `indexed_at` of the graph state it describes and
//! written (temp file + rename) only after that state committed; a kill in
//! between leaves a tag that no longer matches, which the next run notices.

use std::io::Write;
use std::path::Path;

use crate::model::lazy::{Lazy, Shared};
use crate::model::{Language, RawImport};
use crate::resolve::{Edge, RFile, RSymbol, Target};
use crate::source::walk::FileStat;

const MAGIC: &[u8; 8] = b"CRUXST10";

/// Fingerprint of one file's resolved import edges.
pub type Fingerprint = [u8; 16];

/// What an incremental run remembers of a ref, per file (sorted by path).
#[derive(Debug, Clone, Default)]
pub struct RefState {
    /// `indexed_at` of the graph state this describes.
    pub tag: String,
    pub files: Vec<RFile>,
    pub meta: Vec<FileMeta>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMeta {
    pub content_hash: String,
    /// The raw imports as stored on the File node.
    pub imports_text: String,
    pub fingerprint: Fingerprint,
    /// The lookup keys its resolution used (see `resolve::key`), sorted.
    pub deps: Vec<u64>,
    /// The names of the External nodes its edges point at.
    pub externals: Vec<String>,
    /// Its import edges as written (`from` left empty: it is the file), which
    /// the next run that re-resolves the file diffs its new edges against.
    pub out_edges: Lazy<Vec<Edge>>,
    /// Its definitions, import edges and edges to External nodes.
    pub symbols: u32,
    pub edges: u32,
    pub unresolved: u32,
    /// For each of the file's `RFile::symbols`, the position of its parent among
    /// them (`u32::MAX`: the file). Empty when not known (a state read back from
    /// the graph).
    pub parents: Vec<u32>,
    /// For each symbol, `graph::symbol_marks` (empty when not known).
    pub marks: Vec<crate::store::graph::SymbolMarks>,
    /// The file's stat when its content was last read, if it can be trusted
    /// (see `FileStat`): a run skips reading a file that still has it.
    pub stat: Option<FileStat>,
    /// The file's record in the state file it was read from, written back as
    /// it is (`RefState::save_aside`). Whoever changes the file's entry drops it.
    pub record: Option<Record>,
}

/// A state written beside its place (`RefState::save_aside`).
#[derive(Debug)]
pub struct SavedAside {
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl SavedAside {
    /// Puts the state in its place.
    pub fn publish(self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.path)
    }
}

/// No parent symbol: contained by the file.
pub const FILE_PARENT: u32 = u32::MAX;

impl FileMeta {
    /// The file's stored symbols as (id, parent id), when the tree is known.
    pub fn tree(
        &self,
        file: &RFile,
    ) -> Option<Vec<(String, Option<String>, crate::store::graph::SymbolMarks)>> {
        let n = file.symbols.len();
        (self.parents.len() == n && self.marks.len() == n && self.symbols as usize == n).then(
            || {
                file.symbols
                    .iter()
                    .zip(&self.parents)
                    .zip(&self.marks)
                    .map(|((s, &p), m)| {
                        let parent = (p != FILE_PARENT)
                            .then(|| file.symbols.get(p as usize).map(|x| x.id.to_string()))
                            .flatten();
                        (s.id.to_string(), parent, *m)
                    })
                    .collect()
            },
        )
    }
}

/// The fingerprint of a file's edges (sorted and unique, as the resolver gives
/// them).
pub fn fingerprint(edges: &[Edge]) -> Fingerprint {
    let mut h = blake3::Hasher::new();
    for e in edges {
        let (label, to) = match &e.target {
            Target::Symbol(id) => (b'S', id),
            Target::File(id) => (b'F', id),
            Target::Package(dir) => (b'P', dir),
            Target::External(name) => (b'E', name),
        };
        h.update(&[label]);
        for part in [to, &e.to_name, &e.alias] {
            h.update(&(part.len() as u32).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(&e.line.to_le_bytes());
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

impl RefState {
    /// Writes the state atomically (temp file, rename). Not fsynced: after a power
    /// loss a torn file fails its checksum and the next run reads the graph.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        self.save_aside(path)?.publish()
    }

    /// Writes the state beside `path`, not yet in its place: a run encodes it
    /// while its graph write commits, and `publish`es it once committed. A file
    /// whose record was read from a state and did not change since is copied
    /// as it was (most of them, in a run that changed a few files).
    pub fn save_aside(&self, path: &Path) -> std::io::Result<SavedAside> {
        use rayon::prelude::*;
        let t = std::time::Instant::now();
        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(MAGIC);
        put_str(&mut buf, &self.tag);
        put_u32(&mut buf, self.files.len() as u32);
        // Changed files encoded side by side, then everything joined in order.
        let parts: Vec<Vec<u8>> = self
            .files
            .par_chunks(512)
            .zip(self.meta.par_chunks(512))
            .map(|(files, meta)| {
                let mut buf = Vec::with_capacity(64 << 10);
                for (f, m) in files.iter().zip(meta) {
                    match &m.record {
                        Some(r) => buf.extend_from_slice(r.bytes()),
                        None => encode_record(&mut buf, f, m),
                    }
                }
                buf
            })
            .collect();
        buf.reserve(parts.iter().map(Vec::len).sum::<usize>() + 4);
        for part in parts {
            buf.extend_from_slice(&part);
        }
        let sum = crc32fast::hash(&buf);
        buf.extend_from_slice(&sum.to_le_bytes());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("tmp");
        {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&buf)?;
        }
        tracing::debug!(
            bytes = buf.len(),
            ms = t.elapsed().as_millis() as u64,
            "wrote the resolution state aside"
        );
        Ok(SavedAside {
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// Reads a state; `None` when it is missing or damaged. The file is mapped,
    /// not copied, and each file's imports and definitions stay encoded until
    /// used (`Lazy`).
    pub fn load(path: &Path) -> Option<RefState> {
        let t = std::time::Instant::now();
        let file = std::fs::File::open(path).ok()?;
        // A state is replaced by rename, never written in place, so the mapped
        // file stays what it was for as long as it is mapped.
        // SAFETY: see above; the mapping is read only.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
        let bytes: Shared = std::sync::Arc::new(map);
        let buf: &[u8] = (*bytes).as_ref();
        if buf.len() < MAGIC.len() + 4 || &buf[..MAGIC.len()] != MAGIC {
            return None;
        }
        let (body, sum) = buf.split_at(buf.len() - 4);
        if crc32fast::hash(body).to_le_bytes() != sum {
            return None;
        }
        let mut r = Reader {
            buf: body,
            at: MAGIC.len(),
        };
        let tag = r.string()?;
        let n = r.u32()? as usize;
        let mut files = Vec::with_capacity(n.min(body.len()));
        let mut meta = Vec::with_capacity(n.min(body.len()));
        for _ in 0..n {
            let start = r.at;
            let len = r.u32()? as usize;
            let end = start.checked_add(4 + len).filter(|e| *e <= body.len())?;
            let mut rec = Reader {
                buf: &body[..end],
                at: start + 4,
            };
            let (f, mut m) = decode_record(&mut rec, &bytes)?;
            if rec.at != end {
                return None;
            }
            m.record = Some(Record {
                bytes: bytes.clone(),
                range: start..end,
            });
            files.push(f);
            meta.push(m);
            r.at = end;
        }
        if r.at != body.len() {
            return None;
        }
        tracing::debug!(
            bytes = buf.len(),
            ms = t.elapsed().as_millis() as u64,
            "read the resolution state"
        );
        Some(RefState { tag, files, meta })
    }
}

/// A file's record as a state file holds it (see `FileMeta::record`).
#[derive(Clone)]
pub struct Record {
    bytes: Shared,
    range: std::ops::Range<usize>,
}

impl Record {
    fn bytes(&self) -> &[u8] {
        &(*self.bytes).as_ref()[self.range.clone()]
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Record {}

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<record of {} bytes>", self.range.len())
    }
}

/// Symbol ids are `s_` + 24 hex digits (`index::symbol_id`): kept as their 12
/// bytes. A Go file's names are left out: Go imports name packages, so nothing
/// looks its definitions up by name; their ids, nesting and marks are what its
/// next symbol diff needs.
const IDS_PACKED: u8 = 1;
const NAMES_LEFT_OUT: u8 = 2;

/// A file's definitions, as the bytes of a record hold them (`put_symbols`).
fn put_symbols(buf: &mut Vec<u8>, f: &RFile) {
    if let Some(raw) = f.symbols.raw() {
        buf.extend_from_slice(raw);
        return;
    }
    let packed = f.symbols.iter().all(|s| packed_id(&s.id).is_some());
    let names = f.language != Language::Go;
    buf.push(if packed { IDS_PACKED } else { 0 } | if names { 0 } else { NAMES_LEFT_OUT });
    put_u32(buf, f.symbols.len() as u32);
    for s in f.symbols.iter() {
        match packed_id(&s.id) {
            Some(raw) if packed => buf.extend_from_slice(&raw),
            _ => put_str(buf, &s.id),
        }
        if names {
            put_str(buf, &s.qualified_name);
            put_str(buf, s.kind);
        }
    }
}

fn packed_id(id: &str) -> Option<[u8; 12]> {
    let hex = id.strip_prefix("s_").filter(|h| h.len() == 24)?;
    let mut out = [0u8; 12];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    // Only lower-case digits round-trip.
    (hex.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(out)
}

/// One file's record: its length, then what is read at every load, then its
/// definitions (length-prefixed, decoded when used), its nesting and its stat.
fn encode_record(buf: &mut Vec<u8>, f: &RFile, m: &FileMeta) {
    let at = buf.len();
    put_u32(buf, 0);
    for s in [&f.id, &f.path, &f.module, &f.package] {
        put_str(buf, s);
    }
    buf.push(language_code(f.language));
    put_str(buf, &m.content_hash);
    put_str(buf, &m.imports_text);
    buf.push(u8::from(f.path_mods));
    buf.extend_from_slice(&m.fingerprint);
    put_u32(buf, m.deps.len() as u32);
    for d in &m.deps {
        buf.extend_from_slice(&d.to_le_bytes());
    }
    put_u32(buf, m.externals.len() as u32);
    for x in &m.externals {
        put_str(buf, x);
    }
    for n in [m.symbols, m.edges, m.unresolved] {
        put_u32(buf, n);
    }
    let sym_at = buf.len();
    put_u32(buf, 0);
    put_symbols(buf, f);
    let sym_len = (buf.len() - sym_at - 4) as u32;
    buf[sym_at..sym_at + 4].copy_from_slice(&sym_len.to_le_bytes());
    put_u32(buf, m.parents.len() as u32);
    for p in &m.parents {
        put_u32(buf, *p);
    }
    put_u32(buf, m.marks.len() as u32);
    for m in &m.marks {
        buf.extend_from_slice(&m[0].to_le_bytes());
        buf.extend_from_slice(&m[1].to_le_bytes());
    }
    match &m.stat {
        None => buf.push(0),
        Some(st) => {
            buf.push(1);
            for n in [st.size, st.mtime_ns as u64, st.ctime_ns as u64, st.ino] {
                buf.extend_from_slice(&n.to_le_bytes());
            }
        }
    }
    let edges_at = buf.len();
    put_u32(buf, 0);
    put_edges(buf, &m.out_edges);
    let edges_len = (buf.len() - edges_at - 4) as u32;
    buf[edges_at..edges_at + 4].copy_from_slice(&edges_len.to_le_bytes());
    let len = (buf.len() - at - 4) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// One file's record (after its length), its imports and definitions left as
/// the bytes of `bytes` they are (`r.buf` is a prefix of `bytes`).
fn decode_record(r: &mut Reader<'_>, bytes: &Shared) -> Option<(RFile, FileMeta)> {
    let id = r.string()?;
    let path = r.string()?;
    let module = r.string()?;
    let package = r.string()?;
    let language = language_from_code(r.byte()?)?;
    let content_hash = r.string()?;
    let imports_at = r.at + 4;
    let imports_text = r.string()?;
    let imports_range = imports_at..imports_at + imports_text.len();
    let path_mods = r.byte()? != 0;
    let fingerprint: Fingerprint = r.bytes(16)?.try_into().ok()?;
    let nd = r.u32()? as usize;
    let mut deps = Vec::with_capacity(nd.min(r.buf.len() / 8));
    for _ in 0..nd {
        deps.push(r.u64()?);
    }
    let nx = r.u32()? as usize;
    let mut externals = Vec::with_capacity(nx.min(r.buf.len() / 4));
    for _ in 0..nx {
        externals.push(r.string()?);
    }
    let (n_symbols, n_edges, n_unresolved) = (r.u32()?, r.u32()?, r.u32()?);
    let sym_len = r.u32()? as usize;
    let sym_at = r.at;
    r.bytes(sym_len)?;
    // Checked now, so that a damaged state is refused at load and never when
    // its definitions are first used.
    Reader {
        buf: &r.buf[..sym_at + sym_len],
        at: sym_at,
    }
    .skip_symbols()?;
    let np = r.u32()? as usize;
    let mut parents = Vec::with_capacity(np.min(r.buf.len() / 4));
    for _ in 0..np {
        parents.push(r.u32()?);
    }
    let nm = r.u32()? as usize;
    let mut marks = Vec::with_capacity(nm.min(r.buf.len() / 16));
    for _ in 0..nm {
        marks.push([r.u64()?, r.u64()?]);
    }
    let stat = match r.byte()? {
        0 => None,
        _ => Some(FileStat {
            size: r.u64()?,
            mtime_ns: r.u64()? as i64,
            ctime_ns: r.u64()? as i64,
            ino: r.u64()?,
        }),
    };
    let edges_len = r.u32()? as usize;
    let edges_at = r.at;
    r.bytes(edges_len)?;
    let mut edges = Reader {
        buf: &r.buf[..edges_at + edges_len],
        at: edges_at,
    };
    edges.skip_edges()?;
    let file = RFile {
        id,
        path,
        language,
        module,
        package,
        imports: Lazy::encoded(bytes.clone(), imports_range, decode_imports),
        path_mods,
        symbols: Lazy::encoded(bytes.clone(), sym_at..sym_at + sym_len, decode_symbols),
    };
    let meta = FileMeta {
        content_hash,
        imports_text,
        fingerprint,
        deps,
        externals,
        symbols: n_symbols,
        edges: n_edges,
        unresolved: n_unresolved,
        parents,
        marks,
        stat,
        out_edges: Lazy::encoded(bytes.clone(), edges_at..edges_at + edges_len, decode_edges),
        record: None,
    };
    Some((file, meta))
}

/// A record's imports text, in the format of the File node's `imports`
/// property (`parse::encode_imports`; checked UTF-8 when the record was read).
fn decode_imports(b: &[u8]) -> Vec<RawImport> {
    super::parse::decode_imports(std::str::from_utf8(b).unwrap_or_default())
}

/// A file's import edges (`from` left empty), as a record holds them.
fn put_edges(buf: &mut Vec<u8>, edges: &Lazy<Vec<Edge>>) {
    if let Some(raw) = edges.raw() {
        buf.extend_from_slice(raw);
        return;
    }
    put_u32(buf, edges.len() as u32);
    for e in edges.iter() {
        let (label, to) = match &e.target {
            Target::Symbol(id) => (b'S', id),
            Target::File(id) => (b'F', id),
            Target::Package(dir) => (b'P', dir),
            Target::External(name) => (b'E', name),
        };
        buf.push(label);
        put_str(buf, to);
        put_str(buf, &e.to_name);
        buf.extend_from_slice(&e.line.to_le_bytes());
        put_str(buf, &e.alias);
    }
}

/// The edges section of a record (checked when the record was read).
fn decode_edges(b: &[u8]) -> Vec<Edge> {
    let mut out = Vec::new();
    Reader { buf: b, at: 0 }.edges(|e| out.push(e));
    out
}

/// The definitions section of a record (checked when the record was read).
fn decode_symbols(b: &[u8]) -> Vec<RSymbol> {
    Reader { buf: b, at: 0 }.symbols().unwrap_or_default()
}

fn put_u32(buf: &mut Vec<u8>, n: u32) {
    buf.extend_from_slice(&n.to_le_bytes());
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_u32(buf, s.len() as u32);
    buf.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.buf.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    fn byte(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
    fn str(&mut self) -> Option<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.bytes(n)?).ok()
    }
    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_string)
    }
    /// An edges section, each edge handed to `each`; `None` if it is damaged.
    fn edges(&mut self, mut each: impl FnMut(Edge)) -> Option<()> {
        let n = self.u32()? as usize;
        for _ in 0..n {
            let label = self.byte()?;
            let to = self.str()?;
            let to_name = self.str()?;
            let line = self.u64()? as i64;
            let alias = self.str()?;
            let target = match label {
                b'S' => Target::Symbol(to.to_string()),
                b'F' => Target::File(to.to_string()),
                b'P' => Target::Package(to.to_string()),
                b'E' => Target::External(to.to_string()),
                _ => return None,
            };
            each(Edge {
                from: String::new(),
                target,
                to_name: to_name.to_string(),
                line,
                alias: alias.to_string(),
            });
        }
        (self.at == self.buf.len()).then_some(())
    }
    /// Walks over an edges section as `edges` reads it, allocating nothing.
    fn skip_edges(&mut self) -> Option<()> {
        let n = self.u32()? as usize;
        for _ in 0..n {
            if !matches!(self.byte()?, b'S' | b'F' | b'P' | b'E') {
                return None;
            }
            self.str()?;
            self.str()?;
            self.u64()?;
            self.str()?;
        }
        (self.at == self.buf.len()).then_some(())
    }
    /// Walks over a definitions section as `symbols` reads it, allocating
    /// nothing; `None` if it is damaged.
    fn skip_symbols(&mut self) -> Option<()> {
        let flags = self.byte()?;
        let n = self.u32()? as usize;
        for _ in 0..n {
            if flags & IDS_PACKED != 0 {
                self.bytes(12)?;
            } else {
                self.str()?;
            }
            if flags & NAMES_LEFT_OUT == 0 {
                self.str()?;
                self.str()?;
            }
        }
        (self.at == self.buf.len()).then_some(())
    }
    fn symbols(&mut self) -> Option<Vec<RSymbol>> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let flags = self.byte()?;
        let n = self.u32()? as usize;
        let mut out = Vec::with_capacity(n.min(self.buf.len()));
        for _ in 0..n {
            let id = if flags & IDS_PACKED != 0 {
                let mut id = String::with_capacity(26);
                id.push_str("s_");
                for b in self.bytes(12)? {
                    id.push(HEX[usize::from(b >> 4)] as char);
                    id.push(HEX[usize::from(b & 15)] as char);
                }
                id
            } else {
                self.string()?
            };
            let (qualified_name, kind) = if flags & NAMES_LEFT_OUT != 0 {
                ("", "")
            } else {
                (self.str()?, self.str()?)
            };
            out.push(RSymbol {
                id: id.into(),
                qualified_name: qualified_name.into(),
                kind: crate::model::SymbolKind::word(kind),
            });
        }
        Some(out)
    }
}

const LANGUAGES: [Language; 6] = [
    Language::Rust,
    Language::Python,
    Language::TypeScript,
    Language::Tsx,
    Language::JavaScript,
    Language::Go,
];

fn language_code(l: Language) -> u8 {
    LANGUAGES.iter().position(|x| *x == l).unwrap_or(0) as u8
}

fn language_from_code(c: u8) -> Option<Language> {
    LANGUAGES.get(c as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ImportSpec;

    fn sample() -> RefState {
        let imports = vec![RawImport {
            line: 3,
            to_name: "crate::b".into(),
            alias: String::new(),
            reexport: false,
            spec: ImportSpec::RustMod {
                name: "b".into(),
                paths: vec!["x/b.rs".into()],
            },
            scope: String::new(),
        }];
        RefState {
            tag: "2026-01-01T00:00:00.000000001Z".into(),
            files: vec![
                RFile {
                    id: "r@m:a.rs".into(),
                    path: "a.rs".into(),
                    language: Language::Rust,
                    module: "a".into(),
                    package: "k".into(),
                    path_mods: true,
                    imports: Lazy::new(imports.clone()),
                    symbols: Lazy::new(vec![RSymbol {
                        id: "s_1".into(),
                        qualified_name: "a::f".into(),
                        kind: "fn",
                    }]),
                },
                RFile {
                    id: "r@m:p/x.go".into(),
                    path: "p/x.go".into(),
                    language: Language::Go,
                    module: "p".into(),
                    package: String::new(),
                    path_mods: false,
                    imports: Lazy::new(Vec::new()),
                    symbols: Lazy::new(vec![
                        RSymbol {
                            id: "s_0123456789abcdef01234567".into(),
                            qualified_name: "p.T".into(),
                            kind: "struct",
                        },
                        RSymbol {
                            id: "s_fedcba987654321000000000".into(),
                            qualified_name: "p.T.M".into(),
                            kind: "method",
                        },
                    ]),
                },
            ],
            meta: vec![
                FileMeta {
                    content_hash: "h".into(),
                    imports_text: super::super::parse::encode_imports(&imports),
                    fingerprint: [7; 16],
                    deps: vec![1, 2, u64::MAX],
                    externals: vec!["os".into()],
                    out_edges: Lazy::new(vec![
                        Edge {
                            from: String::new(),
                            target: Target::External("os".into()),
                            to_name: "os".into(),
                            line: 1,
                            alias: String::new(),
                        },
                        Edge {
                            from: String::new(),
                            target: Target::Symbol("s_9".into()),
                            to_name: "crate::b::g".into(),
                            line: -3,
                            alias: "h".into(),
                        },
                    ]),
                    symbols: 1,
                    edges: 3,
                    unresolved: 2,
                    parents: vec![FILE_PARENT],
                    marks: vec![[1, 2]],
                    stat: Some(FileStat {
                        size: 10,
                        mtime_ns: 1_700_000_000_123_456_789,
                        ctime_ns: -1,
                        ino: u64::MAX,
                    }),
                    record: None,
                },
                FileMeta {
                    content_hash: "g".into(),
                    imports_text: "[]".into(),
                    symbols: 2,
                    parents: vec![FILE_PARENT, 0],
                    marks: vec![[3, 4], [5, 6]],
                    ..FileMeta::default()
                },
            ],
        }
    }

    #[test]
    fn round_trips_lazily_and_rejects_damage() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("s.bin");
        let state = sample();
        state.save(&path).expect("save");
        let back = RefState::load(&path).expect("load");
        assert_eq!(back.tag, state.tag);
        // Imports and definitions stay encoded until used, and decode to what
        // was saved.
        assert!(!back.files[0].imports.is_decoded() && !back.files[0].symbols.is_decoded());
        assert_eq!(*back.files[0].imports, *state.files[0].imports);
        assert_eq!(*back.files[0].symbols, *state.files[0].symbols);
        assert!(back.files[0].path_mods && !back.files[1].path_mods);
        assert!(!back.meta[0].out_edges.is_decoded());
        assert_eq!(*back.meta[0].out_edges, *state.meta[0].out_edges);
        let strip = |m: &[FileMeta]| {
            m.iter()
                .map(|m| FileMeta {
                    record: None,
                    ..m.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&back.meta), strip(&state.meta));
        assert!(back.meta.iter().all(|m| m.record.is_some()));
        // Go: ids (packed) and nesting come back, names are left out.
        let ids = |f: &RFile| f.symbols.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&back.files[1]), ids(&state.files[1]));
        assert!(
            back.files[1]
                .symbols
                .iter()
                .all(|s| s.qualified_name.is_empty())
        );
        assert_eq!(
            back.meta[1].tree(&back.files[1]).expect("tree")[1]
                .1
                .as_deref(),
            Some("s_0123456789abcdef01234567")
        );
        // Saved again unchanged, the records are copied: the same bytes.
        let again = dir.path().join("again.bin");
        back.save(&again).expect("save again");
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(std::fs::read(&again).expect("read again"), bytes);
        // A changed entry without its record is encoded anew.
        let mut changed = RefState::load(&again).expect("load again");
        changed.meta[0].edges = 9;
        changed.meta[0].record = None;
        changed.save(&again).expect("save changed");
        let reread = RefState::load(&again).expect("reread");
        assert_eq!(reread.meta[0].edges, 9);
        assert_eq!(*reread.files[0].symbols, *state.files[0].symbols);
        // Damage anywhere is refused.
        for at in [bytes.len() / 2, bytes.len() - 1, 12] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            std::fs::write(&path, &bad).expect("write");
            assert!(RefState::load(&path).is_none(), "damage at {at}");
        }
        std::fs::write(&path, &bytes[..bytes.len() - 3]).expect("write");
        assert!(RefState::load(&path).is_none());
    }
}
