//! The HTTP connections: accepted with a bound on how many are open, each
//! given a deadline for its request head (which also closes a kept-alive
//! connection that sends nothing), and drained for a bounded time at
//! shutdown. `axum::serve` has neither bound: 19,920 half-open connections
//! held a server at 19,967 of its 20,000 file descriptors.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    /// Connections open at once; past it, new ones wait in the kernel's
    /// backlog until one closes.
    pub max: usize,
    /// Time a connection has to send a request's head, and that a kept-alive
    /// connection may sit idle between requests.
    pub head_timeout: Duration,
    /// How long requests in flight are given at shutdown before the server
    /// stops anyway (SSE streams of a call never end by themselves).
    pub drain: Duration,
}

impl ConnLimits {
    pub const DEFAULT: ConnLimits = ConnLimits {
        max: 2048,
        head_timeout: Duration::from_secs(20),
        drain: Duration::from_millis(1000),
    };
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits::DEFAULT
    }
}

/// The address a connection arrived on, for the Host check of a server bound
/// to every address.
#[derive(Debug, Clone, Copy)]
pub struct Conn {
    pub local: Option<SocketAddr>,
}

/// Serves `app` on `listener` until `shutdown` resolves, then gives open
/// requests `limits.drain` to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send,
) {
    raise_descriptor_limit();
    let open = Arc::new(Semaphore::new(limits.max.max(1)));
    // Dropped at shutdown: every connection sees it and closes once idle.
    let (stop_tx, stop_rx) = watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = open.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let (tcp, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (EMFILE) or a connection reset before
                    // it was taken: wait a moment rather than spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // Answers go out as several small SSE writes; without it, Nagle's
        // algorithm and the client's delayed ACK add ~40 ms to every call.
        let _ = tcp.set_nodelay(true);
        let conn = Conn {
            local: tcp.local_addr().ok(),
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(conn));
            let app = app.clone();
            async move {
                use tower::ServiceExt;
                app.oneshot(req.map(axum::body::Body::new)).await
            }
        });
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(limits.head_timeout)
                .keep_alive(true);
            let connection = http.serve_connection(TokioIo::new(tcp), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.as_mut().await;
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    drop(stop_tx);
    drop(stop_rx);
    // Every connection holds a permit until it ends: all back means all closed.
    let all = u32::try_from(limits.max.max(1)).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(limits.drain, open.acquire_many(all)).await;
}

/// Lifts the soft limit on open files to the hard one: each connection holds
/// a descriptor, and a soft limit of 1,024 would refuse connections well
/// below `ConnLimits::max`, with Kuzu's files and the watchers besides.
fn raise_descriptor_limit() {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit only read and write the struct given.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
                lim.rlim_cur = lim.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
        }
    }
}
