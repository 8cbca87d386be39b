//! Long-lived reader connections, each on a thread of its own with the
//! statements it has prepared. Preparing costs more than running a short walk
//! (the ancestors query on a 634k-symbol graph: p95 10.4 ms with a new
//! connection and `prepare` per call, 3.5 ms prepared once), and Kuzu's
//! `PreparedStatement` may not leave the thread that made it, so each reader
//! thread keeps its own connection and statements and runs the work sent to it.
//!
//! Work comes in two lanes. Lookups by key (`Lane::Quick`) go before call-graph
//! walks (`Lane::Walk`), and one reader takes lookups only: a flood of deep
//! walks never holds back `locate_symbol` or an outline. Each job carries the
//! `Cancel` of the call it is for: a cancelled job does not start, and a
//! statement that runs when its call is cancelled (its deadline passed, the
//! server stops) is interrupted by the reader's watchdog, a second thread that
//! shares the connection.

use std::collections::{HashMap, VecDeque, hash_map};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use kuzu::{Connection, Database, PreparedStatement};

use super::schema::q;
use super::{GraphError, Result};
use crate::model::cancel::Cancel;

/// One reader's connection and the statements prepared on it, by query text,
/// and the `Cancel` of the job it runs.
pub struct Reader<'c, 'db> {
    conn: &'c Connection<'db>,
    stmts: HashMap<&'static str, PreparedStatement>,
    cancel: Cancel,
}

impl<'c, 'db> Reader<'c, 'db> {
    /// Runs `queries/NAME.cypher` (prepared on its first use here) with `params`.
    pub fn execute(
        &mut self,
        name: &'static str,
        params: Vec<(&str, kuzu::Value)>,
    ) -> Result<kuzu::QueryResult<'db>> {
        self.session().exec(q(name), params)
    }

    /// This thread's connection and statements, for the writes (see
    /// `GraphStore::apply`).
    pub(super) fn session(&mut self) -> Session<'_, 'db> {
        Session {
            conn: self.conn,
            stmts: &mut self.stmts,
            cancel: Some(&self.cancel),
        }
    }

    /// Whether the job this reader runs was cancelled.
    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// A connection and the statements prepared on it, by query text. A server's
/// writer thread keeps both from run to run (`GraphStore::apply`): planning a
/// statement costs 2-13 ms on Go's tree, most of a small run's write when each
/// write prepared its own.
pub(super) struct Session<'c, 'db> {
    conn: &'c Connection<'db>,
    stmts: &'c mut HashMap<&'static str, kuzu::PreparedStatement>,
    /// A reader's job: no statement starts once it is cancelled.
    cancel: Option<&'c Cancel>,
}

impl<'c, 'db> Session<'c, 'db> {
    pub(super) fn new(
        conn: &'c Connection<'db>,
        stmts: &'c mut HashMap<&'static str, kuzu::PreparedStatement>,
    ) -> Session<'c, 'db> {
        Session {
            conn,
            stmts,
            cancel: None,
        }
    }

    /// Runs `query`, prepared on its first use here, with `params`.
    pub(super) fn exec(
        &mut self,
        query: &'static str,
        params: Vec<(&str, kuzu::Value)>,
    ) -> Result<kuzu::QueryResult<'db>> {
        if self.cancel.is_some_and(Cancel::is_cancelled) {
            return Err(GraphError::Cancelled);
        }
        let stmt = match self.stmts.entry(query) {
            hash_map::Entry::Occupied(e) => e.into_mut(),
            hash_map::Entry::Vacant(e) => e.insert(self.conn.prepare(query)?),
        };
        self.conn.execute(stmt, params).map_err(|e| {
            // The watchdog interrupted it: the call was cancelled.
            if self.cancel.is_some_and(Cancel::is_cancelled) {
                GraphError::Cancelled
            } else {
                e.into()
            }
        })
    }

    /// The connection itself (a bulk COPY is run unprepared on it).
    pub(super) fn connection(&self) -> &'c Connection<'db> {
        self.conn
    }

    /// Runs `text` unprepared (transaction control).
    pub(super) fn query(&self, text: &str) -> Result<()> {
        self.conn.query(text)?;
        Ok(())
    }
}

/// Which queue a job waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// A few lookups by key: served first, and by a reader of their own.
    Quick,
    /// A call-graph walk, which may take long.
    Walk,
}

struct Job {
    cancel: Cancel,
    work: Box<dyn FnOnce(&mut Reader<'_, '_>) + Send>,
}

/// The jobs waiting, per lane; `closed` once the readers are dropped.
#[derive(Default)]
struct Queue {
    state: Mutex<Waiting>,
    ready: Condvar,
}

#[derive(Default)]
struct Waiting {
    quick: VecDeque<Job>,
    walks: VecDeque<Job>,
    closed: bool,
}

impl Queue {
    /// The next job for a reader (`quick_only`: lookups alone), or none once
    /// closed.
    fn take(&self, quick_only: bool) -> Option<Job> {
        let mut w = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(job) = w.quick.pop_front() {
                return Some(job);
            }
            if !quick_only && let Some(job) = w.walks.pop_front() {
                return Some(job);
            }
            if w.closed {
                return None;
            }
            w = self.ready.wait(w).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The reader threads of one database; they end when this is dropped.
pub struct Readers {
    queue: Arc<Queue>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Readers {
    /// `walkers` readers that take any job, and one more that takes lookups
    /// only.
    pub fn start(db: &Arc<Database>, walkers: usize) -> Readers {
        let mut roles = vec![true];
        roles.extend(std::iter::repeat_n(false, walkers.max(1)));
        Self::start_named(db, &roles, "cruxe-graph-reader", true)
    }

    /// The writer: one thread whose statements may use all of Kuzu's threads.
    pub fn start_writer(db: &Arc<Database>) -> Readers {
        Self::start_named(db, &[false], "cruxe-graph-writer", false)
    }

    fn start_named(db: &Arc<Database>, quick_only: &[bool], name: &str, small: bool) -> Readers {
        let queue = Arc::new(Queue::default());
        let threads = quick_only
            .iter()
            .enumerate()
            .filter_map(|(i, &quick)| {
                let (db, queue) = (db.clone(), queue.clone());
                std::thread::Builder::new()
                    .name(format!("{name}-{i}"))
                    .spawn(move || serve(&db, &queue, small, quick))
                    .ok()
            })
            .collect();
        Readers { queue, threads }
    }

    /// Hands `work` to the next free reader of its lane; its result arrives on
    /// the receiver (`Cancelled`, without running, once `cancel` is).
    pub fn submit<T: Send + 'static>(
        &self,
        lane: Lane,
        cancel: &Cancel,
        work: impl FnOnce(&mut Reader<'_, '_>) -> Result<T> + Send + 'static,
    ) -> Result<std::sync::mpsc::Receiver<Result<T>>> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = Job {
            cancel: cancel.clone(),
            work: Box::new(move |reader| {
                let result = match reader.cancelled() {
                    true => Err(GraphError::Cancelled),
                    false => work(reader),
                };
                let _ = tx.send(result);
            }),
        };
        let mut w = self.queue.state.lock().unwrap_or_else(|e| e.into_inner());
        if w.closed {
            return Err(GraphError::Kuzu("the graph readers are closed".into()));
        }
        match lane {
            Lane::Quick => w.quick.push_back(job),
            Lane::Walk => w.walks.push_back(job),
        }
        drop(w);
        self.queue.ready.notify_all();
        Ok(rx)
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        {
            let mut w = self.queue.state.lock().unwrap_or_else(|e| e.into_inner());
            w.closed = true;
            // Jobs not started end with their senders: their callers see the
            // readers gone.
            w.quick.clear();
            w.walks.clear();
        }
        self.queue.ready.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// What a reader's watchdog watches: the `Cancel` of the job running (none
/// between jobs), and whether the reader has ended.
#[derive(Default)]
struct Watched {
    state: Mutex<(Option<Cancel>, bool)>,
    changed: Condvar,
}

impl Watched {
    fn set(&self, job: Option<Cancel>, ended: bool) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = (job, ended);
        self.changed.notify_all();
    }
}

/// How often a watchdog looks at a running job's `Cancel`.
const WATCH_EVERY: Duration = Duration::from_millis(10);

/// A reader thread: one connection, jobs until the queue closes, and a
/// watchdog beside it that interrupts the connection's statement once the
/// job's call is cancelled.
fn serve(db: &Database, queue: &Queue, small: bool, quick_only: bool) {
    let Ok(mut conn) = Connection::new(db) else {
        return;
    };
    // A tool's statements are small: one thread runs each. Spread over Kuzu's
    // threads, a walk of a few rows spends more CPU handing work over than
    // doing it (p95 latency the same, CPU per statement ~40% less; see
    // docs/BENCHMARKS.md), and the readers already run statements side by side.
    if small {
        conn.set_max_num_threads_for_exec(1);
    }
    let conn = &conn;
    let watched = Watched::default();
    std::thread::scope(|scope| {
        scope.spawn(|| watch(conn, &watched));
        let mut reader = Reader {
            conn,
            stmts: HashMap::new(),
            cancel: Cancel::never(),
        };
        while let Some(job) = queue.take(quick_only) {
            reader.cancel = job.cancel.clone();
            watched.set(job.cancel.can_stop().then_some(job.cancel), false);
            // A panicking job loses its answer (the caller gets an error), not
            // the reader.
            let work = job.work;
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut reader)));
            watched.set(None, false);
            reader.cancel = Cancel::never();
        }
        watched.set(None, true);
    });
}

/// Interrupts `conn`'s statement while the job running is cancelled (again
/// every `WATCH_EVERY`: Kuzu clears the flag when a statement starts, so one
/// sent between two statements would be lost).
fn watch(conn: &Connection<'_>, watched: &Watched) {
    let mut state = watched.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        match &*state {
            (_, true) => return,
            (None, false) => {
                state = watched
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
            (Some(cancel), false) => {
                if cancel.is_cancelled() {
                    let _ = conn.interrupt();
                }
                state = watched
                    .changed
                    .wait_timeout(state, WATCH_EVERY)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// A statement that runs for minutes, in little memory.
    /// (`count(*)` would not do: Kuzu counts a product of lists without
    /// making its rows.)
    const ENDLESS: &str = "UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y UNWIND range(1, 100) AS z RETURN sum(x + y + z) AS s";

    fn database(tmp: &tempfile::TempDir) -> Arc<Database> {
        let config = kuzu::SystemConfig::default()
            .buffer_pool_size(64 << 20)
            .max_num_threads(2)
            .max_db_size(1 << 30);
        Arc::new(Database::new(tmp.path().join("g.kuzu"), config).expect("database"))
    }

    fn one(r: &mut Reader<'_, '_>) -> Result<usize> {
        Ok(r.session().exec("RETURN 1", vec![])?.count())
    }

    #[test]
    fn a_cancelled_job_never_starts_and_a_running_statement_is_interrupted() {
        let tmp = tempfile::tempdir().expect("tmp");
        let db = database(&tmp);
        let readers = Readers::start(&db, 1);
        let gone = Cancel::new();
        gone.cancel();
        let rx = readers.submit(Lane::Walk, &gone, one).expect("submit");
        assert!(matches!(
            rx.recv().expect("answer"),
            Err(GraphError::Cancelled)
        ));
        let soon = Cancel::child(
            &Cancel::never(),
            Some(Instant::now() + Duration::from_millis(300)),
        );
        let rx = readers
            .submit(Lane::Walk, &soon, |r| {
                Ok(r.session().exec(ENDLESS, vec![])?.count())
            })
            .expect("submit");
        let got = rx.recv().expect("answer");
        assert!(matches!(got, Err(GraphError::Cancelled)), "{got:?}");
        // The reader goes on with the next job.
        let rx = readers
            .submit(Lane::Walk, &Cancel::never(), one)
            .expect("submit");
        assert_eq!(rx.recv().expect("answer").expect("rows"), 1);
    }

    #[test]
    fn lookups_pass_a_walk_that_holds_every_walker() {
        let tmp = tempfile::tempdir().expect("tmp");
        let db = database(&tmp);
        let readers = Readers::start(&db, 1);
        let walk = Cancel::new();
        let walking = readers
            .submit(Lane::Walk, &walk, |r| {
                Ok(r.session().exec(ENDLESS, vec![])?.count())
            })
            .expect("submit");
        let queued = readers
            .submit(Lane::Walk, &Cancel::never(), one)
            .expect("submit");
        // The walker is busy and a walk waits; a lookup is answered.
        let rx = readers
            .submit(Lane::Quick, &Cancel::never(), one)
            .expect("submit");
        assert_eq!(rx.recv().expect("answer").expect("rows"), 1);
        assert!(walking.try_recv().is_err(), "the walk is still running");
        walk.cancel();
        assert!(matches!(
            walking.recv().expect("answer"),
            Err(GraphError::Cancelled)
        ));
        assert_eq!(queued.recv().expect("answer").expect("rows"), 1);
    }
}
