//! What a server keeps between runs: each ref's resolution state and what the
//! last walk of its tree found (`StateCache`), lent to every run with the graph
//! and writer lock it holds (`Held`); the walk a run can skip when only known
//! files changed (`quick_walk`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::IndexReport;
use super::state::{FileMeta, RefState};
use crate::source::layout::Layout;
use crate::source::walk::{Diagnostic, SourceFile, WalkOptions, WalkResult};
use crate::store::datadir::WriterLock;
use crate::store::graph::GraphStore;

/// Resolution states a server keeps in memory between runs (`defer_finish`), by
/// state file path; `dirty` ones are not on disk yet. With each, what the last
/// walk of the tree found besides source files. A run of its own (the CLI's)
/// starts with an empty one.
#[derive(Default)]
pub struct StateCache {
    pub(super) map: std::sync::Mutex<HashMap<PathBuf, Cached>>,
    /// The languages' compiled queries, kept too: compiling Python's took
    /// ~10 ms of every run.
    pub(super) extractor: crate::extract::Extractor,
}

/// What a caller that stays (a server) lends each run: the graph it holds open
/// (`None` before the first index), the data dir's writer lock it holds for its
/// life, and the resolution states it keeps between runs.
#[derive(Clone, Copy)]
pub struct Held<'a> {
    pub graph: Option<&'a GraphStore>,
    /// The data dir's writer lock (a replica holds none, and never runs).
    pub lock: Option<&'a WriterLock>,
    pub states: &'a StateCache,
}

pub(super) struct Cached {
    pub(super) state: RefState,
    pub(super) dirty: bool,
    pub(super) walk: Option<WalkMemo>,
}

/// What a walk found besides the source files: enough to skip the next walk
/// when only known files changed.
#[derive(Clone)]
pub(super) struct WalkMemo {
    pub(super) manifests: Vec<(String, PathBuf)>,
    pub(super) has_src_dir: bool,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// The layout read from those manifests, and their hash.
    pub(super) layout: Option<(Arc<Layout>, String)>,
}

/// What a server's run found besides source files (the manifests, whether
/// there is a `src/`) and the layout it read from them: kept for the next run.
pub(super) struct WalkFound {
    pub(super) manifests: Vec<(String, PathBuf)>,
    pub(super) has_src_dir: bool,
    pub(super) layout: Option<(Arc<Layout>, String)>,
}

impl StateCache {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Cached>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The layout (and its hash) the last run of the ref at `path` read, when
    /// it walked or was given one.
    pub(super) fn layout(&self, path: &Path) -> Option<(Arc<Layout>, String)> {
        self.lock().get(path)?.walk.as_ref()?.layout.clone()
    }

    /// Whether a state for `path` is kept (from a previous run).
    pub(super) fn has(&self, path: &Path) -> bool {
        self.lock().contains_key(path)
    }

    /// The state kept for `path`, when it describes the graph (`tag`).
    pub(super) fn take(&self, path: &Path, tag: &str) -> Option<RefState> {
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

    pub(super) fn put(&self, path: &Path, state: RefState, dirty: bool, walk: Option<WalkMemo>) {
        self.lock()
            .insert(path.to_path_buf(), Cached { state, dirty, walk });
    }

    /// Writes the states under `root` that are only in memory.
    pub(super) fn save_dirty(&self, root: &Path) {
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
pub(super) fn set_totals(report: &mut IndexReport, st: &RefState) {
    let sum = |f: fn(&FileMeta) -> u32| st.meta.iter().map(|m| i64::from(f(m))).sum();
    report.symbols = sum(|m| m.symbols);
    report.import_edges = sum(|m| m.edges);
    report.unresolved_imports = sum(|m| m.unresolved);
}

/// Keeps a server's state in memory with what its walk found (the manifests and
/// whether there is a `src/`) and the run's diagnostics.
pub(super) fn remember(
    states: &StateCache,
    path: &Path,
    state: RefState,
    dirty: bool,
    walk_found: Option<WalkFound>,
    diagnostics: &[Diagnostic],
) {
    let memo = walk_found.map(|w| WalkMemo {
        manifests: w.manifests,
        has_src_dir: w.has_src_dir,
        diagnostics: diagnostics.to_vec(),
        layout: w.layout,
    });
    states.put(path, state, dirty, memo);
}

/// The walk a server run can skip: the previous run's files with the watcher's
/// changes applied, when every changed path is a file the ref already has
/// (edited or deleted) or a new file (then only the directories that gained
/// files are walked, with the same ignore rules). `None` when the tree must
/// be walked (a manifest or ignore file changed, a directory appeared, no
/// previous walk).
pub(super) fn quick_walk(
    states: &StateCache,
    root: &Path,
    state_path: &Path,
    changed: &[String],
    opts: &WalkOptions,
) -> Option<WalkResult> {
    let max_file_size = opts.max_file_size;
    let cache = states.lock();
    let cached = cache.get(state_path)?;
    let memo = cached.walk.as_ref()?;
    let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
    let mut diagnostics: Vec<Diagnostic> = memo
        .diagnostics
        .iter()
        .filter(|d| !changed.contains(d.path.as_str()))
        .cloned()
        .collect();
    let mut gone: HashSet<&str> = HashSet::new();
    let mut appeared: Vec<String> = Vec::new();
    for &p in &changed {
        let name = p.rsplit('/').next().unwrap_or(p);
        if crate::source::layout::MANIFEST_NAMES.contains(&name)
            || name == ".gitignore"
            || name == ".ignore"
        {
            return None;
        }
        if cached.state.position(p).is_none() {
            match std::fs::symlink_metadata(root.join(p)) {
                Ok(m) if m.is_file() => {
                    let dir = p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
                    if !appeared.contains(&dir) {
                        appeared.push(dir);
                    }
                }
                // Come and gone (an editor's temporary file): nothing to do.
                Err(_) => {}
                Ok(_) => return None,
            }
            continue;
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
    let in_appeared = |path: &str| {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        appeared.iter().any(|d| d == dir)
    };
    // Most runs change a file in place: no path of the list needs a look.
    let keep_all = gone.is_empty() && appeared.is_empty();
    let mut sources: Vec<SourceFile> = cached
        .state
        .files
        .iter()
        .filter(|f| keep_all || (!gone.contains(f.path.as_str()) && !in_appeared(&f.path)))
        .map(|f| SourceFile {
            path: f.path.clone(),
            abs_path: root.join(&f.path),
            language: f.language,
            // Only the changed ones are read (`FileContext::only`).
            stat: None,
        })
        .collect();
    if !appeared.is_empty() {
        let walked = crate::source::walk::walk_dirs(root, opts, &appeared);
        diagnostics.retain(|d| !in_appeared(&d.path));
        diagnostics.extend(walked.diagnostics);
        sources.extend(walked.sources);
        use crate::source::walk::component_key;
        sources.sort_by_cached_key(|s| component_key(&s.path));
        diagnostics.sort_by_cached_key(|d| component_key(&d.path));
    }
    Some(WalkResult {
        sources,
        manifests: memo.manifests.clone(),
        diagnostics,
        has_src_dir: memo.has_src_dir,
        dirs: Vec::new(),
    })
}
