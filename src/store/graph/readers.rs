//! Long-lived reader connections, each on a thread of its own with the
//! statements it has prepared. Preparing costs more than running a short walk
//! (the ancestors query on a 634k-symbol graph: p95 10.4 ms with a new
//! connection and `prepare` per call, 3.5 ms prepared once), and Kuzu's
//! `PreparedStatement` may not leave the thread that made it, so each reader
//! thread keeps its own connection and statements and runs the work sent to it.

use std::collections::{HashMap, hash_map};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use kuzu::{Connection, Database, PreparedStatement};

use super::schema::q;
use super::{GraphError, Result};

/// One reader's connection and the statements prepared on it, by query text.
pub struct Reader<'db> {
    conn: Connection<'db>,
    stmts: HashMap<&'static str, PreparedStatement>,
}

impl<'db> Reader<'db> {
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
        Session::new(&self.conn, &mut self.stmts)
    }
}

/// A connection and the statements prepared on it, by query text. A server's
/// writer thread keeps both from run to run (`GraphStore::apply`): planning a
/// statement costs 2-13 ms on Go's tree, most of a small run's write when each
/// write prepared its own.
pub(super) struct Session<'c, 'db> {
    conn: &'c Connection<'db>,
    stmts: &'c mut HashMap<&'static str, kuzu::PreparedStatement>,
}

impl<'c, 'db> Session<'c, 'db> {
    pub(super) fn new(
        conn: &'c Connection<'db>,
        stmts: &'c mut HashMap<&'static str, kuzu::PreparedStatement>,
    ) -> Session<'c, 'db> {
        Session { conn, stmts }
    }

    /// Runs `query`, prepared on its first use here, with `params`.
    pub(super) fn exec(
        &mut self,
        query: &'static str,
        params: Vec<(&str, kuzu::Value)>,
    ) -> Result<kuzu::QueryResult<'db>> {
        let stmt = match self.stmts.entry(query) {
            hash_map::Entry::Occupied(e) => e.into_mut(),
            hash_map::Entry::Vacant(e) => e.insert(self.conn.prepare(query)?),
        };
        Ok(self.conn.execute(stmt, params)?)
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

type Job = Box<dyn FnOnce(&mut Reader<'_>) + Send>;

/// The reader threads of one database; they end when this is dropped.
pub struct Readers {
    jobs: Option<Sender<Job>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Readers {
    pub fn start(db: &Arc<Database>, count: usize) -> Readers {
        Self::start_named(db, count, "cruxe-graph-reader", true)
    }

    /// The writer: one thread whose statements may use all of Kuzu's threads.
    pub fn start_writer(db: &Arc<Database>) -> Readers {
        Self::start_named(db, 1, "cruxe-graph-writer", false)
    }

    fn start_named(db: &Arc<Database>, count: usize, name: &str, small: bool) -> Readers {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = (0..count.max(1))
            .filter_map(|i| {
                let (db, rx) = (db.clone(), rx.clone());
                std::thread::Builder::new()
                    .name(format!("{name}-{i}"))
                    .spawn(move || serve(&db, &rx, small))
                    .ok()
            })
            .collect();
        Readers {
            jobs: Some(tx),
            threads,
        }
    }

    /// Hands `work` to the next free reader; its result arrives on the receiver.
    pub fn submit<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Reader<'_>) -> Result<T> + Send + 'static,
    ) -> Result<std::sync::mpsc::Receiver<Result<T>>> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move |reader| {
            let _ = tx.send(work(reader));
        });
        self.jobs
            .as_ref()
            .ok_or_else(|| GraphError::Kuzu("the graph readers are closed".into()))?
            .send(job)
            .map_err(|_| GraphError::Kuzu("the graph readers are gone".into()))?;
        Ok(rx)
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        self.jobs.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A reader thread: one connection, jobs until the sender goes.
fn serve(db: &Database, jobs: &Mutex<Receiver<Job>>, small: bool) {
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
    let mut reader = Reader {
        conn,
        stmts: HashMap::new(),
    };
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match job {
            // A panicking job loses its answer (the caller gets an error), not
            // the reader.
            Ok(job) => {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut reader)));
            }
            Err(_) => return,
        }
    }
}
