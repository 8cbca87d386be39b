//! Taking the data dir for a run: its writer lock, what a stopped writer left
//! settled (`DataDir::settle_log`), the graph opened read-write; a full
//! build's new graph, loaded aside beside resolution (`FreshGraph`).

use std::path::Path;

use super::searching::{FileSymbols, SearchThread, search_from_parse};
use super::spill::Spill;
use super::{IndexError, IndexOptions};
use crate::store::datadir::{DataDir, DataDirError, WriterLock};
use crate::store::graph::{
    Changes, EdgeFiles, FileRows, GraphError, GraphStore, NodeCsvs, NodeFiles,
};

/// What `open_for_write` gives a run: the writer lock it took (none when the
/// caller holds one) and the graph it opened.
pub(super) type Opened = (Option<WriterLock>, Option<GraphStore>);

/// Takes the data dir's writer lock (unless the caller holds it: `held`) and
/// opens its graph (`None` when there is none yet, or when a server's `shared`
/// store is used), first settling what a writer stopped before this one left.
/// An in-place run needs no copy of the database: a transaction never writes
/// the file, and a stop at any moment is settled back to a checkpoint.
pub(super) fn open_for_write(
    data: &DataDir,
    opts: &IndexOptions,
    shared: Option<&GraphStore>,
    held: Option<&WriterLock>,
    repo: &str,
    ref_name: &str,
) -> Result<Opened, IndexError> {
    let t = std::time::Instant::now();
    let lock = match held {
        Some(_) => None,
        None => Some(data.lock_writer()?),
    };
    let locked_ms = t.elapsed().as_millis() as u64;
    // A server (`shared`) settled the log when it opened the graph, and its
    // log now holds its own runs not yet checkpointed.
    if shared.is_none() {
        match data.settle_log(&opts.graph) {
            Ok(_) => {}
            // --force rebuilds aside whatever state the old files are in.
            Err(e) if opts.force => tracing::warn!("not settling the graph's log: {e}"),
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
    let settled_ms = t.elapsed().as_millis() as u64;
    // Leftovers of an interrupted full build are garbage now that we hold the lock.
    if let Err(e) = data.remove_stale_graphs()
        && !opts.force
    {
        return Err(e.into());
    }
    let owned = match shared {
        // A damaged database is not set aside here (a server does that): the
        // data dir may hold other repos and refs, and --force says so.
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
    tracing::debug!(
        locked_ms,
        settled_ms,
        ms = t.elapsed().as_millis() as u64,
        "opened the graph for writing"
    );
    Ok((lock, owned))
}

/// After an in-place run of its own committed and checkpointed: compacts the
/// graph when in-place runs have outgrown it (see `DataDir::compact`), and
/// returns the graph to go on with. The run's changes are committed whatever
/// happens here: a compaction that fails is only reported, and tried again by
/// the next run.
pub(super) fn compact_if_outgrown(
    data: &DataDir,
    opts: &IndexOptions,
    progress: &dyn super::Progress,
    st: Box<GraphStore>,
) -> Result<Box<GraphStore>, IndexError> {
    let announce = || progress.phase("compacting the graph", 0);
    match data.compact_if_outgrown(&st, &opts.graph, &announce, &|| false) {
        Ok(false) => Ok(st),
        Ok(true) => {
            drop(st);
            // The previous file's leftovers (Kuzu may write a log on close).
            let _ = data.remove_stale_graphs();
            Ok(Box::new(data.open_graph(&opts.graph)?))
        }
        Err(e) => {
            tracing::warn!("compacting the graph failed (the next run tries again): {e}");
            Ok(st)
        }
    }
}

/// A full build's graph, loaded aside on a thread of its own from the moment
/// the files are parsed: their files and symbols while resolution reads what
/// it needs of the rows (then waits for them: `wait_for_nodes`), then what it
/// found (`finish`). Dropped unfinished (a
/// failed or stopped run), the load is abandoned, its database never published,
/// and the thread waited for: no writer outlives the run.
pub(super) struct FreshGraph {
    rest: Option<std::sync::mpsc::SyncSender<(Changes, Option<EdgeFiles>)>>,
    /// Closed once the files and symbols are loaded (or the load ended).
    nodes_loaded: std::sync::mpsc::Receiver<()>,
    thread: Option<std::thread::JoinHandle<Loaded>>,
    /// Set when the run goes without it: the load stops at its next statement.
    dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// What the loading thread gives back: how it went, and the changes it was
/// handed (the run reports from them).
type Loaded = (Result<(), DataDirError>, Option<Changes>);

impl FreshGraph {
    /// Starts loading `nodes` (the files and symbols as parsed) into a new
    /// database aside, with the ref `header` names.
    pub(super) fn start(
        data: &DataDir,
        opts: &IndexOptions,
        header: Changes,
        nodes: NodeFiles,
    ) -> FreshGraph {
        let (rest, handed) = std::sync::mpsc::sync_channel::<(Changes, Option<EdgeFiles>)>(1);
        let (loaded_tx, nodes_loaded) = std::sync::mpsc::channel::<()>();
        let (data, cfg, stop) = (data.clone(), opts.graph.clone(), opts.stop.clone());
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let gone = std::sync::Arc::clone(&dropped);
        let thread = std::thread::spawn(move || {
            let mut back = None;
            let built = data.build_aside_with(&cfg, |open| {
                let abandon = || stop.requested() || gone.load(std::sync::atomic::Ordering::SeqCst);
                let mut st = open()?;
                st.load_fresh_nodes(&header, nodes, &abandon)?;
                // Closed until the edges come: the pages the load left in
                // Kuzu's pool are given back before resolution, the run's
                // peak, begins (`wait_for_nodes`).
                drop(st);
                drop(loaded_tx);
                let (all, edges) = handed.recv().map_err(|_| GraphError::Abandoned)?;
                let mut st = open()?;
                let loaded = match edges {
                    Some(edges) => st.load_fresh_edges(&all, edges, &abandon),
                    // Resolution was skipped (`--skip-imports`): no edges.
                    None => Ok(()),
                };
                back = Some(all);
                loaded?;
                match stop.requested() {
                    true => Err(GraphError::Abandoned),
                    false => Ok(()),
                }
            });
            (built, back)
        });
        FreshGraph {
            rest: Some(rest),
            nodes_loaded,
            thread: Some(thread),
            dropped,
        }
    }

    /// Waits until the files and symbols are loaded (or the load ended).
    pub(super) fn wait_for_nodes(&self) {
        let _ = self.nodes_loaded.recv();
    }

    /// Hands the load the whole of `changes` (Go packages) and the `edges`
    /// resolution found, and waits for the database to be published;
    /// `changes` is given back.
    pub(super) fn finish(
        mut self,
        changes: &mut Changes,
        edges: Option<EdgeFiles>,
    ) -> Result<(), DataDirError> {
        let all = std::mem::take(changes);
        // Not sent (the thread ended first, on an error): kept here.
        let unsent = match self.rest.take() {
            Some(tx) => tx.send((all, edges)).err().map(|e| e.0.0),
            None => Some(all),
        };
        let (built, back) = match self.thread.take().map(|h| h.join()) {
            Some(Ok(loaded)) => loaded,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => unreachable!("a load is finished once"),
        };
        if let Some(c) = back.or(unsent) {
            *changes = c;
        }
        built
    }
}

impl Drop for FreshGraph {
    fn drop(&mut self) {
        self.dropped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        drop(self.rest.take());
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

/// Where a full build's parsed files go as they come, in path order: their
/// files and symbols to the node tables' CSV files, then their symbols to the
/// search index writer, on a thread of its own. The run keeps only what
/// resolution needs of each file, so a full build never holds the whole
/// ref's rows (on the crates corpus: ~290 MiB of 648k symbols' rows).
pub(super) struct FreshSink {
    nodes: NodeCsvs,
    /// Bounded: a search writer that falls behind holds the parse back
    /// rather than the rows in memory.
    search: Option<std::sync::mpsc::SyncSender<FileSymbols>>,
    searching: SearchThread,
    /// Where the parsed files' packed sections go (`None`: the data dir's
    /// disk took no such file; they stay in the heap).
    spill: Option<std::sync::Arc<Spill>>,
}

impl FreshSink {
    /// Files in flight to the search writer, at most.
    const SEARCH_QUEUE: usize = 256;

    /// A sink writing the search index of `repo`/`ref_name` in `data`.
    pub(super) fn start(
        root: &Path,
        data: &DataDir,
        opts: &IndexOptions,
        (repo, ref_name): (&str, &str),
    ) -> Result<FreshSink, IndexError> {
        let nodes = NodeCsvs::create(opts.graph.copy_part, repo, ref_name)?;
        let (tx, rx) = std::sync::mpsc::sync_channel(Self::SEARCH_QUEUE);
        let (root, dir) = (root.to_path_buf(), data.search_dir(repo, ref_name));
        let writer_mb = opts.writer_mb();
        let searching = SearchThread::spawn(move || search_from_parse(&root, &dir, rx, writer_mb));
        let spill = match Spill::create_in(data.root()) {
            Ok(s) => Some(std::sync::Arc::new(s)),
            Err(e) => {
                tracing::debug!("no spill file for the parsed files ({e}); kept in memory");
                None
            }
        };
        Ok(FreshSink {
            nodes,
            search: Some(tx),
            searching,
            spill,
        })
    }

    /// Where the parsed files' packed sections go.
    pub(super) fn spill(&self) -> Option<&Spill> {
        self.spill.as_deref()
    }

    /// The spill, kept to drop its pages once read (`Spill::drop_pages`).
    pub(super) fn spilled(&self) -> Option<std::sync::Arc<Spill>> {
        self.spill.clone()
    }

    /// One parsed file's rows, written and handed on.
    pub(super) fn add(&mut self, rows: FileRows) {
        self.nodes.add(&rows);
        if let Some(tx) = &self.search {
            // Gone only when the writer failed: its result says so (`finish`).
            if tx.send(Some((rows.file.path, rows.symbols))).is_err() {
                self.search = None;
            }
        }
    }

    /// The node tables' files, to be copied, and the search writer, which
    /// indexes what is queued and commits. Dropped instead (a stop, an
    /// error), its writer commits nothing.
    pub(super) fn finish(self) -> Result<(NodeFiles, SearchThread), IndexError> {
        let nodes = self.nodes.finish()?;
        if let Some(tx) = self.search {
            let _ = tx.send(None);
        }
        Ok((nodes, self.searching))
    }
}
