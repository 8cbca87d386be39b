//! The index pipeline: walk → read and hash → parse and extract (in parallel, only
//! files whose content changed) → one atomic graph write → report.
//!
//! Architecture invariant: bad input never fails a run. Unreadable, binary, huge or
//! non-UTF-8 files and syntax errors become diagnostics in the report; only a
//! failure of the data dir itself (locked, corrupt, disk full) is an error.

pub mod state;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use tree_sitter::Parser;

use crate::extract::Extractor;
use crate::model::{self, ImportSpec, Language, ModuleInfo, RawImport};
use crate::resolve::{self, Edge, RFile, RSymbol, Target};
use crate::source::gitref;
use crate::source::layout::{Layout, Manifest};
use crate::source::walk::{self, Diagnostic, SourceFile, WalkOptions, WalkResult};
use crate::store::catalog;
use crate::store::datadir::{DataDir, DataDirError, WriterLock};
use crate::store::graph::{
    Changes, FileRow, FileRows, GraphConfig, GraphError, GraphStore, ImportChanges, ImportLabel,
    ImportRow, SymbolDiff, SymbolInsert, SymbolRow, file_id,
};
use crate::store::search::{self, SearchIndex};
use state::{FileMeta, Fingerprint, RefState};

#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Repository name; defaults to the folder name.
    pub repo: Option<String>,
    /// Ref name; defaults to the checked-out git branch (short hash when detached),
    /// `live` outside git.
    pub ref_name: Option<String>,
    /// Rebuild this repo/ref from scratch.
    pub force: bool,
    pub walk: WalkOptions,
    pub graph: GraphConfig,
    /// Skip import extraction and resolution (no IMPORTS edges).
    pub skip_imports: bool,
    /// The commit indexed, when `root` is not the git working tree it came from
    /// (a snapshot of a git ref): recorded instead of asking git at `root`.
    pub commit: Option<String>,
    /// The repository's own root, when `root` is a snapshot of one of its refs.
    pub repo_root: Option<PathBuf>,
    /// Server mode: an in-place run commits and returns; its checkpoint, the
    /// removal of its saved copy and the state file are left to `finish_write`,
    /// which the caller runs after making the changes visible. The resolution
    /// state stays in memory between runs.
    pub defer_finish: bool,
    /// Server mode: the repo-relative paths a file watcher saw change since the
    /// last run. When the run's previous state is in memory and the change only
    /// edits or deletes known source files, the tree is not walked and only
    /// these files are read; anything else (a new file, a manifest or ignore
    /// file, no state in memory) falls back to the full walk.
    pub changed_paths: Option<Vec<String>>,
    /// Memory of the search index writer, in MiB [default: `search::DEFAULT_WRITER_MB`].
    pub search_writer_mb: Option<usize>,
}

impl IndexOptions {
    pub fn writer_mb(&self) -> usize {
        self.search_writer_mb.unwrap_or(search::DEFAULT_WRITER_MB)
    }
}

/// The generation of what extraction gives (symbol kinds, names). A ref indexed
/// by another generation is re-indexed as a whole by its next run.
const EXTRACTION: &str = "cruxe-extraction-3 (rust import scopes, cfg_attr paths)";

/// Receives progress of a long run. The CLI draws a bar; tests and servers log.
pub trait Progress: Sync {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self, _n: u64) {}
    fn done(&self) {}
}

/// A `Progress` that shows nothing.
pub struct Silent;
impl Progress for Silent {}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("could not load the parsers: {0}")]
    Parsers(String),
    #[error(transparent)]
    Search(#[from] crate::store::search::SearchError),
    #[error(transparent)]
    Git(#[from] crate::source::gitref::GitError),
}

/// What one run did, for the summary line and the diagnostics list.
#[derive(Debug, Clone, Default)]
pub struct IndexReport {
    pub repo: String,
    pub ref_name: String,
    pub commit: String,
    /// Source files in the tree now.
    pub files: usize,
    /// Files parsed this run (new or changed).
    pub parsed: usize,
    pub unchanged: usize,
    /// Files whose nodes were dropped because they were deleted or are now skipped.
    pub removed: usize,
    /// Totals of the ref after the run.
    pub symbols: i64,
    pub import_edges: i64,
    pub unresolved_imports: i64,
    pub syntax_error_files: usize,
    /// Files whose imports were resolved this run: all of them without a usable
    /// resolution state, else the changed ones and those whose lookups they touch.
    pub imports_resolved: usize,
    pub diagnostics: Vec<Diagnostic>,
    pub seconds: f64,
    /// The run built a new database and published it: a caller holding the
    /// previous one open must reopen.
    pub republished: bool,
    /// What an in-place run changed (`None` after a full build): a server patches
    /// its in-memory catalog with it instead of reloading the ref.
    pub changes: Option<std::sync::Arc<Changes>>,
    /// The ref's `indexed_at` after the run.
    pub indexed_at: String,
    /// With `defer_finish`: the run committed and `finish_write` is due.
    pub finish_pending: bool,
}

/// Resolution states a server keeps in memory between runs (`defer_finish`), by
/// state file path; `dirty` ones are not on disk yet. With each, what the last
/// walk of the tree found besides source files. A run of its own (the CLI's)
/// starts with an empty one.
#[derive(Default)]
pub struct StateCache {
    map: std::sync::Mutex<HashMap<PathBuf, Cached>>,
}

/// What a caller that stays (a server) lends each run: the graph it holds open
/// (`None` before the first index), the data dir's writer lock it holds for its
/// life, and the resolution states it keeps between runs.
#[derive(Clone, Copy)]
pub struct Held<'a> {
    pub graph: Option<&'a GraphStore>,
    pub lock: &'a WriterLock,
    pub states: &'a StateCache,
}

struct Cached {
    state: RefState,
    dirty: bool,
    walk: Option<WalkMemo>,
}

/// What a walk found besides the source files: enough to skip the next walk
/// when only known files changed.
#[derive(Clone)]
struct WalkMemo {
    manifests: Vec<(String, PathBuf)>,
    has_src_dir: bool,
    diagnostics: Vec<Diagnostic>,
}

impl StateCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Cached>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a state for `path` is kept (from a previous run).
    fn has(&self, path: &Path) -> bool {
        self.lock().contains_key(path)
    }

    /// The state kept for `path`, when it describes the graph (`tag`).
    fn take(&self, path: &Path, tag: &str) -> Option<RefState> {
        let mut map = self.lock();
        // Taken out: the run puts back the state it leaves (a state that is not
        // the graph's any more, after a failed run, is no use).
        let trusted = map.get(path).is_some_and(|c| c.state.tag == tag);
        if !trusted {
            map.remove(path);
            return None;
        }
        map.get_mut(path)
            .map(|c| std::mem::take(&mut c.state))
            .filter(|st| st.tag == tag)
    }

    fn put(&self, path: &Path, state: RefState, dirty: bool, walk: Option<WalkMemo>) {
        self.lock()
            .insert(path.to_path_buf(), Cached { state, dirty, walk });
    }

    /// Writes the states under `root` that are only in memory.
    fn save_dirty(&self, root: &Path) {
        for (path, c) in self.lock().iter_mut() {
            if c.dirty && path.starts_with(root) {
                if let Err(e) = c.state.save(path) {
                    tracing::warn!("could not save the resolution state ({e})");
                    let _ = std::fs::remove_file(path);
                }
                c.dirty = false;
            }
        }
    }
}

/// The ref's totals, as the state counts them (counting them in the graph scans
/// every import edge).
fn set_totals(report: &mut IndexReport, st: &RefState) {
    let sum = |f: fn(&FileMeta) -> u32| st.meta.iter().map(|m| i64::from(f(m))).sum();
    report.symbols = sum(|m| m.symbols);
    report.import_edges = sum(|m| m.edges);
    report.unresolved_imports = sum(|m| m.unresolved);
}

/// Keeps a server's state in memory with what its walk found (the manifests and
/// whether there is a `src/`) and the run's diagnostics.
fn remember(
    states: &StateCache,
    path: &Path,
    state: RefState,
    dirty: bool,
    walk_found: Option<(Vec<(String, PathBuf)>, bool)>,
    diagnostics: &[Diagnostic],
) {
    let memo = walk_found.map(|(manifests, has_src_dir)| WalkMemo {
        manifests,
        has_src_dir,
        diagnostics: diagnostics.to_vec(),
    });
    states.put(path, state, dirty, memo);
}

/// The walk a server run can skip: the previous run's files with the watcher's
/// changes applied, when every changed path is a source file the ref already
/// has (edited or deleted). `None` when the tree must be walked.
fn quick_walk(
    states: &StateCache,
    root: &Path,
    state_path: &Path,
    changed: &[String],
    max_file_size: u64,
) -> Option<WalkResult> {
    let cache = states.lock();
    let cached = cache.get(state_path)?;
    let memo = cached.walk.as_ref()?;
    let known: HashSet<&str> = cached.state.files.iter().map(|f| f.path.as_str()).collect();
    let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
    let mut diagnostics: Vec<Diagnostic> = memo
        .diagnostics
        .iter()
        .filter(|d| !changed.contains(d.path.as_str()))
        .cloned()
        .collect();
    let mut gone: HashSet<&str> = HashSet::new();
    for &p in &changed {
        let name = p.rsplit('/').next().unwrap_or(p);
        if crate::source::layout::MANIFEST_NAMES.contains(&name)
            || name == ".gitignore"
            || name == ".ignore"
            || !known.contains(p)
        {
            return None;
        }
        match std::fs::symlink_metadata(root.join(p)) {
            Ok(m) if m.is_file() => {
                if m.len() > max_file_size {
                    diagnostics.push(Diagnostic {
                        path: p.to_string(),
                        problem: format!(
                            "file too large ({} bytes > limit {max_file_size}); skipped",
                            m.len()
                        ),
                    });
                    gone.insert(p);
                }
            }
            Ok(_) => return None,
            Err(_) => {
                gone.insert(p);
            }
        }
    }
    let sources = cached
        .state
        .files
        .iter()
        .filter(|f| !gone.contains(f.path.as_str()))
        .map(|f| SourceFile {
            path: f.path.clone(),
            abs_path: root.join(&f.path),
            language: f.language,
        })
        .collect();
    Some(WalkResult {
        sources,
        manifests: memo.manifests.clone(),
        diagnostics,
        has_src_dir: memo.has_src_dir,
    })
}

/// Finishes the in-place runs a server made with `defer_finish` once their
/// changes are visible: checkpoints the graph (so no log is left for Kuzu to
/// replay), writes the resolution states still only in memory, and replaces the
/// copy saved before the writes with one for the next run (given up when
/// `abort` says new work came: the older copy protects that run).
pub fn finish_write(
    data: &DataDir,
    store: &GraphStore,
    abort: &dyn Fn() -> bool,
    held: Held<'_>,
) -> Result<(), IndexError> {
    let t = Instant::now();
    store.checkpoint()?;
    let checkpoint_ms = t.elapsed().as_millis() as u64;
    let saved = data.save_ahead(abort)?;
    // New work waits for nothing more: the states are written by a later finish.
    if saved && !abort() {
        held.states.save_dirty(data.root());
    }
    tracing::debug!(
        checkpoint_ms,
        saved,
        ms = t.elapsed().as_millis() as u64,
        "finished the write"
    );
    Ok(())
}

enum Outcome {
    Unchanged,
    Parsed(Box<Parsed>),
    Skipped(Diagnostic),
}

struct Parsed {
    rows: FileRows,
    language: Language,
    imports: Vec<RawImport>,
    syntax_errors: bool,
}

/// Indexes git ref `rev` of the repository at `root` (a branch, tag or commit;
/// it need not be checked out) under the ref name `rev`: its tree is read from
/// git objects into a snapshot in the data dir, which is then indexed like a
/// working tree (only files whose content changed since the last run are parsed).
pub fn index_git_ref(
    root: &Path,
    rev: &str,
    data: &DataDir,
    opts: &IndexOptions,
    progress: &dyn Progress,
    held: Option<Held<'_>>,
) -> Result<IndexReport, IndexError> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let repo = opts.repo.clone().unwrap_or_else(|| repo_name(&root));
    progress.phase("reading git objects", 0);
    let dest = data.tree_dir(&repo, rev);
    // The snapshot is written under the writer lock, held until the run ends: a
    // concurrent run of the same ref could otherwise swap it meanwhile.
    let (own_lock, own_states);
    let held = match held {
        Some(h) => h,
        None => {
            own_lock = data.lock_writer()?;
            own_states = StateCache::default();
            Held {
                graph: None,
                lock: &own_lock,
                states: &own_states,
            }
        }
    };
    let (commit, files) = gitref::materialize(&root, rev, &dest)?;
    tracing::debug!(rev, commit, files, "snapshot written");
    let opts = IndexOptions {
        repo: Some(repo),
        ref_name: Some(rev.to_string()),
        commit: Some(commit),
        repo_root: Some(root.clone()),
        ..opts.clone()
    };
    index_repo_with(&dest, data, &opts, progress, Some(held))
}

/// Whether `rev` should be indexed from git objects rather than from the working
/// tree at `root`: `root` is a git repository, `rev` names a commit there, and it
/// is not the branch checked out.
pub fn is_other_git_ref(root: &Path, rev: &str) -> bool {
    let (checked_out, _) = git_ref(root);
    rev != checked_out && rev != "live" && gitref::resolve(root, rev).is_some()
}

/// Indexes the repository at `root` into the data dir.
pub fn index_repo(
    root: &Path,
    data: &DataDir,
    opts: &IndexOptions,
    progress: &dyn Progress,
) -> Result<IndexReport, IndexError> {
    index_repo_with(root, data, opts, progress, None)
}

/// What `open_for_write` gives a run: the writer lock it took (none when the
/// caller holds one), the graph it opened, and the copy of the database it
/// started.
type Opened = (Option<WriterLock>, Option<GraphStore>, Option<SavedCopy>);

/// Takes the data dir's writer lock (unless the caller holds it: `held`) and
/// opens its graph (`None` when there is none yet, or when a server's `shared`
/// store is used), first undoing a run killed before this one finished. A run of
/// its own that may write in place also starts copying the database aside.
fn open_for_write(
    data: &DataDir,
    opts: &IndexOptions,
    shared: Option<&GraphStore>,
    held: Option<&WriterLock>,
    repo: &str,
    ref_name: &str,
) -> Result<Opened, IndexError> {
    let lock = match held {
        Some(_) => None,
        None => Some(data.lock_writer()?),
    };
    // A server (`shared`) undid an interrupted run when it opened the graph;
    // since then its copy may be an earlier state protecting runs not yet
    // checkpointed (`DataDir::has_earlier_copy`), and the graph is open: nothing
    // to undo.
    if shared.is_none() {
        match data.restore_interrupted() {
            Ok(_) => {}
            // --force rebuilds aside whatever state the old files are in.
            Err(e) if opts.force => tracing::warn!("not undoing an interrupted run: {e}"),
            Err(e) => return Err(e.into()),
        }
    }
    if opts.commit.is_none() {
        // The working tree is indexed under this name now: a snapshot of a git
        // ref of the same name is obsolete.
        let snapshot = data.tree_dir(repo, ref_name);
        if snapshot.is_dir() {
            let _ = std::fs::remove_dir_all(&snapshot);
        }
    }
    // Leftovers of an interrupted full build are garbage now that we hold the lock.
    if let Err(e) = data.remove_stale_graphs()
        && !opts.force
    {
        return Err(e.into());
    }
    // An in-place run's copy of the database (see `SavedCopy`) starts before
    // the graph opens (opening reads the file, it does not write it).
    let saving = (shared.is_none() && !opts.force && data.exists())
        .then(|| SavedCopy::start(data, opts.defer_finish));
    let owned = match shared {
        None if data.exists() => match data.open_graph(&opts.graph) {
            Ok(g) => Some(g),
            // A damaged database cannot be updated, but --force can always
            // build a new one aside and publish it (other refs it held must then
            // be indexed again).
            Err(e) if opts.force => {
                tracing::warn!(
                    "the graph in {} cannot be opened ({e}); rebuilding it from scratch (index any other repos or refs it held again)",
                    data.root().display()
                );
                None
            }
            Err(e) => return Err(e.into()),
        },
        _ => None,
    };
    Ok((lock, owned, saving))
}

/// Indexes into a graph the caller already holds open read-write (a server that
/// keeps answering from it meanwhile): in-place runs write through `shared`, whose
/// readers see the previous state until the run commits. A full build is still
/// written aside; the report's `republished` then tells the caller to reopen.
pub fn index_repo_with(
    root: &Path,
    data: &DataDir,
    opts: &IndexOptions,
    progress: &dyn Progress,
    held: Option<Held<'_>>,
) -> Result<IndexReport, IndexError> {
    let started = Instant::now();
    let own_states = StateCache::default();
    let states = held.map_or(&own_states, |h| h.states);
    let shared = held.and_then(|h| h.graph);
    let held = held.map(|h| h.lock);
    if !root.is_dir() {
        return Err(IndexError::NotADirectory(root.to_path_buf()));
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let repo = opts.repo.clone().unwrap_or_else(|| repo_name(&root));
    let (detected_ref, commit) = match &opts.commit {
        Some(c) => (String::new(), c.clone()),
        None => git_ref(&root),
    };
    let ref_name = opts.ref_name.clone().unwrap_or(detected_ref);

    let mut walk_opts = opts.walk.clone();
    let data_root = data
        .root()
        .canonicalize()
        .unwrap_or_else(|_| data.root().to_path_buf());
    if !root.starts_with(&data_root) {
        walk_opts.exclude.push(data.root().to_path_buf());
    } else {
        walk_opts.parent_ignores = false;
    }
    progress.phase("walking", 0);
    let state_path = data.state_path(&repo, &ref_name);
    // A run of its own (the CLI's) reads the previous run's state while it walks
    // and opens the graph, unless this process kept it; the state is checked
    // against the graph's tag below.
    let preload = shared.is_none()
        && !opts.force
        && !opts.skip_imports
        && state_path.exists()
        && !states.has(&state_path);
    let preloaded = preload.then(|| {
        let path = state_path.clone();
        std::thread::spawn(move || RefState::load(&path, decode_imports))
    });
    let quick = match &opts.changed_paths {
        Some(paths) if !opts.force => {
            quick_walk(states, &root, &state_path, paths, walk_opts.max_file_size)
        }
        _ => None,
    };
    // With a quick walk only the changed files are read; the others are known.
    let only_changed: Option<HashSet<String>> = quick
        .as_ref()
        .and(opts.changed_paths.as_ref())
        .map(|p| p.iter().cloned().collect());
    // The walk runs beside taking the lock and opening the graph.
    let (walked, opened) = std::thread::scope(|s| {
        let walker = s.spawn(|| match quick {
            Some(w) => w,
            None => walk::walk(&root, &walk_opts),
        });
        let opened = open_for_write(data, opts, shared, held, &repo, &ref_name);
        (walker.join(), opened)
    });
    let mut walked = walked.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let (_lock, owned, early_copy) = opened?;
    let walk_found = opts
        .defer_finish
        .then(|| (walked.manifests.clone(), walked.has_src_dir));
    let mut diagnostics = std::mem::take(&mut walked.diagnostics);
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        files = walked.sources.len(),
        "walked"
    );

    let manifests: Vec<Manifest> = walked
        .manifests
        .iter()
        .filter_map(|(rel, abs)| {
            std::fs::read_to_string(abs).ok().map(|text| Manifest {
                path: rel.clone(),
                text,
            })
        })
        .collect();
    let layout = Layout::new(&repo, &manifests, walked.has_src_dir);
    let store: Option<&GraphStore> = shared.or(owned.as_ref());
    // Module and package names come from the manifests: when they change, every
    // file's names may change, so the ref is rebuilt as with --force.
    let layout_hash = {
        let mut sorted: Vec<&Manifest> = manifests.iter().collect();
        sorted.sort_by(|a, b| a.path.cmp(&b.path));
        let mut h = blake3::Hasher::new();
        // What extraction gives changed too: a ref indexed before is re-indexed.
        h.update(EXTRACTION.as_bytes());
        for m in sorted {
            h.update(m.path.as_bytes());
            h.update(&[0]);
            h.update(m.text.as_bytes());
            h.update(&[0]);
        }
        h.finalize().to_hex().to_string()
    };
    let mut force = opts.force;
    if let Some(st) = &store
        && !force
    {
        let stored = st.layout_hash(&repo, &ref_name)?;
        if !stored.is_empty() && stored != layout_hash {
            tracing::info!("manifests changed since the last run: re-indexing every file");
            force = true;
        }
    }
    // A full build (nothing indexed yet, or --force of the only repo/ref here) is
    // written aside with bulk COPY and swapped in; anything else is an in-place
    // transaction.
    let fresh = match &store {
        None => true,
        Some(st) => force && st.refs()?.iter().all(|(r, f)| *r == repo && *f == ref_name),
    };
    // An in-place write first saves the database aside (see
    // `DataDir::save_before_write`); every run writes (at least the ref's
    // `indexed_at`), so the copy runs while files are read, parsed and
    // resolved (a run of its own started it before opening the graph).
    let mut saving = match early_copy {
        // Manifests changed and this is the only ref: rebuilt aside, no copy.
        Some(_) if fresh => None,
        Some(copy) => Some(copy),
        None => (store.is_some() && !fresh).then(|| SavedCopy::start(data, opts.defer_finish)),
    };
    // What the previous run left: its resolution state, when it describes the
    // graph's current state. Without one (a damaged or lagging state file, a
    // data dir from an older cruxe) the run reads the ref back from the graph and
    // diffs every import edge instead.
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        "opened the graph"
    );
    let preloaded: Option<Option<RefState>> = preloaded.and_then(|h| h.join().ok());
    let prior: Option<RefState> = match &store {
        Some(st) if !force && !opts.skip_imports => match st.ref_indexed_at(&repo, &ref_name)? {
            Some(tag) => states.take(&state_path, &tag).or_else(|| {
                preloaded
                    .unwrap_or_else(|| RefState::load(&state_path, decode_imports))
                    .filter(|p| p.tag == tag)
            }),
            None => None,
        },
        _ => None,
    };
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        trusted_state = prior.is_some(),
        "loaded the state"
    );
    let existing: HashMap<String, String> = match (&store, &prior) {
        (_, Some(p)) => p
            .files
            .iter()
            .zip(&p.meta)
            .map(|(f, m)| (f.path.clone(), m.content_hash.clone()))
            .collect(),
        (Some(st), None) if !force => st.file_hashes(&repo, &ref_name)?,
        _ => HashMap::new(),
    };
    let only_changed = if only_changed.is_some() && prior.is_none() {
        // The state in memory was not the graph's: walk after all.
        let mut w = walk::walk(&root, &walk_opts);
        diagnostics = std::mem::take(&mut w.diagnostics);
        walked = w;
        None
    } else {
        only_changed
    };
    tracing::debug!(
        quick = only_changed.is_some(),
        files = walked.sources.len(),
        "sources"
    );

    let extractor = Extractor::new().map_err(|e| IndexError::Parsers(e.to_string()))?;
    progress.phase("parsing", walked.sources.len() as u64);
    let ctx = FileContext {
        repo: &repo,
        ref_name: &ref_name,
        layout: &layout,
        extractor: &extractor,
        existing: &existing,
        skip_imports: opts.skip_imports,
        only: only_changed.as_ref(),
    };
    let t_parse = Instant::now();
    let outcomes: Vec<(String, Outcome)> = walked
        .sources
        .par_iter()
        .map_init(Parser::new, |parser, src| {
            let outcome = process_file(&ctx, parser, src);
            progress.advance(1);
            (src.path.clone(), outcome)
        })
        .collect();

    tracing::debug!(
        ms = t_parse.elapsed().as_millis() as u64,
        "read, hash, parse"
    );
    let mut report = IndexReport {
        repo: repo.clone(),
        ref_name: ref_name.clone(),
        commit: commit.clone(),
        ..IndexReport::default()
    };
    let mut present: HashSet<String> = HashSet::new();
    let mut new_files: Vec<(FileRows, Language, Vec<RawImport>)> = Vec::new();
    let mut changes = Changes {
        repo: repo.clone(),
        repo_root: opts
            .repo_root
            .as_deref()
            .unwrap_or(&root)
            .to_string_lossy()
            .into_owned(),
        ref_name: ref_name.clone(),
        commit,
        indexed_at: now_rfc3339(),
        replace_all: force,
        layout_hash,
        ..Changes::default()
    };
    for (path, outcome) in outcomes {
        match outcome {
            Outcome::Unchanged => {
                report.unchanged += 1;
                present.insert(path);
            }
            Outcome::Parsed(parsed) => {
                let Parsed {
                    rows,
                    language,
                    imports,
                    syntax_errors,
                } = *parsed;
                report.parsed += 1;
                if syntax_errors {
                    report.syntax_error_files += 1;
                    diagnostics.push(Diagnostic {
                        path: path.clone(),
                        problem: "syntax errors; indexed what could be parsed".into(),
                    });
                }
                let mut rows = rows;
                if existing.contains_key(&path) {
                    changes.remove_paths.push(path.clone());
                    rows.existing = true;
                    rows.same_names = prior.as_ref().is_some_and(|p| {
                        p.files
                            .binary_search_by(|f| f.path.as_str().cmp(&path))
                            .is_ok_and(|at| {
                                let (f, m) = (&p.files[at], &p.meta[at]);
                                f.language == language
                                    && f.module == rows.file.module
                                    && f.package == rows.file.package
                                    && m.imports_text == rows.file.imports
                            })
                    });
                }
                present.insert(path);
                new_files.push((rows, language, imports));
            }
            Outcome::Skipped(d) => diagnostics.push(d),
        }
    }
    report.files = present.len();
    let mut gone: Vec<String> = existing
        .keys()
        .filter(|p| !present.contains(*p))
        .cloned()
        .collect();
    gone.sort();
    report.removed = gone.len();
    changes.remove_paths.extend(gone.iter().cloned());
    changes.drop_files = gone;

    // Nothing changed, the commit is the same and the search index is in step:
    // the graph, its state and the search index already describe this tree, so
    // nothing is written (no copy, no transaction, no checkpoint).
    if let (Some(st), Some(p)) = (store, &prior)
        && !force
        && !fresh
        && report.parsed == 0
        && report.removed == 0
        && st
            .ref_version(&repo, &ref_name)?
            .is_some_and(|(_, c)| c == changes.commit)
        && search::read_tag(&data.search_dir(&repo, &ref_name)).as_deref() == Some(p.tag.as_str())
    {
        // The copy is not needed: stopped, and dropped (a CLI run's).
        drop(saving.take());
        set_totals(&mut report, p);
        report.indexed_at = p.tag.clone();
        diagnostics.sort_by(|a, b| a.path.cmp(&b.path));
        if opts.defer_finish
            && let Some(p) = prior
        {
            remember(states, &state_path, p, false, walk_found, &diagnostics);
        }
        report.diagnostics = diagnostics;
        report.seconds = started.elapsed().as_secs_f64();
        progress.done();
        tracing::debug!("nothing changed: nothing written");
        return Ok(report);
    }

    // The rows go to the graph (and to a full build's search index, written on
    // a thread from now on, beside resolution and the bulk load); the language
    // and raw imports of each file go to resolution.
    let (rows, for_resolution): (Vec<FileRows>, Vec<(Language, Vec<RawImport>)>) = new_files
        .into_iter()
        .map(|(rows, language, imports)| (rows, (language, imports)))
        .unzip();
    let rows = std::sync::Arc::new(rows);
    let new_files = || {
        rows.iter()
            .zip(&for_resolution)
            .map(|(rows, (language, imports))| (rows, language, imports))
    };
    let mut early_search = fresh.then(|| {
        let (root, rows) = (root.clone(), std::sync::Arc::clone(&rows));
        let dir = data.search_dir(&repo, &ref_name);
        let writer_mb = opts.writer_mb();
        SearchThread(Some(std::thread::spawn(move || {
            search_from_rows(&root, &dir, &rows, writer_mb)
        })))
    });

    // A changed file's stored symbols (known from the state) are diffed against
    // its new ones: symbols that stay keep their node and the edges into it
    // (imports included) and are rewritten in place.
    if let Some(p) = &prior
        && !force
    {
        for (rows, _, _) in new_files().filter(|(rows, _, _)| rows.existing) {
            let Ok(at) = p
                .files
                .binary_search_by(|f| f.path.as_str().cmp(rows.file.path.as_str()))
            else {
                continue;
            };
            if let Some(tree) = p.meta[at].tree(&p.files[at]) {
                changes.symbol_diffs.insert(
                    rows.file.path.clone(),
                    SymbolDiff::between(&tree, &rows.symbols),
                );
            }
        }
        tracing::debug!(
            files = changes.symbol_diffs.len(),
            kept = changes
                .symbol_diffs
                .values()
                .map(|d| d.keep.len())
                .sum::<usize>(),
            "diffed the symbols of changed files"
        );
    }

    // Imports are re-resolved over the whole ref whenever anything changed, so
    // edges into changed files are right too: the result equals a fresh index.
    // Only the edges of files whose resolution changed are written.
    let mut next_state: Option<RefState> = None;
    // Without a usable state (a data dir from an older cruxe, a damaged file) the
    // ref is resolved and its edges diffed now, even when no file changed, so
    // that the next change is cheap (a server pays this at start, not on the
    // first saved change).
    let changed = report.parsed > 0 || report.removed > 0 || force || prior.is_none();
    if !opts.skip_imports && changed {
        progress.phase("resolving imports", 0);
        let t_resolve = Instant::now();
        let replaced: HashSet<&str> = changes.remove_paths.iter().map(String::as_str).collect();
        let (mut base, trusted) = match (prior, &store) {
            (Some(p), _) => (p, true),
            (None, Some(st)) if !force => {
                (state_from_graph(st, &repo, &ref_name, &existing)?, false)
            }
            _ => (RefState::default(), false),
        };
        // The lookup keys whose tables change: everything the replaced files
        // contributed before and what the new versions contribute now.
        let mut touched: HashSet<u64> = HashSet::new();
        let mut old_fps: HashMap<String, Fingerprint> = HashMap::new();
        let mut old_files: HashMap<String, RFile> = HashMap::new();
        let mut entries: Vec<(RFile, FileMeta, bool)> = Vec::with_capacity(base.files.len());
        for (f, m) in std::mem::take(&mut base.files)
            .into_iter()
            .zip(std::mem::take(&mut base.meta))
        {
            if replaced.contains(f.path.as_str()) {
                old_fps.insert(f.path.clone(), m.fingerprint);
                old_files.insert(f.path.clone(), f);
            } else {
                entries.push((f, m, false));
            }
        }
        for (rows, language, imports) in new_files() {
            let f = RFile {
                id: rows.file.id.clone(),
                path: rows.file.path.clone(),
                language: *language,
                module: rows.file.module.clone(),
                package: rows.file.package.clone(),
                imports: imports.clone(),
                symbols: rows
                    .symbols
                    .iter()
                    .map(|si| RSymbol {
                        id: si.row.id.clone(),
                        qualified_name: si.row.qualified_name.clone(),
                        kind: si.row.kind.clone(),
                    })
                    .collect(),
            };
            touched.extend(resolve::changed_keys(
                old_files.remove(&f.path).as_ref(),
                Some(&f),
            ));
            let position: HashMap<&str, u32> = rows
                .symbols
                .iter()
                .enumerate()
                .map(|(i, si)| (si.row.id.as_str(), i as u32))
                .collect();
            let m = FileMeta {
                content_hash: rows.file.content_hash.clone(),
                imports_text: rows.file.imports.clone(),
                symbols: rows.symbols.len() as u32,
                parents: rows
                    .symbols
                    .iter()
                    .map(|si| {
                        si.parent
                            .as_deref()
                            .and_then(|p| position.get(p).copied())
                            .unwrap_or(state::FILE_PARENT)
                    })
                    .collect(),
                marks: rows
                    .symbols
                    .iter()
                    .map(crate::store::graph::symbol_marks)
                    .collect(),
                ..FileMeta::default()
            };
            entries.push((f, m, true));
        }
        for gone in old_files.values() {
            touched.extend(resolve::changed_keys(Some(gone), None));
        }
        entries.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        let mut rfiles: Vec<RFile> = Vec::with_capacity(entries.len());
        let mut meta: Vec<FileMeta> = Vec::with_capacity(entries.len());
        let mut parsed_now: Vec<bool> = Vec::with_capacity(entries.len());
        for (f, m, p) in entries {
            rfiles.push(f);
            meta.push(m);
            parsed_now.push(p);
        }
        // A file appearing or disappearing where a `#[path]` points changes that
        // module's table entry.
        let appeared_or_gone = new_files()
            .filter(|(rows, _, _)| !rows.existing)
            .map(|(rows, _, _)| rows.file.path.as_str())
            .chain(changes.drop_files.iter().map(String::as_str));
        let appeared_or_gone: HashSet<&str> =
            appeared_or_gone.filter(|p| p.ends_with(".rs")).collect();
        if !appeared_or_gone.is_empty() {
            touched.extend(resolve::rust_path_targets(&rfiles, &appeared_or_gone));
        }
        // With a trusted state only files whose lookups touch a changed key are
        // resolved again (and the changed files themselves); others keep their
        // edges, which are still right.
        let only: Option<Vec<bool>> = trusted.then(|| {
            meta.iter()
                .zip(&parsed_now)
                .map(|(m, &p)| p || m.deps.iter().any(|d| touched.contains(d)))
                .collect()
        });
        tracing::debug!(
            ms = t_resolve.elapsed().as_millis() as u64,
            to_resolve = only
                .as_ref()
                .map_or(rfiles.len(), |o| o.iter().filter(|x| **x).count()),
            "loaded the ref"
        );
        let resolved = resolve::resolve_files(&rfiles, &layout, only.as_deref());
        report.imports_resolved = resolved.iter().filter(|r| r.is_some()).count();
        let mut all_rows: Vec<ImportRow> = Vec::new();
        let mut files_rewritten: Vec<String> = Vec::new();
        let mut rows_rewritten: Vec<ImportRow> = Vec::new();
        // Edges into the symbols of a changed file went with them (its symbols
        // are re-created): their importers are rewritten even when unchanged.
        let recreated: HashSet<&str> = new_files()
            .filter(|(rows, _, _)| rows.existing)
            .flat_map(|(rows, _, _)| {
                let keep = changes.symbol_diffs.get(&rows.file.path).map(|d| &d.keep);
                rows.symbols
                    .iter()
                    .map(|si| si.row.id.as_str())
                    .filter(move |id| keep.is_none_or(|k| !k.contains(*id)))
            })
            .collect();
        let mut n_edges = 0usize;
        for (((f, m), r), parsed) in rfiles
            .iter()
            .zip(meta.iter_mut())
            .zip(resolved)
            .zip(&parsed_now)
        {
            let Some(r) = r else { continue };
            n_edges += r.edges.len();
            let fp = state::fingerprint(&r.edges);
            let old = if *parsed {
                old_fps.get(&f.path).copied()
            } else {
                Some(m.fingerprint)
            };
            let rewrite = old != Some(fp)
                || r.edges.iter().any(
                    |e| matches!(&e.target, Target::Symbol(id) if recreated.contains(id.as_str())),
                );
            m.fingerprint = fp;
            m.deps = r.deps;
            m.edges = r.edges.len() as u32;
            m.unresolved = r
                .edges
                .iter()
                .filter(|e| matches!(e.target, Target::External(_)))
                .count() as u32;
            m.externals = r
                .edges
                .iter()
                .filter_map(|e| match &e.target {
                    Target::External(name) => Some(name.clone()),
                    _ => None,
                })
                .collect();
            m.externals.dedup();
            if trusted {
                if rewrite {
                    files_rewritten.push(f.id.clone());
                    rows_rewritten.extend(r.edges.iter().map(import_row));
                }
            } else {
                all_rows.extend(r.edges.iter().map(import_row));
            }
        }
        tracing::debug!(
            ms = t_resolve.elapsed().as_millis() as u64,
            edges = n_edges,
            rewritten = files_rewritten.len(),
            "resolved imports"
        );
        changes.imports = Some(if trusted {
            let mut externals: Vec<String> = meta
                .iter()
                .flat_map(|m| m.externals.iter().cloned())
                .collect();
            externals.sort();
            externals.dedup();
            ImportChanges::Files {
                files: files_rewritten,
                rows: rows_rewritten,
                externals,
            }
        } else {
            ImportChanges::All(all_rows)
        });
        next_state = Some(RefState {
            tag: changes.indexed_at.clone(),
            files: rfiles,
            meta,
        });
    } else if !opts.skip_imports
        && let Some(p) = prior
    {
        next_state = Some(RefState {
            tag: changes.indexed_at.clone(),
            ..p
        });
    }
    changes.add = rows;

    let previous_indexed_at = match store {
        Some(st) if !fresh && !force => st.ref_indexed_at(&repo, &ref_name)?,
        _ => None,
    };
    progress.phase("writing", 0);
    let t_write = Instant::now();
    let reopened;
    let mut in_place = false;
    let mut searched: Option<Result<(), IndexError>> = None;
    let store: &GraphStore = match store {
        Some(st) if !fresh => {
            let t = Instant::now();
            let saved_ms = saving
                .as_mut()
                .expect("started for in-place writes")
                .wait()?;
            st.apply(&changes)?;
            let applied_ms = t.elapsed().as_millis() as u64;
            if opts.defer_finish {
                report.finish_pending = true;
            } else {
                st.checkpoint()?;
                data.discard_saved();
            }
            let checkpoint_ms = t.elapsed().as_millis() as u64 - applied_ms;
            tracing::debug!(saved_ms, applied_ms, checkpoint_ms, "in-place write");
            in_place = true;
            st
        }
        _ => {
            drop(owned);
            changes.replace_all = false;
            // A full build writes the search index from the parsed files while
            // imports are resolved and the graph is loaded (each mostly waits on
            // its own work: Kuzu's COPY, Tantivy's indexing); its tag is written
            // only once the graph is in place.
            let graph = data.build_aside(&opts.graph, |st| st.load_fresh(&changes));
            let search = early_search.take().and_then(SearchThread::join);
            graph?;
            searched = match search {
                Some(r) => Some(r),
                None => {
                    tracing::warn!(
                        "the search index writer panicked; rebuilding it from the graph"
                    );
                    None
                }
            };
            report.republished = true;
            reopened = data.open_graph(&opts.graph)?;
            &reopened
        }
    };
    tracing::debug!(ms = t_write.elapsed().as_millis() as u64, "wrote the graph");
    // The state describes the state just committed; a kill before it is renamed
    // into place leaves the old one, whose tag no longer matches. It is saved
    // while the search index is brought up to date.
    let save_state = || match &next_state {
        Some(_) if report.finish_pending => {}
        Some(st) => {
            let t = Instant::now();
            if let Err(e) = st.save(&state_path) {
                tracing::warn!(
                    "could not save the resolution state ({e}); the next run reads the graph instead"
                );
                let _ = std::fs::remove_file(&state_path);
            }
            tracing::debug!(
                ms = t.elapsed().as_millis() as u64,
                "saved the resolution state"
            );
        }
        None => {
            let _ = std::fs::remove_file(&state_path);
        }
    };
    progress.phase("search index", 0);
    let t_search = Instant::now();
    let result = std::thread::scope(|s| {
        let saver = s.spawn(save_state);
        let result = match searched {
            Some(Ok(())) => search::write_tag(
                &data.search_dir(&changes.repo, &changes.ref_name),
                &changes.indexed_at,
            )
            .map_err(IndexError::from),
            // Written beside the graph and failed: once more, from the graph.
            Some(Err(e)) => {
                tracing::warn!("writing the search index beside the graph failed ({e}); retrying");
                update_search(
                    &root,
                    data,
                    store,
                    &changes,
                    previous_indexed_at.as_deref(),
                    opts.writer_mb(),
                )
            }
            None => update_search(
                &root,
                data,
                store,
                &changes,
                previous_indexed_at.as_deref(),
                opts.writer_mb(),
            ),
        };
        if let Err(panic) = saver.join() {
            std::panic::resume_unwind(panic);
        }
        result
    });
    if let Err(e) = result {
        // The search index is derived from the graph: without its tag it is
        // rebuilt when next opened, so this run still counts.
        tracing::warn!("the search index was not updated ({e}); it will be rebuilt when next used");
        let _ = std::fs::remove_file(
            data.search_dir(&changes.repo, &changes.ref_name)
                .join(search::TAG_FILE),
        );
    }
    tracing::debug!(
        ms = t_search.elapsed().as_millis() as u64,
        "wrote the search index"
    );
    // The ref's totals: from the state when there is one (counting them in the
    // graph scans every edge), else from the graph.
    match &next_state {
        Some(st) => set_totals(&mut report, st),
        None => {
            if let Some(st) = store
                .status()?
                .into_iter()
                .find(|s| s.repo == repo && s.ref_name == ref_name)
            {
                report.symbols = st.symbols;
                report.import_edges = st.import_edges;
                report.unresolved_imports = st.unresolved_imports;
            }
        }
    }
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path));
    if opts.defer_finish
        && let Some(st) = next_state
    {
        remember(
            states,
            &state_path,
            st,
            report.finish_pending,
            walk_found,
            &diagnostics,
        );
    }
    report.indexed_at = changes.indexed_at.clone();
    if in_place && !changes.replace_all {
        report.changes = Some(std::sync::Arc::new(changes));
    }
    progress.done();
    report.diagnostics = diagnostics;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The copy of the database an in-place run makes before it writes, taken on a
/// thread. Dropped without `wait` (the run failed, or found nothing to write),
/// it stops the copy and discards it (a CLI run's): the database was not touched.
struct SavedCopy {
    data: DataDir,
    older_ok: bool,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<Result<u64, DataDirError>>>,
    waited: bool,
}

impl SavedCopy {
    fn start(data: &DataDir, older_ok: bool) -> SavedCopy {
        let copy = data.clone();
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = cancel.clone();
        SavedCopy {
            data: data.clone(),
            older_ok,
            cancel,
            handle: Some(std::thread::spawn(move || {
                let t = Instant::now();
                copy.save_before_write(older_ok, &|| {
                    stop.load(std::sync::atomic::Ordering::Relaxed)
                })?;
                Ok(t.elapsed().as_millis() as u64)
            })),
            waited: false,
        }
    }

    /// Waits for the copy; its duration in ms.
    fn wait(&mut self) -> Result<u64, DataDirError> {
        self.waited = true;
        match self.handle.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(DataDirError::Io {
                path: self.data.root().to_path_buf(),
                message: "the copy of the database before writing failed".into(),
            }),
            None => Ok(0),
        }
    }
}

impl Drop for SavedCopy {
    fn drop(&mut self) {
        if !self.waited {
            self.cancel
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = self.wait();
            // A server's copy may protect runs not yet checkpointed: it stays.
            if !self.older_ok {
                self.data.discard_saved();
            }
        }
    }
}

/// A resolved edge as a graph row.
fn import_row(e: &Edge) -> ImportRow {
    let (label, to) = match &e.target {
        Target::Symbol(id) => (ImportLabel::Symbol, id.clone()),
        Target::File(id) => (ImportLabel::File, id.clone()),
        Target::External(name) => (ImportLabel::External, name.clone()),
    };
    ImportRow {
        from: e.from.clone(),
        label,
        to,
        to_name: e.to_name.clone(),
        line: e.line,
        alias: e.alias.clone(),
    }
}

/// The resolution inputs of a ref read back from the graph (fingerprints
/// unknown), for a run without a trustworthy state.
fn state_from_graph(
    st: &GraphStore,
    repo: &str,
    ref_name: &str,
    hashes: &HashMap<String, String>,
) -> Result<RefState, IndexError> {
    let (stored_files, stored_symbols) = st.load_ref(repo, ref_name)?;
    let parent_of: HashMap<String, String> = st
        .symbol_parents(repo, ref_name)?
        .into_iter()
        .filter(|(_, _, from_file)| !from_file)
        .map(|(p, c, _)| (c, p))
        .collect();
    let mut by_path: HashMap<String, Vec<RSymbol>> = HashMap::new();
    for sym in stored_symbols {
        by_path.entry(sym.path).or_default().push(RSymbol {
            id: sym.id,
            qualified_name: sym.qualified_name,
            kind: sym.kind,
        });
    }
    let mut state = RefState::default();
    for f in stored_files {
        let Some(language) = Language::from_path(&f.path) else {
            continue;
        };
        let symbols = by_path.remove(&f.path).unwrap_or_default();
        let position: HashMap<&str, u32> = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.as_str(), i as u32))
            .collect();
        let parents = symbols
            .iter()
            .map(|s| {
                parent_of
                    .get(&s.id)
                    .and_then(|p| position.get(p.as_str()).copied())
                    .unwrap_or(state::FILE_PARENT)
            })
            .collect();
        state.meta.push(FileMeta {
            content_hash: hashes.get(&f.path).cloned().unwrap_or_default(),
            imports_text: f.imports.clone(),
            symbols: symbols.len() as u32,
            parents,
            ..FileMeta::default()
        });
        state.files.push(RFile {
            imports: decode_imports(&f.imports),
            symbols,
            id: f.id,
            path: f.path,
            language,
            module: f.module,
            package: f.package,
        });
    }
    Ok(state)
}

/// A full build's search index, from the files just parsed: every document is
/// replaced. The tag is left to the caller.
fn search_from_rows(
    root: &Path,
    dir: &Path,
    add: &[FileRows],
    writer_mb: usize,
) -> Result<(), IndexError> {
    // Until the new tag is written the index is not trusted (a kill here leaves
    // it to be rebuilt when next used).
    let _ = std::fs::remove_file(dir.join(search::TAG_FILE));
    let index = SearchIndex::open_dir(dir)?.with_writer_mb(writer_mb);
    let texts = source_texts(root, add);
    index.write(true, &[], symbol_docs(add, &texts))?;
    Ok(())
}

/// A full build's search index writer (`search_from_rows` on a thread). Dropped
/// without `join` (the run failed), it is still waited for: no writer outlives
/// the run.
struct SearchThread(Option<std::thread::JoinHandle<Result<(), IndexError>>>);

impl SearchThread {
    /// Its result; `None` when it panicked.
    fn join(mut self) -> Option<Result<(), IndexError>> {
        self.0.take().and_then(|h| h.join().ok())
    }
}

impl Drop for SearchThread {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// The source of each added file (empty when it can no longer be read).
fn source_texts(root: &Path, add: &[FileRows]) -> Vec<String> {
    add.iter()
        .map(|f| std::fs::read_to_string(root.join(&f.file.path)).unwrap_or_default())
        .collect()
}

/// Search documents of the added files' symbols: each symbol's row and its
/// source (`texts` in `add` order).
fn symbol_docs<'a>(
    add: &'a [FileRows],
    texts: &'a [String],
) -> impl Iterator<Item = (&'a SymbolRow, &'a str)> {
    add.iter().zip(texts).flat_map(move |(f, text)| {
        f.symbols.iter().map(move |si| {
            (
                &si.row,
                search::body_of(text, si.byte_start as usize, si.byte_end as usize),
            )
        })
    })
}

/// Brings the ref's search index to the state the graph just committed: the
/// changed files' documents replaced when the index matched the previous state,
/// else everything rebuilt from the graph. The tag is written last, so a kill
/// before it leaves an index that the next open or run rebuilds.
fn update_search(
    root: &Path,
    data: &DataDir,
    store: &GraphStore,
    changes: &Changes,
    previous_indexed_at: Option<&str>,
    writer_mb: usize,
) -> Result<(), IndexError> {
    let dir = data.search_dir(&changes.repo, &changes.ref_name);
    let index = SearchIndex::open_dir(&dir)?.with_writer_mb(writer_mb);
    let in_step =
        previous_indexed_at.is_some() && search::read_tag(&dir).as_deref() == previous_indexed_at;
    if in_step {
        // A changed file's documents are all replaced (a file has tens of
        // symbols; re-adding them costs less than keeping ids searchable).
        let texts = source_texts(root, &changes.add);
        let docs = symbol_docs(&changes.add, &texts);
        index.write(false, &changes.remove_paths, docs)?;
    } else {
        let cat = catalog::load(store, &changes.repo, &changes.ref_name)?;
        index.rebuild(&cat, Some(root))?;
    }
    search::write_tag(&dir, &changes.indexed_at)?;
    Ok(())
}

struct FileContext<'a> {
    repo: &'a str,
    ref_name: &'a str,
    layout: &'a Layout,
    extractor: &'a Extractor,
    existing: &'a HashMap<String, String>,
    skip_imports: bool,
    /// Read only these files; other known files are unchanged (a quick walk).
    only: Option<&'a HashSet<String>>,
}

fn process_file(ctx: &FileContext<'_>, parser: &mut Parser, src: &SourceFile) -> Outcome {
    if ctx.only.is_some_and(|o| !o.contains(&src.path)) && ctx.existing.contains_key(&src.path) {
        return Outcome::Unchanged;
    }
    let skip = |problem: String| {
        Outcome::Skipped(Diagnostic {
            path: src.path.clone(),
            problem,
        })
    };
    let bytes = match std::fs::read(&src.abs_path) {
        Ok(b) => b,
        Err(e) => return skip(format!("unreadable: {e}")),
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return skip("binary file; skipped".into());
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if ctx.existing.get(&src.path) == Some(&hash) {
        return Outcome::Unchanged;
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return skip(format!(
                "invalid UTF-8 at byte {}; skipped",
                e.utf8_error().valid_up_to()
            ));
        }
    };
    let module = ctx.layout.module_info(&src.path, src.language);
    let extracted =
        ctx.extractor
            .extract_with(parser, src.language, &text, &module, !ctx.skip_imports);
    let mut rows = file_rows(ctx, src, &text, hash, &module, extracted.symbols);
    rows.file.imports = encode_imports(&extracted.imports);
    Outcome::Parsed(Box::new(Parsed {
        rows,
        language: src.language,
        imports: extracted.imports,
        syntax_errors: extracted.has_syntax_errors,
    }))
}

/// Graph rows for one file: ids unique per (repo, ref), stable ids per definition.
fn file_rows(
    ctx: &FileContext<'_>,
    src: &SourceFile,
    text: &str,
    content_hash: String,
    module: &ModuleInfo,
    symbols: Vec<model::Symbol>,
) -> FileRows {
    let fid = file_id(ctx.repo, ctx.ref_name, &src.path);
    let mut symbols = symbols;
    cap_nesting(&mut symbols, crate::store::catalog::MAX_DEPTH);
    let mut seen: HashMap<(String, &'static str), u32> = HashMap::new();
    let ids: Vec<String> = symbols
        .iter()
        .map(|s| {
            let n = seen
                .entry((s.qualified_name.clone(), s.kind.as_str()))
                .or_insert(0);
            *n += 1;
            symbol_id(ctx.repo, ctx.ref_name, &src.path, s, *n)
        })
        .collect();
    let inserts = symbols
        .iter()
        .enumerate()
        .map(|(i, s)| SymbolInsert {
            row: SymbolRow {
                id: ids[i].clone(),
                stable_id: model::stable_id(src.language, &s.qualified_name, s.kind, &s.signature),
                name: s.name.clone(),
                kind: s.kind.as_str().to_string(),
                qualified_name: s.qualified_name.clone(),
                path: src.path.clone(),
                language: src.language.as_str().to_string(),
                line_start: i64::from(s.line_start),
                line_end: i64::from(s.line_end),
                signature: s.signature.clone(),
                visibility: s.visibility.clone(),
                doc: s.doc.clone(),
            },
            byte_start: i64::from(s.byte_start),
            byte_end: i64::from(s.byte_end),
            parent: s.parent.map(|p| ids[p].clone()),
            body_hash: {
                let body = search::body_of(text, s.byte_start as usize, s.byte_end as usize);
                let h = blake3::hash(body.as_bytes());
                u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"))
            },
        })
        .collect();
    FileRows {
        file: FileRow {
            id: fid,
            path: src.path.clone(),
            language: src.language.as_str().to_string(),
            module: module.module.clone(),
            package: module.package.clone(),
            content_hash,
            line_count: text.lines().count() as i64,
            size: text.len() as i64,
            imports: String::new(),
        },
        symbols: inserts,
        existing: false,
        same_names: false,
    }
}

/// Nesting deeper than `max` levels (generated code) is flattened at level `max`:
/// the graph's variable-length queries, the catalog and the deletion of a file's
/// symbols all stop there, so a deeper symbol would be out of their reach.
fn cap_nesting(symbols: &mut [model::Symbol], max: usize) {
    let depth_of = |symbols: &[model::Symbol], mut i: usize| -> usize {
        let mut d = 1;
        while let Some(p) = symbols[i].parent {
            d += 1;
            if d > symbols.len() + 1 {
                break; // a cycle would be a bug upstream; do not loop
            }
            i = p;
        }
        d
    };
    for i in 0..symbols.len() {
        while depth_of(symbols, i) > max {
            let p = symbols[i].parent.expect("deeper than 1 has a parent");
            symbols[i].parent = symbols[p].parent;
        }
    }
}

/// `s_` + 24 hex digits of blake3 over where the definition is and what it is;
/// `ordinal` separates same-named definitions of one file.
fn symbol_id(repo: &str, ref_name: &str, path: &str, s: &model::Symbol, ordinal: u32) -> String {
    let mut h = blake3::Hasher::new();
    for part in [repo, ref_name, path, s.kind.as_str(), &s.qualified_name] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    h.update(&ordinal.to_le_bytes());
    format!("s_{}", &h.finalize().to_hex()[..24])
}

/// The folder name of the repository root.
pub fn repo_name(root: &Path) -> String {
    root.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "repo".to_string())
}

/// (ref name, commit): the checked-out branch, the short hash when detached, or
/// (`live`, "") outside git.
pub fn git_ref(root: &Path) -> (String, String) {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (!s.is_empty()).then_some(s)
    };
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        // An empty repository has a branch but no commit yet.
        return match git(&["symbolic-ref", "--short", "HEAD"]) {
            Some(branch) => (branch, String::new()),
            None => ("live".to_string(), String::new()),
        };
    };
    let name = match git(&["symbolic-ref", "--short", "-q", "HEAD"]) {
        Some(branch) => branch,
        None => commit.chars().take(7).collect(),
    };
    (name, commit)
}

/// Now, in RFC 3339 with nanoseconds: it also tags the derived indexes (search,
/// resolution state) with the graph state they describe, so two runs within one
/// second must not share it.
pub fn now_rfc3339() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_nanos()
    )
}

/// A file's raw imports as stored on its `File` node (compact JSON arrays), so an
/// unchanged file's imports can be re-resolved without parsing it again.
fn encode_imports(imports: &[RawImport]) -> String {
    use serde_json::json;
    let items: Vec<serde_json::Value> = imports
        .iter()
        .map(|i| {
            let spec = match &i.spec {
                ImportSpec::RustUse(segs) => json!(["ru", segs]),
                ImportSpec::RustMod { name, paths } => json!(["rm", name, paths]),
                ImportSpec::RustExternCrate(name) => json!(["re", name]),
                ImportSpec::Python { module, name } => json!(["py", module, name]),
                ImportSpec::Ts { specifier, name } => json!(["ts", specifier, name]),
                ImportSpec::Go { path } => json!(["go", path]),
            };
            if i.scope.is_empty() {
                json!([i.line, i.to_name, i.alias, i.reexport, spec])
            } else {
                json!([i.line, i.to_name, i.alias, i.reexport, spec, i.scope])
            }
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

fn decode_imports(text: &str) -> Vec<RawImport> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str(text) else {
        return Vec::new();
    };
    let str_at =
        |v: &serde_json::Value, i: usize| v.get(i).and_then(|x| x.as_str()).map(str::to_string);
    items
        .iter()
        .filter_map(|it| {
            let spec_v = it.get(4)?;
            let spec = match spec_v.get(0)?.as_str()? {
                "ru" => ImportSpec::RustUse(
                    spec_v
                        .get(1)?
                        .as_array()?
                        .iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect(),
                ),
                "rm" => ImportSpec::RustMod {
                    name: str_at(spec_v, 1)?,
                    paths: spec_v
                        .get(2)
                        .and_then(|p| p.as_array())
                        .map(|ps| {
                            ps.iter()
                                .filter_map(|p| p.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                },
                "re" => ImportSpec::RustExternCrate(str_at(spec_v, 1)?),
                "py" => ImportSpec::Python {
                    module: str_at(spec_v, 1)?,
                    name: str_at(spec_v, 2),
                },
                "ts" => ImportSpec::Ts {
                    specifier: str_at(spec_v, 1)?,
                    name: str_at(spec_v, 2),
                },
                "go" => ImportSpec::Go {
                    path: str_at(spec_v, 1)?,
                },
                _ => return None,
            };
            Some(RawImport {
                line: u32::try_from(it.get(0)?.as_u64()?).ok()?,
                to_name: str_at(it, 1)?,
                alias: str_at(it, 2).unwrap_or_default(),
                reexport: it.get(3).and_then(|v| v.as_bool()).unwrap_or(false),
                scope: str_at(it, 5).unwrap_or_default(),
                spec,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_round_trip_through_their_stored_form() {
        let imports = vec![
            RawImport {
                scope: "tests::inner{}".into(),
                line: 3,
                to_name: "crate::a::B".into(),
                alias: "C".into(),
                reexport: true,
                spec: ImportSpec::RustUse(vec!["crate".into(), "a".into(), "B".into()]),
            },
            RawImport {
                scope: String::new(),
                line: 4,
                to_name: "foo".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::RustMod {
                    name: "foo".into(),
                    paths: vec!["x.rs".into(), "y/mod.rs".into()],
                },
            },
            RawImport {
                scope: String::new(),
                line: 5,
                to_name: "..a.b".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::Python {
                    module: "..a".into(),
                    name: Some("b".into()),
                },
            },
            RawImport {
                scope: String::new(),
                line: 6,
                to_name: "./x".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::Ts {
                    specifier: "./x".into(),
                    name: None,
                },
            },
            RawImport {
                scope: String::new(),
                line: 7,
                to_name: "fmt".into(),
                alias: "f".into(),
                reexport: false,
                spec: ImportSpec::Go { path: "fmt".into() },
            },
            RawImport {
                scope: String::new(),
                line: 8,
                to_name: "serde".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::RustExternCrate("serde".into()),
            },
        ];
        assert_eq!(decode_imports(&encode_imports(&imports)), imports);
        assert!(decode_imports("not json").is_empty());
    }
}
