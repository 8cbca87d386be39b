//! The query worker: a child process (`cruxe cypher-worker`, hidden) that opens
//! one database file read-only, locks itself in, and answers one query at a time
//! as JSON lines on stdin/stdout.
//!
//! The order matters: resource limits and Landlock come first, while the process
//! has one thread, so that Kuzu's own threads (started when the database opens)
//! inherit the restriction; the file-descriptor limit comes after the open, once
//! every descriptor the worker needs exists.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use super::{RefusalKind, Reply, Request, guard};
use crate::store::graph::{GraphConfig, GraphError, GraphStore};

/// What the parent tells a worker on its command line.
#[derive(Debug, Clone)]
pub struct WorkerArgs {
    /// The database file to read.
    pub graph: PathBuf,
    pub buffer_pool_bytes: u64,
    /// Kuzu's threads for one query.
    pub threads: u64,
}

/// Runs the worker until stdin closes; the process's exit code.
pub fn worker_main(args: &WorkerArgs) -> i32 {
    // Kuzu opens its files without close-on-exec, so a worker is born holding
    // the server's live database read-write (and whatever else the server had
    // open). Nothing but stdin, stdout and stderr may survive into the sandbox.
    close_inherited_descriptors();
    // SAFETY: getppid has no arguments and cannot fail.
    let parent = unsafe { libc::getppid() };
    #[cfg(target_os = "linux")]
    {
        set_limit(libc::RLIMIT_CORE, 0);
        // Nothing a worker does writes a file; a write that slipped through
        // would end the process (SIGXFSZ) before a byte reached the disk.
        set_limit(libc::RLIMIT_FSIZE, 0);
    }
    let sandbox = match restrict_to_reading(&args.graph) {
        Ok(how) => how,
        Err(e) => {
            tracing::warn!("Landlock is not available ({e}); the worker relies on its other walls");
            "none".to_string()
        }
    };
    // Started inside the sandbox, like every thread after this point.
    exit_with_parent(parent);
    let size = std::fs::metadata(&args.graph).map_or(0, |m| m.len());
    let cfg = GraphConfig {
        buffer_pool_bytes: args.buffer_pool_bytes,
        threads: args.threads.max(1),
        // Kuzu wants a power of two at least as large as the file (it reserves
        // that much address space, and never grows a read-only database).
        max_db_bytes: (size.saturating_mul(2)).max(1 << 30).next_power_of_two(),
        auto_checkpoint: false,
        // Ad hoc queries are not the tools' walks.
        walk_cache_bytes: 0,
        ..GraphConfig::default()
    };
    let mut out = std::io::stdout().lock();
    let store = match GraphStore::open_read_only(&args.graph, &cfg) {
        Ok(s) => s,
        Err(e) => {
            send(
                &mut out,
                &Reply::Refused {
                    kind: RefusalKind::Internal,
                    message: format!("cannot open the graph: {e}"),
                },
            );
            return 1;
        }
    };
    let sandbox = if forbid_new_descriptors() {
        format!("{sandbox}+nofile")
    } else {
        sandbox
    };
    tracing::debug!(graph = %args.graph.display(), %sandbox, "cypher worker ready");
    send(&mut out, &Reply::Ready { sandbox });
    let stdin = std::io::stdin();
    let mut line = String::new();
    let mut allowed = std::collections::HashSet::new();
    loop {
        line.clear();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(req) => answer(&store, &mut allowed, req),
            Err(e) => Reply::Refused {
                kind: RefusalKind::Internal,
                message: format!("bad request from the server: {e}"),
            },
        };
        if !send(&mut out, &reply) {
            return 0;
        }
    }
}

/// The one answer to every query that reaches for a file, whatever Kuzu said.
pub(super) const OUTSIDE_GRAPH: &str = "the query reaches for files outside the graph (the query worker may open no file but the graph)";

/// Query texts whose plans passed the guard, kept at most.
const ALLOWED_CACHE: usize = 512;

/// One query: its plan checked against the allowlist (once per text), then run
/// in a read-only transaction.
fn answer(
    store: &GraphStore,
    allowed: &mut std::collections::HashSet<String>,
    req: Request,
) -> Reply {
    let refused = |e: GraphError| {
        let kind = match e {
            GraphError::NotReadOnly | GraphError::OutsideGraph => RefusalKind::NotReadOnly,
            GraphError::Timeout(_) => RefusalKind::Timeout,
            GraphError::Invalid(_) => RefusalKind::Invalid,
            _ => RefusalKind::Internal,
        };
        let message = match e {
            GraphError::NotReadOnly => "the query would write to the graph".to_string(),
            GraphError::OutsideGraph => OUTSIDE_GRAPH.to_string(),
            GraphError::Invalid(m) => m,
            other => other.to_string(),
        };
        Reply::Refused { kind, message }
    };
    if !allowed.contains(&req.query) {
        let plan = match store.explain(&req.query, &req.params) {
            Ok(p) => p,
            // The statement alone gives Kuzu's error with the query's own
            // positions (the plan's is off by `EXPLAIN `).
            Err(e) => {
                let e = store.check_statement(&req.query).err().unwrap_or(e);
                return refused(quiet_about_files(&req.query, e));
            }
        };
        if let Err(why) = guard::check_plan(&plan) {
            return Reply::Refused {
                kind: RefusalKind::NotReadOnly,
                message: why.to_string(),
            };
        }
        // The database never changes under a worker, so neither does the plan
        // of a text (parameters change values, not operators).
        if allowed.len() >= ALLOWED_CACHE {
            allowed.clear();
        }
        allowed.insert(req.query.clone());
    }
    match store.query_read_only(&req.query, req.params, req.max_rows, req.timeout_ms) {
        Ok((rows, truncated)) => {
            let (kept, cut) = within_bytes(rows.rows, req.max_bytes);
            Reply::Rows {
                columns: rows.columns,
                rows: kept,
                truncated: truncated || cut,
            }
        }
        Err(e) => refused(e),
    }
}

/// Words without which a statement cannot name a file: a table function
/// (`READ_…`), `LOAD`, `COPY`, `IMPORT`/`EXPORT`, `ATTACH`, extensions, a format
/// option. A token cannot be split by a comment or quotes, so a statement that
/// reaches for a file has one of them in its text.
pub(super) const FILE_WORDS: &[&str] = &[
    "read_",
    "load",
    "copy",
    "import",
    "export",
    "attach",
    "install",
    "extension",
    "file_format",
];

/// A statement that mentions files and does not compile gets one fixed answer:
/// Kuzu's binder looks at the file system before the plan guard can refuse the
/// plan, and its messages differ for a path that exists, one that does not, and
/// a directory (`Failed to open NPY file`, `No file found`, `Provided path is
/// not a file`), which would let a caller map the disk. Syntax errors stay as
/// they are: the parser looks at nothing but the text.
fn quiet_about_files(query: &str, e: GraphError) -> GraphError {
    let lower = query.to_lowercase();
    match e {
        GraphError::Invalid(m)
            if !m.starts_with("Parser exception")
                && FILE_WORDS.iter().any(|w| lower.contains(w)) =>
        {
            GraphError::OutsideGraph
        }
        other => other,
    }
}

/// Keeps the first rows whose JSON fits in `max_bytes`; whether any were cut.
fn within_bytes(
    rows: Vec<Vec<serde_json::Value>>,
    max_bytes: usize,
) -> (Vec<Vec<serde_json::Value>>, bool) {
    let total = rows.len();
    let mut used = 0usize;
    let mut kept = Vec::with_capacity(total);
    for row in rows {
        used += serde_json::to_string(&row).map_or(0, |s| s.len() + 1);
        if used > max_bytes {
            break;
        }
        kept.push(row);
    }
    let cut = kept.len() < total;
    (kept, cut)
}

/// Writes one reply line; false when the parent has gone.
fn send(out: &mut impl Write, reply: &Reply) -> bool {
    let Ok(text) = serde_json::to_string(reply) else {
        return false;
    };
    writeln!(out, "{text}").and_then(|()| out.flush()).is_ok()
}

#[cfg(target_os = "linux")]
use sandbox::{
    close_inherited_descriptors, forbid_new_descriptors, restrict_to_reading, set_limit,
};

/// A worker outliving its server would be a process nobody bounds: it exits as
/// soon as its parent is gone. (Not `PR_SET_PDEATHSIG`: that fires when the
/// *thread* that started the worker ends, and servers start workers on pooled
/// threads that come and go.)
fn exit_with_parent(parent: libc::pid_t) {
    #[cfg(unix)]
    {
        let _ = std::thread::Builder::new()
            .name("cruxe-parent-watch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    // SAFETY: as above.
                    if unsafe { libc::getppid() } != parent {
                        // At once, without exit handlers: a query still
                        // running must not delay the exit (its read lock on the
                        // database would hold off the next server's open).
                        // SAFETY: _exit takes a status and does not return.
                        unsafe { libc::_exit(0) };
                    }
                }
            });
    }
}

/// The process's walls. Linux only: elsewhere the worker runs with the plan
/// guard and the read-only database alone (and says so: sandbox `none`).
#[cfg(target_os = "linux")]
mod sandbox {
    /// Closes every descriptor above stderr.
    pub fn close_inherited_descriptors() {
        // SAFETY: close_range takes two numbers and flags; it only closes.
        let done = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) } == 0;
        if !done {
            // Kernels before 5.9: every number up to the limit.
            // SAFETY: sysconf takes a constant and returns a number.
            let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(64, 1 << 20) as i32;
            for fd in 3..max {
                // SAFETY: closing a number that is not open is a harmless EBADF.
                unsafe { libc::close(fd) };
            }
        }
    }

    pub fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> bool {
        let lim = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: setrlimit reads the struct we pass and nothing else.
        unsafe { libc::setrlimit(resource, &lim) == 0 }
    }

    /// After this no `open`, `socket`, `pipe` or `dup` can succeed: the limit on
    /// descriptor numbers is set to the lowest free one.
    pub fn forbid_new_descriptors() -> bool {
        let mut fd = 0;
        // SAFETY: F_GETFD on any integer only reports whether it is an open descriptor.
        while unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            fd += 1;
        }
        set_limit(libc::RLIMIT_NOFILE, fd as u64)
    }

    /// Landlock: from here on this process (and every thread it starts) may open
    /// exactly one file, for reading, and may not bind or connect TCP sockets.
    pub fn restrict_to_reading(graph: &std::path::Path) -> Result<String, String> {
        use landlock::{
            ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
            RulesetCreatedAttr, RulesetStatus,
        };
        let abi = ABI::V6;
        let file = PathFd::new(graph).map_err(|e| e.to_string())?;
        let status = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rule(PathBeneath::new(file, AccessFs::ReadFile)))
            .and_then(|r| r.restrict_self())
            .map_err(|e| e.to_string())?;
        match status.ruleset {
            RulesetStatus::FullyEnforced => Ok("landlock".into()),
            RulesetStatus::PartiallyEnforced => Ok("landlock-partial".into()),
            RulesetStatus::NotEnforced => Err("the kernel does not enforce Landlock".into()),
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn close_inherited_descriptors() {}

#[cfg(not(target_os = "linux"))]
fn forbid_new_descriptors() -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn restrict_to_reading(_graph: &std::path::Path) -> Result<String, String> {
    Err("no sandbox on this system".into())
}
