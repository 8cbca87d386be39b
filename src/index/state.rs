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
//! put in place only after that state committed; a kill in between leaves a
//! tag that no longer matches, which the next run notices.
//!
//! It is one whole state (every file) followed by changes appended to it, each
//! the entries that changed and the paths that went, under the tag of the run
//! that made them: a run that changed a few files of a 10k-file ref appends a
//! few kilobytes instead of writing 70 MB again. When the changes outgrow a
//! quarter of the whole, the next save writes the whole state anew (a temp
//! file, renamed). An append that did not finish (a kill) fails its checksum, and
//! the next run reads the graph instead.
//!
//! A file whose content is as it was but whose resolution changed (an importer
//! re-resolved after the module it imports moved) is appended as a patch of
//! its record, not as a new record: its fingerprint, counts, externals and
//! edges, and its lookup keys as the ones it lost and gained. A rename in libc
//! re-resolves ~330 files there, each with ~2,000 keys and often thousands of
//! definitions; as whole records they appended 12 MB, and every second such
//! rename rewrote the whole state.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::spill::Spill;
use crate::model::lazy::{Lazy, Shared};
use crate::model::sites::{Chain, Fact, FactKind, FileSites, RawSite, SiteKind, Step};
use crate::model::{Language, RawImport, ids};
use crate::resolve::{Callables, Edge, Id, RFile, RSymbol, Rel, SiteEdge, Target, Tier};
use crate::source::walk::FileStat;
use crate::store::graph::MARK_BYTES;

/// The format, and the resolution rules its edges and lookup keys were made
/// by: 45 keeps the type arguments of inherent impls and turbofish calls
/// (`FactKind::ImplSelfArgs`, `TYPE_ARGS`), 46 the elements of tuples
/// (`TUPLE_ELEMENT`, `Returns` facts by position); an older state does not
/// read as one, so its ref is built again.
const MAGIC: &[u8; 8] = b"CRUXST46";
/// Starts each change appended after the whole state.
const CHANGE: &[u8; 8] = b"CRUXCH20";

/// Fingerprint of one file's resolved import edges.
pub type Fingerprint = [u8; 16];

/// What an incremental run remembers of a ref, per file (sorted by path).
#[derive(Debug, Clone, Default)]
pub struct RefState {
    /// `indexed_at` of the graph state this describes.
    pub tag: String,
    pub files: Vec<RFile>,
    pub meta: Vec<FileMeta>,
    /// The state file this was read from or last saved to, which a save to
    /// the same place appends the changes to.
    pub origin: Option<Origin>,
}

/// A state file as a state read it (or saved it): a save appends to it only
/// while it is still that file, as long.
#[derive(Debug, Clone)]
pub struct Origin {
    path: std::path::PathBuf,
    dev: u64,
    ino: u64,
    len: u64,
    /// The length of its whole state; the rest is changes.
    whole: u64,
    /// The paths it holds, sorted.
    paths: std::sync::Arc<Vec<String>>,
    /// The patches its changes hold (each load applies them all).
    patches: usize,
}

/// Patches appended before the next save writes the whole state: applying
/// them costs every load ~5 µs each (an entry's ~2,000 lookup keys in libc),
/// so at most ~20 ms, against a whole write (~100–250 ms beside the graph's
/// checkpoint) every dozen renames in libc instead of every second one.
const PATCHES_BEFORE_WHOLE: usize = 4096;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMeta {
    pub content_hash: String,
    /// The raw imports (`parse::encode_imports`): read when the file
    /// changes, so kept as the state's packed bytes until then (8.6 MB
    /// unpacked on the crates, a tenth of their state).
    pub imports_text: Lazy<String>,
    pub fingerprint: Fingerprint,
    /// The lookup keys its resolution used (see `resolve::key`), sorted.
    pub deps: Vec<u32>,
    /// The names of the External nodes its edges point at.
    pub externals: Vec<String>,
    /// Its import edges as written (`from` left empty: it is the file), which
    /// the next run that re-resolves the file diffs its new edges against.
    pub out_edges: Lazy<Vec<Edge>>,
    /// Its call-graph edges (`resolve::SiteEdge`), diffed like `out_edges`.
    pub site_edges: Lazy<Vec<SiteEdge>>,
    /// Its definitions, import edges and edges to External nodes.
    pub symbols: u32,
    pub edges: u32,
    pub unresolved: u32,
    /// The file's symbols' parents and marks: read when the file changes, so
    /// kept as the state's bytes until then (20 bytes a symbol, 52 MiB of a
    /// server's 2.75M-symbol state).
    pub nesting: Lazy<Nesting>,
    /// The file's stat when its content was last read, if it can be trusted
    /// (see `FileStat`): a run skips reading a file that still has it.
    pub stat: Option<FileStat>,
    /// The file's record in the state file it was read from, written back as
    /// it is (`RefState::save_aside`). Whoever changes the file's entry drops
    /// it, except for its resolution (`record_resolution`).
    pub record: Option<Record>,
    /// The record's resolution is not the entry's: patches appended after it
    /// (in the file) hold the entry's.
    pub patched: bool,
    /// The resolution changed since the file held it: the lookup keys the file
    /// holds, which the next append patches against.
    pub deps_saved: Option<Vec<u32>>,
}

impl FileMeta {
    /// Whether the state file holds this entry as it is: its record, and the
    /// patches after it if any.
    fn saved_as_is(&self) -> bool {
        self.record.is_some() && self.deps_saved.is_none()
    }

    /// The resolution is about to change (the content stays): with a record,
    /// keeps the keys the file holds so the next append can patch the record.
    pub fn record_resolution(&mut self) {
        if self.record.is_some() && self.deps_saved.is_none() {
            self.deps_saved = Some(self.deps.clone());
        }
    }
}

/// Where, in a saved state's bytes, each entry encoded anew is (by position
/// in `RefState::files`).
type Placed = Vec<(usize, std::ops::Range<usize>)>;

/// A state made ready beside its place (`RefState::save_aside`): a whole
/// state written to a temp file, or the changes to append.
pub struct SavedAside {
    path: std::path::PathBuf,
    how: Saving,
    bytes: Shared,
    encoded: Placed,
    /// Entries appended as patches of their records.
    patched: Vec<usize>,
}

impl std::fmt::Debug for SavedAside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedAside")
            .field("path", &self.path)
            .field("how", &self.how)
            .field("bytes", &(*self.bytes).as_ref().len())
            .field("encoded", &self.encoded.len())
            .field("patched", &self.patched)
            .finish()
    }
}

#[derive(Debug)]
enum Saving {
    Whole {
        tmp: std::path::PathBuf,
    },
    /// To be appended to the file while it is (dev, ino, len).
    Append {
        dev: u64,
        ino: u64,
        len: u64,
    },
}

impl SavedAside {
    /// Puts a whole state written aside (`RefState::save_whole_aside`) in
    /// its place without the state itself.
    pub fn put_alone(&self) -> std::io::Result<()> {
        match self.how {
            Saving::Whole { .. } => self.put_in_place().map(drop),
            Saving::Append { .. } => Err(std::io::Error::other(
                "changes are appended with their state",
            )),
        }
    }

    /// Renames the whole state over the old one, or appends the changes to
    /// it (refused when another wrote it meanwhile); the file's (dev, ino,
    /// len) after.
    fn put_in_place(&self) -> std::io::Result<(u64, u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        match &self.how {
            Saving::Whole { tmp } => {
                std::fs::rename(tmp, &self.path)?;
                let m = std::fs::metadata(&self.path)?;
                Ok((m.dev(), m.ino(), m.len()))
            }
            Saving::Append { dev, ino, len } => {
                let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
                let m = f.metadata()?;
                if (m.dev(), m.ino(), m.len()) != (*dev, *ino, *len) {
                    return Err(std::io::Error::other(
                        "the state file changed since it was read",
                    ));
                }
                let bytes = (*self.bytes).as_ref();
                f.write_all(bytes)?;
                Ok((*dev, *ino, len + bytes.len() as u64))
            }
        }
    }
}

/// No parent symbol: contained by the file.
pub const FILE_PARENT: u32 = u32::MAX;

/// How a file's symbols nest, and what each held when it was stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nesting {
    /// For each of the file's `RFile::symbols`, the position of its parent
    /// among them (`FILE_PARENT`: the file). Empty when not known.
    pub parents: Vec<u32>,
    /// For each symbol, `graph::symbol_marks` (empty when not known).
    pub marks: Vec<crate::store::graph::SymbolMarks>,
}

impl FileMeta {
    /// The file's stored symbols as (id, parent id), when the tree is known.
    pub fn tree(
        &self,
        file: &RFile,
    ) -> Option<Vec<(String, Option<String>, crate::store::graph::SymbolMarks)>> {
        let n = file.symbols.len();
        let nesting = self.nesting.value_or_decoded();
        let Nesting { parents, marks } = &*nesting;
        (parents.len() == n && marks.len() == n && self.symbols as usize == n).then(|| {
            file.symbols
                .iter()
                .zip(parents)
                .zip(marks)
                .map(|((s, &p), m)| {
                    let parent = (p != FILE_PARENT)
                        .then(|| file.symbols.get(p as usize).map(|x| x.id.to_string()))
                        .flatten();
                    (s.id.to_string(), parent, *m)
                })
                .collect()
        })
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
    /// Saves the state (see `save_aside`) and remembers the file as it is now,
    /// so that the next save appends to it.
    pub fn save(&mut self, path: &Path) -> std::io::Result<()> {
        let aside = self.save_aside(path)?;
        let (saved, (dev, ino, len)) = self.put(aside)?;
        // Entries encoded now are the file's records from now on.
        let bytes: Shared = saved.bytes.clone();
        for (i, range) in &saved.encoded {
            let m = &mut self.meta[*i];
            m.record = Some(Record {
                bytes: bytes.clone(),
                range: range.clone(),
            });
            m.patched = false;
            m.deps_saved = None;
        }
        for &i in &saved.patched {
            let m = &mut self.meta[i];
            m.patched = true;
            m.deps_saved = None;
        }
        let (whole, patches) = match (&saved.how, &self.origin) {
            (Saving::Append { .. }, Some(o)) => (o.whole, o.patches + saved.patched.len()),
            _ => (len, 0),
        };
        self.origin = Some(Origin {
            path: path.to_path_buf(),
            dev,
            ino,
            len,
            whole,
            paths: paths_of(&self.files),
            patches,
        });
        Ok(())
    }

    /// Puts a state made ready by `save_aside` in its place; returns what was
    /// put (its bytes, for a caller that would rather not free them).
    pub fn publish(&self, aside: SavedAside) -> std::io::Result<SavedAside> {
        self.put(aside).map(|(put, _)| put)
    }

    /// As `publish`: an append the file refuses (it was replaced or removed
    /// since it was read) becomes a whole write. What was put, and the file's
    /// (dev, ino, len) after.
    fn put(&self, aside: SavedAside) -> std::io::Result<(SavedAside, (u64, u64, u64))> {
        match aside.put_in_place() {
            Ok(at) => Ok((aside, at)),
            Err(e) if matches!(aside.how, Saving::Append { .. }) => {
                tracing::debug!("cannot append to the resolution state ({e}); writing it whole");
                let whole = self.whole(&aside.path)?;
                let at = whole.put_in_place()?;
                Ok((whole, at))
            }
            Err(e) => Err(e),
        }
    }

    /// `save_aside` as a whole new file, whatever the state was read from:
    /// what `SavedAside::put_alone` puts in place once the state is gone.
    pub fn save_whole_aside(&self, path: &Path) -> std::io::Result<SavedAside> {
        self.whole(path)
    }

    /// Makes the state ready beside `path`, not yet in its place: a run does
    /// this while its graph write commits, and `publish`es it once committed.
    /// When `path` is the file the state was read from, and its changes stay
    /// small beside it, only the changes are kept, to be appended (files whose
    /// entry changed, paths that went). Else the whole state is written to a
    /// temp file; an entry whose record was read from a state and did not
    /// change since is copied as it was.
    pub fn save_aside(&self, path: &Path) -> std::io::Result<SavedAside> {
        let t = std::time::Instant::now();
        let saved = match self.changes_since_origin(path) {
            Some(saved) => saved,
            None => self.whole(path)?,
        };
        tracing::debug!(
            bytes = (*saved.bytes).as_ref().len(),
            append = matches!(saved.how, Saving::Append { .. }),
            ms = t.elapsed().as_millis() as u64,
            "wrote the resolution state aside"
        );
        Ok(saved)
    }

    /// The changes to append to `path`, when it is this state's origin and
    /// they stay under a quarter of its whole state.
    fn changes_since_origin(&self, path: &Path) -> Option<SavedAside> {
        let o = self.origin.as_ref().filter(|o| o.path == path)?;
        let mut buf = Vec::with_capacity(64 << 10);
        buf.extend_from_slice(CHANGE);
        put_u32(&mut buf, 0);
        let body_at = buf.len();
        put_str(&mut buf, &self.tag);
        // The paths gone: in the origin, not here (both sorted).
        let mut gone: Vec<&str> = Vec::new();
        let mut here = self.files.iter().map(|f| f.path.as_str()).peekable();
        for p in o.paths.iter() {
            while here.next_if(|h| *h < p.as_str()).is_some() {}
            if here.peek() != Some(&p.as_str()) {
                gone.push(p);
            }
        }
        put_u32(&mut buf, gone.len() as u32);
        for p in gone {
            put_str(&mut buf, p);
        }
        let n_at = buf.len();
        put_u32(&mut buf, 0);
        let mut n = 0u32;
        let mut encoded = Vec::new();
        // An entry goes in when it changed, or when the file does not hold its
        // path (it came back, with the record it had before it went).
        let mut patched = Vec::new();
        let mut held = o.paths.iter().map(String::as_str).peekable();
        for (i, (f, m)) in self.files.iter().zip(&self.meta).enumerate() {
            while held.next_if(|h| *h < f.path.as_str()).is_some() {}
            if m.record.is_some() && held.peek() == Some(&f.path.as_str()) {
                if m.deps_saved.is_some() {
                    patched.push(i);
                }
                continue;
            }
            let at = buf.len();
            encode_record(&mut buf, f, m);
            encoded.push((i, at..buf.len()));
            n += 1;
        }
        buf[n_at..n_at + 4].copy_from_slice(&n.to_le_bytes());
        put_u32(&mut buf, patched.len() as u32);
        for &i in &patched {
            encode_patch(&mut buf, &self.files[i], &self.meta[i]);
        }
        let body_len = (buf.len() - body_at) as u32;
        buf[body_at - 4..body_at].copy_from_slice(&body_len.to_le_bytes());
        let sum = crc32fast::hash(&buf[body_at..]);
        buf.extend_from_slice(&sum.to_le_bytes());
        let changes = o.len - o.whole + buf.len() as u64;
        if changes > (o.whole / 4).max(1 << 20) || o.patches + patched.len() > PATCHES_BEFORE_WHOLE
        {
            return None;
        }
        Some(SavedAside {
            path: path.to_path_buf(),
            how: Saving::Append {
                dev: o.dev,
                ino: o.ino,
                len: o.len,
            },
            bytes: std::sync::Arc::new(buf),
            encoded,
            patched,
        })
    }

    /// The whole state, written to a temp file beside `path`.
    fn whole(&self, path: &Path) -> std::io::Result<SavedAside> {
        use rayon::prelude::*;
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&0u64.to_le_bytes());
        put_str(&mut head, &self.tag);
        put_u32(&mut head, self.files.len() as u32);
        // Files encoded side by side, a batch of chunks at a time, each batch
        // written in order as soon as it is done: a large repo's state is
        // hundreds of megabytes, never held whole (the file is mapped back
        // for the records that point into it). The length in the head is
        // known last: patched in, its checksum combined with the body's.
        const CHUNK: usize = 512;
        const BATCH: usize = 8;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("tmp");
        let mut body_sum = crc32fast::Hasher::new();
        let mut encoded = Vec::new();
        let file = {
            // Read too: it is mapped once written.
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            let mut f = std::io::BufWriter::with_capacity(1 << 20, file);
            f.write_all(&head)?;
            let mut base = head.len();
            let encode_chunk = |chunk: usize| {
                let (from, to) = (chunk * CHUNK, ((chunk + 1) * CHUNK).min(self.files.len()));
                let mut buf = Vec::with_capacity(256 << 10);
                let mut at_of = Vec::new();
                for (i, (f, m)) in self.files[from..to]
                    .iter()
                    .zip(&self.meta[from..to])
                    .enumerate()
                {
                    match &m.record {
                        Some(r) if m.saved_as_is() && !m.patched => {
                            buf.extend_from_slice(r.bytes())
                        }
                        _ => {
                            let at = buf.len();
                            encode_record(&mut buf, f, m);
                            at_of.push((from + i, at..buf.len()));
                        }
                    }
                }
                (buf, at_of)
            };
            let chunks = self.files.len().div_ceil(CHUNK);
            for batch in (0..chunks).step_by(BATCH) {
                let parts: Vec<(Vec<u8>, Placed)> = (batch..(batch + BATCH).min(chunks))
                    .into_par_iter()
                    .map(encode_chunk)
                    .collect();
                for (part, at) in parts {
                    encoded.extend(
                        at.into_iter()
                            .map(|(i, r)| (i, base + r.start..base + r.end)),
                    );
                    body_sum.update(&part);
                    f.write_all(&part)?;
                    base += part.len();
                }
            }
            let whole = (base + 4) as u64;
            head[MAGIC.len()..MAGIC.len() + 8].copy_from_slice(&whole.to_le_bytes());
            let mut sum = crc32fast::Hasher::new();
            sum.update(&head);
            sum.combine(&body_sum);
            f.write_all(&sum.finalize().to_le_bytes())?;
            let mut file = f.into_inner().map_err(|e| e.into_error())?;
            use std::io::{Seek, SeekFrom};
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&head)?;
            file
        };
        // SAFETY: the temp file is cruxe's own, renamed into place or
        // dropped, never written again (as `load` maps a state).
        let map = unsafe { memmap2::Mmap::map(&file) }?;
        Ok(SavedAside {
            path: path.to_path_buf(),
            how: Saving::Whole { tmp },
            bytes: std::sync::Arc::new(map),
            encoded,
            patched: Vec::new(),
        })
    }

    /// Reads a state; `None` when it is missing or damaged. The file is mapped,
    /// not copied, and each file's imports and definitions stay encoded until
    /// used (`Lazy`).
    pub fn load(path: &Path) -> Option<RefState> {
        use std::os::unix::fs::MetadataExt;
        let t = std::time::Instant::now();
        let file = std::fs::File::open(path).ok()?;
        let stat = file.metadata().ok()?;
        // A state is replaced by rename or appended to, never changed in
        // place, so the mapped bytes stay what they were for as long as they
        // are mapped.
        // SAFETY: see above; the mapping is read only.
        let map =
            std::sync::Arc::new(unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?);
        let bytes: Shared = map.clone();
        let buf: &[u8] = (*bytes).as_ref();
        let head = MAGIC.len() + 8;
        if buf.len() < head + 4 || &buf[..MAGIC.len()] != MAGIC {
            return None;
        }
        let whole = u64::from_le_bytes(buf[MAGIC.len()..head].try_into().ok()?) as usize;
        if whole < head + 4 || whole > buf.len() {
            return None;
        }
        let (body, sum) = buf[..whole].split_at(whole - 4);
        if crc32fast::hash(body).to_le_bytes() != sum {
            return None;
        }
        let mut r = Reader {
            buf: body,
            at: head,
        };
        let mut tag = r.string()?;
        let n = r.u32()? as usize;
        let mut entries: Vec<Option<(RFile, FileMeta)>> = Vec::with_capacity(n.min(body.len()));
        for _ in 0..n {
            entries.push(Some(read_record(&mut r, &bytes)?));
        }
        if r.at != body.len() {
            return None;
        }
        // The changes appended since, in order.
        let mut at = whole;
        let mut by_path: Option<HashMap<String, usize>> = None;
        let mut added = false;
        let mut patches = 0;
        while at < buf.len() {
            let len_at = at.checked_add(CHANGE.len())?;
            if buf.get(at..len_at)? != CHANGE {
                return None;
            }
            let body_at = len_at + 4;
            let len = u32::from_le_bytes(buf.get(len_at..body_at)?.try_into().ok()?) as usize;
            let end = body_at.checked_add(len)?;
            let sum = buf.get(end..end.checked_add(4)?)?;
            if crc32fast::hash(&buf[body_at..end]).to_le_bytes() != sum {
                return None;
            }
            let by_path = by_path.get_or_insert_with(|| {
                entries
                    .iter()
                    .enumerate()
                    .filter_map(|(i, e)| Some((e.as_ref()?.0.path.clone(), i)))
                    .collect()
            });
            let mut r = Reader {
                buf: &buf[..end],
                at: body_at,
            };
            tag = r.string()?;
            for _ in 0..r.u32()? {
                if let Some(i) = by_path.remove(r.str()?) {
                    entries[i] = None;
                }
            }
            for _ in 0..r.u32()? {
                let (f, m) = read_record(&mut r, &bytes)?;
                match by_path.get(&f.path) {
                    Some(&i) => entries[i] = Some((f, m)),
                    None => {
                        by_path.insert(f.path.clone(), entries.len());
                        entries.push(Some((f, m)));
                        added = true;
                    }
                }
            }
            for _ in 0..r.u32()? {
                patches += 1;
                let i = *by_path.get(r.str()?)?;
                let (_, m) = entries[i].as_mut()?;
                read_patch(&mut r, &bytes, m)?;
            }
            if r.at != end {
                return None;
            }
            at = end + 4;
        }
        let mut entries: Vec<(RFile, FileMeta)> = entries.into_iter().flatten().collect();
        if added {
            entries.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        }
        let (files, meta): (Vec<RFile>, Vec<FileMeta>) = entries.into_iter().unzip();
        tracing::debug!(
            bytes = buf.len(),
            changes = buf.len() - whole,
            ms = t.elapsed().as_millis() as u64,
            "read the resolution state"
        );
        let paths = paths_of(&files);
        // Every page was read (the checksums); a run reads back a few of them.
        // Unmapped from this process (they stay in the page cache, where the
        // next read finds them), they are not counted in its resident size: a
        // server holds a 160 MB state of the crates corpus between runs.
        // SAFETY: a shared read-only mapping of a file: pages read after this
        // are read from the file again, which is never changed in place.
        let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        Some(RefState {
            tag,
            files,
            meta,
            origin: Some(Origin {
                path: path.to_path_buf(),
                dev: stat.dev(),
                ino: stat.ino(),
                len: buf.len() as u64,
                whole: whole as u64,
                paths,
                patches,
            }),
        })
    }
}

impl RefState {
    /// Where `path`'s entry is (the entries are in path order).
    pub fn position(&self, path: &str) -> Option<usize> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
    }
}

impl super::parse::Known for RefState {
    fn hash(&self, path: &str) -> Option<&str> {
        self.position(path)
            .map(|i| self.meta[i].content_hash.as_str())
    }

    fn stat(&self, path: &str) -> Option<&FileStat> {
        self.position(path).and_then(|i| self.meta[i].stat.as_ref())
    }
}

/// The paths of `files`, as an `Origin` keeps them.
fn paths_of(files: &[RFile]) -> std::sync::Arc<Vec<String>> {
    std::sync::Arc::new(files.iter().map(|f| f.path.clone()).collect())
}

/// One record (its length, then its entry) at `r`, which keeps its bytes.
fn read_record(r: &mut Reader<'_>, bytes: &Shared) -> Option<(RFile, FileMeta)> {
    let start = r.at;
    let len = r.u32()? as usize;
    let end = start.checked_add(4 + len).filter(|e| *e <= r.buf.len())?;
    let mut rec = Reader {
        buf: &r.buf[..end],
        at: start + 4,
    };
    let (f, mut m) = decode_record(&mut rec, bytes)?;
    if rec.at != end {
        return None;
    }
    m.record = Some(Record {
        bytes: bytes.clone(),
        range: start..end,
    });
    r.at = end;
    Some((f, m))
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

/// Symbol ids are kept as their 9 bytes (`model::ids`), or not at all when
/// they are what `ids::definition_id` makes of the file and each definition
/// (`IDS_DERIVED`: the repo, ref and path are kept instead, once): random,
/// 9 bytes do not compress, and they were 6 of the crates' 13 MB of
/// definitions. Every file's names are kept (calls look Go's definitions up
/// by name too); a record without them (`NAMES_LEFT_OUT`) is still read.
const IDS_PACKED: u8 = 1;
const NAMES_LEFT_OUT: u8 = 2;
const IDS_DERIVED: u8 = 4;

/// A file's definitions, as the bytes of a record hold them (`put_symbols`);
/// `file` is its id and path.
fn put_symbols(buf: &mut Vec<u8>, symbols: &[RSymbol], (file_id, path): (&str, &str)) {
    if let Some((repo, ref_name)) = derived_from(symbols, file_id, path) {
        buf.push(IDS_DERIVED);
        put_u32(buf, symbols.len() as u32);
        for s in [repo, ref_name, path] {
            put_str(buf, s);
        }
        for s in symbols {
            put_str(buf, &s.qualified_name);
            put_str(buf, s.kind);
        }
        return;
    }
    let packed = symbols.iter().all(|s| ids::pack(&s.id).is_some());
    buf.push(if packed { IDS_PACKED } else { 0 });
    put_u32(buf, symbols.len() as u32);
    for s in symbols {
        match ids::pack(&s.id) {
            Some(raw) if packed => buf.extend_from_slice(&raw),
            _ => put_str(buf, &s.id),
        }
        put_str(buf, &s.qualified_name);
        put_str(buf, s.kind);
    }
}

/// The repo and ref of a file (`graph::file_id`: `repo@ref:path`) whose
/// definitions' ids are all `ids::definition_id`'s, if they are. Checked, not
/// assumed: an `@` in a repo name splits the id more than one way, and a kind
/// that is no word of the contract's is kept as "".
fn derived_from<'a>(
    symbols: &[RSymbol],
    file_id: &'a str,
    path: &str,
) -> Option<(&'a str, &'a str)> {
    let at = file_id.strip_suffix(path)?.strip_suffix(':')?;
    let ordinals = ids::ordinals(symbols.iter().map(|s| (&*s.qualified_name, s.kind)));
    at.match_indices('@')
        .map(|(i, _)| (&at[..i], &at[i + 1..]))
        .find(|(repo, ref_name)| {
            symbols.iter().zip(&ordinals).all(|(s, &n)| {
                !s.kind.is_empty()
                    && *s.id
                        == ids::definition_id(repo, ref_name, path, s.kind, &s.qualified_name, n)
            })
        })
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
    put_packed(buf, &m.imports_text, |buf| {
        buf.extend_from_slice(m.imports_text.value_or_decoded().as_bytes())
    });
    buf.push(u8::from(f.path_mods));
    buf.extend_from_slice(&m.fingerprint);
    put_keys(buf, &m.deps);
    put_strs(buf, &m.externals);
    for n in [m.symbols, m.edges, m.unresolved] {
        put_u32(buf, n);
    }
    put_packed(buf, &f.symbols, |buf| {
        put_symbols(buf, &f.symbols, (&f.id, &f.path))
    });
    put_nesting(buf, &m.nesting);
    match &m.stat {
        None => buf.push(0),
        Some(st) => {
            buf.push(1);
            for n in [st.size, st.mtime_ns as u64, st.ctime_ns as u64, st.ino] {
                buf.extend_from_slice(&n.to_le_bytes());
            }
        }
    }
    put_packed(buf, &f.callables, |buf| put_callables(buf, &f.callables));
    put_edges_section(buf, &m.out_edges);
    put_packed(buf, &f.sites, |buf| put_sites(buf, &f.sites));
    put_packed(buf, &m.site_edges, |buf| {
        put_site_edge_list(buf, &m.site_edges)
    });
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
    // Packed: the raw imports' JSON was a tenth of the state (8.6 MB on
    // the crates), and a run reads only its changed files'.
    let imports_len = r.u32()? as usize;
    let imports_range = r.at..r.at + imports_len;
    r.bytes(imports_len)?;
    let imports_text = Lazy::packed(bytes.clone(), imports_range.clone(), decode_text);
    let path_mods = r.byte()? != 0;
    let fingerprint: Fingerprint = r.bytes(16)?.try_into().ok()?;
    let deps = r.keys()?;
    let externals = r.strings()?;
    let (n_symbols, n_edges, n_unresolved) = (r.u32()?, r.u32()?, r.u32()?);
    let sym_len = r.u32()? as usize;
    let sym_at = r.at;
    // The definitions and edges sections are decoded when first used, and not
    // walked here: the checksum of the state (or of the change holding the
    // record) has refused a damaged one already, and walking them cost a
    // fifth of every CLI run's read of the state (UTF-8 checks of 600k names).
    r.bytes(sym_len)?;
    // Walked over to find its end (a byte a parent, most of them), decoded
    // when the file changes.
    let nesting_at = r.at;
    for _ in 0..r.u32()? {
        r.var()?;
    }
    let nm = r.u32()? as usize;
    r.bytes(nm.checked_mul(2 * MARK_BYTES)?)?;
    let nesting = Lazy::encoded(bytes.clone(), nesting_at..r.at, decode_nesting);
    let stat = match r.byte()? {
        0 => None,
        _ => Some(FileStat {
            size: r.u64()?,
            mtime_ns: r.u64()? as i64,
            ctime_ns: r.u64()? as i64,
            ino: r.u64()?,
        }),
    };
    let callables = r.section(bytes, decode_callables)?;
    let out_edges = r.edges_section(bytes)?;
    let sites = r.section(bytes, decode_sites)?;
    let site_edges = r.section(bytes, decode_site_edges)?;
    let file = RFile {
        id,
        path,
        language,
        module,
        package,
        imports: Lazy::packed(bytes.clone(), imports_range, decode_imports),
        path_mods,
        symbols: Lazy::packed(bytes.clone(), sym_at..sym_at + sym_len, decode_symbols),
        callables,
        sites,
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
        nesting,
        stat,
        out_edges,
        site_edges,
        record: None,
        patched: false,
        deps_saved: None,
    };
    Some((file, meta))
}

/// A patch of a file's record (after its path): the entry's resolution, its
/// lookup keys as those it no longer has and those it gained since the state
/// file's view of it (`deps_saved`).
fn encode_patch(buf: &mut Vec<u8>, f: &RFile, m: &FileMeta) {
    put_str(buf, &f.path);
    buf.extend_from_slice(&m.fingerprint);
    for n in [m.edges, m.unresolved] {
        put_u32(buf, n);
    }
    put_strs(buf, &m.externals);
    let before = m.deps_saved.as_deref().unwrap_or_default();
    let (lost, gained) = sorted_difference(before, &m.deps);
    for keys in [lost, gained] {
        put_keys(buf, &keys);
    }
    put_edges_section(buf, &m.out_edges);
    put_packed(buf, &m.site_edges, |buf| {
        put_site_edge_list(buf, &m.site_edges)
    });
}

/// Applies a patch (`encode_patch`, after its path) to the entry it names.
fn read_patch(r: &mut Reader<'_>, bytes: &Shared, m: &mut FileMeta) -> Option<()> {
    m.fingerprint = r.bytes(16)?.try_into().ok()?;
    m.edges = r.u32()?;
    m.unresolved = r.u32()?;
    m.externals = r.strings()?;
    let (lost, gained) = (r.keys()?, r.keys()?);
    m.deps = patched_keys(&m.deps, &lost, &gained)?;
    m.out_edges = r.edges_section(bytes)?;
    m.site_edges = r.section(bytes, decode_site_edges)?;
    m.patched = true;
    Some(())
}

/// `keys` without `lost`, with `gained` (all sorted; `None` if they are not, a
/// damaged patch): one pass, as patches pile up until the next whole write and
/// every load applies them all.
fn patched_keys(keys: &[u32], lost: &[u32], gained: &[u32]) -> Option<Vec<u32>> {
    let sorted = |k: &[u32]| k.windows(2).all(|w| w[0] < w[1]);
    if !sorted(lost) || !sorted(gained) {
        return None;
    }
    let mut lost = lost.iter().peekable();
    let kept = keys.iter().filter(|k| {
        while lost.next_if(|l| *l < *k).is_some() {}
        lost.peek() != Some(k)
    });
    let mut out = Vec::with_capacity(keys.len() + gained.len());
    let mut gained = gained.iter().peekable();
    for &k in kept {
        while let Some(g) = gained.next_if(|g| **g < k) {
            out.push(*g);
        }
        if gained.peek() == Some(&&k) {
            gained.next();
        }
        out.push(k);
    }
    out.extend(gained);
    Some(out)
}

/// Whether every element of `a` is in `b` (both sorted).
pub fn is_subset(a: &[u32], b: &[u32]) -> bool {
    let mut b = b.iter();
    a.iter().all(|x| b.any(|y| y == x))
}

/// What is in `a` and not in `b`, and what is in `b` and not in `a` (both
/// sorted).
fn sorted_difference(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_a.push(*x);
                i += 1;
            }
            (Some(x), None) => {
                only_a.push(*x);
                i += 1;
            }
            (_, Some(y)) => {
                only_b.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    (only_a, only_b)
}

/// A record's imports text (`parse::encode_imports`), unpacked; it was
/// written as UTF-8 and its checksum checked when the record was read.
fn decode_text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn decode_imports(b: &[u8]) -> Vec<RawImport> {
    super::parse::decode_imports(std::str::from_utf8(b).unwrap_or_default())
}

/// A file's import edges, packed so a reader can leave them so
/// (`Reader::edges_section`).
fn put_edges_section(buf: &mut Vec<u8>, edges: &Lazy<Vec<Edge>>) {
    put_packed(buf, edges, |buf| put_edges(buf, edges));
}

/// Lookup keys (`resolve::key`: 32 bits, sorted), a count first, then each
/// as its difference from the one before (LEB128): ~300 keys a file spread
/// over 32 bits are 3.5 bytes each, not 4 (13.7 → 11.8 MB on the crates;
/// zstd does no better on them). Wrapping, so any order reads back.
fn put_keys(buf: &mut Vec<u8>, keys: &[u32]) {
    put_u32(buf, keys.len() as u32);
    let mut last = 0u32;
    for &k in keys {
        put_var(buf, k.wrapping_sub(last));
        last = k;
    }
}

/// A count, then the strings.
fn put_strs(buf: &mut Vec<u8>, strs: &[String]) {
    put_u32(buf, strs.len() as u32);
    for x in strs {
        put_str(buf, x);
    }
}

/// A file's import edges (`from` left empty), as a record holds them.
fn put_edges(buf: &mut Vec<u8>, edges: &[Edge]) {
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

/// The edges section of a record (its checksum checked when the state was read).
fn decode_edges(b: &[u8]) -> Vec<Edge> {
    let mut out = Vec::new();
    Reader { buf: b, at: 0 }.edges(|e| out.push(e));
    out
}

/// The definitions section of a record (its checksum checked when the state was
/// read).
fn decode_symbols(b: &[u8]) -> Vec<RSymbol> {
    Reader { buf: b, at: 0 }.symbols().unwrap_or_default()
}

/// A length-prefixed, compressed section (`lazy::pack`), which a reader leaves so until
/// used (`Reader::section`): the bytes `value` was read from when it was,
/// else what `put` writes, compressed. Names, chains and ids repeat within a
/// file: the crates' sections take a third of their plain size.
fn put_packed<T>(buf: &mut Vec<u8>, value: &Lazy<T>, put: impl FnOnce(&mut Vec<u8>)) {
    let at = buf.len();
    put_u32(buf, 0);
    match value.packed_raw() {
        Some(raw) => buf.extend_from_slice(raw),
        None => {
            let mut plain = Vec::new();
            put(&mut plain);
            buf.extend_from_slice(&crate::model::lazy::pack(&plain));
        }
    }
    let len = (buf.len() - at - 4) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// A file's nesting (`Nesting`): its bytes as read, or its value encoded.
fn put_nesting(buf: &mut Vec<u8>, nesting: &Lazy<Nesting>) {
    if let Some(raw) = nesting.raw() {
        buf.extend_from_slice(raw);
        return;
    }
    let Nesting { parents, marks } = nesting.value();
    put_u32(buf, parents.len() as u32);
    for p in parents {
        // The position of a parent among a file's symbols, or FILE_PARENT:
        // one byte for most.
        put_var(buf, p.wrapping_add(1));
    }
    put_u32(buf, marks.len() as u32);
    for m in marks {
        for part in m {
            buf.extend_from_slice(&part.to_le_bytes()[..MARK_BYTES]);
        }
    }
}

/// What `put_nesting` wrote (empty if the bytes do not read as one: the
/// state's checksum refused damaged ones).
fn decode_nesting(buf: &[u8]) -> Nesting {
    let mut r = Reader { buf, at: 0 };
    r.nesting_parts().unwrap_or_default()
}

/// A file's functions and methods by name (`Callables`).
fn put_callables(buf: &mut Vec<u8>, callables: &Lazy<Callables>) {
    let n = callables.iter().count();
    put_var(buf, n as u32);
    for (symbol, method, name) in callables.iter() {
        put_var(buf, symbol);
        buf.push(u8::from(method));
        put_vstr(buf, name);
    }
}

fn decode_callables(b: &[u8]) -> Callables {
    let mut r = Reader { buf: b, at: 0 };
    r.callables().unwrap_or_default()
}

/// A file's call and reference sites and type facts.
fn put_sites(buf: &mut Vec<u8>, sites: &FileSites) {
    put_var(buf, sites.sites.len() as u32);
    for x in &sites.sites {
        buf.push(x.kind.as_u8());
        put_vstrs(buf, &x.chain);
        for n in [x.line, x.col, x.owner] {
            put_var(buf, n);
        }
    }
    put_var(buf, sites.facts.len() as u32);
    for x in &sites.facts {
        // `owned` in the kind's two high bits (kinds stay below 64).
        let owned = match x.owned {
            None => 0,
            Some(false) => 0x40,
            Some(true) => 0x80,
        };
        buf.push(x.kind as u8 | owned);
        put_var(buf, x.owner);
        put_vstr(buf, &x.name);
        put_vstrs(buf, &x.chain);
        put_var(buf, x.byte);
    }
}

fn decode_sites(b: &[u8]) -> FileSites {
    let mut r = Reader { buf: b, at: 0 };
    r.sites().unwrap_or_default()
}

/// A file's import edges kept as the bytes the state saves (a zstd frame),
/// as `encoded_site_edges` keeps its call-graph edges.
pub fn encoded_edges(edges: &[Edge], spill: Option<&Spill>) -> Lazy<Vec<Edge>> {
    packed_as(
        edges.len() * 96 + 4,
        |buf| put_edges(buf, edges),
        decode_edges,
        spill,
    )
}

/// A parsed file's definitions kept as the bytes the state saves (a zstd
/// frame), decoded on first use: a full build's nodes' `COPY` runs before
/// resolution reads any (Kuzu's pool and heap beside them are the run's
/// peak on a big tree).
pub fn encoded_symbols(
    symbols: &[RSymbol],
    file: (&str, &str),
    spill: Option<&Spill>,
) -> Lazy<Vec<RSymbol>> {
    packed_as(
        symbols.len() * 48 + 8,
        |buf| put_symbols(buf, symbols, file),
        decode_symbols,
        spill,
    )
}

/// A parsed file's sites and facts kept as the bytes the state saves (a zstd
/// frame): resolution decodes them for the chunk of files that reads them
/// (`Lazy::value_or_decoded`). Held decoded, a full build's sites were two
/// thirds of its memory when the parse ended (1.1 of 1.8 GiB on a 52k-file
/// tree).
pub fn encoded_sites(sites: &FileSites, spill: Option<&Spill>) -> Lazy<FileSites> {
    let room = (sites.sites.len() + sites.facts.len()) * 24 + 8;
    packed_as(room, |buf| put_sites(buf, sites), decode_sites, spill)
}

/// A file's call-graph edges kept as the bytes the state saves (a zstd
/// frame): a full build hands the edges themselves to the graph writer and
/// keeps only these (an eighth of the memory, and no copy of each edge's
/// strings).
pub fn encoded_site_edges(edges: &[SiteEdge], spill: Option<&Spill>) -> Lazy<Vec<SiteEdge>> {
    packed_as(
        edges.len() * 96 + 4,
        |buf| put_site_edge_list(buf, edges),
        decode_site_edges,
        spill,
    )
}

/// What `put` writes (about `room` bytes), compressed as a record's section
/// is (`lazy::pack`), and read back with `decode` when first used: from the
/// `spill` file when there is one and it takes them, else from the heap.
fn packed_as<T>(
    room: usize,
    put: impl FnOnce(&mut Vec<u8>),
    decode: fn(&[u8]) -> T,
    spill: Option<&Spill>,
) -> Lazy<T> {
    let mut buf = Vec::with_capacity(room);
    put(&mut buf);
    let packed = crate::model::lazy::pack(&buf);
    if let Some(Ok((bytes, range))) = spill.map(|s| s.put(&packed)) {
        return Lazy::packed(bytes, range, decode);
    }
    let range = 0..packed.len();
    Lazy::packed(std::sync::Arc::new(packed), range, decode)
}

/// A file's call-graph edges.
fn put_site_edge_list(buf: &mut Vec<u8>, edges: &[SiteEdge]) {
    put_var(buf, edges.len() as u32);
    for e in edges.iter() {
        buf.push(e.rel as u8);
        put_id(buf, &e.from);
        put_id(buf, &e.to);
        put_var(buf, e.line);
        put_var(buf, e.col);
        buf.push(e.tier as u8);
        buf.push(e.kind.as_u8());
        put_vstr(buf, &e.to_name);
    }
}

fn decode_site_edges(b: &[u8]) -> Vec<SiteEdge> {
    let mut r = Reader { buf: b, at: 0 };
    r.site_edges().unwrap_or_default()
}

/// Fingerprint of a file's call-graph edges, folded into its import
/// edges' (`fingerprint`): a file keeps its record only when both stay.
pub fn fingerprint_with_sites(imports: Fingerprint, edges: &[SiteEdge]) -> Fingerprint {
    if edges.is_empty() {
        return imports;
    }
    let mut h = blake3::Hasher::new();
    h.update(&imports);
    for e in edges {
        h.update(&[e.rel as u8, e.tier as u8, e.kind.as_u8()]);
        for part in [&e.from, &e.to, &e.to_name] {
            h.update(&(part.len() as u32).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(&e.line.to_le_bytes());
        h.update(&e.col.to_le_bytes());
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

fn put_u32(buf: &mut Vec<u8>, n: u32) {
    buf.extend_from_slice(&n.to_le_bytes());
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_u32(buf, s.len() as u32);
    buf.extend_from_slice(s.as_bytes());
}

/// Sites, facts and call-graph edges (millions of small numbers and short
/// names) are written with LEB128 numbers and lengths: the state of a large
/// repo is mostly these.
fn put_var(buf: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        buf.push((n as u8) | 0x80);
        n >>= 7;
    }
    buf.push(n as u8);
}

fn put_vstr(buf: &mut Vec<u8>, s: &str) {
    put_var(buf, s.len() as u32);
    buf.extend_from_slice(s.as_bytes());
}

fn put_vstrs(buf: &mut Vec<u8>, strs: &[Step]) {
    put_var(buf, strs.len() as u32);
    for s in strs {
        put_vstr(buf, s);
    }
}

/// An edge's end: a symbol id as its bytes (`ids::pack`), anything else
/// (the file's "", an unresolved name) as a string.
fn put_id(buf: &mut Vec<u8>, id: &str) {
    match ids::pack(id) {
        Some(raw) => {
            buf.push(IDS_PACKED);
            buf.extend_from_slice(&raw);
        }
        None => {
            buf.push(0);
            put_vstr(buf, id);
        }
    }
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
    fn var(&mut self) -> Option<u32> {
        let mut n = 0u32;
        for shift in [0, 7, 14, 21, 28] {
            let b = self.byte()?;
            n |= u32::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }
    /// A site's or fact's chain (`put_vstrs`): one step read straight into
    /// its inline place, more into a block of their size.
    fn chain(&mut self) -> Option<Chain> {
        let n = self.var()? as usize;
        if n == 1 {
            return self.step().map(Chain::One);
        }
        let mut out = Vec::with_capacity(n.min(self.buf.len()));
        for _ in 0..n {
            out.push(self.step()?);
        }
        Some(Chain::from(out))
    }
    /// One step of a chain, or a fact's name (`put_vstr`), kept inline.
    fn step(&mut self) -> Option<Step> {
        let len = self.var()? as usize;
        Some(Step::from(std::str::from_utf8(self.bytes(len)?).ok()?))
    }
    /// A call-graph edge's end (`put_id`), kept inline.
    fn site_id(&mut self) -> Option<Id> {
        match self.byte()? {
            IDS_PACKED => Some(ids::unpack_inline(self.bytes(ids::PACKED)?)),
            0 => self.inline_string(),
            _ => None,
        }
    }
    fn inline_string(&mut self) -> Option<Id> {
        let n = self.var()? as usize;
        std::str::from_utf8(self.bytes(n)?).ok().map(Id::from)
    }

    /// A count, then the strings (`put_strs`).
    /// A file's nesting (`put_nesting`).
    fn nesting_parts(&mut self) -> Option<Nesting> {
        let np = self.u32()? as usize;
        let mut parents = Vec::with_capacity(np.min(self.buf.len()));
        for _ in 0..np {
            parents.push(self.var()?.wrapping_sub(1));
        }
        let nm = self.u32()? as usize;
        let mut marks = Vec::with_capacity(nm.min(self.buf.len() / (2 * MARK_BYTES)));
        for _ in 0..nm {
            marks.push([self.mark()?, self.mark()?]);
        }
        Some(Nesting { parents, marks })
    }
    fn mark(&mut self) -> Option<u64> {
        let mut b = [0u8; 8];
        b[..MARK_BYTES].copy_from_slice(self.bytes(MARK_BYTES)?);
        Some(u64::from_le_bytes(b))
    }
    fn keys(&mut self) -> Option<Vec<u32>> {
        let n = self.u32()? as usize;
        let mut out = Vec::with_capacity(n.min(self.buf.len()));
        let mut last = 0u32;
        for _ in 0..n {
            last = last.wrapping_add(self.var()?);
            out.push(last);
        }
        Some(out)
    }
    fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.u32()? as usize;
        let mut out = Vec::with_capacity(n.min(self.buf.len() / 4));
        for _ in 0..n {
            out.push(self.string()?);
        }
        Some(out)
    }

    /// A length-prefixed, compressed section (`put_packed`), left so in
    /// `bytes` (which `self.buf` is a prefix of) until used.
    fn section<T>(&mut self, bytes: &Shared, decode: fn(&[u8]) -> T) -> Option<Lazy<T>> {
        let len = self.u32()? as usize;
        let at = self.at;
        self.bytes(len)?;
        Some(Lazy::packed(bytes.clone(), at..at + len, decode))
    }
    fn callables(&mut self) -> Option<Callables> {
        let n = self.var()? as usize;
        let mut out = Callables::default();
        for _ in 0..n {
            let symbol = self.var()?;
            let method = self.byte()? != 0;
            let len = self.var()? as usize;
            out.push(symbol, method, std::str::from_utf8(self.bytes(len)?).ok()?);
        }
        Some(out)
    }
    fn sites(&mut self) -> Option<FileSites> {
        let n = self.var()? as usize;
        let mut out = FileSites::default();
        out.sites.reserve(n.min(self.buf.len() / 4));
        for _ in 0..n {
            let kind = SiteKind::from_u8(self.byte()?)?;
            let chain = self.chain()?;
            let (line, col, owner) = (self.var()?, self.var()?, self.var()?);
            out.sites.push(RawSite {
                kind,
                chain,
                line,
                col,
                owner,
            });
        }
        let n = self.var()? as usize;
        out.facts.reserve(n.min(self.buf.len() / 4));
        for _ in 0..n {
            let b = self.byte()?;
            let kind = FactKind::from_u8(b & 0x3f)?;
            let owned = match b >> 6 {
                0 => None,
                1 => Some(false),
                2 => Some(true),
                _ => return None,
            };
            let owner = self.var()?;
            let name = self.step()?;
            let chain = self.chain()?;
            let byte = self.var()?;
            out.facts.push(Fact {
                kind,
                owner,
                name,
                chain,
                byte,
                owned,
            });
        }
        (self.at == self.buf.len()).then_some(out)
    }
    fn site_edges(&mut self) -> Option<Vec<SiteEdge>> {
        let n = self.var()? as usize;
        let mut out = Vec::with_capacity(n.min(self.buf.len() / 8));
        for _ in 0..n {
            let rel = Rel::from_u8(self.byte()?)?;
            let from = self.site_id()?;
            let to = self.site_id()?;
            let (line, col) = (self.var()?, self.var()?);
            let tier = Tier::from_u8(self.byte()?)?;
            let kind = SiteKind::from_u8(self.byte()?)?;
            let to_name = self.inline_string()?;
            out.push(SiteEdge {
                rel,
                from,
                to,
                line,
                col,
                tier,
                kind,
                to_name,
            });
        }
        (self.at == self.buf.len()).then_some(out)
    }
    fn edges_section(&mut self, bytes: &Shared) -> Option<Lazy<Vec<Edge>>> {
        self.section(bytes, decode_edges)
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
    fn symbols(&mut self) -> Option<Vec<RSymbol>> {
        let flags = self.byte()?;
        let n = self.u32()? as usize;
        if flags & IDS_DERIVED != 0 {
            let (repo, ref_name, path) = (self.str()?, self.str()?, self.str()?);
            let mut defs = Vec::with_capacity(n.min(self.buf.len()));
            for _ in 0..n {
                defs.push((self.str()?, self.str()?));
            }
            let ordinals = ids::ordinals(defs.iter().copied());
            return Some(
                defs.into_iter()
                    .zip(ordinals)
                    .map(|((qualified_name, kind), n)| RSymbol {
                        id: ids::definition_id(repo, ref_name, path, kind, qualified_name, n)
                            .into(),
                        qualified_name: qualified_name.into(),
                        kind: crate::model::SymbolKind::word(kind),
                    })
                    .collect(),
            );
        }
        let mut out = Vec::with_capacity(n.min(self.buf.len()));
        for _ in 0..n {
            let id = if flags & IDS_PACKED != 0 {
                ids::unpack(self.bytes(ids::PACKED)?)
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
                    sites: Lazy::new(Default::default()),
                    symbols: Lazy::new(vec![RSymbol {
                        id: "s_1".into(),
                        qualified_name: "a::f".into(),
                        kind: "fn",
                    }]),
                    callables: Lazy::new({
                        let mut c = Callables::default();
                        c.push(0, false, "f");
                        c
                    }),
                },
                RFile {
                    id: "r@m:p/x.go".into(),
                    path: "p/x.go".into(),
                    language: Language::Go,
                    module: "p".into(),
                    package: String::new(),
                    path_mods: false,
                    imports: Lazy::new(Vec::new()),
                    sites: Lazy::new(Default::default()),
                    symbols: Lazy::new(vec![
                        RSymbol {
                            id: "sABCDEFGHIJ9".into(),
                            qualified_name: "p.T".into(),
                            kind: "struct",
                        },
                        RSymbol {
                            id: "s-_zyxwvuts0".into(),
                            qualified_name: "p.T.M".into(),
                            kind: "method",
                        },
                    ]),
                    callables: Lazy::new({
                        let mut c = Callables::default();
                        c.push(1, true, "M");
                        c
                    }),
                },
            ],
            meta: vec![
                FileMeta {
                    content_hash: "h".into(),
                    imports_text: Lazy::new(super::super::parse::encode_imports(&imports)),
                    fingerprint: [7; 16],
                    deps: vec![1, 2, u32::MAX],
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
                    nesting: Lazy::new(Nesting {
                        parents: vec![FILE_PARENT],
                        marks: vec![[1, 2]],
                    }),
                    stat: Some(FileStat {
                        size: 10,
                        mtime_ns: 1_700_000_000_123_456_789,
                        ctime_ns: -1,
                        ino: u64::MAX,
                    }),
                    ..FileMeta::default()
                },
                FileMeta {
                    content_hash: "g".into(),
                    imports_text: Lazy::new("[]".into()),
                    symbols: 2,
                    nesting: Lazy::new(Nesting {
                        parents: vec![FILE_PARENT, 0],
                        marks: vec![[3, 4], [5, 6]],
                    }),
                    ..FileMeta::default()
                },
            ],
            origin: None,
        }
    }

    /// Definitions whose ids `ids::definition_id` makes are kept without them,
    /// and read back the same; one id that is not (or an `@` that splits the
    /// file id two ways) keeps them all.
    #[test]
    fn definitions_keep_their_ids_only_when_they_cannot_be_derived() {
        let (file, path) = ("r@p@main:src/a.rs", "src/a.rs");
        let defs = [("a::f", "fn"), ("a::T", "struct"), ("a::f", "fn")];
        let ordinals = ids::ordinals(defs.iter().copied());
        let derived: Vec<RSymbol> = defs
            .iter()
            .zip(ordinals)
            .map(|(&(q, k), n)| RSymbol {
                id: ids::definition_id("r@p", "main", path, k, q, n).into(),
                qualified_name: q.into(),
                kind: k,
            })
            .collect();
        assert_ne!(derived[0].id, derived[2].id, "the ordinal tells them apart");
        let mut other = derived.clone();
        other[1].id = "sABCDEFGHIJ9".into();
        for (symbols, flag) in [(derived, IDS_DERIVED), (other, IDS_PACKED)] {
            let mut buf = Vec::new();
            put_symbols(&mut buf, &symbols, (file, path));
            assert_eq!(buf[0], flag);
            assert_eq!(decode_symbols(&buf), symbols);
        }
    }

    #[test]
    fn round_trips_lazily_and_rejects_damage() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("s.bin");
        let mut state = sample();
        state.save(&path).expect("save");
        let mut back = RefState::load(&path).expect("load");
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
        // Go: ids (packed), names (calls look them up) and nesting come back.
        let ids = |f: &RFile| f.symbols.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&back.files[1]), ids(&state.files[1]));
        assert_eq!(*back.files[1].symbols, *state.files[1].symbols);
        // Callables come back without the definitions being decoded.
        assert!(!back.files[1].callables.is_decoded());
        let named = |f: &RFile| {
            f.callables
                .iter()
                .map(|(i, m, n)| (i, m, n.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(named(&back.files[1]), vec![(1, true, "M".to_string())]);
        assert_eq!(
            *back.files[1].callables,
            Callables::of(&back.files[1].symbols)
        );
        assert_eq!(
            back.meta[1].tree(&back.files[1]).expect("tree")[1]
                .1
                .as_deref(),
            Some("sABCDEFGHIJ9")
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

    #[test]
    fn a_save_where_it_was_read_appends_the_changes_and_reads_back_the_same() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("s.bin");
        let mut state = sample();
        state.save(&path).expect("save");
        let whole = std::fs::metadata(&path).expect("stat").len();
        // A run: one entry changed, one gone, one new (sorted in between).
        let mut next = RefState::load(&path).expect("load");
        next.tag = "2026-01-02T00:00:00Z".into();
        next.meta[0].edges = 9;
        next.meta[0].record = None;
        let mut added = next.files[0].clone();
        added.path = "b.rs".into();
        added.id = "r@m:b.rs".into();
        next.files.insert(1, added);
        next.meta.insert(
            1,
            FileMeta {
                record: None,
                ..next.meta[0].clone()
            },
        );
        next.files.remove(2);
        next.meta.remove(2);
        let before = std::fs::read(&path).expect("read before");
        let aside = next.save_aside(&path).expect("aside");
        next.publish(aside).expect("append");
        let bytes = std::fs::read(&path).expect("read");
        assert!(bytes.len() as u64 > whole, "appended, not rewritten");
        assert_eq!(
            bytes[..whole as usize],
            before[..],
            "the whole state is left as it was"
        );
        let back = RefState::load(&path).expect("load the changes");
        assert_eq!(back.tag, "2026-01-02T00:00:00Z");
        let paths: Vec<&str> = back.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a.rs", "b.rs"]);
        assert_eq!((back.meta[0].edges, back.meta[1].edges), (9, 9));
        assert_eq!(*back.files[1].symbols, *state.files[0].symbols);
        assert_eq!(*back.meta[1].out_edges, *state.meta[0].out_edges);
        // A server saves the same state again and again: what went before
        // stays gone, what came back is there, and each save appends.
        let mut kept = back;
        kept.files.remove(1);
        kept.meta.remove(1);
        kept.save(&path).expect("save without b");
        assert_eq!(kept.files.len(), 1);
        let mut again = kept.clone();
        again.files.push(state.files[1].clone());
        again.meta.push(state.meta[1].clone());
        again.save(&path).expect("save with p/x.go");
        assert!(again.meta.iter().all(|m| m.record.is_some()));
        let back = RefState::load(&path).expect("load after three appends");
        let paths: Vec<&str> = back.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a.rs", "p/x.go"]);
        // An append cut short is refused as a whole (the graph is read instead).
        let full = std::fs::read(&path).expect("read");
        std::fs::write(&path, &full[..full.len() - 2]).expect("cut");
        assert!(RefState::load(&path).is_none());
        // A file another writer replaced meanwhile is not appended to: the
        // state is written whole.
        std::fs::write(&path, &full).expect("restore");
        let mut mine = RefState::load(&path).expect("load");
        mine.tag = "mine".into();
        mine.meta[0].record = None;
        let aside = mine.save_aside(&path).expect("aside");
        assert!(matches!(aside.how, Saving::Append { .. }));
        let mut theirs = sample();
        theirs.save(&dir.path().join("other.bin")).expect("theirs");
        std::fs::rename(dir.path().join("other.bin"), &path).expect("replace");
        mine.publish(aside).expect("written whole");
        let back = RefState::load(&path).expect("load mine");
        assert_eq!((back.tag.as_str(), back.files.len()), ("mine", 2));
        assert_eq!(
            back.origin.expect("origin").whole,
            std::fs::metadata(&path).expect("stat").len()
        );
    }

    #[test]
    fn a_changed_resolution_is_appended_as_a_patch_and_reads_back_the_same() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("s.bin");
        let mut state = sample();
        state.save(&path).expect("save");
        let mut next = RefState::load(&path).expect("load");
        let record_len = next.meta[0].record.as_ref().expect("record").range.len();
        // A re-resolution: other edges, one key lost, two gained.
        next.meta[0].record_resolution();
        next.meta[0].fingerprint = [9; 16];
        next.meta[0].deps = vec![0, 2, 5, u32::MAX];
        next.meta[0].edges = 1;
        next.meta[0].unresolved = 0;
        next.meta[0].externals = Vec::new();
        next.meta[0].out_edges = Lazy::new(vec![Edge {
            from: String::new(),
            target: Target::File("r@m:p/x.go".into()),
            to_name: "p".into(),
            line: 4,
            alias: String::new(),
        }]);
        let want = next.meta[0].clone();
        let before = std::fs::metadata(&path).expect("stat").len();
        next.save(&path).expect("save the patch");
        let appended = std::fs::metadata(&path).expect("stat").len() - before;
        assert!(
            (appended as usize) < record_len,
            "a patch ({appended} bytes) is smaller than the record ({record_len})"
        );
        assert!(next.meta[0].patched && next.meta[0].deps_saved.is_none());
        let back = RefState::load(&path).expect("load the patch");
        let resolution = |m: &FileMeta| {
            (
                m.fingerprint,
                m.deps.clone(),
                m.edges,
                m.unresolved,
                m.externals.clone(),
                (*m.out_edges).clone(),
                m.symbols,
                (*m.nesting).clone(),
            )
        };
        assert_eq!(resolution(&back.meta[0]), resolution(&want));
        assert!(back.meta[0].record.is_some() && back.meta[0].patched);
        assert_eq!(*back.files[0].symbols, *state.files[0].symbols);
        assert_eq!(resolution(&back.meta[1]), resolution(&state.meta[1]));
        // Saved again unchanged: nothing of the entry is appended again.
        let mut again = back.clone();
        let len = std::fs::metadata(&path).expect("stat").len();
        again.save(&path).expect("save unchanged");
        let grew = std::fs::metadata(&path).expect("stat").len() - len;
        assert!(grew < 64, "an unchanged save appended {grew} bytes");
        // A second patch of the same entry, against what the file holds now.
        let mut third = RefState::load(&path).expect("load again");
        third.meta[0].record_resolution();
        third.meta[0].deps = vec![2, 7];
        third.save(&path).expect("save the second patch");
        let mut back = RefState::load(&path).expect("load two patches");
        assert_eq!(back.meta[0].deps, vec![2, 7]);
        assert_eq!(back.meta[0].fingerprint, [9; 16]);
        // Written whole, a patched entry is encoded anew: the same entry.
        let whole = dir.path().join("whole.bin");
        back.save(&whole).expect("save whole");
        let reread = RefState::load(&whole).expect("load whole");
        assert_eq!(resolution(&reread.meta[0]), resolution(&back.meta[0]));
        assert!(!reread.meta[0].patched);
    }
}
