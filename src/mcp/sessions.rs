//! MCP sessions as a bounded resource. rmcp keeps every session a client opens
//! (a task, its channels and the handler, ~70 KB) until it has been idle for
//! its keep-alive; a client looping `initialize` made 53,441 of them in 30 s
//! (3.3 GB). Here a server holds at most `max` sessions: past it, a new
//! `initialize` closes the session that matters least (one that never made a
//! call, then the one idle longest), and when every session is in use it is
//! refused with a JSON-RPC error. Idle sessions expire after `idle`, and the
//! memory they held goes back to the system.
//!
//! Architecture invariant: only this file and `server.rs` name rmcp's session
//! types; tool logic never sees a session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// How sessions are bounded.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Sessions held at once.
    pub max: usize,
    /// A session with no request for this long is closed.
    pub idle: Duration,
}

impl SessionLimits {
    /// A session costs rmcp ~70 KB (its task, channels and handler): 500 of
    /// them ~35 MB, and a flood that churns through them ~50 MB at its peak
    /// (docs/BENCHMARKS.md). An agent that thinks for five minutes between
    /// calls keeps its session.
    pub const DEFAULT: SessionLimits = SessionLimits {
        max: 500,
        idle: Duration::from_secs(300),
    };
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits::DEFAULT
    }
}

/// A session that made a request this recently is in use: it is never closed
/// to make room for another.
const IN_USE: Duration = Duration::from_secs(10);

/// What is known of a session besides rmcp's state.
#[derive(Debug, Clone, Copy)]
struct Seen {
    last: Instant,
    /// It made a request besides its handshake.
    used: bool,
}

/// Why a new session was refused.
#[derive(Debug)]
pub struct Full {
    pub max: usize,
}

/// The server's sessions: rmcp's manager and when each was last used.
pub struct Sessions {
    pub manager: Arc<LocalSessionManager>,
    limits: SessionLimits,
    seen: Mutex<HashMap<Arc<str>, Seen>>,
    /// Requests made on sessions, for the sweeper to tell a quiet moment.
    requests: std::sync::atomic::AtomicU64,
    /// One admission at a time: a count and an eviction that race would let
    /// a flood past the cap.
    admission: tokio::sync::Mutex<()>,
}

impl Sessions {
    pub fn new(limits: SessionLimits) -> Sessions {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.idle);
        Sessions {
            manager: Arc::new(manager),
            limits,
            seen: Mutex::new(HashMap::new()),
            requests: std::sync::atomic::AtomicU64::new(0),
            admission: tokio::sync::Mutex::new(()),
        }
    }

    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// How many sessions rmcp holds.
    pub async fn count(&self) -> usize {
        self.manager.sessions.read().await.len()
    }

    /// Makes room for one more session: closes the least useful one when the
    /// server holds its maximum, or says it is full. The guard returned is
    /// held until the `initialize` has made its session.
    pub async fn admit(&self) -> Result<tokio::sync::MutexGuard<'_, ()>, Full> {
        let guard = self.admission.lock().await;
        let live: Vec<Arc<str>> = self.manager.sessions.read().await.keys().cloned().collect();
        if live.len() < self.limits.max {
            return Ok(guard);
        }
        let victims = self.victims(&live, live.len() + 1 - self.limits.max);
        if victims.is_empty() {
            return Err(Full {
                max: self.limits.max,
            });
        }
        for id in victims {
            let _ = self.manager.close_session(&id).await;
            self.forget(&id);
        }
        Ok(guard)
    }

    /// Up to `n` of the `live` sessions to close, the least useful first: those
    /// that never made a call, then the longest idle; never one in use.
    fn victims(&self, live: &[Arc<str>], n: usize) -> Vec<Arc<str>> {
        let now = Instant::now();
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut idle: Vec<(bool, Instant, &Arc<str>)> = live
            .iter()
            .filter_map(|id| {
                // A session not seen yet is one being made now: left alone.
                let s = seen.get(id)?;
                (!s.used || now.duration_since(s.last) >= IN_USE).then_some((s.used, s.last, id))
            })
            .collect();
        idle.sort();
        idle.into_iter()
            .take(n)
            .map(|(_, _, id)| id.clone())
            .collect()
    }

    /// A session made by an `initialize`.
    pub fn opened(&self, id: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(
            Arc::from(id),
            Seen {
                last: Instant::now(),
                used: false,
            },
        );
    }

    /// A request on a session (`used`: besides its handshake).
    pub fn touched(&self, id: &str, used: bool) {
        self.requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = seen.get_mut(id) {
            s.last = Instant::now();
            s.used |= used;
        }
    }

    fn forget(&self, id: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.remove(id);
    }

    /// Drops what is known of sessions rmcp has closed (expired, deleted);
    /// how many sessions are left.
    async fn prune(&self) -> usize {
        let live = self.manager.sessions.read().await;
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.retain(|id, _| live.contains_key(id));
        if seen.capacity() > 4 * seen.len().max(64) {
            seen.shrink_to_fit();
        }
        live.len()
    }

    /// Every few seconds: forgets closed sessions, and hands memory back to
    /// the system once many sessions have gone since the last look, or when
    /// requests stop after a burst (glibc keeps what tasks and calls freed in
    /// its arenas: after 50,000 sessions expired, RSS stayed at its peak, and
    /// after a load of 32 sessions it stayed ~90 MB up).
    pub async fn sweep(self: Arc<Self>, release: fn()) {
        let mut tick = tokio::time::interval(Duration::from_secs(2));
        let mut high = 0usize;
        let (mut last, mut at_release) = (0u64, 0u64);
        loop {
            tick.tick().await;
            let now = self.prune().await;
            high = high.max(now);
            let requests = self.requests.load(std::sync::atomic::Ordering::Relaxed);
            let quiet_after_load =
                requests == last && requests - at_release >= RELEASE_AFTER as u64;
            last = requests;
            if high - now >= RELEASE_AFTER || quiet_after_load {
                // It walks the allocator's arenas: not on the runtime's threads.
                let _ = tokio::task::spawn_blocking(release).await;
                high = now;
                at_release = requests;
            }
        }
    }
}

/// Sessions gone (or requests made) since the last release that make the next
/// one worth it.
const RELEASE_AFTER: usize = 64;
