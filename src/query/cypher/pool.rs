//! The parent's side: a few worker processes per data dir, a query handed to an
//! idle one, its memory and deadline watched from outside, and the worker killed
//! and replaced when it passes either.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{AdhocError, Answer, RefusalKind, Reply, Request};
use crate::model::cancel::Cancel;

/// How much one ad hoc query may use.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Resident memory of a worker process, its database pages included.
    pub memory_bytes: u64,
    /// Wall time of one query (the worker is killed a little after it).
    pub timeout_ms: u64,
    /// Worker processes at most (queries beyond wait for one).
    pub workers: usize,
    /// Kuzu's page cache in each worker (counted in `memory_bytes`).
    pub buffer_pool_bytes: u64,
    /// Kuzu's threads for one query.
    pub threads: u64,
    /// Size of one answer's JSON.
    pub max_answer_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 1 << 30,
            timeout_ms: 5_000,
            workers: 2,
            buffer_pool_bytes: 256 << 20,
            threads: std::thread::available_parallelism()
                .map_or(2, |n| n.get() as u64)
                .clamp(1, 4),
            // Under 1 MiB as a whole answer (the rows travel twice, as text and
            // as structured content): the MCP Python SDK refuses larger events.
            max_answer_bytes: 400 << 10,
        }
    }
}

/// A database file the workers read, with the graph version it holds.
#[derive(Debug)]
pub struct Source {
    pub path: PathBuf,
    /// The serving graph's version when this file was taken (see `Store`).
    pub version: u64,
    /// A snapshot that exists only for the workers: removed when the last
    /// worker reading it is gone.
    pub owned: bool,
}

impl Drop for Source {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Workers for one database (a data dir's graph or its snapshots).
pub struct CypherPool {
    exe: PathBuf,
    limits: Limits,
    state: Mutex<PoolState>,
    /// Signalled when a worker slot frees or a source arrives.
    changed: Condvar,
}

#[derive(Default)]
struct PoolState {
    source: Option<Arc<Source>>,
    idle: Vec<Worker>,
    running: usize,
    /// Why there is no source, when there is none.
    missing: Option<String>,
    /// The walls the last worker reported (`landlock+nofile`, or `none`).
    sandbox: Option<String>,
}

/// Extra time past the query timeout before the worker is killed: Kuzu's own
/// timeout usually answers first, with a clean error.
const GRACE: Duration = Duration::from_millis(1_000);
/// How often a running query's memory is looked at.
const WATCH_EVERY: Duration = Duration::from_millis(5);
/// How long a query waits for the first snapshot of a graph being indexed.
const SOURCE_WAIT: Duration = Duration::from_secs(10);
/// How long a new worker may take to open its database.
const START_WITHIN: Duration = Duration::from_secs(30);

impl CypherPool {
    /// `exe` is the cruxe binary, run as `exe cypher-worker …`.
    pub fn new(exe: PathBuf, limits: Limits) -> CypherPool {
        CypherPool {
            exe,
            limits,
            state: Mutex::new(PoolState::default()),
            changed: Condvar::new(),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// From now on queries read `source`; idle workers of the previous one go.
    pub fn set_source(&self, source: Source) {
        let mut st = self.lock();
        st.idle.clear();
        st.source = Some(Arc::new(source));
        st.missing = None;
        self.changed.notify_all();
    }

    /// No source any more (the graph was closed); `why` is told to callers.
    pub fn clear_source(&self, why: &str) {
        let mut st = self.lock();
        st.idle.clear();
        st.source = None;
        st.missing = Some(why.to_string());
    }

    /// The sandbox the workers run in, once one has started.
    pub fn sandbox(&self) -> Option<String> {
        self.lock().sandbox.clone()
    }

    /// The version of the graph the current source holds.
    pub fn source_version(&self) -> Option<u64> {
        self.lock().source.as_ref().map(|s| s.version)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one query on a worker; with the source it read. Once `cancel` is
    /// cancelled (the call was abandoned, the server stops) the query stops
    /// waiting for a worker, and a worker running it is killed.
    pub fn run(&self, req: &Request, cancel: &Cancel) -> Result<(Answer, Arc<Source>), AdhocError> {
        // 0: no limit (the CLI's `--timeout-ms 0`); the memory bound still holds.
        let timeout = match self.limits.timeout_ms {
            0 => Duration::from_secs(365 * 24 * 3600),
            ms => Duration::from_millis(ms),
        };
        let started = Instant::now();
        let (idle, source) = self.take(
            started + timeout,
            started + timeout.max(SOURCE_WAIT),
            cancel,
        )?;
        let slot = Slot(self);
        let deadline = started + timeout + GRACE;
        let (mut worker, result) = match idle {
            Some(mut w) => {
                let r = w.ask(req, deadline, &self.limits, cancel);
                match r {
                    // An idle worker that died meanwhile never saw the query:
                    // a new one gets it.
                    Err(AdhocError::Worker(_)) if !w.got_request => {
                        let mut fresh = self.start(&source)?;
                        let r = fresh.ask(req, deadline, &self.limits, cancel);
                        (fresh, r)
                    }
                    r => (w, r),
                }
            }
            None => {
                let mut w = self.start(&source)?;
                let r = w.ask(req, deadline, &self.limits, cancel);
                (w, r)
            }
        };
        worker.got_request = false;
        // A worker that answered (rows or a refusal before anything ran) is
        // reused; one that timed out, was killed or failed is not.
        let reusable = matches!(
            result,
            Ok(_) | Err(AdhocError::NotReadOnly(_) | AdhocError::Invalid(_))
        );
        if reusable {
            let mut st = self.lock();
            if st.source.as_ref().is_some_and(|s| Arc::ptr_eq(s, &source)) {
                st.idle.push(worker);
            }
        }
        drop(slot);
        result.map(|a| (a, source))
    }

    fn start(&self, source: &Arc<Source>) -> Result<Worker, AdhocError> {
        let w = Worker::start(&self.exe, source, &self.limits)?;
        let mut st = self.lock();
        if st.sandbox.as_deref() != Some(w.sandbox.as_str()) {
            if w.sandbox == "none" {
                tracing::warn!(
                    "run_cypher workers run without Landlock (not available here): the plan guard, the read-only database and the descriptor limit remain"
                );
            }
            st.sandbox = Some(w.sandbox.clone());
        }
        Ok(w)
    }

    /// A worker slot (and an idle worker of the current source, if any), waiting
    /// for a slot until `until` and for a first source until `source_until`.
    fn take(
        &self,
        until: Instant,
        source_until: Instant,
        cancel: &Cancel,
    ) -> Result<(Option<Worker>, Arc<Source>), AdhocError> {
        let mut st = self.lock();
        loop {
            if cancel.is_cancelled() {
                return Err(AdhocError::Cancelled);
            }
            if let Some(source) = st.source.clone()
                && st.running < self.limits.workers.max(1)
            {
                st.running += 1;
                let worker = st.idle.pop();
                return Ok((worker, source));
            }
            let now = Instant::now();
            let until = if st.source.is_some() {
                until
            } else {
                source_until
            };
            if now >= until {
                return Err(match (&st.source, &st.missing) {
                    (Some(_), _) => AdhocError::Busy {
                        waited_ms: self.limits.timeout_ms,
                        workers: self.limits.workers,
                    },
                    (None, Some(why)) => AdhocError::NotReady(why.clone()),
                    (None, None) => {
                        AdhocError::NotReady("the graph is still being prepared".into())
                    }
                });
            }
            // Woken by a freed slot; looks at `cancel` at least this often.
            let wait = (until - now).min(Duration::from_millis(50));
            st = self
                .changed
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// A running query's claim on a worker slot, given back however the query ends.
struct Slot<'a>(&'a CypherPool);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.running = st.running.saturating_sub(1);
        self.0.changed.notify_one();
    }
}

/// One worker process and the lines it has written.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// What the worker reported of its walls.
    sandbox: String,
    /// The current query reached the worker (a failure after this is the
    /// query's; before it, the worker's).
    got_request: bool,
    /// Keeps the file alive while this worker may read it.
    _source: Arc<Source>,
}

impl Worker {
    fn start(exe: &Path, source: &Arc<Source>, limits: &Limits) -> Result<Worker, AdhocError> {
        let mut cmd = Command::new(exe);
        cmd.arg("cypher-worker")
            .arg("--graph")
            .arg(&source.path)
            .arg("--buffer-pool-mb")
            .arg((limits.buffer_pool_bytes >> 20).max(16).to_string())
            .arg("--threads")
            .arg(limits.threads.max(1).to_string())
            // Nothing of the server's environment (a token, say) reaches it.
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // A pipe, not the server's stderr: that may be a file, and a worker
            // may write no file (RLIMIT_FSIZE 0 ends it on the first byte).
            .stderr(Stdio::piped());
        if let Ok(log) = std::env::var("CRUXE_LOG") {
            cmd.env("CRUXE_LOG", log);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| AdhocError::Worker(format!("cannot start {}: {e}", exe.display())))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(AdhocError::Worker("the worker has no pipes".into()));
        };
        let pid = child.id();
        // The worker's log lines (already filtered and formatted by the
        // worker, from CRUXE_LOG) join the server's log, marked as its own.
        let _ = std::thread::Builder::new()
            .name("cruxe-cypher-log".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    eprintln!("cypher-worker {pid}: {line}");
                }
            });
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("cruxe-cypher-reader".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {
                            if tx.send(line).is_err() {
                                return;
                            }
                        }
                    }
                }
            })
            .map_err(|e| AdhocError::Worker(e.to_string()))?;
        let mut worker = Worker {
            child,
            stdin,
            lines,
            sandbox: String::new(),
            got_request: false,
            _source: source.clone(),
        };
        match worker.lines.recv_timeout(START_WITHIN) {
            Ok(line) => match serde_json::from_str::<Reply>(&line) {
                Ok(Reply::Ready { sandbox }) => {
                    tracing::debug!(pid = worker.child.id(), %sandbox, "cypher worker ready");
                    worker.sandbox = sandbox;
                    Ok(worker)
                }
                Ok(Reply::Refused { message, .. }) => Err(AdhocError::Worker(message)),
                _ => Err(AdhocError::Worker(format!(
                    "unexpected first line {line:?}"
                ))),
            },
            Err(_) => Err(AdhocError::Worker(format!(
                "the worker did not start ({})",
                worker.exit_status()
            ))),
        }
    }

    /// Sends `req` and waits for the answer, watching memory and the deadline.
    fn ask(
        &mut self,
        req: &Request,
        deadline: Instant,
        limits: &Limits,
        cancel: &Cancel,
    ) -> Result<Answer, AdhocError> {
        let line = serde_json::to_string(req).map_err(|e| AdhocError::Worker(e.to_string()))?;
        // An idle worker that ended meanwhile shows here, or as an answer
        // that never comes (below).
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(AdhocError::Worker(format!(
                "the worker had ended ({status})"
            )));
        }
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| AdhocError::Worker(format!("the worker is gone ({e})")))?;
        self.got_request = true;
        let pid = self.child.id();
        loop {
            match self.lines.recv_timeout(WATCH_EVERY) {
                Ok(line) => return decode(&line, limits),
                Err(RecvTimeoutError::Timeout) => {
                    if resident_bytes(pid).is_some_and(|b| b > limits.memory_bytes) {
                        self.kill();
                        return Err(AdhocError::TooLarge(limits.memory_bytes >> 20));
                    }
                    if Instant::now() >= deadline {
                        self.kill();
                        return Err(AdhocError::Timeout(limits.timeout_ms));
                    }
                    if cancel.is_cancelled() {
                        self.kill();
                        return Err(AdhocError::Cancelled);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.exit_status();
                    // Kuzu's code that binds a file function can crash on a
                    // file the sandbox refuses, and not on one that does not
                    // exist: such a crash must read like any other refusal, or
                    // it would tell which paths exist.
                    let lower = req.query.to_lowercase();
                    if super::worker::FILE_WORDS.iter().any(|w| lower.contains(w)) {
                        tracing::warn!(
                            "the query worker crashed ({status}) on a query that names files"
                        );
                        return Err(AdhocError::NotReadOnly(super::worker::OUTSIDE_GRAPH.into()));
                    }
                    return Err(AdhocError::Worker(format!(
                        "the worker ended while running the query ({status}); the server is unaffected"
                    )));
                }
            }
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn exit_status(&mut self) -> String {
        match self.child.wait() {
            Ok(s) => s.to_string(),
            Err(e) => e.to_string(),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn decode(line: &str, limits: &Limits) -> Result<Answer, AdhocError> {
    match serde_json::from_str::<Reply>(line) {
        Ok(Reply::Rows {
            columns,
            rows,
            truncated,
        }) => Ok(Answer {
            columns,
            rows,
            truncated,
        }),
        Ok(Reply::Refused { kind, message }) => Err(match kind {
            RefusalKind::NotReadOnly => AdhocError::NotReadOnly(message),
            RefusalKind::Invalid => AdhocError::Invalid(message),
            RefusalKind::Timeout => AdhocError::Timeout(limits.timeout_ms),
            RefusalKind::Internal => AdhocError::Worker(message),
        }),
        Ok(Reply::Ready { .. }) | Err(_) => Err(AdhocError::Worker(format!(
            "unreadable answer from the worker: {}",
            line.chars().take(200).collect::<String>()
        ))),
    }
}

/// Resident set size of a process, from `/proc/PID/statm`.
fn resident_bytes(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf takes a constant and returns a number.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).unwrap_or(4096))
}
