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
use crate::graph::{GraphConfig, GraphError, GraphStore};

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
    die_with_parent();
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
    let size = std::fs::metadata(&args.graph).map_or(0, |m| m.len());
    let cfg = GraphConfig {
        buffer_pool_bytes: args.buffer_pool_bytes,
        threads: args.threads.max(1),
        // Kuzu wants a power of two at least as large as the file (it reserves
        // that much address space, and never grows a read-only database).
        max_db_bytes: (size.saturating_mul(2)).max(1 << 30).next_power_of_two(),
        auto_checkpoint: false,
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
            GraphError::OutsideGraph => {
                "the query reaches for files outside the graph (the query worker may open no file but the graph)".to_string()
            }
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
            Err(e) => return refused(store.check_statement(&req.query).err().unwrap_or(e)),
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
use sandbox::{die_with_parent, forbid_new_descriptors, restrict_to_reading, set_limit};

/// The process's walls. Linux only: elsewhere the worker runs with the plan
/// guard and the read-only database alone (and says so: sandbox `none`).
#[cfg(target_os = "linux")]
mod sandbox {
    /// A worker outliving its server would be a process nobody bounds.
    pub fn die_with_parent() {
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and no pointers.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
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
fn die_with_parent() {}

#[cfg(not(target_os = "linux"))]
fn forbid_new_descriptors() -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn restrict_to_reading(_graph: &std::path::Path) -> Result<String, String> {
    Err("no sandbox on this system".into())
}
