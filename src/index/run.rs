//! One index run from start to end, as phases that hand each other plain values:
//! `start` (what and where) → `walk_and_open` (the tree, beside the lock and the
//! graph) → `plan` (full build or in place; the previous run's state) →
//! `parse` (changed files only) → `resolve_imports` (only what a change can
//! affect) → `write` (one transaction, or a build aside) → `publish` (state,
//! search index, report).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tree_sitter::Parser;

use super::cache::{StateCache, WalkFound, quick_walk, remember, set_totals};
use super::edges::{EdgeChanges, Whole, recreated_symbols};
use super::parse::{FileContext, Known, Outcome, Parsed, process_file};
use super::searching::{SearchThread, search_beside, update_search};
use super::spill::Spill;
use super::state::{self, FileMeta, RefState, SavedAside};
use super::write::{FreshGraph, FreshSink, open_for_write};
use super::{
    EXTRACTION, Held, IndexError, IndexOptions, IndexReport, Progress, git_ref, now_rfc3339,
    repo_name,
};
use crate::model::lazy::Lazy;
use crate::model::{Language, RawImport};
use crate::resolve::{self, RFile, RSymbol};
use crate::source::layout::{Layout, Manifest};
use crate::source::rewalk::{DirMemo, rewalk};
use crate::source::walk::{self, Diagnostic, FileStat, WalkOptions, WalkResult};
use crate::store::datadir::{DataDir, WriterLock};
use crate::store::graph::{
    Applying, Changes, EdgeCsvs, EdgeFiles, FileRows, GraphStore, PackageRow, SymbolDiff,
    unfinished_tag,
};
use crate::store::search;

/// What one run is about, fixed at its start.
struct Run<'a> {
    root: PathBuf,
    repo: String,
    ref_name: String,
    commit: String,
    data: &'a DataDir,
    opts: &'a IndexOptions,
    progress: &'a dyn Progress,
    states: &'a StateCache,
    state_path: PathBuf,
    walk_opts: WalkOptions,
    started: Instant,
    /// The wall clock at the start (see `FileStat::settled_before`).
    started_at: std::time::SystemTime,
}

/// The tree as walked, and the data dir as opened for writing.
struct Opened {
    walked: WalkResult,
    diagnostics: Vec<Diagnostic>,
    /// What the walk found besides sources, for a server's next quick walk.
    walk_found: Option<WalkFound>,
    /// With a quick walk: the only files to read (the others are known).
    only_changed: Option<HashSet<String>>,
    _lock: Option<WriterLock>,
    owned: Option<GraphStore>,
    preloaded: Option<std::thread::JoinHandle<Option<RefState>>>,
}

/// How the run will write, and what it starts from.
struct Plan {
    layout: Arc<Layout>,
    layout_hash: String,
    /// Every file is re-indexed (`--force`, or the manifests changed).
    force: bool,
    /// A full build, written aside with bulk COPY and swapped in.
    fresh: bool,
    /// In place but the whole ref (nothing of it known: a new ref beside others,
    /// or a rebuild of one of several), loaded with bulk COPY too
    /// (`GraphStore::load_beside`).
    whole: bool,
    /// The ref's tag (`indexed_at`) in the graph before this run, unless forced.
    tag: Option<String>,
    /// The previous run's resolution state, when it describes the graph.
    prior: Option<RefState>,
    /// Without `prior`: the content hash of every file the graph holds for
    /// the ref, by path.
    existing: HashMap<String, String>,
    /// The state set aside when the layout moved: it describes the stored
    /// ref still (its files, definitions, imports and sites), but none of its
    /// resolution is trusted.
    set_aside: Option<RefState>,
}

impl Plan {
    /// What the index held of each file before this run.
    fn known(&self) -> &dyn Known {
        match &self.prior {
            Some(p) => p,
            None => &self.existing,
        }
    }

    /// Every path the index held before this run.
    fn known_paths(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match &self.prior {
            Some(p) => Box::new(p.files.iter().map(|f| f.path.as_str())),
            None => Box::new(self.existing.keys().map(String::as_str)),
        }
    }
}

/// What parsing found: the counts so far, the changes to write, and the files
/// that were (re)parsed.
struct Sorted {
    report: IndexReport,
    changes: Changes,
    new_files: Vec<(FileRows, ForResolution)>,
    /// A full build's parsed files as resolution needs them, in path order
    /// (their rows went to its `FreshSink` as they came).
    entries: Vec<(RFile, FileMeta)>,
    /// Unchanged files read to find out, with a stat to trust next time.
    restat: Vec<(String, FileStat)>,
    /// A full build's edges, written to its COPY files as resolved.
    edge_files: Option<EdgeFiles>,
    /// Where a full build keeps its files' packed sections (`Spill`).
    spill: Option<std::sync::Arc<Spill>>,
}

/// What resolution and the next state need of a parsed file besides its rows.
struct ForResolution {
    language: Language,
    imports: Vec<RawImport>,
    sites: crate::model::sites::FileSites,
    stat: Option<FileStat>,
}

/// The graph the run wrote: the server's, or one this run opened (the CLI's
/// graph written in place, or the new one built aside).
enum Written<'s> {
    Shared(&'s GraphStore),
    Own(Box<GraphStore>),
}

impl Written<'_> {
    fn graph(&self) -> &GraphStore {
        match self {
            Written::Shared(g) => g,
            Written::Own(g) => g,
        }
    }
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
    // Freed heap pages go back to the system as the run goes (see `Trimmer`).
    let _trimmer = crate::store::memory::Trimmer::start(crate::store::memory::Trimmer::EVERY);
    let own_states = StateCache::default();
    let states = held.map_or(&own_states, |h| h.states);
    let run = start(root, data, opts, progress, states)?;
    let shared = held.and_then(|h| h.graph);
    let stop = &opts.stop;
    let mut opened = walk_and_open(&run, shared, held.and_then(|h| h.lock))?;
    stop.check()?;
    let owned = opened.owned.take();
    let store: Option<&GraphStore> = shared.or(owned.as_ref());
    let mut plan = plan(&run, store, &mut opened)?;
    let mut sink = match plan.fresh {
        true => Some(FreshSink::start(
            root,
            data,
            opts,
            (&run.repo, &run.ref_name),
        )?),
        false => None,
    };
    let mut sorted = parse(&run, &plan, &mut opened, sink.as_mut())?;
    stop.check()?;
    if let Some(st) = store
        && nothing_to_write(&run, store, &plan, &sorted)?
    {
        return unchanged(&run, st, plan, sorted, opened);
    }
    // The rows go to the graph (and to a full build's search index, written on
    // a thread from now on, beside resolution and the bulk load); the language
    // and raw imports of each file go to resolution.
    let (rows, mut for_resolution): (Vec<FileRows>, Vec<ForResolution>) =
        sorted.new_files.drain(..).unzip();
    let rows = std::sync::Arc::new(rows);
    diff_symbols(&plan, &rows, &mut sorted.changes);
    sorted.changes.add = rows.clone();
    // A full build loads the files and symbols it wrote out as it parsed into
    // its new graph, and its search writer indexes the rest of what it was
    // handed, while imports are resolved; the edges follow once resolved
    // (`write`).
    let (early_graph, early_search) = match sink.take().map(FreshSink::finish) {
        Some(finished) => {
            let (nodes, search) = finished?;
            // The search writer's last merge and the nodes' COPY were a cold
            // index's peak together (`MemoryBudget::search_then_load`).
            let search = match opts.search_then_load {
                true => search.settle(),
                false => search,
            };
            let graph = FreshGraph::start(data, opts, sorted.changes.clone(), nodes);
            (Some(graph), Some(search))
        }
        None => (None, None),
    };
    // An in-place run that resolves from its state (never reading the graph)
    // writes what went and the changed files' symbols meanwhile, in the write's
    // transaction; the import edges follow once resolved (`start_apply`).
    // Dropped on an error or a stop before the write, it is rolled back.
    let applying = match store {
        Some(st) if !plan.fresh && !plan.whole && !plan.force && plan.prior.is_some() => {
            Some(st.start_apply(sorted.changes.clone())?)
        }
        _ => None,
    };
    let mut next_state = resolve_imports(
        &run,
        &mut plan,
        (rows, &mut for_resolution),
        &mut sorted,
        early_graph.as_ref(),
    )?;
    if let Some(st) = next_state.as_mut() {
        restat(st, &sorted.restat);
    }
    stop.check()?;
    let saved_early = save_early(&run, &plan, &mut next_state);
    let previous_indexed_at = match store {
        Some(_) if !plan.fresh && !plan.force => plan.tag.clone(),
        _ => None,
    };
    // The state a run of its own leaves is encoded and written aside while the
    // graph write commits, and put in place after (see `save_state`). The
    // search documents are written beside it too, and made visible once it
    // committed (see `search_beside`).
    let beside = (!plan.fresh && store.is_some()).then(|| {
        (
            sorted.changes.add.clone(),
            sorted.changes.remove_paths.clone(),
            data.search_dir(&run.repo, &run.ref_name),
        )
    });
    let (written, aside, searched_beside) = std::thread::scope(|s| {
        let aside = match (&next_state, opts.defer_finish) {
            (Some(st), false) => Some(s.spawn(|| st.save_aside(&run.state_path))),
            _ => None,
        };
        // Dropped unsent (a failed or panicking write), the search write is
        // abandoned.
        let (committed, graph_committed) = std::sync::mpsc::channel::<bool>();
        let searching = beside.map(|(add, removed, dir)| {
            let (root, previous) = (&run.root, previous_indexed_at.as_deref());
            let writer = (opts.writer_mb(), opts.defer_finish);
            let go = move || graph_committed.recv().unwrap_or(false);
            s.spawn(move || search_beside(root, &dir, (&add, &removed), previous, writer, go))
        });
        let written = write(
            &run,
            (shared, owned),
            &mut plan,
            &mut sorted,
            (early_search, early_graph),
            applying,
        );
        let _ = committed.send(written.is_ok());
        let aside = aside.map(|h| match h.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        let searched = searching.and_then(|h| match h.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        (written, aside, searched)
    });
    let (written, searched) = written?;
    let searched = searched.or(searched_beside);
    let report = publish(
        &run,
        &written,
        sorted,
        (next_state, aside, saved_early),
        searched,
        previous_indexed_at,
        opened,
    );
    if opts.exits_after {
        written.graph().leave_to_exit();
    }
    report
}

/// Where and what: the canonical root, the repo and ref names, the commit.
fn start<'a>(
    root: &Path,
    data: &'a DataDir,
    opts: &'a IndexOptions,
    progress: &'a dyn Progress,
    states: &'a StateCache,
) -> Result<Run<'a>, IndexError> {
    let started = Instant::now();
    let started_at = std::time::SystemTime::now();
    if !root.exists() {
        return Err(IndexError::NotFound(root.to_path_buf()));
    }
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
    Ok(Run {
        state_path: data.state_path(&repo, &ref_name),
        root,
        repo,
        ref_name,
        commit,
        data,
        opts,
        progress,
        states,
        walk_opts,
        started,
        started_at,
    })
}

/// Walks the tree (or, for a server that knows which files changed, just those)
/// beside taking the lock and opening the graph; a run of its own (the CLI's)
/// also reads the previous run's state meanwhile.
fn walk_and_open(
    run: &Run<'_>,
    shared: Option<&GraphStore>,
    held: Option<&WriterLock>,
) -> Result<Opened, IndexError> {
    let opts = run.opts;
    run.progress.phase("walking", 0);
    // The state read here is checked against the graph's tag later (`plan`).
    let preload = shared.is_none()
        && !opts.force
        && !opts.skip_imports
        && run.state_path.exists()
        && !run.states.has(&run.state_path);
    let preloaded = preload.then(|| {
        let path = run.state_path.clone();
        std::thread::spawn(move || RefState::load(&path))
    });
    let quick = match &opts.changed_paths {
        Some(paths) if !opts.force => quick_walk(
            run.states,
            &run.root,
            &run.state_path,
            paths,
            &run.walk_opts,
        ),
        _ => None,
    };
    let only_changed: Option<HashSet<String>> = quick
        .as_ref()
        .and(opts.changed_paths.as_ref())
        .map(|p| p.iter().cloned().collect());
    let (walked, opened) = std::thread::scope(|s| {
        let walker = s.spawn(|| match quick {
            Some(w) => w,
            None if shared.is_some() => walk::walk(&run.root, &run.walk_opts),
            // A run of its own reads again only the directories that changed
            // since the last run's walk (`rewalk`).
            None => remembered_walk(run),
        });
        let opened = open_for_write(run.data, opts, shared, held, &run.repo, &run.ref_name);
        (walker.join(), opened)
    });
    let mut walked = walked.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let (lock, owned) = opened?;
    let walk_found = opts.defer_finish.then(|| WalkFound {
        manifests: walked.manifests.clone(),
        has_src_dir: walked.has_src_dir,
        layout: None,
    });
    let diagnostics = std::mem::take(&mut walked.diagnostics);
    tracing::debug!(
        ms = run.started.elapsed().as_millis() as u64,
        files = walked.sources.len(),
        "walked"
    );
    Ok(Opened {
        walked,
        diagnostics,
        walk_found,
        only_changed,
        _lock: lock,
        owned,
        preloaded,
    })
}

/// The walk of a run of its own (the CLI's): from the previous run's memo of
/// the tree's directories when it can tell (`source::rewalk`), else in full;
/// the memo of this one is written for the next.
fn remembered_walk(run: &Run<'_>) -> WalkResult {
    let t = Instant::now();
    let memo_path = run.state_path.with_extension("walk");
    let loaded = (!run.opts.force)
        .then(|| DirMemo::load(&memo_path))
        .flatten();
    let load_ms = t.elapsed().as_millis() as u64;
    let remembered = loaded
        .as_ref()
        .and_then(|memo| rewalk(&run.root, &run.walk_opts, memo));
    let walk_ms = t.elapsed().as_millis() as u64;
    let again = remembered.is_some();
    let walked = remembered.unwrap_or_else(|| walk::walk(&run.root, &run.walk_opts));
    let memo = DirMemo::of(
        &run.root,
        &run.walk_opts,
        &walked,
        run.started_at,
        loaded.as_ref(),
    );
    let saved = memo_path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| memo.save(&memo_path));
    if let Err(e) = saved {
        tracing::debug!("could not save the walk's memo ({e})");
    }
    tracing::debug!(
        load_ms,
        walk_ms,
        ms = t.elapsed().as_millis() as u64,
        from_memo = again,
        "walk"
    );
    walked
}

/// The layout the manifests give and its hash (with the extraction's), or the
/// last run's when nothing walked could have changed it (`plan`).
fn plan_layout(run: &Run<'_>, opened: &Opened) -> (Arc<Layout>, String) {
    let repo = run.repo.as_str();
    // A server's run that did not walk (only known files changed, never a
    // manifest) has the same manifests as the run before: its layout stands.
    let known = opened
        .only_changed
        .as_ref()
        .and_then(|_| run.states.layout(&run.state_path));
    match known {
        Some(known) => known,
        None => {
            let manifests: Vec<Manifest> = opened
                .walked
                .manifests
                .iter()
                .filter_map(|(rel, abs)| {
                    std::fs::read_to_string(abs).ok().map(|text| Manifest {
                        path: rel.clone(),
                        text,
                    })
                })
                .collect();
            // Module and package names come from the layout the manifests
            // give, symbols from what extraction gives: the stored hash names
            // both (see `layout_moved`).
            let layout = Layout::new(repo, &manifests, opened.walked.has_src_dir);
            let extraction = blake3::hash(EXTRACTION.as_bytes()).to_hex();
            let hash = format!("{}.{}", &extraction[..16], layout.fingerprint(""));
            (Arc::new(layout), hash)
        }
    }
}

/// The files of `p` whose module or package `layout` names differently.
fn renamed_files(p: &RefState, layout: &Layout) -> HashSet<String> {
    p.files
        .iter()
        .filter(|f| {
            let now = layout.module_info(&f.path, f.language);
            now.module != f.module || now.package != f.package
        })
        .map(|f| f.path.clone())
        .collect()
}

/// Decides how the run writes (a full build aside, or in place) and finds what it starts from: the previous run's state when
/// it describes the graph, else the stored content hashes.
fn plan(
    run: &Run<'_>,
    store: Option<&GraphStore>,
    opened: &mut Opened,
) -> Result<Plan, IndexError> {
    let (opts, repo, ref_name) = (run.opts, run.repo.as_str(), run.ref_name.as_str());
    let (layout, layout_hash) = plan_layout(run, opened);
    if let Some(found) = opened.walk_found.as_mut() {
        found.layout = Some((layout.clone(), layout_hash.clone()));
    }
    let mut force = opts.force;
    // The ref's tag, read once for what follows.
    let stored_tag = match store {
        Some(st) if !force => st.ref_indexed_at(repo, ref_name)?,
        _ => None,
    };
    // Another extraction (another cruxe) re-indexes every file; only another
    // layout, the files it names differently (below, with the state).
    let mut layout_moved = false;
    if let Some(st) = store
        && !force
    {
        let stored = st.layout_hash(repo, ref_name)?;
        let extraction = |h: &str| h.split_once('.').map(|(e, _)| e.to_string());
        if !stored.is_empty() && stored != layout_hash {
            match extraction(&stored) == extraction(&layout_hash) {
                true => layout_moved = true,
                false => {
                    tracing::info!("extraction changed since the last run: re-indexing every file");
                    force = true;
                }
            }
        }
    }
    // A load beside other refs that a crash or a stop cut short is done again.
    if !force && stored_tag.as_deref().is_some_and(unfinished_tag) {
        tracing::info!("the last load of this ref did not finish: re-indexing every file");
        force = true;
    }
    tracing::debug!(
        ms = run.started.elapsed().as_millis() as u64,
        "opened the graph"
    );
    // Without a trusted state (a damaged or lagging state file, a data dir from
    // an older cruxe) the ref is rebuilt (below).
    let preloaded: Option<Option<RefState>> = opened.preloaded.take().and_then(|h| h.join().ok());
    let prior: Option<RefState> = match &stored_tag {
        Some(tag) if !force && !opts.skip_imports => {
            run.states.take(&run.state_path, tag).or_else(|| {
                preloaded
                    .unwrap_or_else(|| RefState::load(&run.state_path))
                    .filter(|p| p.tag == *tag)
            })
        }
        _ => None,
    };
    // Looked up by path from here on (see `Known`).
    let mut prior = prior.map(in_path_order);
    // The layout moved (a manifest came, went or renamed something): the files
    // whose module or package it changes are re-indexed, and every import is
    // resolved again, from the state set aside. A `setup.py` renamed
    // in one directory re-indexed all 17k files of Python's `lib/` (56 s).
    let mut renamed_by_layout: Option<HashSet<String>> = None;
    let mut set_aside: Option<RefState> = None;
    if layout_moved {
        match &prior {
            Some(p) => {
                let stale = renamed_files(p, &layout);
                tracing::info!(
                    files = stale.len(),
                    "the manifests name some files differently: re-indexing those, resolving every import"
                );
                renamed_by_layout = Some(stale);
                set_aside = prior.take();
            }
            None => {
                tracing::info!("manifests changed since the last run: re-indexing every file");
                force = true;
            }
        }
    }
    // Without a trusted state (lost, or written by an older cruxe) every file
    // is parsed again and every edge resolved again: a rebuild, as `--force`,
    // whose bulk load is what a big ref needs (rewriting 9.5k files' edges in
    // place ran Kuzu's buffer pool out, and the run failed again each time).
    if store.is_some() && prior.is_none() && set_aside.is_none() && !force {
        tracing::info!("no resolution state to trust: rebuilding this ref");
        force = true;
    }
    // A full build: nothing indexed yet, or a rebuild (--force, another
    // extraction, a layout without a state to compare) of the only repo/ref here.
    let fresh = match store {
        None => true,
        Some(st) => force && st.refs()?.iter().all(|(r, f)| r == repo && f == ref_name),
    };
    tracing::debug!(
        ms = run.started.elapsed().as_millis() as u64,
        trusted_state = prior.is_some(),
        "loaded the state"
    );
    let mut existing: HashMap<String, String> = match (store, &prior) {
        (Some(st), None) if !force => st.file_hashes(repo, ref_name)?,
        _ => HashMap::new(),
    };
    // Without a state, the call sites of unchanged files are not known (the
    // graph keeps edges, not sites): every file is read and parsed again.
    if prior.is_none() && set_aside.is_none() {
        for hash in existing.values_mut() {
            hash.clear();
        }
    }
    // Known, but never equal to what is read: re-parsed and replaced.
    for path in renamed_by_layout.iter().flatten() {
        if let Some(hash) = existing.get_mut(path) {
            hash.clear();
        }
    }
    if opened.only_changed.is_some() && prior.is_none() {
        // The state in memory was not the graph's: walk after all.
        let mut w = walk::walk(&run.root, &run.walk_opts);
        opened.diagnostics = std::mem::take(&mut w.diagnostics);
        opened.walked = w;
        opened.only_changed = None;
    }
    tracing::debug!(
        quick = opened.only_changed.is_some(),
        files = opened.walked.sources.len(),
        "sources"
    );
    let whole = store.is_some() && !fresh && prior.is_none() && existing.is_empty();
    Ok(Plan {
        layout,
        layout_hash,
        force,
        fresh,
        whole,
        tag: stored_tag,
        prior,
        existing,
        set_aside,
    })
}

/// Reads, hashes and parses the walked files (in parallel; unchanged ones are
/// only hashed) and sorts the outcomes into the changes to write. A full
/// build's files go to `sink` as they are parsed, in path order, leaving only
/// what resolution needs (`Sorted::entries`).
fn parse(
    run: &Run<'_>,
    plan: &Plan,
    opened: &mut Opened,
    mut sink: Option<&mut FreshSink>,
) -> Result<Sorted, IndexError> {
    let extractor = &run.states.extractor;
    let sources = &opened.walked.sources;
    run.progress.phase("parsing", sources.len() as u64);
    let ctx = FileContext {
        repo: &run.repo,
        ref_name: &run.ref_name,
        layout: &plan.layout,
        extractor,
        known: plan.known(),
        started: run.started_at,
        skip_imports: run.opts.skip_imports,
        only: opened.only_changed.as_ref(),
        lean: plan.fresh,
    };
    let t_parse = Instant::now();
    let mut sorted = Sorted {
        report: IndexReport {
            repo: run.repo.clone(),
            ref_name: run.ref_name.clone(),
            commit: run.commit.clone(),
            ..IndexReport::default()
        },
        changes: Changes {
            repo: run.repo.clone(),
            repo_root: run
                .opts
                .repo_root
                .as_deref()
                .unwrap_or(&run.root)
                .to_string_lossy()
                .into_owned(),
            ref_name: run.ref_name.clone(),
            commit: run.commit.clone(),
            indexed_at: now_rfc3339(),
            count_in_degree: run.opts.count_in_degree,
            replace_all: plan.force,
            layout_hash: plan.layout_hash.clone(),
            ..Changes::default()
        },
        new_files: Vec::new(),
        entries: Vec::new(),
        restat: Vec::new(),
        edge_files: None,
        spill: sink.as_ref().and_then(|s| s.spilled()),
    };
    // Borrowed paths, hashed cheaply: a server's run of one changed file
    // goes through every file of the tree here (17k on Python's lib/).
    let mut present: resolve::FxSet<&str> = Default::default();
    present.reserve(sources.len());
    let mut skipped = Vec::new();
    in_order(run, &ctx, sources, |src, outcome| {
        let path = src.path.as_str();
        match outcome {
            Outcome::Unchanged(stat) => {
                sorted.report.unchanged += 1;
                if let Some(st) = stat {
                    sorted.restat.push((path.to_string(), st));
                }
                present.insert(path);
            }
            Outcome::Parsed(parsed) => {
                match sink.as_deref_mut() {
                    Some(sink) => stream_parsed(sink, &mut sorted, *parsed),
                    None => sort_parsed(plan, &mut sorted, path, *parsed),
                }
                present.insert(path);
            }
            Outcome::Skipped(d) => skipped.push(d),
        }
    })?;
    opened.diagnostics.append(&mut skipped);
    tracing::debug!(
        ms = t_parse.elapsed().as_millis() as u64,
        "read, hash, parse"
    );
    sorted.report.files = present.len();
    let mut gone: Vec<String> = plan
        .known_paths()
        .filter(|p| !present.contains(*p))
        .map(str::to_string)
        .collect();
    gone.sort();
    sorted.report.removed = gone.len();
    sorted.changes.remove_paths.extend(gone.iter().cloned());
    sorted.changes.drop_files = gone;
    Ok(sorted)
}

/// Processes `sources` on the pool's worth of threads and hands each outcome
/// to `take` in their order (the walk's). Threads take the next few files
/// from a shared counter, so outcomes arrive nearly in order and the few that
/// come early wait (those parsed beside one slow file); a stop ends it.
fn in_order<'s>(
    run: &Run<'_>,
    ctx: &FileContext<'_>,
    sources: &'s [walk::SourceFile],
    mut take: impl FnMut(&'s walk::SourceFile, Outcome),
) -> Result<(), IndexError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // Files a thread takes at once: a server's run over a big tree where one
    // file changed only stats each file, and one message per file would cost
    // more than that.
    const CHUNK: usize = 8;
    let workers = rayon::current_num_threads().clamp(1, sources.len().div_ceil(CHUNK).max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<Outcome>)>(workers * 8);
    std::thread::scope(|s| {
        for _ in 0..workers {
            let (tx, next) = (tx.clone(), &next);
            s.spawn(move || {
                let mut parser = Parser::new();
                while !run.opts.stop.requested() {
                    let from = next.fetch_add(CHUNK, Ordering::Relaxed);
                    let Some(chunk) = sources.get(from..(from + CHUNK).min(sources.len())) else {
                        break;
                    };
                    if chunk.is_empty() {
                        break;
                    }
                    let outcomes = chunk
                        .iter()
                        .map(|src| process_file(ctx, &mut parser, src))
                        .collect();
                    run.progress.advance(chunk.len() as u64);
                    if tx.send((from, outcomes)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut early: std::collections::BTreeMap<usize, Vec<Outcome>> = Default::default();
        let mut at = 0;
        for (from, outcomes) in rx {
            early.insert(from, outcomes);
            while let Some(outcomes) = early.remove(&at) {
                for outcome in outcomes {
                    take(&sources[at], outcome);
                    at += 1;
                }
            }
        }
        // Short of the end only when a stop was asked for.
        match at == sources.len() {
            true => Ok(()),
            false => Err(IndexError::Stopped),
        }
    })
}

/// A full build's parsed file: its rows to `sink`, what resolution needs of
/// it to `sorted.entries`.
fn stream_parsed(sink: &mut FreshSink, sorted: &mut Sorted, parsed: Parsed) {
    let (rows, mut for_resolution) = split_parsed(parsed);
    sorted.report.parsed += 1;
    sorted
        .entries
        .push(new_entry(&rows, &mut for_resolution, sink.spill()));
    sink.add(rows);
}

/// A parsed file's rows, and what resolution and the state need besides.
fn split_parsed(parsed: Parsed) -> (FileRows, ForResolution) {
    let Parsed {
        rows,
        language,
        imports,
        sites,
        stat,
    } = parsed;
    let for_resolution = ForResolution {
        language,
        imports,
        sites,
        stat,
    };
    (rows, for_resolution)
}

/// One parsed file into the changes: a changed file replaces its old version
/// (and is marked when its names and imports stay the same).
fn sort_parsed(plan: &Plan, sorted: &mut Sorted, path: &str, parsed: Parsed) {
    let (mut rows, for_resolution) = split_parsed(parsed);
    let language = for_resolution.language;
    sorted.report.parsed += 1;
    // Lines in error and recovered declarations are stored with the file
    // (`rows.file`); the report lists every file of the ref that has either
    // once the run committed (`in_error`).
    if plan.known().contains(path) {
        sorted.changes.remove_paths.push(path.to_string());
        rows.existing = true;
        rows.same_names = plan.prior.as_ref().is_some_and(|p| {
            p.position(path).is_some_and(|at| {
                let (f, m) = (&p.files[at], &p.meta[at]);
                f.language == language
                    && f.module == rows.file.module
                    && f.package == rows.file.package
                    && *m.imports_text.value_or_decoded() == rows.file.imports
            })
        });
    }
    sorted.new_files.push((rows, for_resolution));
}

/// Nothing changed, the commit is the same and the search index is in step:
/// the graph, its state and the search index already describe this tree, so
/// nothing is written (no copy, no transaction, no checkpoint).
fn nothing_to_write(
    run: &Run<'_>,
    store: Option<&GraphStore>,
    plan: &Plan,
    sorted: &Sorted,
) -> Result<bool, IndexError> {
    let (Some(st), Some(p)) = (store, &plan.prior) else {
        return Ok(false);
    };
    Ok(!plan.force
        && !plan.fresh
        && sorted.report.parsed == 0
        && sorted.report.removed == 0
        && st
            .ref_version(&run.repo, &run.ref_name)?
            .is_some_and(|(_, c)| c == sorted.changes.commit)
        && search::read_tag(&run.data.search_dir(&run.repo, &run.ref_name)).as_deref()
            == Some(p.tag.as_str()))
}

/// The report of a run that wrote nothing.
fn unchanged(
    run: &Run<'_>,
    store: &GraphStore,
    mut plan: Plan,
    sorted: Sorted,
    opened: Opened,
) -> Result<IndexReport, IndexError> {
    let Sorted {
        mut report,
        restat: stats,
        ..
    } = sorted;
    let mut diagnostics = opened.diagnostics;
    if let Some(p) = plan.prior.as_mut() {
        set_totals(&mut report, p);
        report.indexed_at = p.tag.clone();
        // Files read only to find them unchanged: the next run need not.
        if !stats.is_empty() {
            restat(p, &stats);
            if !run.opts.defer_finish
                && let Err(e) = p.save(&run.state_path)
            {
                tracing::warn!("could not save the resolution state: {e}");
            }
        }
    }
    finish_diagnostics(store, run, &mut report, &mut diagnostics)?;
    if run.opts.defer_finish
        && let Some(p) = plan.prior
    {
        remember(
            run.states,
            &run.state_path,
            p,
            false,
            opened.walk_found,
            &diagnostics,
        );
    }
    report.diagnostics = diagnostics;
    report.seconds = run.started.elapsed().as_secs_f64();
    run.progress.done();
    tracing::debug!("nothing changed: nothing written");
    Ok(report)
}

/// Records the stats of files found unchanged by reading them (see `FileStat`).
fn restat(state: &mut RefState, stats: &[(String, FileStat)]) {
    for (path, st) in stats {
        if let Ok(at) = state
            .files
            .binary_search_by(|f| f.path.as_str().cmp(path.as_str()))
        {
            let m = &mut state.meta[at];
            m.stat = Some(*st);
            m.record = None;
        }
    }
}

/// A changed file's stored symbols (known from the state) are diffed against
/// its new ones: symbols that stay keep their node and the edges into it
/// (imports included) and are rewritten in place.
fn diff_symbols(plan: &Plan, rows: &[FileRows], changes: &mut Changes) {
    let Some(p) = &plan.prior else {
        return;
    };
    if plan.force {
        return;
    }
    for rows in rows.iter().filter(|rows| rows.existing) {
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

/// The ref as resolution sees it: every file (sorted by path) with its
/// metadata, whether it was parsed now, the lookup keys the change touches, and
/// the edge fingerprints of the files it replaced.
struct ResolutionInput {
    rfiles: Vec<RFile>,
    meta: Vec<FileMeta>,
    parsed_now: Vec<bool>,
    /// Hashed with Fx: every file's lookup keys are checked against it.
    touched: resolve::FxSet<u64>,
    /// The previous entries of the replaced and removed files, by path.
    old_meta: HashMap<String, FileMeta>,
    /// Ids of the stored symbols the run deletes (those of removed files, and
    /// of replaced files but those a symbol diff keeps): edges into them go
    /// with them, so they are not deleted one by one.
    gone_symbols: HashSet<String>,
}

impl ResolutionInput {
    /// Files that are all parsed now, with no state before them (a full
    /// build's).
    fn all_new(mut entries: Vec<(RFile, FileMeta)>) -> ResolutionInput {
        // In the walk's order, which is not always the paths' ("a/b" < "a.b").
        if !entries.is_sorted_by(|a, b| a.0.path <= b.0.path) {
            entries.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        }
        let parsed_now = vec![true; entries.len()];
        let (rfiles, meta) = entries.into_iter().unzip();
        ResolutionInput {
            rfiles,
            meta,
            parsed_now,
            touched: Default::default(),
            old_meta: HashMap::new(),
            gone_symbols: HashSet::new(),
        }
    }
}

/// Imports are re-resolved over the whole ref whenever anything changed, so
/// edges into changed files are right too: the result equals a fresh index.
/// Only the edges of files whose resolution changed are written. Without a
/// usable state the ref is resolved and its edges diffed even when no file
/// changed, so that the next change is cheap (a server pays this at start, not
/// on the first saved change). The state the run leaves, if any.
fn resolve_imports(
    run: &Run<'_>,
    plan: &mut Plan,
    (rows, for_resolution): (std::sync::Arc<Vec<FileRows>>, &mut [ForResolution]),
    sorted: &mut Sorted,
    fresh_graph: Option<&FreshGraph>,
) -> Result<Option<RefState>, IndexError> {
    let report = &sorted.report;
    let changed = report.parsed > 0 || report.removed > 0 || plan.force || plan.prior.is_none();
    if run.opts.skip_imports {
        return Ok(None);
    }
    let indexed_at = sorted.changes.indexed_at.clone();
    if !changed {
        return Ok(plan.prior.take().map(|p| RefState {
            tag: indexed_at,
            ..p
        }));
    }
    run.progress.phase("resolving imports", 0);
    let t_resolve = Instant::now();
    // The layout moved (`Plan::set_aside`): every import is resolved again.
    let (mut base, trusted) = match (plan.prior.take(), plan.set_aside.take()) {
        (Some(p), _) => (p, true),
        (None, Some(p)) if !plan.force => (p, false),
        _ => (RefState::default(), false),
    };
    // The state file the next save appends to, if it was read from one.
    let origin = base.origin.take();
    let mut input = match std::mem::take(&mut sorted.entries) {
        // A full build's: every file new, nothing before it.
        entries if !entries.is_empty() => ResolutionInput::all_new(entries),
        _ => resolution_input(base, &rows, for_resolution, &sorted.changes, trusted),
    };
    let recreated = recreated_symbols(&rows, &sorted.changes);
    // Package membership follows paths: with a trusted state it can only change
    // when a Go file appeared or went (then the ref's packages are synced).
    let go_file_came_or_went = rows
        .iter()
        .filter(|r| !r.existing)
        .map(|r| r.file.path.as_str())
        .chain(sorted.changes.drop_files.iter().map(String::as_str))
        .any(|p| resolve::go_package_of(p).is_some());
    // Nothing below needs the rows: this run's hold on them goes before the
    // resolution's tables are built (see `index_repo_with`).
    drop(rows);
    // A full build's node load needs Kuzu's pool and a heap of its own for
    // its COPY: resolution's tables and results, the run's peak otherwise,
    // are built after it (on two cores both were CPU-bound: no slower).
    if let Some(graph) = fresh_graph {
        graph.wait_for_nodes();
    }
    // Keys are hashes: a bit per key's low bits rules out almost every
    // file's keys before a lookup.
    let mut bits = [0u64; 64];
    for k in &input.touched {
        bits[(k >> 6) as usize & 63] |= 1 << (k & 63);
    }
    // With a trusted state only files whose lookups touch a changed key are
    // resolved again (and the changed files themselves); others keep their
    // edges, which are still right.
    let only: Option<Vec<bool>> = trusted.then(|| {
        input
            .meta
            .iter()
            .zip(&input.parsed_now)
            .map(|(m, &p)| p || uses_any(&m.deps, &input.touched, &bits))
            .collect()
    });
    tracing::debug!(
        ms = t_resolve.elapsed().as_millis() as u64,
        to_resolve = only
            .as_ref()
            .map_or(input.rfiles.len(), |o| o.iter().filter(|x| **x).count()),
        touched = input.touched.len(),
        "loaded the ref"
    );
    let whole = whole_edges(run, fresh_graph.is_some(), trusted)?;
    let re_resolved = only
        .clone()
        .unwrap_or_else(|| vec![true; input.rfiles.len()]);
    let edges = EdgeChanges::new(
        whole,
        (&input.meta, &input.old_meta),
        (&re_resolved, &input.parsed_now),
        (&recreated, &input.gone_symbols),
        &sorted.changes,
    );
    let mut edges = edges.spilling_to(sorted.spill.clone());
    let (rfiles, meta, parsed_now) = (&input.rfiles, &mut input.meta, &input.parsed_now);
    resolve::resolve_each(rfiles, &plan.layout, only.as_deref(), &mut |fi, r| {
        edges.add(&rfiles[fi], &mut meta[fi], parsed_now[fi], r);
    });
    tracing::debug!(
        ms = t_resolve.elapsed().as_millis() as u64,
        "resolved imports and call sites"
    );
    sorted.report.imports_resolved = re_resolved.iter().filter(|r| **r).count();
    let (imports, sites, edge_files) = edges.finish(&sorted.changes, &input.meta, &re_resolved)?;
    sorted.edge_files = edge_files;
    // The per-file results just freed are many small blocks: the allocator
    // keeps their pages unless asked, and the write that follows is the run's
    // peak.
    // SAFETY: malloc_trim only releases free memory.
    unsafe { libc::malloc_trim(0) };
    sorted.changes.sites = Some(sites);
    tracing::debug!(
        ms = t_resolve.elapsed().as_millis() as u64,
        "resolved imports"
    );
    sorted.changes.imports = Some(imports);
    if !trusted || go_file_came_or_went {
        sorted.changes.packages = Some(
            resolve::go_packages(&input.rfiles)
                .into_iter()
                .map(|(path, files)| PackageRow { path, files })
                .collect(),
        );
    }
    Ok(Some(RefState {
        tag: indexed_at,
        files: input.rfiles,
        meta: input.meta,
        origin,
    }))
}

/// Whether a file whose lookups used `deps` used one of `touched` (`bits`:
/// the touched keys' low 12 bits).
fn uses_any(deps: &[u32], touched: &resolve::FxSet<u64>, bits: &[u64; 64]) -> bool {
    deps.iter().any(|&d| {
        bits[(d >> 6) as usize & 63] & (1 << (d & 63)) != 0 && touched.contains(&u64::from(d))
    })
}

/// `state` with its entries in path order (files are looked up by path).
fn in_path_order(mut state: RefState) -> RefState {
    if !state.files.is_sorted_by(|a, b| a.path <= b.path) {
        let mut entries: Vec<(RFile, FileMeta)> = std::mem::take(&mut state.files)
            .into_iter()
            .zip(std::mem::take(&mut state.meta))
            .collect();
        entries.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        (state.files, state.meta) = entries.into_iter().unzip();
    }
    state
}

/// The previous state's files with the replaced ones swapped for their new
/// versions, and the lookup keys whose tables change: everything the replaced
/// files contributed before and what the new versions contribute now.
fn resolution_input(
    mut base: RefState,
    rows: &[FileRows],
    for_resolution: &mut [ForResolution],
    changes: &Changes,
    trusted: bool,
) -> ResolutionInput {
    let replaced: HashSet<&str> = changes.remove_paths.iter().map(String::as_str).collect();
    let mut touched: resolve::FxSet<u64> = Default::default();
    let mut methods = resolve::MethodChanges::default();
    // A state's entries are in path order (`plan` sorted them).
    base = in_path_order(base);
    let old_at = |path: &str| base.position(path);
    // Go packages a changed file belongs to, with their file counts before and
    // after: importers re-resolve only if one appears or disappears.
    let mut packages: HashMap<String, (usize, usize)> = replaced
        .iter()
        .copied()
        .chain(rows.iter().map(|r| r.file.path.as_str()))
        .filter_map(resolve::go_package_of)
        .map(|d| (d.to_string(), (0, 0)))
        .collect();
    // Likewise the Rust crates of the changed files.
    let mut crates: HashMap<String, (usize, usize)> = replaced
        .iter()
        .filter_map(|p| old_at(p).map(|at| &base.files[at]))
        .map(|f| (f.language, f.package.as_str()))
        .chain(
            rows.iter()
                .zip(for_resolution.iter())
                .map(|(r, p)| (p.language, r.file.package.as_str())),
        )
        .filter(|(language, _)| *language == crate::model::Language::Rust)
        .map(|(_, name)| (name.to_string(), (0, 0)))
        .collect();
    for f in &base.files {
        count_in_package(&mut packages, &f.path, false);
        count_in_crate(&mut crates, f, false);
    }
    // The keys the new versions change, against the old ones.
    let mut parsed_now: Vec<(RFile, FileMeta)> = Vec::with_capacity(rows.len());
    let mut new_paths: HashSet<&str> = HashSet::new();
    for (rows, parsed) in rows.iter().zip(for_resolution.iter_mut()) {
        let (f, m) = new_entry(rows, parsed, None);
        let old = old_at(&f.path)
            .filter(|_| replaced.contains(f.path.as_str()))
            .map(|at| &base.files[at]);
        // Without a trusted state every file is resolved: no key decides.
        if trusted {
            let kept = changes.symbol_diffs.get(&f.path).map(|d| &d.keep);
            touched.extend(resolve::changed_keys(old, Some(&f), kept, &mut methods));
        }
        new_paths.insert(rows.file.path.as_str());
        parsed_now.push((f, m));
    }
    for gone in replaced.iter().filter(|p| !new_paths.contains(*p)) {
        if let Some(at) = old_at(gone) {
            touched.extend(resolve::changed_keys(
                Some(&base.files[at]),
                None,
                None,
                &mut methods,
            ));
        }
    }
    parsed_now.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    // One pass: the kept entries moved once, the few parsed now merged in,
    // the replaced ones set aside (moving 10k entries about is what costs).
    let n = base.files.len() + parsed_now.len();
    let mut input = ResolutionInput {
        rfiles: Vec::with_capacity(n),
        meta: Vec::with_capacity(n),
        parsed_now: Vec::with_capacity(n),
        touched,
        old_meta: HashMap::new(),
        gone_symbols: HashSet::new(),
    };
    let mut new = parsed_now.into_iter().peekable();
    let mut push = |input: &mut ResolutionInput, f: RFile, m: FileMeta, now: bool| {
        count_in_package(&mut packages, &f.path, true);
        count_in_crate(&mut crates, &f, true);
        input.rfiles.push(f);
        input.meta.push(m);
        input.parsed_now.push(now);
    };
    for (f, m) in std::mem::take(&mut base.files)
        .into_iter()
        .zip(std::mem::take(&mut base.meta))
    {
        while let Some((nf, nm)) = new.next_if(|n| n.0.path < f.path) {
            push(&mut input, nf, nm, true);
        }
        if replaced.contains(f.path.as_str()) {
            let diff = changes.symbol_diffs.get(&f.path);
            input.gone_symbols.extend(
                f.symbols
                    .iter()
                    .filter(|s| diff.is_none_or(|d| !d.keep.contains(&*s.id)))
                    .map(|s| s.id.to_string()),
            );
            input.old_meta.insert(f.path, m);
        } else {
            push(&mut input, f, m, false);
        }
    }
    for (nf, nm) in new {
        push(&mut input, nf, nm, true);
    }
    let method_keys = resolve::method_name_keys(&input.rfiles, &methods);
    input.touched.extend(method_keys);
    input.touched.extend(
        packages
            .iter()
            .filter(|(_, (before, after))| (*before > 0) != (*after > 0))
            .map(|(dir, _)| resolve::package_key(dir)),
    );
    input.touched.extend(
        crates
            .iter()
            .filter(|(_, (before, after))| (*before > 0) != (*after > 0))
            .map(|(name, _)| resolve::crate_key(name)),
    );
    // A file appearing or disappearing where a `#[path]` points changes that
    // module's table entry.
    let appeared_or_gone: HashSet<&str> = rows
        .iter()
        .filter(|rows| !rows.existing)
        .map(|rows| rows.file.path.as_str())
        .chain(changes.drop_files.iter().map(String::as_str))
        .filter(|p| p.ends_with(".rs"))
        .collect();
    if !appeared_or_gone.is_empty() {
        input
            .touched
            .extend(resolve::rust_path_targets(&input.rfiles, &appeared_or_gone));
    }
    input
}

/// Counts a Rust file in its crate's (before, after) counts, if that crate is
/// one of `crates`.
fn count_in_crate(crates: &mut HashMap<String, (usize, usize)>, f: &RFile, after: bool) {
    if crates.is_empty() || f.language != crate::model::Language::Rust {
        return;
    }
    if let Some(c) = crates.get_mut(f.package.as_str()) {
        if after {
            c.1 += 1;
        } else {
            c.0 += 1;
        }
    }
}

/// Counts a file in its Go package's (before, after) counts, if that package
/// is one of `packages`.
fn count_in_package(packages: &mut HashMap<String, (usize, usize)>, path: &str, after: bool) {
    if packages.is_empty() {
        return;
    }
    if let Some(c) = resolve::go_package_of(path).and_then(|d| packages.get_mut(d)) {
        if after {
            c.1 += 1;
        } else {
            c.0 += 1;
        }
    }
}

/// A parsed file's entry of the next state; its imports and sites move into
/// it, its sites and definitions kept as the state's bytes until resolution
/// reads them.
fn new_entry(
    rows: &FileRows,
    parsed: &mut ForResolution,
    spill: Option<&Spill>,
) -> (RFile, FileMeta) {
    let language = parsed.language;
    let imports = std::mem::take(&mut parsed.imports);
    let symbols: Vec<RSymbol> = rows
        .symbols
        .iter()
        .map(|si| RSymbol {
            id: si.row.id.as_str().into(),
            qualified_name: si.row.qualified_name.as_str().into(),
            kind: crate::model::SymbolKind::word(&si.row.kind),
        })
        .collect();
    let f = RFile {
        id: rows.file.id.clone(),
        path: rows.file.path.clone(),
        language,
        module: rows.file.module.clone(),
        package: rows.file.package.clone(),
        path_mods: resolve::declares_path_mods(&imports),
        imports: Lazy::new(imports),
        sites: state::encoded_sites(&std::mem::take(&mut parsed.sites), spill),
        callables: Lazy::new(resolve::Callables::of(&symbols)),
        symbols: state::encoded_symbols(&symbols, (&rows.file.id, &rows.file.path), spill),
    };
    let position: HashMap<&str, u32> = rows
        .symbols
        .iter()
        .enumerate()
        .map(|(i, si)| (si.row.id.as_str(), i as u32))
        .collect();
    let m = FileMeta {
        content_hash: rows.file.content_hash.clone(),
        imports_text: Lazy::new(rows.file.imports.clone()),
        symbols: rows.symbols.len() as u32,
        nesting: Lazy::new(state::Nesting {
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
        }),
        stat: parsed.stat,
        ..FileMeta::default()
    };
    (f, m)
}

/// Writes the changes: in place in one transaction, or as a new database built aside and published. With
/// the build, the search index written beside it (`None`: write it from the
/// graph).
fn write<'s>(
    run: &Run<'_>,
    (shared, owned): (Option<&'s GraphStore>, Option<GraphStore>),
    plan: &mut Plan,
    sorted: &mut Sorted,
    (early_search, early_graph): (Option<SearchThread>, Option<FreshGraph>),
    applying: Option<Applying>,
) -> Result<(Written<'s>, Option<Result<(), IndexError>>), IndexError> {
    let (data, opts) = (run.data, run.opts);
    run.progress.phase("writing", 0);
    let t_write = Instant::now();
    let changes = &mut sorted.changes;
    // A full build started its new graph after parsing (`FreshGraph`); any
    // other run writes in place (it has a graph: with none, the build is full).
    let Some(fresh_graph) = early_graph else {
        let t = Instant::now();
        // The whole ref, beside others: too big for one transaction.
        let write_to = |st: &GraphStore, changes: &mut Changes| match (plan.whole, applying) {
            (true, _) => {
                let stop = opts.stop.clone();
                st.load_beside(changes, Box::new(move || stop.requested()))
            }
            // Under way since before imports were resolved: they follow.
            (false, Some(applying)) => applying.finish(st, changes, &|| opts.stop.requested()),
            (false, None) => st.apply(changes, &|| opts.stop.requested()),
        };
        let written = match shared {
            Some(st) => {
                write_to(st, changes)?;
                Written::Shared(st)
            }
            None => {
                let st = owned.expect("an in-place run has a graph");
                write_to(&st, changes)?;
                Written::Own(Box::new(st))
            }
        };
        let applied_ms = t.elapsed().as_millis() as u64;
        let mut written = written;
        if opts.defer_finish {
            sorted.report.finish_pending = true;
        } else {
            match &written {
                // Read, not written, from here on, then closed.
                Written::Own(st) => st.checkpoint()?,
                Written::Shared(st) => st.checkpoint()?,
            }
            // A server's copy for its query workers is of the file before.
            data.discard_saved();
            if let Written::Own(st) = written {
                let st = super::write::compact_if_outgrown(data, opts, run.progress, st)?;
                written = Written::Own(st);
            }
        }
        let checkpoint_ms = t.elapsed().as_millis() as u64 - applied_ms;
        tracing::debug!(applied_ms, checkpoint_ms, "in-place write");
        tracing::debug!(ms = t_write.elapsed().as_millis() as u64, "wrote the graph");
        return Ok((written, None));
    };
    drop(owned);
    changes.replace_all = false;
    // A full build writes the search index from the parsed files while imports
    // are resolved and the graph is loaded (each mostly waits on its own work:
    // Kuzu's COPY, Tantivy's indexing), and has loaded the files and symbols
    // since (`FreshGraph`); the search index's tag is written only once the
    // graph is in place. A stop asked for during the load leaves the new
    // database unpublished (removed by the next run).
    let graph = fresh_graph.finish(changes, sorted.edge_files.take());
    let search = early_search.and_then(SearchThread::join);
    if graph.is_err() {
        opts.stop.check()?;
    }
    graph?;
    if search.is_none() {
        tracing::warn!("the search index writer panicked; rebuilding it from the graph");
    }
    sorted.report.republished = true;
    let reopened = data.open_graph(&opts.graph)?;
    tracing::debug!(ms = t_write.elapsed().as_millis() as u64, "wrote the graph");
    Ok((Written::Own(Box::new(reopened)), search))
}

/// Where a run's edges go when it writes them all (`None`: a trusted state's
/// run writes the difference): a full build's to its COPY files as each file
/// is resolved, else rows.
fn whole_edges(run: &Run<'_>, fresh: bool, trusted: bool) -> Result<Option<Whole>, IndexError> {
    Ok(match (fresh, trusted) {
        (true, _) => Some(Whole::Files(Box::new(EdgeCsvs::create(
            run.opts.graph.copy_part,
            &run.repo,
            &run.ref_name,
        )?))),
        (false, false) => Some(Whole::Rows {
            imports: Vec::new(),
            sites: Vec::new(),
        }),
        (false, true) => None,
    })
}

/// After the graph: the resolution state (saved while the search index is
/// brought up to date), the search index's tag, the totals and the report.
fn publish(
    run: &Run<'_>,
    written: &Written<'_>,
    sorted: Sorted,
    next_state: (
        Option<RefState>,
        Option<std::io::Result<SavedAside>>,
        Option<SavedEarly>,
    ),
    searched: Option<Result<(), IndexError>>,
    previous_indexed_at: Option<String>,
    opened: Opened,
) -> Result<IndexReport, IndexError> {
    let (next_state, aside, saved_early) = next_state;
    let Sorted {
        mut report,
        changes,
        spill,
        ..
    } = sorted;
    let store = written.graph();
    run.progress.phase("search index", 0);
    let t_search = Instant::now();
    let result = std::thread::scope(|s| {
        let saver = s.spawn(|| match &saved_early {
            Some(early) => put_early(run, &early.saved),
            None => save_state(run, next_state.as_ref(), aside, report.finish_pending),
        });
        let dir = run.data.search_dir(&changes.repo, &changes.ref_name);
        let update = || {
            update_search(
                &run.root,
                run.data,
                store,
                &changes,
                previous_indexed_at.as_deref(),
                run.opts.writer_mb(),
                run.opts.defer_finish,
            )
        };
        let result = match searched {
            Some(Ok(())) => search::write_tag(&dir, &changes.indexed_at).map_err(IndexError::from),
            // Written beside the graph and failed: once more, from the graph.
            Some(Err(e)) => {
                tracing::warn!("writing the search index beside the graph failed ({e}); retrying");
                update()
            }
            None => update(),
        };
        if let Err(panic) = saver.join() {
            std::panic::resume_unwind(panic);
        }
        result
    });
    // Writing the state copied every spilled section again.
    if let Some(s) = &spill {
        s.drop_pages();
        tracing::debug!(mib = s.len() >> 20, "spilled sections");
    }
    if let Err(e) = result {
        // The search index is derived from the graph: without its tag it is
        // rebuilt when next opened, so this run still counts.
        tracing::warn!("the search index was not updated ({e}); it will be rebuilt when next used");
        let _ = std::fs::remove_file(
            run.data
                .search_dir(&changes.repo, &changes.ref_name)
                .join(search::TAG_FILE),
        );
    }
    tracing::debug!(
        ms = t_search.elapsed().as_millis() as u64,
        "wrote the search index"
    );
    // The ref's totals: from the state when there is one (counting them in the
    // graph scans every edge), else from the graph.
    match (&next_state, &saved_early) {
        (Some(st), _) => set_totals(&mut report, st),
        (None, Some(early)) => {
            report.symbols = early.totals.symbols;
            report.import_edges = early.totals.import_edges;
            report.unresolved_imports = early.totals.unresolved_imports;
        }
        (None, None) => {
            if let Some(st) = store
                .status()?
                .into_iter()
                .find(|s| s.repo == run.repo && s.ref_name == run.ref_name)
            {
                report.symbols = st.symbols;
                report.import_edges = st.import_edges;
                report.unresolved_imports = st.unresolved_imports;
            }
        }
    }
    let mut diagnostics = opened.diagnostics;
    finish_diagnostics(store, run, &mut report, &mut diagnostics)?;
    match next_state {
        Some(st) if run.opts.defer_finish => remember(
            run.states,
            &run.state_path,
            st,
            report.finish_pending,
            opened.walk_found,
            &diagnostics,
        ),
        // A big ref's state is a few hundred thousand allocations and a
        // mapping (~30 ms to free on Python's lib/): a process about to exit
        // leaves it to the OS, others free it on a thread of their own.
        Some(st) if run.opts.exits_after => std::mem::forget(st),
        Some(st) => drop_aside(st),
        None => {}
    }
    report.indexed_at = changes.indexed_at.clone();
    // An in-place run says what it changed (a server patches its catalog).
    if !report.republished && !changes.replace_all {
        report.changes = Some(std::sync::Arc::new(changes));
    }
    run.progress.done();
    report.diagnostics = diagnostics;
    report.seconds = run.started.elapsed().as_secs_f64();
    Ok(report)
}

/// A state written aside before the graph write and let go of: what it saved,
/// and the ref's totals it held (`symbols`, `import_edges`,
/// `unresolved_imports`).
struct SavedEarly {
    saved: std::io::Result<SavedAside>,
    totals: IndexReport,
}

/// A CLI's full build writes its state aside before the graph write and lets
/// go of it (`next_state` left `None`): held through the edges' COPY it was the
/// largest part of the run's peak (~600 MiB of heap on the crates corpus, its
/// file 160 MB). Other runs keep it (a server remembers it for the next run).
fn save_early(run: &Run<'_>, plan: &Plan, next_state: &mut Option<RefState>) -> Option<SavedEarly> {
    let opts = run.opts;
    if !(plan.fresh && opts.exits_after && !opts.defer_finish) {
        return None;
    }
    let st = next_state.take()?;
    let saved = st.save_whole_aside(&run.state_path);
    let mut totals = IndexReport::default();
    set_totals(&mut totals, &st);
    drop(st);
    Some(SavedEarly { saved, totals })
}

/// Puts an early-saved state in its place once the graph committed (as
/// `save_state`): without one, the next run reads the graph.
fn put_early(run: &Run<'_>, saved: &std::io::Result<SavedAside>) {
    let put = match saved {
        Ok(aside) => aside.put_alone(),
        Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
    };
    if let Err(e) = put {
        tracing::warn!(
            "could not save the resolution state ({e}); the next run reads the graph instead"
        );
        let _ = std::fs::remove_file(&run.state_path);
    }
}

/// Drops `value` on a thread of its own.
fn drop_aside<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("cruxe-drop".into())
        .spawn(move || drop(value));
}

/// The state describes the state just committed; a kill before it is renamed
/// into place leaves the old one, whose tag no longer matches. `aside`: the
/// state already written beside its place while the graph write committed. A
/// server's run leaves it to `finish_write`.
fn save_state(
    run: &Run<'_>,
    next_state: Option<&RefState>,
    aside: Option<std::io::Result<SavedAside>>,
    finish_pending: bool,
) {
    match next_state {
        Some(_) if finish_pending => {}
        Some(st) => {
            let t = Instant::now();
            let saved = aside
                .unwrap_or_else(|| st.save_aside(&run.state_path))
                .and_then(|aside| st.publish(aside))
                // What was written, kept in memory (see `exits_after`).
                .map(|put| match run.opts.exits_after {
                    true => std::mem::forget(put),
                    false => drop(put),
                });
            if let Err(e) = saved {
                tracing::warn!(
                    "could not save the resolution state ({e}); the next run reads the graph instead"
                );
                let _ = std::fs::remove_file(&run.state_path);
            }
            tracing::debug!(
                ms = t.elapsed().as_millis() as u64,
                "saved the resolution state"
            );
        }
        None => {
            let _ = std::fs::remove_file(&run.state_path);
        }
    }
}

/// The run's diagnostics, by path, with every file of the ref whose parse
/// left lines in error or that was read again past a misparse
/// (`extract::recover`), parsed in this run or before: counted and listed, so
/// a re-run reports what the first run did.
fn finish_diagnostics(
    store: &GraphStore,
    run: &Run<'_>,
    report: &mut IndexReport,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(), IndexError> {
    let (repo, ref_name) = (&run.repo, &run.ref_name);
    let plural = |n: i64| if n == 1 { "" } else { "s" };
    for (path, lines, recovered) in store
        .files_in_error(repo, ref_name)
        .map_err(IndexError::Graph)?
    {
        report.recovered_declarations += recovered as usize;
        let again = if recovered > 0 {
            format!(
                " ({recovered} declaration{} recovered by reading it again past a misparse)",
                plural(recovered)
            )
        } else {
            String::new()
        };
        let problem = if lines > 0 {
            report.syntax_error_files += 1;
            format!(
                "syntax errors on {lines} line{}; indexed what could be parsed{again}",
                plural(lines)
            )
        } else {
            report.recovered_files += 1;
            format!("valid code the grammar misread{again}")
        };
        diagnostics.push(Diagnostic { path, problem });
    }
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(())
}
