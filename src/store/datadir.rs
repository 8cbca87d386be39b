//! The data dir: the Kuzu database (`graph-N.kuzu`), `manifest.json` (schema
//! version and which database file is current), a writer lock, and a
//! `.gitignore` of `*` (a data dir inside a repository never shows in `git
//! status`; CONTRACT §5). Checks the
//! schema version before anything opens the graph, so an old data dir is reported
//! as needing a rebuild instead of misread.
//!
//! A full build is made aside in a new database file and published by rewriting
//! the manifest (write-then-rename), so a crash at any moment leaves the manifest
//! pointing at a complete database. Incremental runs write in place, in one Kuzu
//! transaction.

use std::path::{Path, PathBuf};

use crate::store::graph::{GraphConfig, GraphError, GraphStore, checkpoint_marker, wal_path};

/// Bump when the graph schema or the meaning of stored values changes. 4: a
/// graph that in-place runs wrote with Kuzu unpatched may have lost edges at a
/// checkpoint (`patches/README.md`); only a rebuild is sure to have them all.
/// 5: the call graph (`CALLS`, `REFERENCES`, `IMPLEMENTS`, `EXTENDS`,
/// `UNRESOLVED`), which an older graph does not hold. 6: symbol ids of 12
/// bytes (`model::ids`), and `REFERENCES` without `to_name`. 7: a file's
/// `error_lines` and `recovered` (what its parse could not read, and what was
/// read again), so that a run reports every file, parsed this time or not.
/// 8: Kuzu unpatched left edges of a deleted node behind when some of its
/// edges were deleted before it (`patches/README.md`): a graph that in-place
/// runs wrote may hold edges into deleted symbols. 9: more sites and facts
/// read (Go interface results, type assertions, function values; TS types in
/// expressions; Python class attributes) and unresolved supertypes kept as
/// `UNRESOLVED`: an older graph's unchanged files lack them. 10: the calls
/// of Rust `macro_rules!` templates and the invocations of the repo's macros.
pub const SCHEMA_VERSION: u32 = 11;

const MANIFEST: &str = "manifest.json";
const LOCK: &str = "writer.lock";

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error(
        "no index at {0}: index the repository with `cruxe index PATH`, then give this command the same PATH (or `--data DIR`)"
    )]
    NotIndexed(PathBuf),
    #[error(
        "the index at {path} has schema version {found}, this cruxe needs {expected}: rebuild it with `cruxe index --force`"
    )]
    SchemaMismatch {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("the manifest {path} is unreadable ({message}); rebuild with `cruxe index --force`")]
    CorruptManifest { path: PathBuf, message: String },
    #[error("cannot write to the data dir {path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error(
        "the data dir {0} is in use by another cruxe process ({1}); wait for it to finish or stop it (a server holds its data dir for as long as it runs)"
    )]
    Locked(PathBuf, String),
    #[error("the graph in {0} could not be repaired after a stopped checkpoint: {1}")]
    Repair(PathBuf, String),
    #[error(transparent)]
    Graph(#[from] GraphError),
}

#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ManifestFile {
    schema_version: u32,
    cruxe_version: String,
    /// The current database file, relative to the data dir.
    graph: String,
    /// Its size when it was built or last compacted: in-place runs grow it
    /// (see `DataDir::outgrown`). Absent in manifests of earlier cruxe versions.
    #[serde(default)]
    built_bytes: Option<u64>,
}

/// Held while a process may write to the data dir: for an index run, the run; for
/// a server, its whole life. Released on drop (or process death).
pub struct WriterLock {
    _file: std::fs::File,
}

/// Where a server keeps hard links to its crash-safety copies for the query
/// workers (see `DataDir::link_query_snapshot`).
const SNAPSHOTS: &str = "snapshots";

/// Where a server that holds this data dir answers (`server.json`): the read
/// commands of the CLI, which cannot open a graph a server holds, ask it.
const SERVER: &str = "server.json";

/// A running server, as it recorded itself in its data dir.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ServerRecord {
    /// Its MCP endpoint, `http://127.0.0.1:7411/mcp`.
    pub url: String,
    pub pid: u32,
}

impl DataDir {
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        let root = root.into();
        // Absolute, so that walking can recognise it inside the repository.
        let root = std::path::absolute(&root).unwrap_or(root);
        DataDir { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Records the server that holds this data dir (written whole, then renamed).
    pub fn record_server(&self, record: &ServerRecord) -> Result<(), DataDirError> {
        let tmp = self.root.join(format!("{SERVER}.tmp"));
        let text = serde_json::to_string(record).unwrap_or_default();
        std::fs::write(&tmp, text).map_err(self.io())?;
        std::fs::rename(&tmp, self.root.join(SERVER)).map_err(self.io())
    }

    /// The server recorded here, if one is (it may have died since: the caller
    /// finds out when it connects).
    pub fn recorded_server(&self) -> Option<ServerRecord> {
        let text = std::fs::read_to_string(self.root.join(SERVER)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// A stopping server takes its record away.
    pub fn forget_server(&self) {
        let _ = std::fs::remove_file(self.root.join(SERVER));
    }

    fn manifest_path(&self) -> PathBuf {
        self.root.join(MANIFEST)
    }

    fn io(&self) -> impl Fn(std::io::Error) -> DataDirError + '_ {
        |e| DataDirError::Io {
            path: self.root.clone(),
            message: e.to_string(),
        }
    }

    /// The manifest, or `None` when nothing was ever indexed here.
    fn manifest(&self) -> Result<Option<ManifestFile>, DataDirError> {
        let path = self.manifest_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(DataDirError::CorruptManifest {
                    path,
                    message: e.to_string(),
                });
            }
        };
        let m: ManifestFile =
            serde_json::from_str(&text).map_err(|e| DataDirError::CorruptManifest {
                path: path.clone(),
                message: e.to_string(),
            })?;
        if m.schema_version != SCHEMA_VERSION {
            return Err(DataDirError::SchemaMismatch {
                path: self.root.clone(),
                found: m.schema_version,
                expected: SCHEMA_VERSION,
            });
        }
        Ok(Some(m))
    }

    /// The current database file, if an index was ever published here.
    pub fn graph_path(&self) -> Result<Option<PathBuf>, DataDirError> {
        Ok(self.manifest()?.map(|m| self.root.join(m.graph)))
    }

    /// Where the search index of a repo/ref lives.
    pub fn search_dir(&self, repo: &str, ref_name: &str) -> PathBuf {
        let key = blake3::hash(format!("{repo}@{ref_name}").as_bytes()).to_hex();
        self.root.join("search").join(&key.as_str()[..16])
    }

    /// The resolution state of a ref (see `state`).
    pub fn state_path(&self, repo: &str, ref_name: &str) -> PathBuf {
        let key = blake3::hash(format!("{repo}@{ref_name}").as_bytes()).to_hex();
        self.root
            .join("state")
            .join(format!("{}.bin", &key.as_str()[..16]))
    }

    /// Where the files of a ref indexed from git objects are kept (see `gitref`).
    pub fn tree_dir(&self, repo: &str, ref_name: &str) -> PathBuf {
        let key = blake3::hash(format!("{repo}@{ref_name}").as_bytes()).to_hex();
        self.root.join("trees").join(&key.as_str()[..16])
    }

    /// The size of the current database file, in bytes.
    pub fn graph_bytes(&self) -> Option<u64> {
        let path = self.graph_path().ok()??;
        std::fs::metadata(path).ok().map(|m| m.len())
    }

    /// Whether an index exists here at all.
    pub fn exists(&self) -> bool {
        matches!(self.graph_path(), Ok(Some(p)) if p.exists())
    }

    /// Takes the writer lock: one writing process per data dir (an index run, or
    /// a server for its whole life). The holder's pid and command are written
    /// into the lock file, so the next one can say who holds it.
    pub fn lock_writer(&self) -> Result<WriterLock, DataDirError> {
        use fs2::FileExt;
        use std::io::{Seek, Write};
        self.create()?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(self.root.join(LOCK))
            .map_err(self.io())?;
        if file.try_lock_exclusive().is_err() && !self.lock_after_a_dead_holder(&file) {
            return Err(self.locked());
        }
        let who = format!(
            "pid {} ({})",
            std::process::id(),
            std::env::args().take(2).collect::<Vec<_>>().join(" ")
        );
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(who.as_bytes()));
        Ok(WriterLock { _file: file })
    }

    /// Takes the lock once it is let go, when the process the lock file names
    /// is gone: a child it was starting (a `git` run, a query worker) holds the
    /// lock's file until it execs, a moment after its parent was killed.
    /// Bounded (10 s), then "in use" as for a live holder.
    fn lock_after_a_dead_holder(&self, file: &std::fs::File) -> bool {
        use fs2::FileExt;
        let holder = std::fs::read_to_string(self.root.join(LOCK))
            .ok()
            .and_then(|s| {
                s.strip_prefix("pid ")?
                    .split_whitespace()
                    .next()?
                    .parse::<u32>()
                    .ok()
            });
        let Some(pid) = holder else {
            return false;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            return false;
        }
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
            if file.try_lock_exclusive().is_ok() {
                return true;
            }
        }
        false
    }

    /// The "in use" error, naming the holder when the lock file says who it is.
    pub fn locked(&self) -> DataDirError {
        let who = std::fs::read_to_string(self.root.join(LOCK))
            .ok()
            .map(|s| s.trim().chars().take(200).collect::<String>())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "an index run or a server".into());
        DataDirError::Locked(self.root.clone(), who)
    }

    /// For the query workers of a server: a hard link to the crash-safety copy
    /// when that copy is the database's current, checkpointed state (right after
    /// `save_ahead`). Hard links cost nothing, and the copy is never written in
    /// place (a new one is renamed over it), so the linked file stays exactly the
    /// state it was. `None` when there is no such copy.
    pub fn link_query_snapshot(&self) -> Result<Option<PathBuf>, DataDirError> {
        let Some(graph) = self.graph_path()? else {
            return Ok(None);
        };
        if !self.has_current_copy(&graph) {
            return Ok(None);
        }
        let dir = self.root.join(SNAPSHOTS);
        std::fs::create_dir_all(&dir).map_err(self.io())?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!("graph-{stamp}.kuzu"));
        std::fs::hard_link(bak_of(&graph), &path).map_err(self.io())?;
        Ok(Some(path))
    }

    /// What a replica needs of this data dir's state, as hard links in `dir`
    /// (made anew; on the data dir's filesystem), so that later runs cannot
    /// change them: the database as its copy for the query workers holds it
    /// (`link_query_snapshot`), a manifest naming it, and the search index of
    /// each of `refs`. `None` when that copy is not the current state (a run
    /// since): the next copy is staged instead. The files, by their path in a
    /// data dir. Call between runs (a server's indexer thread).
    pub fn stage(
        &self,
        dir: &Path,
        refs: &[(String, String)],
    ) -> Result<Option<Vec<String>>, DataDirError> {
        let Some(m) = self.manifest()? else {
            return Ok(None);
        };
        let Some(snapshot) = self.link_query_snapshot()? else {
            return Ok(None);
        };
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).map_err(self.io())?;
        std::fs::rename(&snapshot, dir.join(&m.graph)).map_err(self.io())?;
        let mut names = vec![m.graph.clone(), MANIFEST.to_string()];
        let text = serde_json::to_string_pretty(&ManifestFile {
            built_bytes: None,
            ..m
        })
        .unwrap_or_default();
        std::fs::write(dir.join(MANIFEST), text).map_err(self.io())?;
        for (repo, ref_name) in refs {
            let from = self.search_dir(repo, ref_name);
            let Ok(rel) = from.strip_prefix(&self.root) else {
                continue;
            };
            for name in link_consistent(&from, &dir.join(rel)).map_err(self.io())? {
                names.push(format!("{}/{name}", rel.display()));
            }
        }
        Ok(Some(names))
    }

    /// Removes every query snapshot (left by a server that was killed).
    pub fn clear_query_snapshots(&self) {
        if let Ok(entries) = std::fs::read_dir(self.root.join(SNAPSHOTS)) {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// After a checkpoint (a server's, between runs): a copy of the database as
    /// it is now (`*.bak`, with a stamp of the file it copied: size, mtime, first
    /// 64 KiB), which `link_query_snapshot` hands to `run_cypher`'s workers: Kuzu
    /// lets no other process open a database a writer holds. Gives up (false)
    /// when `abort` says so between chunks (new work came); the next quiet makes
    /// one. Not a crash-safety copy (see `settle_log`): not fsynced, and a crash
    /// leaves nothing that reads it.
    pub fn save_ahead(&self, abort: &dyn Fn() -> bool) -> Result<bool, DataDirError> {
        let Some(graph) = self.graph_path()? else {
            return Ok(true);
        };
        if self.has_current_copy(&graph) {
            return Ok(true);
        }
        self.copy_aside(&graph, abort)
    }

    fn copy_aside(&self, graph: &Path, abort: &dyn Fn() -> bool) -> Result<bool, DataDirError> {
        const CHUNK: u64 = 16 << 20;
        let bak = bak_of(graph);
        let tmp = PathBuf::from(format!("{}.tmp", bak.display()));
        let st = stamp(graph);
        let copied = (|| -> std::io::Result<bool> {
            use std::io::Read;
            let from = std::fs::File::open(graph)?;
            let mut to = std::fs::File::create(&tmp)?;
            loop {
                if abort() {
                    return Ok(false);
                }
                if std::io::copy(&mut (&from).take(CHUNK), &mut to)? == 0 {
                    return Ok(true);
                }
            }
        })()
        .map_err(self.io())?;
        if !copied {
            let _ = std::fs::remove_file(&tmp);
            return Ok(false);
        }
        let _ = std::fs::remove_file(stamp_of(graph));
        std::fs::rename(&tmp, &bak).map_err(self.io())?;
        if let Some(st) = st {
            std::fs::write(stamp_of(graph), st).map_err(self.io())?;
        }
        Ok(true)
    }

    /// Whether the copy equals the database as it is now: the file still
    /// matches the copy's stamp (nothing was checkpointed into it since) and no
    /// run is committed to its log.
    fn has_current_copy(&self, graph: &Path) -> bool {
        let wal_empty = std::fs::metadata(wal_path(graph)).map_or(true, |m| m.len() == 0);
        wal_empty
            && bak_of(graph).exists()
            && stamp(graph).is_some_and(|st| {
                std::fs::read_to_string(stamp_of(graph)).is_ok_and(|saved| saved == st)
            })
    }

    /// Removes the copy for the query workers (and what earlier cruxe versions
    /// left beside it: a copy of the log).
    pub fn discard_saved(&self) {
        if let Ok(Some(graph)) = self.graph_path() {
            let _ = std::fs::remove_file(bak_of(&graph));
            let _ = std::fs::remove_file(bak_of(&wal_path(&graph)));
            let _ = std::fs::remove_file(stamp_of(&graph));
        }
    }

    /// Makes the graph safe to open after any stop of its writer, without Kuzu
    /// replaying its log (0.11.3 can crash replaying node inserts a killed
    /// writer left: seen here in the primary-key index). Call with the writer
    /// lock held, before opening. What holds in Kuzu 0.11.3 (its sources:
    /// `transaction.cpp`, `checkpointer.cpp`, `wal_replayer.cpp`,
    /// `shadow_file.cpp`, `disk_array.cpp`):
    ///
    /// - A transaction never writes the database file: COMMIT appends its
    ///   records to the log (`.wal`, fsynced); only a CHECKPOINT writes the
    ///   file (cruxe's bulk `COPY` goes to new files only).
    /// - A checkpoint writes the changed pages the last checkpoint uses to
    ///   `.shadow` (fsynced), but new pages, and pages of the primary-key
    ///   index, straight into the file (see `graph::checkpoint_marker`); then
    ///   it appends a one-byte CHECKPOINT record (`0xFE`) to the log
    ///   (fsynced), copies the shadow pages into the file, then empties and
    ///   deletes the log, then the shadow file.
    /// - Opening replays shadow pages when the log holds a CHECKPOINT record
    ///   (page copies: idempotent), and else replays the log's transactions
    ///   one by one (the replay that crashes).
    ///
    /// So: a log with no checkpoint under way (no marker, no shadow file)
    /// holds only transactions, and the file is the last checkpoint: the log
    /// is removed, and the graph opens as it was at that checkpoint (the runs
    /// since are lost; their derived state is tagged with their `indexed_at`
    /// and found lagging, and the next run re-indexes what changed). A
    /// checkpoint under way whose record is complete (the log ends with a
    /// COMMIT `0x02` and `0xFE`, or is that one byte, and the shadow file is
    /// whole) is finished: the log is cut to the record alone, so that
    /// opening only copies the shadow pages in. One stopped before its record
    /// left the previous checkpoint's rows intact but its primary-key index
    /// possibly written over: the log and shadow file go, and the graph is
    /// copied into a new file (`compact`: rows read by scanning, every index
    /// built anew). What was settled, for the log.
    pub fn settle_log(&self, cfg: &GraphConfig) -> Result<Settled, DataDirError> {
        let Some(graph) = self.graph_path()? else {
            return Ok(Settled::Nothing);
        };
        let (wal, shadow) = (wal_path(&graph), shadow_of(&graph));
        let (marker, repair) = (checkpoint_marker(&graph), repair_of(&graph));
        if repair.exists() {
            return self.rebuild_indexes(&graph, cfg);
        }
        let wal_len = std::fs::metadata(&wal).map_or(0, |m| m.len());
        if wal_len == 0 {
            // An empty log, or none: Kuzu empties the log only once the
            // checkpoint's pages are all in, and removes a shadow file left
            // beside it.
            let _ = std::fs::remove_file(&marker);
            return Ok(Settled::Nothing);
        }
        let in_checkpoint = marker.exists() || shadow.exists();
        if !in_checkpoint {
            std::fs::remove_file(&wal).map_err(self.io())?;
            tracing::info!(
                "{}: runs committed after the last checkpoint were not finished; the graph is back at that checkpoint",
                self.root.display()
            );
            return Ok(Settled::RunsDropped);
        }
        if checkpoint_recorded(&wal, wal_len) && shadow_whole(&shadow) {
            let cut = (|| -> std::io::Result<()> {
                let f = std::fs::OpenOptions::new().write(true).open(&wal)?;
                use std::io::{Seek, Write};
                (&f).seek(std::io::SeekFrom::Start(0))?;
                (&f).write_all(&[WAL_CHECKPOINT])?;
                f.set_len(1)?;
                f.sync_all()
            })();
            cut.map_err(self.io())?;
            let _ = std::fs::remove_file(&marker);
            tracing::info!(
                "{}: finishing a checkpoint that was stopped",
                self.root.display()
            );
            return Ok(Settled::CheckpointFinished);
        }
        // The decision outlives the log: a stop from here on finds `repair`.
        std::fs::write(&repair, b"").map_err(self.io())?;
        // The log goes first: a shadow file without a log is removed by Kuzu,
        // a log with a record and no shadow file cannot be opened.
        std::fs::remove_file(&wal).map_err(self.io())?;
        let _ = std::fs::remove_file(&shadow);
        let _ = std::fs::remove_file(&marker);
        tracing::warn!(
            "{}: a checkpoint was stopped before it was recorded; the graph is back at the previous one",
            self.root.display()
        );
        self.rebuild_indexes(&graph, cfg)
    }

    /// Copies the graph at `graph` (its last checkpoint, no log) into a new
    /// file with indexes built from its rows, and publishes it: what a
    /// checkpoint stopped before its record needs (see `settle_log`). The
    /// old file, and the `repair` note beside it, go when the new one is in.
    fn rebuild_indexes(&self, graph: &Path, cfg: &GraphConfig) -> Result<Settled, DataDirError> {
        let started = std::time::Instant::now();
        tracing::warn!(
            "{}: rebuilding the graph's indexes from its last checkpoint (a checkpoint was stopped after writing part of the file)",
            self.root.display()
        );
        let cfg = self.writer_config(cfg);
        let live = GraphStore::open_read_only(graph, &cfg)?;
        let done = self.compact(&live, &cfg, &|| false);
        drop(live);
        done.map_err(|e| {
            DataDirError::Repair(
                self.root.clone(),
                format!("{e}; `cruxe index --force` builds the graph anew"),
            )
        })?;
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "rebuilt the graph's indexes"
        );
        Ok(Settled::Rebuilt)
    }

    /// Whether a stopped writer left something for `settle_log` to settle.
    fn unsettled(graph: &Path) -> bool {
        std::fs::metadata(wal_path(graph)).is_ok_and(|m| m.len() > 0) || repair_of(graph).exists()
    }

    /// The settings a writer opens the current graph with. Kuzu's CHECKPOINT
    /// needs buffer pool in proportion to the database file, however little
    /// it writes (measured on Go's tree: a 339 MB file that in-place runs had
    /// grown failed in 192 MiB and passed in 256), and a failed one leaves Kuzu
    /// unusable (the next read crashed a server). So the pool is at least four
    /// fifths of the size the file may reach before it is compacted. It is a
    /// cap, not an allocation: pages read stay cached up to it.
    pub fn writer_config(&self, cfg: &GraphConfig) -> GraphConfig {
        GraphConfig {
            buffer_pool_bytes: cfg
                .buffer_pool_bytes
                .max(self.graph_bytes_limit(cfg) / 5 * 4),
            // Every checkpoint of the published file is an explicit, marked
            // one (see `graph::checkpoint_marker`), never one Kuzu starts
            // inside a commit.
            auto_checkpoint: false,
            ..cfg.clone()
        }
    }

    /// Opens the current graph for writing.
    pub fn open_graph(&self, cfg: &GraphConfig) -> Result<GraphStore, DataDirError> {
        match self.graph_path()? {
            Some(p) => Ok(GraphStore::open(&p, &self.writer_config(cfg))?),
            None => Err(DataDirError::NotIndexed(self.root.clone())),
        }
    }

    /// Opens the current graph for writing whatever stop left it in (its log
    /// settled first, see [`settle_log`](Self::settle_log)): what a server does
    /// at start, and after a failed checkpoint, holding the writer lock. `None` when there is
    /// no graph to open (none yet, or a damaged one set aside: the next run
    /// builds a new one).
    ///
    /// - A database read by another process (a reader of a server just killed:
    ///   its query workers exit within 100 ms of their parent) is waited for a
    ///   few seconds before it counts as in use.
    /// - A log Kuzu cannot open with (a stopped checkpoint `settle_log` kept
    ///   for it to finish) is set aside: the database then holds its last
    ///   checkpoint, and the first run re-indexes what changed since from the tree.
    /// - A database that still does not open is set aside (kept, renamed, for a
    ///   post-mortem, until the next build replaces it); other repos and refs it
    ///   held are indexed again when asked for.
    pub fn open_graph_recovering(
        &self,
        cfg: &GraphConfig,
    ) -> Result<Option<GraphStore>, DataDirError> {
        if !self.graph_path()?.is_some_and(|p| p.exists()) {
            return Ok(None);
        }
        self.settle_log(cfg)?;
        // A rebuild publishes a new file.
        let Some(path) = self.graph_path()? else {
            return Ok(None);
        };
        let cfg = &self.writer_config(cfg);
        let waited_until = std::time::Instant::now() + READER_GRACE;
        let first = loop {
            match GraphStore::open(&path, cfg) {
                Ok(g) => return Ok(Some(g)),
                Err(GraphError::Locked(_)) if std::time::Instant::now() < waited_until => {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(GraphError::Locked(_)) => {
                    return Err(DataDirError::Locked(
                        self.root.clone(),
                        "a process reading its database".into(),
                    ));
                }
                Err(e) => break e,
            }
        };
        let wal = wal_path(&path);
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            let aside = self.set_aside(&wal)?;
            tracing::warn!(
                "the graph's log could not be replayed ({first}); set it aside as {} and opening the last checkpoint",
                aside.display()
            );
            if let Ok(g) = GraphStore::open(&path, cfg) {
                return Ok(Some(g));
            }
        }
        let aside = self.set_aside(&path)?;
        let _ = std::fs::remove_file(self.manifest_path());
        tracing::error!(
            "the graph {} cannot be opened ({first}); set it aside as {}: the index is built again",
            path.display(),
            aside.display()
        );
        Ok(None)
    }

    /// Renames `file` to `<file>.damaged-<time>` (kept for a post-mortem, and
    /// out of the way of every name the data dir uses).
    fn set_aside(&self, file: &Path) -> Result<PathBuf, DataDirError> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let aside = PathBuf::from(format!("{}.damaged-{stamp}", file.display()));
        std::fs::rename(file, &aside).map_err(self.io())?;
        Ok(aside)
    }

    /// Builds a new database aside with `fill`, then publishes it as the current
    /// one and removes the previous database. Until the manifest is renamed into
    /// place, readers and a crash see the previous state.
    pub fn build_aside(
        &self,
        cfg: &GraphConfig,
        fill: impl FnOnce(&mut GraphStore) -> Result<(), GraphError>,
    ) -> Result<(), DataDirError> {
        self.build_aside_with(cfg, |open| fill(&mut open()?))
    }

    /// `build_aside`, where `fill` opens the new database itself with the
    /// function it is given, as often as it likes, each handle dropped before
    /// the next is opened: closing it gives back the pages Kuzu's buffer pool
    /// holds, which it never does while open.
    pub fn build_aside_with(
        &self,
        cfg: &GraphConfig,
        fill: impl FnOnce(&dyn Fn() -> Result<GraphStore, GraphError>) -> Result<(), GraphError>,
    ) -> Result<(), DataDirError> {
        self.publish_aside(|path| {
            // A database nobody else reads yet: Kuzu may checkpoint as it likes.
            let cfg = GraphConfig {
                auto_checkpoint: true,
                ..cfg.clone()
            };
            fill(&|| GraphStore::open(path, &cfg))
            // Dropping a store checkpoints and closes the new database.
        })
    }

    /// Makes a new database file with `make` (given its path; the database must
    /// be closed when it returns), then publishes it as the current one and
    /// removes the previous database's files.
    fn publish_aside(
        &self,
        make: impl FnOnce(&Path) -> Result<(), GraphError>,
    ) -> Result<(), DataDirError> {
        self.create()?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("graph-{stamp}.kuzu");
        let path = self.root.join(&name);
        if let Err(e) = make(&path) {
            // Never published: its files go now, not at the next run.
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(wal_path(&path));
            return Err(e.into());
        }
        let built = std::fs::metadata(&path).map_err(self.io())?.len();
        self.write_manifest(&ManifestFile {
            schema_version: SCHEMA_VERSION,
            cruxe_version: env!("CARGO_PKG_VERSION").to_string(),
            graph: name.clone(),
            built_bytes: Some(built),
        })?;
        self.remove_stale(&name);
        Ok(())
    }

    /// Makes the directory if it is missing, with its `.gitignore` of `*`
    /// (the user's own file, if they wrote one, is left as it is).
    fn create(&self) -> Result<(), DataDirError> {
        std::fs::create_dir_all(&self.root).map_err(self.io())?;
        let ignore = self.root.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "*\n").map_err(self.io())?;
        }
        Ok(())
    }

    /// Replaces the manifest atomically (write, flush, rename).
    fn write_manifest(&self, m: &ManifestFile) -> Result<(), DataDirError> {
        let text = serde_json::to_string_pretty(m).unwrap_or_default();
        let tmp = self.root.join("manifest.json.tmp");
        std::fs::write(&tmp, text).map_err(self.io())?;
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(self.io())?;
        std::fs::rename(&tmp, self.manifest_path()).map_err(self.io())
    }

    /// The database file's size when built and now, if in-place runs have
    /// grown it to twice that and by at least `cfg.compact_growth_bytes`: time
    /// to `compact`. A manifest without the built size (an earlier cruxe)
    /// takes the current size as it.
    pub fn outgrown(&self, cfg: &GraphConfig) -> Option<(u64, u64)> {
        let mut m = self.manifest().ok()??;
        let now = std::fs::metadata(self.root.join(&m.graph)).ok()?.len();
        let Some(built) = m.built_bytes else {
            m.built_bytes = Some(now);
            let _ = self.write_manifest(&m);
            return None;
        };
        (now >= built.saturating_mul(2) && now - built >= cfg.compact_growth_bytes)
            .then_some((built, now))
    }

    /// The size the database file may reach before it is compacted: what a
    /// writer's buffer pool is sized for (see `writer_config`).
    pub fn graph_bytes_limit(&self, cfg: &GraphConfig) -> u64 {
        let Ok(Some(m)) = self.manifest() else {
            return 0;
        };
        let now = std::fs::metadata(self.root.join(&m.graph)).map_or(0, |f| f.len());
        let built = m.built_bytes.unwrap_or(now);
        now.max(
            built
                .saturating_mul(2)
                .max(built.saturating_add(cfg.compact_growth_bytes)),
        )
    }

    /// Compacts the current database `live` when in-place runs have outgrown
    /// it (see `outgrown`, `compact`); `announce` is called first. Whether a
    /// new file was published (the caller opens it).
    ///
    /// `give_way` (new work waiting, in a server) is asked between the steps;
    /// when it says so the copy is dropped and `Ok(false)` returned, the next
    /// quiet moment trying again. A file grown past three times its built size
    /// is compacted whatever waits: its checkpoints slow every run.
    pub fn compact_if_outgrown(
        &self,
        live: &GraphStore,
        cfg: &GraphConfig,
        announce: &dyn Fn(),
        give_way: &dyn Fn() -> bool,
    ) -> Result<bool, DataDirError> {
        let Some((built, now)) = self.outgrown(cfg) else {
            return Ok(false);
        };
        let must = now >= built.saturating_mul(3);
        let give_way = || !must && give_way();
        if give_way() {
            return Ok(false);
        }
        announce();
        let started = std::time::Instant::now();
        let bytes = match self.compact(live, cfg, &give_way) {
            Err(DataDirError::Graph(GraphError::Abandoned)) => {
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    "compacting the graph gave way to new work (tried again when quiet)"
                );
                return Ok(false);
            }
            done => done?,
        };
        tracing::info!(
            built_mb = built >> 20,
            grown_mb = now >> 20,
            compacted_mb = bytes >> 20,
            ms = started.elapsed().as_millis() as u64,
            "compacted the graph"
        );
        Ok(true)
    }

    /// Copies the database `live` (the current one, checkpointed, held by the
    /// caller with the writer lock) into a new file holding only its live rows
    /// (see `store::graph::compact`), and publishes that. Readers of `live`
    /// keep reading it until they reopen; nothing may write to it meanwhile.
    /// Returns the new file's size.
    pub fn compact(
        &self,
        live: &GraphStore,
        cfg: &GraphConfig,
        give_way: &dyn Fn() -> bool,
    ) -> Result<u64, DataDirError> {
        let scratch = tempfile::Builder::new()
            .prefix(".compact-")
            .tempdir_in(&self.root)
            .map_err(self.io())?;
        let export = scratch.path().join("export");
        live.export_to(&export)?;
        if give_way() {
            return Err(GraphError::Abandoned.into());
        }
        self.publish_aside(|path| GraphStore::import_new(path, &export, cfg, give_way))?;
        Ok(self.graph_bytes().unwrap_or(0))
    }

    /// Deletes database files other than `current` (left by earlier builds or
    /// interrupted ones). Best effort: a file still open elsewhere is removed on
    /// the next run.
    pub fn remove_stale_graphs(&self) -> Result<(), DataDirError> {
        if let Some(current) = self.manifest()?.map(|m| m.graph) {
            self.remove_stale(&current);
        }
        Ok(())
    }

    fn remove_stale(&self, current: &str) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("graph-") && !name.starts_with(current) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Opens an existing graph read-only (for `cruxe status`, `cruxe hierarchy`).
    pub fn open_graph_read_only(&self, cfg: &GraphConfig) -> Result<GraphStore, DataDirError> {
        let path = self.readable_graph(cfg)?;
        match GraphStore::open_read_only(&path, cfg) {
            Ok(store) => Ok(store),
            Err(GraphError::Locked(_)) => Err(self.locked()),
            Err(e) => Err(e.into()),
        }
    }

    /// The current database file, ready for a read-only open (for `cruxe cypher`,
    /// whose worker process opens it).
    ///
    /// A writer that stopped can leave a log that a read-only open would replay
    /// (and Kuzu 0.11 can crash replaying one) or a checkpoint only a read-write
    /// open finishes. Then, if no writer is running, the log is settled first
    /// (see `settle_log`), under the writer lock.
    pub fn readable_graph(&self, cfg: &GraphConfig) -> Result<PathBuf, DataDirError> {
        let path = match self.graph_path()? {
            Some(p) if p.exists() => p,
            _ => return Err(DataDirError::NotIndexed(self.root.clone())),
        };
        let path = if Self::unsettled(&path) {
            let Ok(_lock) = self.lock_writer() else {
                return Err(self.locked());
            };
            let settled = self.settle_log(cfg)?;
            let path = self
                .graph_path()?
                .ok_or_else(|| DataDirError::NotIndexed(self.root.clone()))?;
            if settled == Settled::CheckpointFinished {
                drop(GraphStore::open(&path, &self.writer_config(cfg))?);
            }
            path
        } else {
            path
        };
        match GraphStore::open_read_only(&path, cfg) {
            Ok(_) => Ok(path),
            Err(GraphError::Locked(_)) => Err(self.locked()),
            Err(first) => {
                let Ok(_lock) = self.lock_writer() else {
                    return Err(first.into());
                };
                tracing::info!(
                    "recovering {} after an interrupted write: {first}",
                    path.display()
                );
                drop(GraphStore::open(&path, &self.writer_config(cfg))?);
                drop(GraphStore::open_read_only(&path, cfg)?);
                Ok(path)
            }
        }
    }
}

/// How long a server's start waits for readers of the database to let go.
const READER_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

fn stamp_of(graph: &Path) -> PathBuf {
    PathBuf::from(format!("{}.bak.stamp", graph.display()))
}

/// Size, mtime and a hash of the first 64 KiB of a database file: changes
/// whenever a checkpoint writes to it.
fn stamp(graph: &Path) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::metadata(graph).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let mut head = Vec::with_capacity(1 << 16);
    std::fs::File::open(graph)
        .ok()?
        .take(1 << 16)
        .read_to_end(&mut head)
        .ok()?;
    Some(format!(
        "{} {} {}",
        meta.len(),
        mtime,
        blake3::hash(&head).to_hex()
    ))
}

fn shadow_of(graph: &Path) -> PathBuf {
    PathBuf::from(format!("{}.shadow", graph.display()))
}

/// Kuzu 0.11.3's log record types without a payload (`wal_record.h`).
const WAL_COMMIT: u8 = 0x02;
const WAL_CHECKPOINT: u8 = 0xFE;
/// Kuzu's page size (`KUZU_PAGE_SIZE`).
const PAGE: u64 = 4096;

/// Whether the log ends with a complete CHECKPOINT record: records are not
/// framed, but a checkpoint comes only after every commit's last record (a
/// COMMIT, one byte) under Kuzu's lock, and the record is one byte, written
/// and fsynced after the shadow file.
fn checkpoint_recorded(wal: &Path, len: u64) -> bool {
    use std::io::{Read, Seek};
    let tail = (|| -> std::io::Result<Vec<u8>> {
        let mut f = std::fs::File::open(wal)?;
        let n = len.min(2);
        f.seek(std::io::SeekFrom::Start(len - n))?;
        let mut buf = vec![0; n as usize];
        f.read_exact(&mut buf)?;
        Ok(buf)
    })();
    matches!(
        tail.as_deref(),
        Ok([WAL_CHECKPOINT]) | Ok([WAL_COMMIT, WAL_CHECKPOINT])
    )
}

/// Whether a shadow file is whole: a header page whose first four bytes count
/// the shadow pages N, the N pages, then a u64 count and N (file, page) pairs
/// of u32 (`shadow_file.cpp`).
fn shadow_whole(shadow: &Path) -> bool {
    use std::io::Read;
    let Ok(len) = std::fs::metadata(shadow).map(|m| m.len()) else {
        return false;
    };
    let mut head = [0u8; 4];
    let read = std::fs::File::open(shadow).and_then(|mut f| f.read_exact(&mut head));
    let pages = u64::from(u32::from_le_bytes(head));
    read.is_ok() && len == (pages + 1) * PAGE + 8 + 8 * pages
}

/// What `DataDir::settle_log` found after a writer's stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// No log: the graph is its last checkpoint.
    Nothing,
    /// Runs committed after the last checkpoint were dropped: the graph is
    /// back at that checkpoint.
    RunsDropped,
    /// A stopped checkpoint was recorded: opening finishes it.
    CheckpointFinished,
    /// A checkpoint was stopped before its record: the graph is back at the
    /// previous one, copied into a new file with its indexes built anew.
    Rebuilt,
}

/// The note that the graph at `graph` needs its indexes rebuilt (a decision
/// `settle_log` made, kept until a new file is published).
fn repair_of(graph: &Path) -> PathBuf {
    PathBuf::from(format!("{}.repair", graph.display()))
}

fn bak_of(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.bak", file.display()))
}

/// Hard links to the files of a Tantivy index directory in `to`, as of one
/// `meta.json`: a merge that ends meanwhile (the writer's threads) rewrites it
/// and removes the files it merged, so the links are made again until the
/// meta is the same before and after. Lock files are left out. Their names.
fn link_consistent(from: &Path, to: &Path) -> std::io::Result<Vec<String>> {
    let meta = from.join("meta.json");
    let mut last = None;
    for _ in 0..8 {
        let _ = std::fs::remove_dir_all(to);
        std::fs::create_dir_all(to)?;
        let before = std::fs::read(&meta).ok();
        let mut names = Vec::new();
        let mut vanished = false;
        for e in std::fs::read_dir(from)?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".lock") || !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            match std::fs::hard_link(e.path(), to.join(&name)) {
                Ok(()) => names.push(name),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    vanished = true;
                    break;
                }
                Err(err) => return Err(err),
            }
        }
        if !vanished && std::fs::read(&meta).ok() == before {
            names.sort();
            return Ok(names);
        }
        last = Some(from.display().to_string());
    }
    Err(std::io::Error::other(format!(
        "the search index {} kept changing while it was staged",
        last.unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs2::FileExt;

    /// A lock whose recorded holder is gone is waited for (a child of the
    /// killed holder lets it go a moment later); one whose holder lives is
    /// refused at once.
    #[test]
    fn a_lock_left_by_a_dead_holder_is_taken_once_let_go() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dd = DataDir::new(tmp.path().join("data"));
        dd.create().expect("create");
        let path = tmp.path().join("data").join(LOCK);
        let child_held = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .expect("open");
        child_held.lock_exclusive().expect("hold");
        // A live holder (this process): "in use", no wait.
        std::fs::write(&path, format!("pid {} (cruxe serve)", std::process::id())).expect("w");
        assert!(matches!(dd.lock_writer(), Err(DataDirError::Locked(..))));
        // A holder that is gone (no such pid): taken once let go.
        std::fs::write(&path, "pid 4000000000 (cruxe serve)").expect("w");
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(child_held);
        });
        assert!(dd.lock_writer().is_ok());
        releaser.join().expect("join");
    }
}
