//! The repositories a server holds: their data dirs, the open graphs, background
//! indexing and its progress. The MCP tools (`tools.rs`) read through this; the
//! transports (`server.rs`) own a `Service` and know nothing of Kuzu.
//!
//! Architecture invariant: a served graph is opened read-write once per data dir
//! and shared. Index runs inside the server write through that same handle, so
//! readers keep answering from the last committed state while a run goes on; a
//! full rebuild is published aside and swapped in.

pub mod config;
mod generations;

pub use generations::{ReplicaOf, ServiceSlot, default_replica_dir, follow};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::index::{self, IndexError, IndexOptions, IndexReport, Progress};
use crate::query::cypher::{self, CypherPool};
use crate::store::catalog::{self, Catalog};
use crate::store::datadir::{DataDir, DataDirError, WriterLock};
use crate::store::graph::{GraphStore, RefStatus};
use crate::store::search::{self, EntryMaps, RefSearch, SearchIndex};

/// What to serve: a working tree and where its index lives.
#[derive(Debug, Clone, Default)]
pub struct RepoSpec {
    pub root: PathBuf,
    /// Data dir; defaults to `ROOT/.cruxe`.
    pub data: Option<PathBuf>,
    /// Name; defaults to the folder name (or the server's `--repo` for one repo).
    pub name: Option<String>,
    /// The ref the working tree is indexed as; defaults to its git branch or `live`.
    pub ref_name: Option<String>,
    /// Further branches, tags or commits, indexed from git objects.
    pub git_refs: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ServiceConfig {
    pub index: IndexOptions,
    /// Kuzu's buffer pool for the graphs a server keeps open (its reads and
    /// in-place runs); a full build into a new database uses `index.graph`'s.
    /// Reads touch few pages, and the pool never gives back what it cached, so
    /// it is what bounds a server's memory.
    pub serving_buffer_pool_bytes: u64,
    /// Per-query limit for `run_cypher`.
    pub query_timeout_ms: u64,
    /// How long any other tool call may take before it is stopped where it
    /// runs and answered `query_timeout`.
    pub call_timeout: Duration,
    /// Largest `limit` a `run_cypher` call may ask for.
    pub max_rows: usize,
    /// Watch the working trees and re-index what changes.
    pub watch: bool,
    /// Quiet time after a change before re-indexing (a save is often several events).
    pub debounce: Duration,
    /// Quiet time after a run before its checkpoint (see `Service::run_jobs`);
    /// the copy for `run_cypher` waits for 2 s of quiet.
    pub checkpoint_after: Duration,
    /// Bounds of one `run_cypher` query (its timeout is `query_timeout_ms`).
    pub cypher: cypher::Limits,
    /// The binary run as `cypher-worker` [default: this process's own].
    pub worker_exe: Option<PathBuf>,
    /// Publish each committed state as a generation to this object store
    /// (`--publish URL`; see `replicate`).
    pub publish: Option<String>,
}

/// The default of `ServiceConfig::serving_buffer_pool_bytes`: a 600k-symbol
/// graph answers its walks and loads its catalog within it (docs/BENCHMARKS.md).
pub const SERVING_BUFFER_POOL_MB: u64 = 192;

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            index: IndexOptions::default(),
            serving_buffer_pool_bytes: SERVING_BUFFER_POOL_MB << 20,
            query_timeout_ms: 5_000,
            call_timeout: Duration::from_secs(30),
            max_rows: 10_000,
            watch: true,
            debounce: Duration::from_millis(30),
            // A checkpoint cannot be interrupted; a change that lands in one
            // waits for it, and so do reads. Soon after a run it is smallest,
            // and past the reads that follow a change (see `Service::run_jobs`).
            checkpoint_after: Duration::from_millis(500),
            cypher: cypher::Limits::default(),
            worker_exe: None,
            publish: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexingStatus {
    NotIndexed,
    Indexing,
    Ready,
    Failed,
}

impl IndexingStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexingStatus::NotIndexed => "not_indexed",
            IndexingStatus::Indexing => "indexing",
            IndexingStatus::Ready => "ready",
            IndexingStatus::Failed => "failed",
        }
    }
}

/// Progress of a running index job.
#[derive(Debug, Default)]
pub struct JobProgress {
    phase: Mutex<String>,
    done: AtomicU64,
    total: AtomicU64,
}

impl JobProgress {
    pub fn snapshot(&self) -> (String, u64, u64) {
        (
            self.phase.lock().map(|p| p.clone()).unwrap_or_default(),
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}

impl Progress for JobProgress {
    fn phase(&self, name: &str, total: u64) {
        if let Ok(mut p) = self.phase.lock() {
            *p = name.to_string();
        }
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }
    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
}

/// (repo, ref)
type RepoRef = (String, String);

/// One data dir and the graph opened from it.
pub struct Store {
    pub data: DataDir,
    /// This server is the data dir's one writer for as long as it runs: an index
    /// run from elsewhere is refused instead of writing under it. A replica's
    /// store (a generation's directory, never written) holds none.
    lock: Option<WriterLock>,
    /// Memory of the search index writer when an index is rebuilt, in MiB.
    search_writer_mb: usize,
    /// The resolution states of this data dir's refs, kept between runs.
    states: index::StateCache,
    /// Workers for `run_cypher`, reading the latest snapshot of the graph.
    pub cypher: CypherPool,
    /// Counts the graph's committed changes (runs, rebuilds); a snapshot
    /// records the count it holds.
    version: AtomicU64,
    graph: RwLock<Option<Arc<GraphStore>>>,
    /// Refs held, with counts; refreshed after every index run.
    refs: RwLock<Vec<RefStatus>>,
    /// Symbol catalogs per (repo, ref), dropped after every index run.
    catalogs: RwLock<HashMap<RepoRef, Arc<Catalog>>>,
    /// Search indexes per (repo, ref), built from the catalog on first use.
    searches: RwLock<HashMap<RepoRef, Arc<RefSearch>>>,
    /// The term-to-entry maps of each ref's search indexes, kept across the
    /// reopening of an index after a change (see `search::EntryMaps`).
    entry_maps: Mutex<HashMap<RepoRef, Arc<EntryMaps>>>,
    /// Serialises catalog loads so concurrent first calls load once.
    loading: Mutex<()>,
    /// A catalog load or a big run filled the graph's buffer pool since it was
    /// last given back (see `give_back_pool`).
    pool_filled: AtomicBool,
}

impl Store {
    /// A store of `data`, with its query workers (this process's own binary
    /// unless `cfg.worker_exe` names another).
    fn new(
        data: DataDir,
        lock: Option<WriterLock>,
        cfg: &ServiceConfig,
    ) -> Result<Store, ServiceError> {
        let exe = match &cfg.worker_exe {
            Some(p) => p.clone(),
            None => std::env::current_exe().map_err(ServiceError::Exe)?,
        };
        let limits = cypher::Limits {
            timeout_ms: cfg.query_timeout_ms,
            ..cfg.cypher.clone()
        };
        let cypher = CypherPool::new(exe, limits);
        Ok(Store {
            data,
            lock,
            states: index::StateCache::default(),
            search_writer_mb: cfg.index.writer_mb(),
            cypher,
            version: AtomicU64::new(0),
            graph: RwLock::new(None),
            refs: RwLock::new(Vec::new()),
            catalogs: RwLock::new(HashMap::new()),
            searches: RwLock::new(HashMap::new()),
            entry_maps: Mutex::new(HashMap::new()),
            loading: Mutex::new(()),
            pool_filled: AtomicBool::new(false),
        })
    }

    pub fn graph(&self) -> Option<Arc<GraphStore>> {
        self.graph.read().ok().and_then(|g| g.clone())
    }

    pub fn refs(&self) -> Vec<RefStatus> {
        self.refs.read().map(|r| r.clone()).unwrap_or_default()
    }

    /// What this server lends an index run on this data dir.
    fn held<'a>(&'a self, graph: Option<&'a GraphStore>) -> index::Held<'a> {
        index::Held {
            graph,
            lock: self.lock.as_ref(),
            states: &self.states,
        }
    }

    /// The graph's current version (see `version`).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Whether `run_cypher` reads an older state than the other tools.
    pub fn snapshot_behind(&self) -> bool {
        self.cypher.source_version() != Some(self.version())
    }

    /// Hands the query workers the copy just made, if it is the
    /// current state (call after `index::finish_write`).
    fn publish_snapshot(&self) {
        match self.data.link_query_snapshot() {
            Ok(Some(path)) => {
                tracing::debug!(path = %path.display(), "new snapshot for run_cypher");
                self.cypher.set_source(cypher::Source {
                    path,
                    version: self.version(),
                    owned: true,
                });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("no new snapshot for run_cypher: {e}"),
        }
    }

    /// The value cached under (`repo`, `ref_name`) in `map`, or what `load` gives,
    /// loaded once even when several calls ask for it at the same time. Index runs
    /// clear the caches (`refresh`). A loaded value is kept only when `current`
    /// says it is of the graph's state now: one loaded across a commit would
    /// otherwise stay, and the next run would patch it.
    fn cached<T, E>(
        &self,
        map: &RwLock<HashMap<RepoRef, Arc<T>>>,
        repo: &str,
        ref_name: &str,
        load: impl FnOnce() -> Result<T, E>,
        current: impl Fn(&T) -> bool,
    ) -> Result<Arc<T>, E> {
        let key = (repo.to_string(), ref_name.to_string());
        let get = || map.read().ok().and_then(|m| m.get(&key).cloned());
        if let Some(v) = get() {
            return Ok(v);
        }
        let _guard = self.loading.lock();
        if let Some(v) = get() {
            return Ok(v);
        }
        let v = Arc::new(load()?);
        if current(&v)
            && let Ok(mut m) = map.write()
        {
            m.insert(key, v.clone());
        }
        Ok(v)
    }

    /// The symbol catalog of a repo/ref, loaded from the graph on first use.
    pub fn catalog(
        &self,
        graph: &GraphStore,
        repo: &str,
        ref_name: &str,
    ) -> Result<Arc<Catalog>, crate::store::graph::GraphError> {
        self.catalog_from(graph, repo, ref_name, None)
    }

    /// The symbol catalog of a repo/ref, made on first use from `older` (a
    /// catalog of an earlier state of the ref: a replica's previous
    /// generation's, `Catalog::refreshed`) when given, else loaded whole.
    pub fn catalog_from(
        &self,
        graph: &GraphStore,
        repo: &str,
        ref_name: &str,
        older: Option<&Catalog>,
    ) -> Result<Arc<Catalog>, crate::store::graph::GraphError> {
        self.cached(
            &self.catalogs,
            repo,
            ref_name,
            || {
                let started = std::time::Instant::now();
                let c = match older {
                    Some(older) => older.refreshed(graph, repo, ref_name)?,
                    None => catalog::load(graph, repo, ref_name)?,
                };
                release_freed_memory();
                self.pool_filled.store(true, Ordering::SeqCst);
                tracing::info!(
                    repo,
                    r#ref = ref_name,
                    symbols = c.len(),
                    ms = started.elapsed().as_millis() as u64,
                    from_older = older.is_some(),
                    "loaded the symbol catalog"
                );
                Ok(c)
            },
            |c| of_now(graph, repo, ref_name, c),
        )
    }

    /// The catalog of a repo/ref this store holds now, if one is loaded.
    pub fn loaded_catalog(&self, repo: &str, ref_name: &str) -> Option<Arc<Catalog>> {
        let key = (repo.to_string(), ref_name.to_string());
        self.catalogs.read().ok()?.get(&key).cloned()
    }

    /// Whether a call on the ref now would read a catalog of the graph's
    /// current state (or load one): false from an index run's commit until the
    /// run's catalog is swapped in.
    pub fn caught_up(&self, repo: &str, ref_name: &str) -> bool {
        let key = (repo.to_string(), ref_name.to_string());
        let cached = self.catalogs.read().ok().and_then(|c| c.get(&key).cloned());
        match (cached, self.graph()) {
            (Some(c), Some(g)) => of_now(&g, repo, ref_name, &c),
            _ => true,
        }
    }

    /// The search index of a repo/ref (with its catalog), opened on first use.
    /// `root` is the working tree the ref was indexed from (for bodies, if the
    /// index has to be rebuilt).
    pub fn search(
        &self,
        graph: &GraphStore,
        repo: &str,
        ref_name: &str,
        root: Option<&Path>,
    ) -> Result<Arc<RefSearch>, ServiceError> {
        // Outside `cached`: loading the catalog takes the same load lock.
        let catalog = self.catalog(graph, repo, ref_name)?;
        self.cached(
            &self.searches,
            repo,
            ref_name,
            || {
                let index = self
                    .open_search(graph, repo, ref_name, root)?
                    .with_entry_maps(self.entry_maps(repo, ref_name));
                Ok(RefSearch {
                    catalog: catalog.clone(),
                    index,
                })
            },
            |s| of_now(graph, repo, ref_name, &s.catalog),
        )
    }

    /// The term-to-entry maps shared by the search indexes of a repo/ref.
    fn entry_maps(&self, repo: &str, ref_name: &str) -> Arc<EntryMaps> {
        let Ok(mut maps) = self.entry_maps.lock() else {
            return Arc::default();
        };
        maps.entry((repo.to_string(), ref_name.to_string()))
            .or_default()
            .clone()
    }

    /// The ref's index from the data dir when its tag matches the graph; otherwise
    /// rebuilt there from the graph (a run killed between its two commits, a
    /// data dir from before search indexes), or in memory if the data dir's index
    /// is busy (an index run is writing it right now).
    fn open_search(
        &self,
        graph: &GraphStore,
        repo: &str,
        ref_name: &str,
        root: Option<&Path>,
    ) -> Result<SearchIndex, ServiceError> {
        let indexed_at = self
            .refs()
            .into_iter()
            .find(|r| r.repo == repo && r.ref_name == ref_name)
            .map(|r| r.indexed_at);
        let dir = self.data.search_dir(repo, ref_name);
        if indexed_at.is_some()
            && search::read_tag(&dir) == indexed_at
            && let Ok(index) = SearchIndex::open_dir(&dir)
        {
            return Ok(index);
        }
        let started = std::time::Instant::now();
        let symbols = graph.symbol_rows(repo, ref_name)?;
        let persisted = SearchIndex::open_dir(&dir).and_then(|index| {
            let index = index.with_writer_mb(self.search_writer_mb);
            index.rebuild(&symbols, root)?;
            if let Some(tag) = &indexed_at {
                search::write_tag(&dir, tag)?;
            }
            Ok(index)
        });
        let index = match persisted {
            Ok(index) => index,
            Err(e) => {
                tracing::warn!("search index in memory only: {e}");
                let index = SearchIndex::in_ram()?.with_writer_mb(self.search_writer_mb);
                index.rebuild(&symbols, root)?;
                index
            }
        };
        tracing::info!(
            repo,
            r#ref = ref_name,
            ms = started.elapsed().as_millis() as u64,
            "rebuilt the search index"
        );
        Ok(index)
    }

    /// After an in-place run of one ref: the ref's caches go, except its catalog,
    /// which is replaced by `catalog` (patched with the run's changes) when given.
    /// Other refs' caches stay: the run did not touch them.
    fn refresh_ref(
        &self,
        repo: &str,
        ref_name: &str,
        catalog: Option<Arc<Catalog>>,
        report: &index::IndexReport,
    ) {
        // The ref's totals come with the run's report (counting them in the graph
        // scans every import edge); other refs did not change.
        let mut refs = self.refs.read().map(|r| r.clone()).unwrap_or_default();
        let st = RefStatus {
            repo: repo.to_string(),
            ref_name: ref_name.to_string(),
            commit: report.commit.clone(),
            indexed_at: report.indexed_at.clone(),
            files: report.files as i64,
            symbols: report.symbols,
            import_edges: report.import_edges,
            unresolved_imports: report.unresolved_imports,
        };
        match refs
            .iter_mut()
            .find(|r| r.repo == repo && r.ref_name == ref_name)
        {
            Some(r) => *r = st,
            None => {
                refs.push(st);
                refs.sort_by(|a, b| (&a.repo, &a.ref_name).cmp(&(&b.repo, &b.ref_name)));
            }
        }
        let key = (repo.to_string(), ref_name.to_string());
        // The catalog first: a search opened in between would pair the old one
        // with the new index.
        if let Ok(mut c) = self.catalogs.write() {
            match catalog {
                Some(cat) => c.insert(key.clone(), cat),
                None => c.remove(&key),
            };
        }
        if let Ok(mut s) = self.searches.write() {
            s.remove(&key);
        }
        if let Ok(mut r) = self.refs.write() {
            *r = refs;
        }
    }

    /// Serves `graph`, a new database file holding the same rows as the one
    /// served (a compacted copy): catalogs are kept, stamped with its state;
    /// search indexes are reopened with them.
    fn swap_graph(&self, graph: Arc<GraphStore>) {
        if let Ok(mut g) = self.graph.write() {
            *g = Some(graph.clone());
        }
        if let Ok(mut c) = self.catalogs.write() {
            for ((repo, ref_name), cat) in c.iter_mut() {
                *cat = Arc::new(cat.with_state(graph.state(repo, ref_name)));
            }
        }
        if let Ok(mut s) = self.searches.write() {
            s.clear();
        }
    }

    /// Compacts the graph `live` (just checkpointed) when in-place runs have
    /// outgrown it (see `DataDir::compact`), and serves the copy. Tool calls
    /// keep reading `live` meanwhile; the indexer thread, the only writer, is
    /// here. The graph now served.
    fn compact_if_outgrown(
        &self,
        live: &Arc<GraphStore>,
        cfg: &crate::store::graph::GraphConfig,
        give_way: &dyn Fn() -> bool,
    ) -> Arc<GraphStore> {
        let compacted = self
            .data
            .compact_if_outgrown(live, cfg, &|| {}, give_way)
            .and_then(|done| match done {
                true => Ok(Some(self.data.open_graph(cfg)?)),
                false => Ok(None),
            });
        match compacted {
            Ok(None) => live.clone(),
            Ok(Some(graph)) => {
                let graph = Arc::new(graph);
                self.swap_graph(graph.clone());
                graph
            }
            // Not published: `live` is still the current graph. Published but
            // not opened: the next run opens it (or recovers).
            Err(e) => {
                tracing::warn!("compacting the graph failed: {e}");
                if self.data.graph_path().ok().flatten().as_deref() != Some(live.path()) {
                    self.refresh(None);
                }
                live.clone()
            }
        }
    }

    fn refresh(&self, graph: Option<Arc<GraphStore>>) {
        let refs = graph
            .as_ref()
            .and_then(|g| g.status().ok())
            .unwrap_or_default();
        if let Ok(mut g) = self.graph.write() {
            *g = graph;
        }
        if let Ok(mut r) = self.refs.write() {
            *r = refs;
        }
        if let Ok(mut c) = self.catalogs.write() {
            c.clear();
        }
        if let Ok(mut s) = self.searches.write() {
            s.clear();
        }
        if let Ok(mut m) = self.entry_maps.lock() {
            m.clear();
        }
    }
}

/// Whether `c` holds `graph`'s rows of the ref as they are now: taken with no
/// commit under way, and none since.
fn of_now(graph: &GraphStore, repo: &str, ref_name: &str, c: &Catalog) -> bool {
    c.state().settled() && *c.state() == graph.state(repo, ref_name)
}

/// Runs of at most this many parsed or removed files keep what they freed
/// (see `Service::run_jobs`).
const SMALL_RUN_FILES: usize = 200;

/// Hands the memory that large transient work freed (an index run, a catalog
/// load) back to the system: glibc keeps freed memory in its arenas, so a
/// server's resident size would otherwise stay at its peak (~280 MiB more
/// after loading the catalog of a 600k-symbol ref).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Gives back the pages the store's graph keeps in Kuzu's buffer pool
/// (`Shared::release_pool`) after the work that read most of them: a catalog
/// load (every symbol) or a big run. Walks read back the few they need. Not
/// after a small run: calls wait meanwhile, and it gives back little.
fn give_back_pool(store: &Store) {
    store.pool_filled.store(false, Ordering::SeqCst);
    let Some(graph) = store.graph() else { return };
    let t = Instant::now();
    match graph.release_pool() {
        Ok(bytes) => tracing::debug!(
            mib = bytes >> 20,
            ms = t.elapsed().as_millis() as u64,
            "gave back the graph's buffer pool"
        ),
        Err(e) => tracing::debug!("cannot give back the graph's buffer pool: {e}"),
    }
}

/// Two malloc arenas for the whole process: a server's many short-lived
/// allocations on many threads (tool calls, graph readers, Kuzu's workers)
/// otherwise each grow an arena of their own that keeps what was freed (a
/// 600k-symbol server grew ~120 MiB over a minute of load; with two, ~40 MiB,
/// at the same throughput).
fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of the allocator.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// A served repository.
pub struct Served {
    pub name: String,
    pub root: PathBuf,
    /// The ref its working tree is indexed as.
    pub ref_name: String,
    /// Other refs, indexed from git objects.
    pub git_refs: Vec<String>,
    pub store: Arc<Store>,
    state: RwLock<RepoState>,
    pub progress: JobProgress,
    /// Changes seen in the working tree (a counter), and the count the last
    /// completed run started from: the index is behind while they differ.
    changes_seen: Arc<AtomicU64>,
    /// What the watcher saw change since the last run of the working tree.
    changed: Arc<Mutex<ChangedPaths>>,
    changes_indexed: AtomicU64,
    /// Why the working tree is not watched, if it is not.
    watch_error: Mutex<Option<String>>,
    /// The same counters for each git ref: moves of the ref seen in `.git`, and
    /// the count its last completed run started from.
    git_seen: Arc<Mutex<HashMap<String, u64>>>,
    git_indexed: Mutex<HashMap<String, u64>>,
    /// The "is ready" line of the first index, kept until every tool answers
    /// from it: `run_cypher` reads a snapshot made after the run's checkpoint.
    ready_line: Mutex<Option<String>>,
    /// Whether that line was said (`/health`'s `ready`).
    announced: AtomicBool,
    /// On a replica: the generation it answers from, and what the replica
    /// knows of the store (see `freshness`).
    replica: Option<(u64, Arc<crate::replicate::replica::ReplicaStatus>)>,
}

/// How current the answers about one ref are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The index holds the working tree as it is (or a git ref, which never moves).
    Fresh,
    /// Changes are seen and being indexed; answers are the last completed state.
    Syncing,
    /// The index may be behind and nothing is bringing it up to date (the last
    /// run failed, or the tree is not watched).
    Stale,
}

impl Freshness {
    pub fn as_str(self) -> &'static str {
        match self {
            Freshness::Fresh => "fresh",
            Freshness::Syncing => "syncing",
            Freshness::Stale => "stale",
        }
    }
}

#[derive(Debug, Clone)]
struct RepoState {
    status: IndexingStatus,
    error: Option<String>,
    last: Option<IndexSummary>,
}

/// What the last completed run of a served repo did.
#[derive(Debug, Clone)]
pub struct IndexSummary {
    pub parsed: usize,
    pub removed: usize,
    pub diagnostics: usize,
    pub seconds: f64,
}

impl Served {
    fn new(
        name: String,
        root: PathBuf,
        ref_name: String,
        git_refs: Vec<String>,
        store: Arc<Store>,
        replica: Option<(u64, Arc<crate::replicate::replica::ReplicaStatus>)>,
    ) -> Served {
        Served {
            name,
            root,
            ref_name,
            git_seen: Arc::new(Mutex::new(
                git_refs.iter().map(|r| (r.clone(), 1)).collect(),
            )),
            git_refs,
            store,
            state: RwLock::new(RepoState {
                status: IndexingStatus::NotIndexed,
                error: None,
                last: None,
            }),
            progress: JobProgress::default(),
            changes_seen: Arc::new(AtomicU64::new(0)),
            changed: Arc::new(Mutex::new(ChangedPaths {
                everything: true,
                paths: std::collections::BTreeSet::new(),
            })),
            changes_indexed: AtomicU64::new(0),
            watch_error: Mutex::new(None),
            git_indexed: Mutex::new(HashMap::new()),
            ready_line: Mutex::new(None),
            announced: AtomicBool::new(false),
            replica,
        }
    }

    /// Whether every tool answers from its first index (the ready line was said).
    pub fn answers_all_tools(&self) -> bool {
        self.announced.load(Ordering::SeqCst)
    }

    /// Says the ready line, once, when `run_cypher` reads the state the other
    /// tools read (or, `anyway`, after a finish that failed: the line must
    /// not wait for a snapshot that will not come).
    fn announce_ready(&self, anyway: bool) {
        if !anyway && self.store.snapshot_behind() {
            return;
        }
        if let Some(line) = self.ready_line.lock().ok().and_then(|mut l| l.take()) {
            // Ready before the line is out: whoever reads it may ask at once.
            self.announced.store(true, Ordering::SeqCst);
            // Said whatever the log level: a person who ran `cruxe serve`
            // waits for this line before the first question.
            eprintln!("{line}");
        }
    }

    pub fn status(&self) -> IndexingStatus {
        self.state
            .read()
            .map(|s| s.status)
            .unwrap_or(IndexingStatus::Failed)
    }

    pub fn error(&self) -> Option<String> {
        self.state.read().ok().and_then(|s| s.error.clone())
    }

    pub fn last_run(&self) -> Option<IndexSummary> {
        self.state.read().ok().and_then(|s| s.last.clone())
    }

    /// Where the files of `ref_name` are read from: the working tree for its own
    /// ref, the snapshot in the data dir for a ref indexed from git objects.
    pub fn source_root(&self, ref_name: &str) -> PathBuf {
        if ref_name != self.ref_name {
            let tree = self.store.data.tree_dir(&self.name, ref_name);
            if tree.is_dir() {
                return tree;
            }
        }
        self.root.clone()
    }

    /// How current answers about `ref_name` are. On a replica: fresh while it
    /// serves the newest generation it has seen, syncing while it fetches a
    /// newer one, stale when the store does not answer.
    pub fn freshness(&self, ref_name: &str) -> Freshness {
        if let Some((generation, status)) = &self.replica {
            return match (status.reachable(), status.newest() > *generation) {
                (false, _) => Freshness::Stale,
                (true, true) => Freshness::Syncing,
                (true, false) => Freshness::Fresh,
            };
        }
        if ref_name != self.ref_name {
            let seen = self
                .git_seen
                .lock()
                .ok()
                .and_then(|m| m.get(ref_name).copied());
            let indexed = self
                .git_indexed
                .lock()
                .ok()
                .and_then(|m| m.get(ref_name).copied());
            return match (seen, indexed) {
                // A git ref served here: behind until its last move is indexed.
                (Some(s), i) if Some(s) != i => Freshness::Syncing,
                _ => Freshness::Fresh,
            };
        }
        let behind =
            self.changes_seen.load(Ordering::SeqCst) != self.changes_indexed.load(Ordering::SeqCst);
        match self.status() {
            IndexingStatus::Indexing => Freshness::Syncing,
            IndexingStatus::Failed | IndexingStatus::NotIndexed => Freshness::Stale,
            IndexingStatus::Ready if behind => Freshness::Syncing,
            IndexingStatus::Ready => {
                if self.watch_error().is_some() {
                    Freshness::Stale
                } else {
                    Freshness::Fresh
                }
            }
        }
    }

    pub fn watch_error(&self) -> Option<String> {
        self.watch_error.lock().ok().and_then(|e| e.clone())
    }

    fn set(&self, status: IndexingStatus, error: Option<String>, last: Option<IndexSummary>) {
        if let Ok(mut s) = self.state.write() {
            s.status = status;
            s.error = error;
            if last.is_some() {
                s.last = last;
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot publish: {0}")]
    Publish(crate::replicate::objects::ObjectsError),
    #[error(transparent)]
    Graph(#[from] crate::store::graph::GraphError),
    #[error(transparent)]
    Search(#[from] crate::store::search::SearchError),
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    #[error("{0} is not a directory: give the repository's root directory")]
    NotADirectory(PathBuf),
    #[error(
        "two served repositories are both named `{0}`; give them different names (`--repo` or `name` in cruxe.toml)"
    )]
    DuplicateName(String),
    #[error("`{0}` names no branch, tag or commit in {1}")]
    UnknownGitRef(String, PathBuf),
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("cannot find this program's own binary (for the query workers): {0}")]
    Exe(std::io::Error),
}

/// Watches `served`'s working tree: a change to a file cruxe indexes (or to a
/// manifest, or a directory) counts as a change and queues a re-index. A change
/// under `.git/refs` or to `.git/packed-refs` (a branch or tag moved) queues a
/// re-index of the served git refs, which re-reads them only if their commit
/// changed. Events in the data dir, the rest of `.git`, and plain reads are ignored.
fn watch(
    served: &Served,
    i: usize,
    tx: Sender<Job>,
) -> Result<notify::RecommendedWatcher, notify::Error> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let root = served.root.clone();
    let data = served
        .store
        .data
        .root()
        .canonicalize()
        .unwrap_or_else(|_| served.store.data.root().to_path_buf());
    // The repo's top-level ignore rules: a build writing to `target/` or a package
    // manager filling `node_modules/` must not trigger runs (the walk would skip
    // those files anyway). Nested ignore files are left to the walk.
    let ignored = {
        let mut b = ignore::gitignore::GitignoreBuilder::new(&root);
        for f in [".gitignore", ".ignore", ".git/info/exclude"] {
            let p = root.join(f);
            if p.is_file() {
                let _ = b.add(p);
            }
        }
        b.build()
            .unwrap_or_else(|_| ignore::gitignore::Gitignore::empty())
    };
    let seen = served.changes_seen.clone();
    let changed = served.changed.clone();
    let git_seen = served.git_seen.clone();
    let git_refs = served.git_refs.clone();
    // Symlinked directories are not followed: what they point at is outside
    // the walk (or, inside the repo, watched where it really is).
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = notify::RecommendedWatcher::new(
        move |res: Result<notify::Event, notify::Error>| {
            let Ok(event) = res else {
                return;
            };
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            let mut relevant = false;
            for p in &event.paths {
                if p.starts_with(&data) {
                    continue;
                }
                let Ok(rel) = p.strip_prefix(&root) else {
                    continue;
                };
                if rel.components().any(|c| c.as_os_str() == ".git") {
                    let rel = rel.to_string_lossy();
                    if !git_refs.is_empty()
                        && (rel.starts_with(".git/refs/") || rel == ".git/packed-refs")
                    {
                        for r in &git_refs {
                            if let Ok(mut m) = git_seen.lock() {
                                *m.entry(r.clone()).or_insert(0) += 1;
                            }
                            let _ = tx.send(Job::GitRef(i, r.clone()));
                        }
                    }
                    continue;
                }
                if rel.components().any(|c| c.as_os_str() == ".cruxe")
                    || ignored
                        .matched_path_or_any_parents(rel, p.is_dir())
                        .is_ignore()
                {
                    continue;
                }
                let rel = rel.to_string_lossy().replace('\\', "/");
                let name = rel.rsplit('/').next().unwrap_or(&rel);
                let source = crate::model::Language::from_path(&rel).is_some();
                if source
                    || crate::source::layout::MANIFEST_NAMES.contains(&name)
                    || name == ".gitignore"
                    || name == ".ignore"
                    || p.is_dir()
                    || !name.contains('.')
                {
                    relevant = true;
                    // The run reads just these files when it can; a directory,
                    // a manifest or anything unusual makes it walk the tree.
                    if let Ok(mut c) = changed.lock() {
                        if source && !p.is_dir() {
                            c.paths.insert(rel.clone());
                        } else {
                            c.everything = true;
                        }
                    }
                }
            }
            if relevant {
                seen.fetch_add(1, Ordering::SeqCst);
                let _ = tx.send(Job::Tree(i));
            }
        },
        config,
    )?;
    watcher.watch(&served.root, RecursiveMode::Recursive)?;
    Ok(watcher)
}

/// Paths the watcher saw change; `everything` when the next run must walk.
#[derive(Debug, Default)]
struct ChangedPaths {
    everything: bool,
    paths: std::collections::BTreeSet<String>,
}

pub struct Service {
    pub repos: Vec<Arc<Served>>,
    pub cfg: ServiceConfig,
    /// Uploads each committed state (`--publish`).
    publisher: Option<crate::replicate::publish::Publisher>,
    /// On a replica: the generation served (`--replica`).
    pub replica: Option<ReplicaOf>,
    /// What answers share: the tokenizer (loaded once, on first use or by
    /// `start`) and the source texts kept between answers.
    pub shared: crate::query::view::Shared,
    /// Work for the indexer thread; dropped by `close`, which ends the thread.
    jobs: Mutex<Option<Sender<Job>>>,
    watchers: Mutex<Vec<notify::RecommendedWatcher>>,
    /// Signalled when the indexer thread ends (`close` waits for it).
    stopped: Mutex<Option<Receiver<()>>>,
}

/// How long `close` waits for the indexer to stop: a stopped run ends at its
/// next check, but a phase of a big run (parsing, resolving) can take a while.
const CLOSE_WAIT: Duration = Duration::from_secs(120);

/// How long the indexer lets committed runs go without a checkpoint at most
/// (see `Service::run_jobs`).
const FINISH_WITHIN: Duration = Duration::from_secs(10);

/// How long the indexer waits without new work, after a run's checkpoint,
/// before the copy for the query workers (see `Service::run_jobs`).
const COPY_AFTER: Duration = Duration::from_secs(2);

/// The same wait on a publishing server: a generation is staged from that
/// copy, and every replica waits for it (a burst of saves makes more copies).
const PUBLISH_COPY_AFTER: Duration = Duration::from_millis(500);

/// Runs committed to a data dir's graph whose checkpoint, or the snapshot for
/// `run_cypher` after it, is still to come.
struct Unfinished {
    store: Arc<Store>,
    graph: Arc<GraphStore>,
    /// The first run since the last copy.
    since: Instant,
    /// The first run since the last checkpoint (none: the copy is what is left).
    unchecked: Option<Instant>,
}

/// Checkpoints every data dir's runs that are not yet (`Unfinished::unchecked`).
/// With `merge` (a pause, not a forced checkpoint), the search indexes' small
/// segments are merged too once there are enough of them (8–50 ms: the small
/// ones only, `search::small_tail`): in a stream of changes with short pauses
/// the copy's longer pause never comes, and a tail left to grow was merged
/// inside a run (24 segments on Go's tree: 0.55–0.68 s of a served edit).
fn checkpoint_all(service: &Service, unfinished: &mut Vec<Unfinished>, merge: bool) {
    for mut u in std::mem::take(unfinished) {
        if u.unchecked.is_some() && u.graph.log_pending() {
            let t = Instant::now();
            if let Err(e) = u.graph.checkpoint() {
                recover(service, u, &e);
                continue;
            }
            u.unchecked = None;
            tracing::debug!(ms = t.elapsed().as_millis() as u64, "checkpointed the runs");
        }
        if merge {
            merge_search_tails(&u.store, &|| false, true);
        }
        unfinished.push(u);
    }
}

/// Merges the small segments of each of the store's refs' search indexes (see
/// `index::merge_search_tail`; with `small_only` not the big one), until
/// `abort` says to stop.
fn merge_search_tails(store: &Store, abort: &dyn Fn() -> bool, small_only: bool) {
    for r in store.refs() {
        if abort() {
            return;
        }
        match index::merge_search_tail(&store.data, &r.repo, &r.ref_name, small_only) {
            Ok(0) => {}
            Ok(n) => {
                tracing::debug!(repo = %r.repo, ref_name = %r.ref_name, n, "merged search segments")
            }
            Err(e) => {
                tracing::warn!(repo = %r.repo, ref_name = %r.ref_name, "merging the search index failed: {e}")
            }
        }
    }
}

/// After a failed finish. A failed checkpoint may leave Kuzu's memory half
/// written: the handle is dropped (and left unclosed) and the file opened again
/// at its last checkpoint (or the one just stopped, if it was recorded); the
/// next run re-indexes what changed since. (The failed one may be the
/// compacted copy the store now serves.)
fn recover(service: &Service, u: Unfinished, e: &dyn std::fmt::Display) {
    let data = &u.store.data;
    if u.graph.has_failed() || u.store.graph().is_some_and(|g| g.has_failed()) {
        tracing::error!(data = %data.root().display(), "{e}; opening the graph again");
        u.store.refresh(None);
        drop(u.graph);
        service.open_recovering(&u.store);
    } else {
        tracing::warn!(data = %data.root().display(), "finishing the index runs failed: {e}");
    }
}

/// Finishes every data dir's runs. With `rx`, the copy for the query workers
/// is given up as soon as a job arrives; the job is kept in `carry`. With
/// `merge`, the search indexes' tails are merged first (not given up: ~50 ms,
/// so not when the finish is forced by `FINISH_WITHIN` in a stream of changes).
fn finish_all(
    service: &Service,
    unfinished: &mut Vec<Unfinished>,
    rx: Option<&Receiver<Job>>,
    carry: &std::cell::RefCell<Vec<Job>>,
    merge: bool,
) {
    let cfg = &service.served_graph();
    let abort = || {
        rx.is_some_and(|rx| match rx.try_recv() {
            Ok(job) => {
                carry.borrow_mut().push(job);
                true
            }
            Err(_) => !carry.borrow().is_empty(),
        })
    };
    for u in unfinished.drain(..) {
        let data = &u.store.data;
        if merge {
            merge_search_tails(&u.store, &abort, false);
        }
        let finished =
            index::finish_write(data, &u.graph, &abort, u.store.held(None)).and_then(|()| {
                let graph = u.store.compact_if_outgrown(&u.graph, cfg, &abort);
                match Arc::ptr_eq(&graph, &u.graph) {
                    true => Ok(()),
                    // The copy for the query workers, of the new file.
                    false => index::finish_write(data, &graph, &abort, u.store.held(None)),
                }
            });
        let store = u.store.clone();
        let failed = match finished {
            Ok(()) => {
                u.store.publish_snapshot();
                service.publish_generation(&u.store);
                false
            }
            Err(e) => {
                recover(service, u, &e);
                true
            }
        };
        for served in service
            .repos
            .iter()
            .filter(|r| Arc::ptr_eq(&r.store, &store))
        {
            served.announce_ready(failed);
        }
    }
}

/// Work for the indexer thread.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Job {
    /// Bring repo `i`'s working tree up to date.
    Tree(usize),
    /// Index git ref `.1` of repo `.0` from git objects.
    GitRef(usize, String),
}

impl Service {
    /// The settings of the graphs this server keeps open: the serving pool,
    /// raised for a big graph by `DataDir::writer_config`.
    fn served_graph(&self) -> crate::store::graph::GraphConfig {
        crate::store::graph::GraphConfig {
            buffer_pool_bytes: self.cfg.serving_buffer_pool_bytes,
            ..self.cfg.index.graph.clone()
        }
    }

    /// Prepares to serve `specs`; nothing is opened or indexed until `start`.
    pub fn new(specs: &[RepoSpec], cfg: ServiceConfig) -> Result<Arc<Service>, ServiceError> {
        limit_allocator_arenas();
        // Readers share the graph with the index runs: only explicit checkpoints,
        // behind the graph's reader gate (see `GraphStore`).
        let mut cfg = cfg;
        cfg.index.graph.auto_checkpoint = false;
        // Runs commit and return; the checkpoint and the copy for the query
        // workers come after the changes are visible (`index::finish_write`).
        cfg.index.defer_finish = true;
        // Each run's changes patch the catalogs (see `Catalog::apply`).
        cfg.index.count_in_degree = true;
        let mut stores: Vec<Arc<Store>> = Vec::new();
        let mut repos: Vec<Arc<Served>> = Vec::new();
        for spec in specs {
            if !spec.root.exists() {
                return Err(ServiceError::NotFound(spec.root.clone()));
            }
            if !spec.root.is_dir() {
                return Err(ServiceError::NotADirectory(spec.root.clone()));
            }
            let root = spec
                .root
                .canonicalize()
                .unwrap_or_else(|_| spec.root.clone());
            let data_root = spec.data.clone().unwrap_or_else(|| root.join(".cruxe"));
            let data_root = absolute(&data_root);
            let store = match stores.iter().find(|s| s.data.root() == data_root) {
                Some(s) => s.clone(),
                None => {
                    let data = DataDir::new(data_root);
                    let lock = data.lock_writer()?;
                    let s = Arc::new(Store::new(data, Some(lock), &cfg)?);
                    stores.push(s.clone());
                    s
                }
            };
            let name = spec
                .name
                .clone()
                .or_else(|| cfg.index.repo.clone().filter(|_| specs.len() == 1));
            let name = name.unwrap_or_else(|| index::repo_name(&root));
            if repos.iter().any(|r| r.name == name) {
                return Err(ServiceError::DuplicateName(name));
            }
            let ref_name = spec
                .ref_name
                .clone()
                .or_else(|| cfg.index.ref_name.clone())
                .unwrap_or_else(|| index::git_ref(&root).0);
            for rev in &spec.git_refs {
                if crate::source::gitref::resolve(&root, rev).is_none() {
                    return Err(ServiceError::UnknownGitRef(rev.clone(), root.clone()));
                }
            }
            repos.push(Arc::new(Served::new(
                name,
                root,
                ref_name,
                spec.git_refs.clone(),
                store,
                None,
            )));
        }
        let publisher = match &cfg.publish {
            Some(url) => Some(
                crate::replicate::publish::Publisher::start(url).map_err(ServiceError::Publish)?,
            ),
            None => None,
        };
        let mut svc = Service::with_repos(repos, cfg, None);
        svc.publisher = publisher;
        Ok(Arc::new(svc))
    }

    fn with_repos(
        repos: Vec<Arc<Served>>,
        cfg: ServiceConfig,
        replica: Option<ReplicaOf>,
    ) -> Service {
        Service {
            repos,
            cfg,
            publisher: None,
            replica,
            shared: Default::default(),
            jobs: Mutex::new(None),
            watchers: Mutex::new(Vec::new()),
            stopped: Mutex::new(None),
        }
    }

    /// Opens what is indexed already (so queries are answered at once), then
    /// brings every repo up to date in the background, one run at a time.
    pub fn start(self: &Arc<Self>) -> std::thread::JoinHandle<()> {
        // The tokenizer's ranks are decoded off the request path.
        let tokens = self.shared.tokens.clone();
        std::thread::spawn(move || tokens.warm());
        for served in &self.repos {
            served.set(IndexingStatus::Indexing, None, None);
            let store = &served.store;
            // This server holds the writer lock (`Service::new`).
            store.data.clear_query_snapshots();
            if self.publisher.is_some() {
                // Stages a killed publisher left (see `publish_generation`).
                let _ = std::fs::remove_dir_all(store.data.root().join("publish"));
            }
            self.open_recovering(store);
        }
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        for (i, served) in self.repos.iter().enumerate() {
            let _ = tx.send(Job::Tree(i));
            for rev in &served.git_refs {
                let _ = tx.send(Job::GitRef(i, rev.clone()));
            }
        }
        if self.cfg.watch {
            for (i, served) in self.repos.iter().enumerate() {
                match watch(served, i, tx.clone()) {
                    Ok(w) => {
                        if let Ok(mut ws) = self.watchers.lock() {
                            ws.push(w);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(repo = %served.name, "not watching for changes: {e}");
                        if let Ok(mut we) = served.watch_error.lock() {
                            *we = Some(e.to_string());
                        }
                    }
                }
            }
        } else {
            // Nothing will notice an edit: answers may be behind, and say so.
            for served in &self.repos {
                if let Ok(mut we) = served.watch_error.lock() {
                    *we = Some("watching is off (--no-watch, or watch = false)".into());
                }
            }
        }
        if let Ok(mut j) = self.jobs.lock() {
            *j = Some(tx);
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        if let Ok(mut s) = self.stopped.lock() {
            *s = Some(done_rx);
        }
        let svc = self.clone();
        std::thread::Builder::new()
            .name("cruxe-indexer".into())
            .spawn(move || {
                svc.run_jobs(&rx);
                let _ = done_tx.send(());
            })
            .expect("spawn the indexer thread")
    }

    /// Opens a store's graph, if it is not open, after whatever stop left it
    /// (see `DataDir::open_graph_recovering`); the runs that follow catch up.
    fn open_recovering(&self, store: &Store) {
        if store.graph().is_some() || !store.data.exists() {
            return;
        }
        match store.data.open_graph_recovering(&self.served_graph()) {
            Ok(Some(g)) => store.refresh(Some(Arc::new(g))),
            Ok(None) => {}
            Err(e) => tracing::warn!("cannot open {}: {e}", store.data.root().display()),
        }
    }

    /// The indexer thread: one run at a time, changes coalesced. After the first
    /// job arrives it waits for `debounce` of quiet (at most ten times that), so a
    /// burst of saves is one run. Ends when `close` drops the senders.
    ///
    /// A run commits and is answered first. Its checkpoint comes once no new
    /// work has come for `checkpoint_after` (500 ms by default): a
    /// checkpoint cannot be interrupted, and one run's pages are checkpointed
    /// in ~45 ms on Go's tree where ten runs' took 100–280 ms, which a change
    /// landing meanwhile waited for. The copy for the query workers
    /// (`index::finish_write`) waits for `COPY_AFTER` of quiet (a publisher's
    /// `PUBLISH_COPY_AFTER`) and gives way to new work. Both are made at the
    /// latest after `FINISH_WITHIN`, and when
    /// the server closes. A kill before the checkpoint leaves the graph at the
    /// previous one (`DataDir::settle_log`); the next start re-indexes what
    /// changed since.
    fn run_jobs(&self, rx: &Receiver<Job>) {
        let debounce = self.cfg.debounce;
        let copy_after = if self.publisher.is_some() {
            PUBLISH_COPY_AFTER
        } else {
            COPY_AFTER
        };
        let mut unfinished: Vec<Unfinished> = Vec::new();
        // Jobs that arrived while a finish was under way.
        let carry = std::cell::RefCell::new(Vec::new());
        loop {
            let first = if let Some(job) = carry.borrow_mut().pop() {
                job
            } else if unfinished.is_empty() {
                match rx.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                }
            } else {
                // The copy is made at the latest FINISH_WITHIN after the first
                // run it holds, given up if work comes (the checkpoint is
                // forced after the runs, below).
                let due = |t: Instant| FINISH_WITHIN.saturating_sub(t.elapsed());
                let checkpoint = unfinished.iter().any(|u| u.unchecked.is_some());
                let quiet = match checkpoint {
                    true => self.cfg.checkpoint_after,
                    false => unfinished
                        .iter()
                        .map(|u| due(u.since))
                        .fold(copy_after, Duration::min),
                };
                match rx.recv_timeout(quiet) {
                    Ok(job) => job,
                    Err(RecvTimeoutError::Timeout) if checkpoint => {
                        checkpoint_all(self, &mut unfinished, true);
                        continue;
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        let quiet_enough = quiet == copy_after;
                        finish_all(self, &mut unfinished, Some(rx), &carry, quiet_enough);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        finish_all(self, &mut unfinished, None, &carry, true);
                        return;
                    }
                }
            };
            let mut pending = std::collections::BTreeSet::from([first]);
            pending.extend(carry.borrow_mut().drain(..));
            let started = std::time::Instant::now();
            loop {
                match rx.recv_timeout(debounce) {
                    Ok(job) => {
                        pending.insert(job);
                        if started.elapsed() > debounce * 10 {
                            break;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => {
                        finish_all(self, &mut unfinished, None, &carry, true);
                        return;
                    }
                }
            }
            for job in pending {
                let (served, rev) = match &job {
                    Job::Tree(i) => (&self.repos[*i], None),
                    Job::GitRef(i, rev) => (&self.repos[*i], Some(rev.as_str())),
                };
                let store = &served.store;
                // A run that committed leaves its checkpoint to later; so does a
                // graph whose run_cypher snapshot is behind (a rebuild, a start).
                let ran = self.index_one(served, rev);
                // A big run (and the catalog load after it) frees far more than
                // it keeps. After a small one, handing pages back costs more than
                // it gives: ~20 ms on Python's lib/, and the next run faults
                // them in again.
                let small = served.status() == IndexingStatus::Ready
                    && served
                        .last_run()
                        .is_some_and(|r| r.parsed + r.removed <= SMALL_RUN_FILES);
                if !small {
                    release_freed_memory();
                }
                if !small || store.pool_filled.load(Ordering::SeqCst) {
                    give_back_pool(store);
                }
                let graph = match ran {
                    Some(g) => g,
                    None if store.snapshot_behind() => match store.graph() {
                        Some(g) => g,
                        None => continue,
                    },
                    None => continue,
                };
                match unfinished
                    .iter_mut()
                    .find(|u| u.store.data.root() == store.data.root())
                {
                    Some(u) => {
                        // Another graph (a rebuild replaced it): the old one's work is moot.
                        u.graph = graph;
                        u.unchecked.get_or_insert_with(Instant::now);
                    }
                    None => unfinished.push(Unfinished {
                        store: store.clone(),
                        graph,
                        since: Instant::now(),
                        unchecked: Some(Instant::now()),
                    }),
                }
            }
            // A graph run_cypher cannot read yet (a first index) gets its
            // checkpoint and snapshot now, whatever comes meanwhile. Others
            // wait for quiet (above), or at most FINISH_WITHIN: then the
            // checkpoint is made even with work waiting.
            let first_snapshot = unfinished
                .iter()
                .any(|u| u.store.cypher.source_version().is_none());
            if first_snapshot {
                finish_all(self, &mut unfinished, None, &carry, true);
            } else if unfinished
                .iter()
                .any(|u| u.unchecked.is_some_and(|t| t.elapsed() > FINISH_WITHIN))
            {
                checkpoint_all(self, &mut unfinished, false);
            }
        }
    }

    /// Indexes `served`'s working tree, or with `rev` that git ref. The graph
    /// when the run committed and left its checkpoint to `index::finish_write`.
    fn index_one(&self, served: &Served, rev: Option<&str>) -> Option<Arc<GraphStore>> {
        let store = &served.store;
        let mut opts = self.cfg.index.clone();
        opts.repo = Some(served.name.clone());
        opts.ref_name = Some(served.ref_name.clone());
        self.open_recovering(store);
        let shared = store.graph();
        // The ref's state before this run: a cached catalog of any other (one
        // loaded across a commit) is not patched but loaded again.
        let before = shared
            .as_ref()
            .map(|g| g.state(&served.name, rev.unwrap_or(&served.ref_name)));
        let seen = served.changes_seen.load(Ordering::SeqCst);
        let git_seen =
            rev.and_then(|r| served.git_seen.lock().ok().and_then(|m| m.get(r).copied()));
        let first = served.status() != IndexingStatus::Ready;
        let taken = match rev {
            None => served
                .changed
                .lock()
                .ok()
                .map(|mut c| std::mem::take(&mut *c)),
            Some(_) => None,
        };
        opts.changed_paths = taken
            .as_ref()
            .filter(|c| !c.everything && self.cfg.watch)
            .map(|c| c.paths.iter().cloned().collect());
        let result = match rev {
            None => {
                if first {
                    tracing::info!(repo = %served.name, "indexing {}", served.root.display());
                }
                index::index_repo_with(
                    &served.root,
                    &store.data,
                    &opts,
                    &served.progress,
                    Some(store.held(shared.as_deref())),
                )
            }
            Some(rev) => {
                tracing::info!(repo = %served.name, "indexing {rev} from git objects");
                index::index_git_ref(
                    &served.root,
                    rev,
                    &store.data,
                    &opts,
                    &served.progress,
                    Some(store.held(shared.as_deref())),
                )
            }
        };
        let had_graph = shared.is_some();
        drop(shared);
        match result {
            Ok(report) => {
                log_report(&report);
                if first
                    && rev.is_none()
                    && let Ok(mut line) = served.ready_line.lock()
                {
                    *line = Some(format!(
                        "cruxe: {}@{} is ready: {} files, {} symbols, {} import edges (indexed in {:.1} s)",
                        report.repo,
                        report.ref_name,
                        report.files,
                        report.symbols,
                        report.import_edges,
                        report.seconds
                    ));
                }
                if report.finish_pending || report.republished || !had_graph {
                    store.version.fetch_add(1, Ordering::SeqCst);
                }
                if report.republished || store.graph().is_none() {
                    store.refresh(None);
                    match store.data.open_graph(&self.served_graph()) {
                        Ok(g) => store.refresh(Some(Arc::new(g))),
                        Err(e) => {
                            served.set(IndexingStatus::Failed, Some(e.to_string()), None);
                            return None;
                        }
                    }
                } else {
                    let patched = patched_catalog(served, before.as_ref(), &report);
                    store.refresh_ref(&served.name, &report.ref_name, patched, &report);
                }
                // Load the ref's catalog now, not on the first question.
                if let Some(g) = store.graph()
                    && let Err(e) = store.catalog(&g, &served.name, &report.ref_name)
                {
                    tracing::warn!("cannot load the symbol catalog: {e}");
                }
                match (rev, git_seen) {
                    (None, _) => served.changes_indexed.store(seen, Ordering::SeqCst),
                    (Some(r), Some(n)) => {
                        if let Ok(mut m) = served.git_indexed.lock() {
                            m.insert(r.to_string(), n);
                        }
                    }
                    (Some(_), None) => {}
                }
                served.set(
                    IndexingStatus::Ready,
                    None,
                    Some(IndexSummary {
                        parsed: report.parsed,
                        removed: report.removed,
                        diagnostics: report.diagnostics.len(),
                        seconds: report.seconds,
                    }),
                );
                // Said now when run_cypher reads this state already, else
                // after the checkpoint and its copy (`finish_all`).
                served.announce_ready(false);
                // Visible now; the checkpoint and the copy for the query workers
                // follow (`run_jobs`).
                if report.finish_pending {
                    return store.graph();
                }
                None
            }
            Err(IndexError::Stopped) => {
                tracing::info!(repo = %served.name, "the run was stopped; the next start takes it up");
                None
            }
            Err(e) => {
                tracing::error!(repo = %served.name, "indexing failed: {e}");
                if taken.is_some()
                    && let Ok(mut c) = served.changed.lock()
                {
                    c.everything = true;
                }
                served.set(IndexingStatus::Failed, Some(e.to_string()), None);
                None
            }
        }
    }

    /// Stops watching and indexing, and lets go of every open graph (each closes,
    /// and checkpoints, once the last reader or a running index job is done with it).
    pub fn close(&self) {
        // A replica runs nothing and writes nothing: its graphs just close.
        let finished = self.replica.is_none() && self.stop_indexer();
        for served in &self.repos {
            served
                .store
                .cypher
                .clear_source("the server is shutting down");
            served.store.refresh(None);
        }
        if self.replica.is_some() {
            return;
        }
        // Everything is checkpointed and no run is under way: the copy for
        // the query workers goes with them.
        if finished {
            for served in &self.repos {
                served.store.data.discard_saved();
            }
        }
        for served in &self.repos {
            served.store.data.clear_query_snapshots();
            served.store.data.forget_server();
        }
    }

    /// Stops the watchers and the indexer thread; whether it ended in time.
    fn stop_indexer(&self) -> bool {
        // A run under way gives up before it commits (its changes are taken up
        // again by the next start); one committing finishes.
        self.cfg.index.stop.request();
        if let Ok(mut ws) = self.watchers.lock() {
            ws.clear();
        }
        if let Ok(mut j) = self.jobs.lock() {
            j.take();
        }
        // The indexer checkpoints what it committed and ends. It is waited for:
        // a process that exits while a thread still writes to Kuzu can leave a
        // log the next open cannot read. (A stopped run ends at its next check,
        // within a phase: seconds, not minutes.)
        self.stopped
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .is_some_and(|done| {
                done.recv_timeout(CLOSE_WAIT).is_ok() || {
                    tracing::warn!(
                        "the indexer has not stopped after {} s; leaving it (the next start undoes its run)",
                        CLOSE_WAIT.as_secs()
                    );
                    false
                }
            })
    }

    /// With `--publish`: the store and what its last upload did (`/health`).
    pub fn published(&self) -> Option<(String, crate::replicate::publish::Published)> {
        let p = self.publisher.as_ref()?;
        Some((p.url().to_string(), p.last()))
    }

    /// Records in every data dir served that this server answers at `url`
    /// (`close` takes it away).
    pub fn announce(&self, url: &str) {
        if self.replica.is_some() {
            return;
        }
        let record = crate::store::datadir::ServerRecord {
            url: url.to_string(),
            pid: std::process::id(),
        };
        for served in &self.repos {
            if let Err(e) = served.store.data.record_server(&record) {
                tracing::warn!("cannot record the server's address in its data dir: {e}");
            }
        }
    }

    /// The served repo called `name`; with `None`, the only one.
    pub fn repo(&self, name: Option<&str>) -> Option<&Arc<Served>> {
        match name {
            Some(n) => self.repos.iter().find(|r| r.name == n),
            None if self.repos.len() == 1 => self.repos.first(),
            None => None,
        }
    }

    pub fn repo_names(&self) -> Vec<String> {
        self.repos.iter().map(|r| r.name.clone()).collect()
    }
}

/// The ref's symbol catalog after an in-place run, patched from the one the
/// server holds when that one is of the state before the run (`index_one`);
/// `None`: loaded again on the next call.
fn patched_catalog(
    served: &Served,
    before: Option<&crate::store::graph::GraphState>,
    report: &IndexReport,
) -> Option<Arc<Catalog>> {
    let store = &served.store;
    let key = (served.name.clone(), report.ref_name.clone());
    let old = store
        .catalogs
        .read()
        .ok()
        .and_then(|c| c.get(&key).cloned())
        .filter(|c| Some(c.state()) == before && c.state().settled());
    match (old, &report.changes, store.graph()) {
        // Nothing of its symbols changed: the same rows, of the
        // state the run left.
        (Some(old), _, Some(graph)) if report.parsed == 0 && report.removed == 0 => Some(Arc::new(
            old.with_state(graph.state(&served.name, &report.ref_name)),
        )),
        (Some(old), Some(changes), Some(graph)) => {
            let started = std::time::Instant::now();
            match old.apply(changes, &graph) {
                Ok(c) => {
                    tracing::debug!(
                        ms = started.elapsed().as_millis() as u64,
                        "patched the symbol catalog"
                    );
                    Some(Arc::new(c))
                }
                // Dropped instead: the next call loads it again.
                Err(e) => {
                    tracing::warn!("cannot patch the symbol catalog: {e}");
                    None
                }
            }
        }
        _ => None,
    }
}

fn log_report(r: &IndexReport) {
    tracing::info!(
        repo = %r.repo,
        r#ref = %r.ref_name,
        files = r.files,
        parsed = r.parsed,
        symbols = r.symbols,
        import_edges = r.import_edges,
        seconds = r.seconds,
        "index up to date"
    );
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}
