//! Taking the data dir for a run (its writer lock, the interrupted-run undo, the
//! graph opened read-write) and the copy of the database an in-place run makes
//! before it writes, so that a kill at any moment can be undone.

use std::time::Instant;

use super::{IndexError, IndexOptions};
use crate::store::datadir::{DataDir, DataDirError, WriterLock};
use crate::store::graph::GraphStore;

/// What `open_for_write` gives a run: the writer lock it took (none when the
/// caller holds one), the graph it opened, and the copy of the database it
/// started.
pub(super) type Opened = (Option<WriterLock>, Option<GraphStore>, Option<SavedCopy>);

/// Takes the data dir's writer lock (unless the caller holds it: `held`) and
/// opens its graph (`None` when there is none yet, or when a server's `shared`
/// store is used), first undoing a run killed before this one finished. A run of
/// its own that may write in place also starts copying the database aside.
pub(super) fn open_for_write(
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
    Ok((lock, owned, saving))
}

/// The copy of the database an in-place run makes before it writes, taken on a
/// thread. Dropped without `wait` (the run failed, or found nothing to write),
/// it stops the copy and discards it (a CLI run's): the database was not touched.
pub(super) struct SavedCopy {
    pub(super) data: DataDir,
    pub(super) older_ok: bool,
    pub(super) cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    pub(super) handle: Option<std::thread::JoinHandle<Result<u64, DataDirError>>>,
    pub(super) waited: bool,
}

impl SavedCopy {
    pub(super) fn start(data: &DataDir, older_ok: bool) -> SavedCopy {
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
    pub(super) fn wait(&mut self) -> Result<u64, DataDirError> {
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
    match data.compact_if_outgrown(&st, &opts.graph, &announce) {
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
