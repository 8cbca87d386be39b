//! Keeping a ref's search index in step with its graph: written from a full
//! build's rows on a thread, or updated per changed file after an in-place run.

use std::path::Path;

use super::IndexError;

use crate::store::datadir::DataDir;
use crate::store::graph::{Changes, FileRows, GraphStore, SymbolInsert, SymbolRow};
use crate::store::search::{self, SearchIndex};

/// A parsed file's path and symbol rows, on their way to the search index;
/// `None` once every file was sent.
pub(super) type FileSymbols = Option<(String, Vec<SymbolInsert>)>;

/// A full build's search index, from the files as they are parsed (`parsed`,
/// in path order): every document is replaced, once the last file came. A
/// parse that ends short (its sender gone without the end: a stop, an error)
/// leaves the index as it was. The tag is left to the caller.
pub(super) fn search_from_parse(
    root: &Path,
    dir: &Path,
    parsed: std::sync::mpsc::Receiver<FileSymbols>,
    writer_mb: usize,
) -> Result<(), IndexError> {
    let index = SearchIndex::open_dir(dir)?.with_writer_mb(writer_mb);
    let all_came = std::cell::Cell::new(false);
    let go = || {
        // Until the new tag is written the index is not trusted (a kill
        // from here on leaves it to be rebuilt when next used).
        all_came.get() && {
            let _ = std::fs::remove_file(dir.join(search::TAG_FILE));
            true
        }
    };
    index.write_when(true, &[], Received::new(root, parsed, &all_came), go)?;
    match all_came.get() {
        true => Ok(()),
        false => Err(IndexError::Stopped),
    }
}

/// A full build's search documents, each file's rows freed once indexed: the
/// file's source is read again when its turn comes (from the page cache: it
/// was just parsed) for the symbols' bodies.
struct Received<'r> {
    root: &'r Path,
    parsed: std::sync::mpsc::Receiver<FileSymbols>,
    /// Set when the end came (not a sender gone without it).
    all_came: &'r std::cell::Cell<bool>,
    /// The current file's path and source.
    path: String,
    text: String,
    symbols: std::vec::IntoIter<SymbolInsert>,
}

impl<'r> Received<'r> {
    fn new(
        root: &'r Path,
        parsed: std::sync::mpsc::Receiver<FileSymbols>,
        all_came: &'r std::cell::Cell<bool>,
    ) -> Received<'r> {
        Received {
            root,
            parsed,
            all_came,
            path: String::new(),
            text: String::new(),
            symbols: Vec::new().into_iter(),
        }
    }
}

impl Iterator for Received<'_> {
    type Item = (SymbolRow, String);

    fn next(&mut self) -> Option<(SymbolRow, String)> {
        loop {
            if let Some(mut si) = self.symbols.next() {
                let (start, end) = (si.byte_start as usize, si.byte_end as usize);
                let body = search::body_of(&self.text, start, end).to_string();
                // A full build's rows leave their file's path out
                // (`FileContext::lean`).
                if si.row.path.is_empty() {
                    si.row.path.clone_from(&self.path);
                }
                return Some((si.row, body));
            }
            let Some((path, symbols)) = self.parsed.recv().ok()? else {
                self.all_came.set(true);
                return None;
            };
            self.text = std::fs::read_to_string(self.root.join(&path)).unwrap_or_default();
            self.path = path;
            self.symbols = symbols.into_iter();
        }
    }
}

/// A full build's search index writer (`search_from_parse` on a thread). Dropped
/// without `join` (the run failed), it is still waited for: no writer outlives
/// the run.
pub(super) struct SearchThread {
    handle: Option<std::thread::JoinHandle<Result<(), IndexError>>>,
    /// Its result, when it was waited for before the run needed it (`settle`).
    settled: Option<Option<Result<(), IndexError>>>,
}

impl SearchThread {
    pub(super) fn spawn(
        work: impl FnOnce() -> Result<(), IndexError> + Send + 'static,
    ) -> SearchThread {
        SearchThread {
            handle: Some(std::thread::spawn(work)),
            settled: None,
        }
    }

    /// Waits for the writer now (its last merge among the run's peaks), keeping
    /// its result for `join`.
    pub(super) fn settle(mut self) -> SearchThread {
        if self.settled.is_none() {
            self.settled = Some(self.handle.take().and_then(|h| h.join().ok()));
        }
        self
    }

    /// Its result; `None` when it panicked.
    pub(super) fn join(mut self) -> Option<Result<(), IndexError>> {
        match self.settled.take() {
            Some(result) => result,
            None => self.handle.take().and_then(|h| h.join().ok()),
        }
    }
}

impl Drop for SearchThread {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Search documents of the added files' symbols: each symbol's row and its
/// source, the file read when its turn comes (a cold index's sources are
/// hundreds of megabytes: never all held at once). A file that can no longer
/// be read gives empty bodies.
pub(super) fn symbol_docs<'a>(
    root: &'a Path,
    add: &'a [FileRows],
) -> impl Iterator<Item = (&'a SymbolRow, String)> {
    add.iter().flat_map(move |f| {
        let text = std::fs::read_to_string(root.join(&f.file.path)).unwrap_or_default();
        f.symbols.iter().map(move |si| {
            let body = search::body_of(&text, si.byte_start as usize, si.byte_end as usize);
            (&si.row, body.to_string())
        })
    })
}

/// Replaces the changed files' documents while the graph write runs, when the
/// index is in step with the graph before it (else `None`: `update_search`
/// rebuilds it after). The new segment is written beside the graph write and
/// made visible only once `graph_committed` says the graph committed (else it
/// is abandoned): a reader never sees documents the graph does not hold yet.
/// The tag is the caller's, after: a kill before it leaves an index that is
/// rebuilt when next used.
pub(super) fn search_beside(
    root: &Path,
    dir: &Path,
    (add, removed): (&[FileRows], &[String]),
    previous_indexed_at: Option<&str>,
    (writer_mb, merge_later): (usize, bool),
    graph_committed: impl FnOnce() -> bool,
) -> Option<Result<(), IndexError>> {
    let in_step =
        previous_indexed_at.is_some() && search::read_tag(dir).as_deref() == previous_indexed_at;
    if !in_step {
        return None;
    }
    let write = || -> Result<bool, IndexError> {
        let index = SearchIndex::open_dir(dir)?
            .with_writer_mb(writer_mb)
            .with_merge_later(merge_later);
        Ok(index.write_when(false, removed, symbol_docs(root, add), graph_committed)?)
    };
    match write() {
        Ok(true) => Some(Ok(())),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    }
}

/// Brings the ref's search index to the state the graph just committed: the
/// changed files' documents replaced when the index matched the previous state,
/// else everything rebuilt from the graph. The tag is written last, so a kill
/// before it leaves an index that the next open or run rebuilds.
pub(super) fn update_search(
    root: &Path,
    data: &DataDir,
    store: &GraphStore,
    changes: &Changes,
    previous_indexed_at: Option<&str>,
    writer_mb: usize,
    merge_later: bool,
) -> Result<(), IndexError> {
    let dir = data.search_dir(&changes.repo, &changes.ref_name);
    let index = SearchIndex::open_dir(&dir)?
        .with_writer_mb(writer_mb)
        .with_merge_later(merge_later);
    let in_step =
        previous_indexed_at.is_some() && search::read_tag(&dir).as_deref() == previous_indexed_at;
    if in_step {
        // A changed file's documents are all replaced (a file has tens of
        // symbols; re-adding them costs less than keeping ids searchable).
        let docs = symbol_docs(root, &changes.add);
        index.write(false, &changes.remove_paths, docs)?;
    } else {
        let symbols = store.symbol_rows(&changes.repo, &changes.ref_name)?;
        index.rebuild(&symbols, Some(root))?;
    }
    search::write_tag(&dir, &changes.indexed_at)?;
    Ok(())
}

/// Merges the small segments that runs with `defer_finish` left in the ref's
/// search index (see `SearchIndex::with_merge_later`); how many were merged.
pub fn merge_search_tail(
    data: &DataDir,
    repo: &str,
    ref_name: &str,
    small_only: bool,
) -> Result<usize, IndexError> {
    let dir = data.search_dir(repo, ref_name);
    if !dir.join(search::TAG_FILE).exists() {
        return Ok(0);
    }
    Ok(SearchIndex::open_dir(&dir)?.merge_tail(small_only)?)
}
