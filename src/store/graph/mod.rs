//! The graph store: the only module that speaks to Kuzu.
//!
//! Owns the database file inside the data dir, the schema (`schema/*.cypher`), every
//! query the code runs (`queries/*.cypher`), batched writes, and read-only ad hoc
//! Cypher. A `GraphStore` opened read-write is the process's single writer (the data
//! dir's writer lock says who that is); readers may share it, and see the last
//! committed state while a run writes. An index run's changes commit in one
//! transaction, so a kill at any moment leaves the last completed state.
//!
//! Architecture invariant: nothing outside this module names a Kuzu type.

mod adhoc;
mod batch;
mod cache;
mod calls_read;
mod compact;
mod csv;
mod edge_csvs;
mod load;
mod read;
mod readers;
mod rows;
mod schema;
mod sites;
mod values;
mod write;

pub use calls_read::{LibraryCall, WalkBudget};
pub use edge_csvs::{EdgeCsvs, EdgeFiles};
pub use load::{NodeCsvs, NodeFiles};
pub use rows::*;
pub use schema::{CALL_READ_QUERIES, QUERY_FILES, SCHEMA_FILES};
pub use sites::site_statement_variants;
pub use write::{Applying, IMPORTS_GROUP, grouped_statement};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kuzu::{Connection, Database, SystemConfig};

use crate::model::cancel::Cancel;

use schema::statements;

/// Rows per UNWIND batch: large enough to amortise the call, small enough to keep
/// parameter conversion cheap.
const BATCH: usize = 5_000;

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error(
        "the data dir {0} is in use by another cruxe process (an index run or a server); wait for it to finish or stop it"
    )]
    Locked(PathBuf),
    #[error("cannot open the graph at {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error("the query writes to the graph; only read-only queries are allowed here")]
    NotReadOnly,
    /// The query reached for a file (refused by the sandbox, or absent).
    #[error("the query reads or writes files outside the graph")]
    OutsideGraph,
    #[error("invalid query: {0}")]
    Invalid(String),
    #[error("the query ran longer than {0} ms and was stopped")]
    Timeout(u64),
    #[error("graph error: {0}")]
    Kuzu(String),
    /// Kuzu could not write committed changes into the database file; they are
    /// still in its log.
    #[error("the graph's checkpoint failed: {0}")]
    CheckpointFailed(String),
    /// The writer gave up before committing; nothing was written.
    #[error("the write was abandoned before it committed")]
    Abandoned,
    /// The call the read was for was cancelled (its deadline passed, or the
    /// server stops): the read did not run, or was interrupted.
    #[error("the read was cancelled: its call ran out of time or the server is stopping")]
    Cancelled,
}

impl GraphError {
    /// Kuzu ran out of buffer pool for a statement (its rows did not fit).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, GraphError::Kuzu(m) if m.contains("Buffer manager exception"))
    }
}

impl From<kuzu::Error> for GraphError {
    fn from(e: kuzu::Error) -> Self {
        GraphError::Kuzu(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, GraphError>;

/// Resource settings for Kuzu; its defaults (80% of RAM for the buffer pool, an
/// 8 TB address-space reservation) do not suit a tool that shares the machine.
#[derive(Debug, Clone)]
pub struct GraphConfig {
    pub buffer_pool_bytes: u64,
    pub threads: u64,
    pub max_db_bytes: u64,
    /// Let Kuzu checkpoint on its own when the log grows. A server turns it off:
    /// its in-place runs checkpoint explicitly, behind the reader gate.
    pub auto_checkpoint: bool,
    /// Walk results kept for repeated calls (`cache.rs`), in bytes.
    pub walk_cache_bytes: usize,
    /// A database file that in-place runs grew to twice its built size, and by
    /// at least this many bytes, is compacted (`DataDir::compact`).
    pub compact_growth_bytes: u64,
    /// In a graph of more symbols than this, writes look symbols up by id row
    /// by row through the primary-key index, or by a hash join when a batch is
    /// big enough (see `batch::Keyed`); `u64::MAX` never, 0 always row by row
    /// (tests of both ways).
    pub key_lookups_above: u64,
    /// A bulk COPY of an edge table goes in parts of at most this many rows
    /// and bytes of CSV (`csv::Csv`): Kuzu holds a whole statement's rows in
    /// its buffer pool, so a part must fit there beside what the pool holds.
    pub copy_part: CopyPart,
}

/// The largest part of one bulk COPY statement (`GraphConfig::copy_part`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyPart {
    pub rows: usize,
    pub bytes: usize,
}

impl Default for CopyPart {
    /// Not smaller by default: a COPY into a table that holds rows costs more
    /// than into an empty one (parts of 250k rows took 6% more CPU on a
    /// 650k-symbol ref).
    fn default() -> Self {
        CopyPart {
            rows: 1_000_000,
            bytes: 64 << 20,
        }
    }
}

impl Default for GraphConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
        GraphConfig {
            // `memory::MemoryBudget::default().index_pool_bytes()`.
            buffer_pool_bytes: 512 << 20,
            threads: cores.clamp(1, 4),
            max_db_bytes: 1 << 36,
            auto_checkpoint: true,
            walk_cache_bytes: 16 << 20,
            compact_growth_bytes: 64 << 20,
            key_lookups_above: 50_000,
            copy_part: CopyPart::default(),
        }
    }
}

pub fn external_id(repo: &str, ref_name: &str, name: &str) -> String {
    format!("{repo}@{ref_name}:ext:{name}")
}

pub fn package_id(repo: &str, ref_name: &str, dir: &str) -> String {
    format!("{repo}@{ref_name}:pkg:{dir}")
}

pub fn file_id(repo: &str, ref_name: &str, path: &str) -> String {
    format!("{repo}@{ref_name}:{path}")
}

/// The `indexed_at` of a ref whose load beside other refs has not finished
/// (`GraphStore::load_beside`): a run that finds it indexes the ref again.
pub const UNFINISHED_TAG: &str = "";

/// Whether `indexed_at` is `UNFINISHED_TAG`.
pub fn unfinished_tag(indexed_at: &str) -> bool {
    indexed_at == UNFINISHED_TAG
}

pub fn ref_id(repo: &str, ref_name: &str) -> String {
    format!("{repo}@{ref_name}")
}

/// The deepest nesting kept and walked: the bound of the CONTAINS walks in
/// `queries/` (`1..30`). Deeper nesting is treated as damage.
pub const MAX_DEPTH: usize = 30;

/// A handle on an open graph: what the process shares of it, and the `Cancel`
/// of the reads made through this handle (`with_cancel`: a tool call's
/// deadline; by default reads run to their end).
pub struct GraphStore {
    shared: Arc<Shared>,
    cancel: Cancel,
}

impl std::ops::Deref for GraphStore {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.shared
    }
}

/// An open graph, shared by every handle on it; it closes when the last goes.
pub struct Shared {
    db: Arc<Database>,
    read_only: bool,
    /// Reader threads with their prepared statements, started on the first read.
    readers: std::sync::OnceLock<readers::Readers>,
    /// The thread that writes the runs' changes (see `apply`), started by the first.
    writer: std::sync::OnceLock<readers::Readers>,
    reader_threads: usize,
    /// Every Kuzu call holds this shared; `checkpoint` holds it exclusively. Kuzu
    /// 0.11's CHECKPOINT holds the transaction manager's lock while it waits for
    /// active transactions to leave, and a transaction leaving needs that lock:
    /// a read that overlaps a checkpoint deadlocks both for Kuzu's 5 s wait (the
    /// read times out, the checkpoint fails). The gate lets running calls finish
    /// first and holds new ones back for the checkpoint's few milliseconds.
    gate: Arc<std::sync::RwLock<()>>,
    /// The database file, and how many in-place writes to each repo/ref were
    /// committed through this handle (counted before and after each commit): what a
    /// reader compares with the state its catalog was built from (see
    /// [`GraphState`]).
    path: Arc<Path>,
    commits: std::sync::Mutex<std::collections::HashMap<(String, String), u64>>,
    /// Writes committed through this handle, all refs (counted before and
    /// after each commit), and the walk results kept as of that count.
    writes: std::sync::atomic::AtomicU64,
    walks: cache::WalkCache,
    /// A CHECKPOINT failed: Kuzu rolls its file back, but what it holds in
    /// memory may be half written (a read after one crashed a server). The
    /// handle refuses every call from then on, and is never closed (closing
    /// checkpoints again): the process reopens the file, whose header and log
    /// still hold the last committed state.
    failed: std::sync::atomic::AtomicBool,
    /// `GraphConfig::key_lookups_above`.
    key_lookups_above: u64,
    /// `GraphConfig::copy_part`.
    copy_part: CopyPart,
    /// Closed by a process about to exit (`leave_to_exit`).
    leave_to_exit: std::sync::atomic::AtomicBool,
}

/// Which committed state of a repo/ref's graph something derived from it (a
/// catalog) describes: the database file and a count that moves twice per write
/// to the ref committed through its handle, once before the commit and once
/// after. A reader that walked the graph and finds the count moved on since
/// its catalog was taken may have seen a newer state than its rows; a count
/// that is odd says a commit was under way, so what was read then may be of
/// either state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphState {
    pub path: Option<Arc<Path>>,
    pub commits: u64,
}

impl GraphState {
    /// No commit was under way: rows read in this state, with the count the
    /// same afterwards, are all of it.
    pub fn settled(&self) -> bool {
        self.commits.is_multiple_of(2)
    }
}

/// A connection that holds the checkpoint gate open for as long as it lives.
pub struct GatedConnection<'a> {
    conn: Connection<'a>,
    _gate: std::sync::RwLockReadGuard<'a, ()>,
}

impl<'a> std::ops::Deref for GatedConnection<'a> {
    type Target = Connection<'a>;
    fn deref(&self) -> &Connection<'a> {
        &self.conn
    }
}

impl<'a> std::ops::DerefMut for GatedConnection<'a> {
    fn deref_mut(&mut self) -> &mut Connection<'a> {
        &mut self.conn
    }
}

impl GraphStore {
    /// Opens (creating if needed) the graph at `path` read-write and applies the schema.
    pub fn open(path: &Path, cfg: &GraphConfig) -> Result<GraphStore> {
        let store = Self::open_with(path, cfg, false)?;
        {
            let conn = store.conn()?;
            for (_, ddl) in SCHEMA_FILES {
                for stmt in statements(ddl) {
                    conn.query(&stmt)?;
                }
            }
        }
        Ok(store)
    }

    /// Opens an existing graph read-only: any write is refused by Kuzu itself.
    pub fn open_read_only(path: &Path, cfg: &GraphConfig) -> Result<GraphStore> {
        Self::open_with(path, cfg, true)
    }

    fn open_with(path: &Path, cfg: &GraphConfig, read_only: bool) -> Result<GraphStore> {
        let config = SystemConfig::default()
            .buffer_pool_size(cfg.buffer_pool_bytes)
            .max_num_threads(cfg.threads)
            .max_db_size(cfg.max_db_bytes)
            .auto_checkpoint(cfg.auto_checkpoint)
            .read_only(read_only);
        let db = Database::new(path, config).map_err(|e| {
            let message = e.to_string();
            // Kuzu's own words for a file another process holds (`fcntl` locks
            // are per process: never this one).
            if message.contains("Could not set lock on file") {
                GraphError::Locked(path.to_path_buf())
            } else {
                GraphError::Open {
                    path: path.to_path_buf(),
                    message,
                }
            }
        })?;
        if !read_only {
            // Closing checkpoints through `checkpoint` (marked), not Kuzu's own.
            Connection::new(&db)?.query("CALL force_checkpoint_on_close=false")?;
        }
        Ok(GraphStore {
            cancel: Cancel::never(),
            shared: Arc::new(Shared {
                db: Arc::new(db),
                read_only,
                readers: std::sync::OnceLock::new(),
                writer: std::sync::OnceLock::new(),
                reader_threads: cfg.threads.clamp(1, 4) as usize,
                gate: Arc::new(std::sync::RwLock::new(())),
                path: Arc::from(path),
                commits: std::sync::Mutex::default(),
                writes: std::sync::atomic::AtomicU64::new(0),
                walks: cache::WalkCache::new(cfg.walk_cache_bytes),
                failed: std::sync::atomic::AtomicBool::new(false),
                key_lookups_above: cfg.key_lookups_above,
                copy_part: cfg.copy_part,
                leave_to_exit: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// A handle on the same graph whose reads stop once `cancel` is
    /// cancelled: a read not started fails with `GraphError::Cancelled`, and
    /// a statement running is interrupted.
    pub fn with_cancel(&self, cancel: Cancel) -> GraphStore {
        GraphStore {
            shared: self.shared.clone(),
            cancel,
        }
    }

    /// The `Cancel` of this handle's reads.
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// Runs the `works` on as many reader connections at once (in `lane`),
    /// and returns their results in order. Returns `Cancelled` as soon as
    /// this handle's `Cancel` is, whatever the readers are doing: a job not
    /// started then never starts, and the one running is interrupted.
    fn read_all<T: Send + 'static>(
        &self,
        lane: readers::Lane,
        works: Vec<impl FnOnce(&mut readers::Reader<'_, '_>) -> Result<T> + Send + 'static>,
    ) -> Result<Vec<T>> {
        if self.cancel.is_cancelled() {
            return Err(GraphError::Cancelled);
        }
        let _gate = self.gate.read().unwrap_or_else(|e| e.into_inner());
        self.check_usable()?;
        let readers = self
            .readers
            .get_or_init(|| readers::Readers::start(&self.db, self.reader_threads));
        let pending: Vec<_> = works
            .into_iter()
            .map(|w| readers.submit(lane, &self.cancel, w))
            .collect::<Result<_>>()?;
        let gone = || GraphError::Kuzu("a graph reader failed".into());
        pending
            .into_iter()
            .map(|rx| {
                if !self.cancel.can_stop() {
                    return rx.recv().map_err(|_| gone())?;
                }
                loop {
                    match rx.recv_timeout(std::time::Duration::from_millis(20)) {
                        Ok(r) => return r,
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                            if self.cancel.is_cancelled() {
                                return Err(GraphError::Cancelled);
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(gone()),
                    }
                }
            })
            .collect()
    }

    /// How many reader connections serve reads.
    pub fn reader_count(&self) -> usize {
        self.reader_threads
    }

    /// The writer thread (see `apply`).
    fn writer(&self) -> &readers::Readers {
        self.writer
            .get_or_init(|| readers::Readers::start_writer(&self.db))
    }

    fn conn(&self) -> Result<GatedConnection<'_>> {
        let gate = self.gate.read().unwrap_or_else(|e| e.into_inner());
        self.check_usable()?;
        Ok(GatedConnection {
            conn: Connection::new(&self.db)?,
            _gate: gate,
        })
    }

    /// The state of a repo/ref this handle's readers see now (or, read while a
    /// write commits, an older one: the count moves first).
    pub fn state(&self, repo: &str, ref_name: &str) -> GraphState {
        let commits = self.commits.lock().unwrap_or_else(|e| e.into_inner());
        GraphState {
            path: Some(self.path.clone()),
            commits: commits
                .get(&(repo.to_string(), ref_name.to_string()))
                .copied()
                .unwrap_or(0),
        }
    }

    /// Writes committed through this handle (the walk cache's stamp).
    fn writes(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Counts a write to a repo/ref that is about to commit, and again once it
    /// has committed (or failed): the counts are odd meanwhile.
    fn count_commit(&self, repo: &str, ref_name: &str) {
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut commits = self.commits.lock().unwrap_or_else(|e| e.into_inner());
        *commits
            .entry((repo.to_string(), ref_name.to_string()))
            .or_default() += 1;
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }
}

impl Shared {
    /// Writes every committed change into the database file and empties the log.
    /// A failure leaves this handle unusable (see `failed`): open the file again.
    ///
    /// A checkpoint writes some pages of the file in place before its record
    /// is in the log (see [`checkpoint_marker`]): a marker file says one is
    /// under way, from before it starts until it has finished.
    pub fn checkpoint(&self) -> Result<()> {
        let _exclusive = self.gate.write().unwrap_or_else(|e| e.into_inner());
        self.check_usable()?;
        let marker = checkpoint_marker(&self.path);
        mark(&marker).map_err(|e| {
            GraphError::CheckpointFailed(format!("cannot write {}: {e}", marker.display()))
        })?;
        let done = Connection::new(&self.db).and_then(|c| c.query("CHECKPOINT").map(drop));
        if let Err(e) = done {
            // The marker stays: the file may hold part of this checkpoint.
            self.failed.store(true, std::sync::atomic::Ordering::SeqCst);
            return Err(GraphError::CheckpointFailed(e.to_string()));
        }
        let _ = std::fs::remove_file(&marker);
        Ok(())
    }

    /// Gives back the pages Kuzu's buffer pool holds (through our patch,
    /// patches/README.md); returns how many bytes it held. The pool keeps every
    /// page read, up to its cap, until the database closes: after a server
    /// loads a 600k-symbol catalog that is ~560 MiB, of which the walks that
    /// follow read back a fraction. Like a checkpoint it waits for running
    /// calls and holds new ones back (every page must be unpinned, and a query
    /// meanwhile could find the pool full): 388 ms for 909 MiB on a 2.75M-symbol graph.
    pub fn release_pool(&self) -> Result<u64> {
        let _exclusive = self.gate.write().unwrap_or_else(|e| e.into_inner());
        self.check_usable()?;
        Ok(Connection::new(&self.db)?.release_pool())
    }

    /// Whether runs committed through this handle wait in the log for a
    /// checkpoint.
    pub fn log_pending(&self) -> bool {
        std::fs::metadata(wal_path(&self.path)).is_ok_and(|m| m.len() > 0)
    }

    /// Closing the store (dropping it) still checkpoints what is pending, but
    /// leaves Kuzu's database (its buffer pool, indexes and threads) and the
    /// store's reader and writer threads to the operating system: for a
    /// process that exits right after (`IndexOptions::exits_after`).
    pub fn leave_to_exit(&self) {
        self.leave_to_exit
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether a checkpoint failed (see `failed`).
    pub fn has_failed(&self) -> bool {
        self.failed.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn check_usable(&self) -> Result<()> {
        match self.has_failed() {
            true => Err(GraphError::CheckpointFailed(
                "this handle is closed; the graph is reopened from its file".into(),
            )),
            false => Ok(()),
        }
    }
}

impl Drop for Shared {
    /// The readers end first: the database closes (and checkpoints) when the
    /// store goes, as callers expect, not when a reader thread lets go of it.
    /// After a failed checkpoint it is left open instead (see `failed`).
    fn drop(&mut self) {
        // A process about to exit with nothing left to checkpoint leaves the
        // threads and their prepared statements to the OS as well.
        if self.leave_to_exit.load(std::sync::atomic::Ordering::SeqCst)
            && !self.read_only
            && !self.log_pending()
            && !self.has_failed()
        {
            std::mem::forget(self.readers.take());
            std::mem::forget(self.writer.take());
            std::mem::forget(self.db.clone());
            return;
        }
        drop(self.readers.take());
        drop(self.writer.take());
        if self.has_failed() {
            std::mem::forget(self.db.clone());
            return;
        }
        // Kuzu's own checkpoint at close is off (see `open_with`): this one is
        // marked. A failure is logged; the marker left tells the next open.
        if !self.read_only
            && self.log_pending()
            && let Err(e) = self.checkpoint()
        {
            tracing::warn!("the checkpoint at close failed: {e}");
            std::mem::forget(self.db.clone());
            return;
        }
        if self.leave_to_exit.load(std::sync::atomic::Ordering::SeqCst) {
            std::mem::forget(self.db.clone());
        }
    }
}

/// The file that says a checkpoint of the database at `graph` is under way.
///
/// Kuzu 0.11.3's checkpoint writes pages of the database file in place before
/// it logs its CHECKPOINT record: new pages, and the primary-key index's
/// pages numbered above the index's last one, which the free-page list can
/// make any of its older pages (`DiskArrayInternal::updatePage` with
/// `bypassShadowing`; flushed by `PrimaryKeyIndex::checkpoint`). A stop
/// between those writes and the record leaves a file whose previous
/// checkpoint's index holds entries of the stopped one (seen here: inserts
/// then fail with "duplicated primary key" on keys no node has). So a
/// checkpoint is bracketed by this marker, and a data dir that finds it
/// beside an unrecorded checkpoint rebuilds the index (`DataDir::settle_log`).
pub fn checkpoint_marker(graph: &Path) -> PathBuf {
    PathBuf::from(format!("{}.checkpointing", graph.display()))
}

/// Kuzu's log beside the database at `graph`.
pub fn wal_path(graph: &Path) -> PathBuf {
    PathBuf::from(format!("{}.wal", graph.display()))
}

/// Creates the marker and makes its name durable before the checkpoint
/// writes anything (a power cut must not keep the pages and lose the marker).
fn mark(marker: &Path) -> std::io::Result<()> {
    std::fs::File::create(marker)?;
    if let Some(dir) = marker.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}
