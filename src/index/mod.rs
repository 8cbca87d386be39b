//! The index pipeline: walk → read and hash → parse and extract (in parallel, only
//! files whose content changed) → one atomic graph write → report.
//!
//! Architecture invariant: bad input never fails a run. Unreadable, binary, huge or
//! non-UTF-8 files and syntax errors become diagnostics in the report; only a
//! failure of the data dir itself (locked, corrupt, disk full) is an error.

mod cache;
mod edges;
mod parse;
mod run;
mod searching;
mod spill;
pub mod state;
mod write;

pub use cache::{Held, StateCache};
pub use run::index_repo_with;
pub use searching::merge_search_tail;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::source::gitref;
use crate::source::walk::{Diagnostic, WalkOptions};
use crate::store::datadir::{DataDir, DataDirError};
use crate::store::graph::{Changes, GraphConfig, GraphError, GraphStore};
use crate::store::search;

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
    /// copy for the query workers and the state file are left to `finish_write`,
    /// which the caller runs after making the changes visible. The resolution
    /// state stays in memory between runs.
    pub defer_finish: bool,
    /// The run's `changes` say the import in-degree of the symbols whose count
    /// it changed (`Changes::in_degree`): what a caller that patches a
    /// catalog with them needs (a server). Counting costs a scan of the
    /// symbols, so a run of its own (the CLI's) leaves it.
    pub count_in_degree: bool,
    /// Server mode: the repo-relative paths a file watcher saw change since the
    /// last run. When the run's previous state is in memory and the change
    /// edits, deletes or adds files, the tree is not walked (only directories
    /// that gained files are) and only these files are read; anything else (a
    /// new directory, a manifest or ignore file, no state in memory) falls back
    /// to the full walk.
    pub changed_paths: Option<Vec<String>>,
    /// Memory of the search index writer, in MiB [default: `search::DEFAULT_WRITER_MB`].
    pub search_writer_mb: Option<usize>,
    /// A full build waits for its search index writer before it loads the
    /// parsed files and symbols into the graph, instead of doing both at once
    /// (`MemoryBudget::search_then_load`).
    pub search_then_load: bool,
    /// Asks a run to give up before it commits (a server shutting down).
    pub stop: Stop,
    /// The process exits right after the run (the CLI's): what the run holds in
    /// memory (the ref's resolution state, the graph's buffers and indexes)
    /// is left to the operating system instead of freed one allocation at a
    /// time, which took the last ~30 ms of a one-file run on the Rust crates
    /// corpus. Everything is written and durable before (the graph committed
    /// and checkpointed, the state and the search index in place).
    pub exits_after: bool,
}

/// A request to stop, shared by whoever may ask (a server's shutdown) and the
/// runs that honour it. A run checks it between its phases and once more just
/// before it commits: a stopped run leaves the graph as it found it.
#[derive(Debug, Clone, Default)]
pub struct Stop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Stop {
    pub fn request(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn requested(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// `Err(Stopped)` once a stop was asked for.
    pub fn check(&self) -> Result<(), IndexError> {
        if self.requested() {
            Err(IndexError::Stopped)
        } else {
            Ok(())
        }
    }
}

impl IndexOptions {
    pub fn writer_mb(&self) -> usize {
        self.search_writer_mb.unwrap_or(search::DEFAULT_WRITER_MB)
    }
}

/// The generation of what extraction gives (symbol kinds, names). A ref indexed
/// by another generation is re-indexed as a whole by its next run.
const EXTRACTION: &str = "cruxe-extraction-5 (TypeScript class fields are symbols)";

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
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    #[error("{0} is not a directory: give the repository's root directory")]
    NotADirectory(PathBuf),
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error(transparent)]
    Graph(GraphError),
    #[error(transparent)]
    Search(#[from] crate::store::search::SearchError),
    #[error(transparent)]
    Git(#[from] crate::source::gitref::GitError),
    #[error("the run was stopped before it committed; the index keeps its previous state")]
    Stopped,
}

impl From<GraphError> for IndexError {
    fn from(e: GraphError) -> Self {
        match e {
            GraphError::Abandoned => IndexError::Stopped,
            e => IndexError::Graph(e),
        }
    }
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
    /// Declarations found in parsed files only by reading them again past a
    /// misparse of valid code (`extract::recover`).
    pub recovered_declarations: usize,
    /// Parsed files read again past a misparse and then free of errors.
    pub recovered_files: usize,
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

/// Finishes the in-place runs a server made with `defer_finish` once their
/// changes are visible: checkpoints the graph (until then a stop leaves it at
/// the previous checkpoint), makes the copy `run_cypher`'s workers read (given
/// up when `abort` says new work came), and writes the resolution states still
/// only in memory.
pub fn finish_write(
    data: &DataDir,
    store: &GraphStore,
    abort: &dyn Fn() -> bool,
    held: Held<'_>,
) -> Result<(), IndexError> {
    let t = Instant::now();
    // A server checkpoints each run as it ends (`Service::run_jobs`).
    if store.log_pending() {
        store.checkpoint()?;
    }
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
                lock: Some(&own_lock),
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
